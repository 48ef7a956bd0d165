import ArgumentParser
import Foundation
import Logging
import SoundscapeAudio
import SoundscapeCore
import SoundscapeDaemon
import SoundscapeLibrary

@main
struct Soundscaped: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundscaped",
        abstract: "Keep-alive soundscape service: plays looping ambient soundscapes through PipeWire.",
        discussion: """
            Runs in the foreground; control it with soundscapectl. The saved volume, soundscape \
            and playing state are restored on start: if it was playing when it stopped, it plays again.
            """,
        version: Daemon.version)

    @Option(help: ArgumentHelp(
        "Control socket path.",
        discussion: "Default: $SOUNDSCAPED_SOCKET, else $XDG_RUNTIME_DIR/soundscaped/control.sock.",
        valueName: "path"))
    var socket: String?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp(
        "Directory of the state database.",
        discussion: "Default: $XDG_STATE_HOME/soundscaped, else ~/.local/state/soundscaped.",
        valueName: "dir"))
    var stateDirectory: String?

    @Option(name: .customLong("soundscapes-dir"), help: ArgumentHelp(
        "Also offer the soundscapes in this directory (*.opus, optional manifest.json). Repeatable.",
        valueName: "dir"))
    var soundscapeDirectories: [String] = []

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(name: .customLong("latency-frames"), help: ArgumentHelp(
        "Requested PipeWire quantum in frames at 48 kHz (node.latency); larger means fewer wake-ups.",
        valueName: "frames"))
    var latencyFrames: Int = 2048

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        guard (64...8192).contains(latencyFrames) else {
            throw ValidationError("--latency-frames must be between 64 and 8192")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let socketPath = DaemonPaths.socket(explicit: socket, environment: environment) else {
            throw ValidationError("XDG_RUNTIME_DIR is not set: pass --socket PATH or set SOUNDSCAPED_SOCKET")
        }
        guard let stateDirectory = DaemonPaths.stateDirectory(explicit: stateDirectory, environment: environment) else {
            throw ValidationError("neither XDG_STATE_HOME nor HOME is set: pass --state-dir DIR")
        }
        var output = OutputConfiguration()
        output.latencyFrames = latencyFrames
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        let options = DaemonOptions(
            socketPath: socketPath,
            stateDirectory: stateDirectory,
            soundscapes: .standard(extra: soundscapeDirectories, environment: environment, executablePath: executable),
            logLevel: Logger.Level(rawValue: logLevel) ?? .info,
            output: output)
        try await Daemon.run(options: options, environment: environment)
    }
}
