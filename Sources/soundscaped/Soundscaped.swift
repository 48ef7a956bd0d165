import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Logging
import SoundscapeAudio
import SoundscapeCore
import SoundscapeDaemon
import SoundscapeLibrary
import SoundscapeSystem

struct Soundscaped: AsyncParsableCommand {
    /// Set by main.swift before the command runs.
    nonisolated(unsafe) static var signals = DaemonSignals()
    /// Made by main.swift before the daemon hardens itself (see `SignerSpawner`).
    nonisolated(unsafe) static var spawner = SignerSpawner.unhardened
    /// What main.swift's `Hardening.denyWriteExecute()` said (nil: done).
    nonisolated(unsafe) static var hardening: String? = "not applied"

    static let configuration = CommandConfiguration(
        commandName: "soundscaped",
        abstract: "Keep-alive soundscape service: plays looping ambient soundscapes through PipeWire.",
        usage: "soundscaped [--SETTING VALUE | --SWITCH]...\nsoundscaped --print-settings [--json]",
        discussion: """
            Runs in the foreground; control it with soundscapectl. The saved volume, soundscape \
            and playing state are restored on start: if it was playing when it stopped, it plays again. \
            SIGHUP reads the config file again (see soundscaped.conf(5)); \
            SIGTERM and SIGINT fade out and stop; SIGUSR1, SIGUSR2 and SIGPIPE are ignored.

            Settings of the config file, as flags (a flag wins over the file):
            \(Settings.helpText(fileSettings: true))

            Where things are (flags only):
            \(Settings.helpText(fileSettings: false))
            """,
        version: SoundscapedVersion.string)

    @Flag(
        name: .customLong("print-settings"),
        help: "Print every setting (its flag, default, when a change takes effect) and the player's timings, then exit.")
    var printSettings = false

    @Flag(help: "With --print-settings: one JSON object, for scripts (they ask the daemon instead of restating it).")
    var json = false

    /// The setting flags (`--signer-command …`), which `Settings` declares and `CommandLineSettings` reads.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("A setting as a flag: --KEY VALUE, or --KEY alone for a switch; each is listed above.", valueName: "--setting"))
    var settingFlags: [String] = []

    /// A malformed command line (an unknown option, a missing value) is a usage error
    /// (status 64) for a daemon run by hand; a value a setting refuses is a configuration
    /// error, which `run` reports. Socket-activated, both are configuration errors the
    /// daemon stays up to answer (`runNotConfigured`): an exit would only be restarted,
    /// every 2 s, with the same flags.
    func validate() throws {
        if case .success(_?) = SocketActivation.listeners(environment: FileSystem.environment(), pid: getpid()) { return }
        do {
            _ = try CommandLineSettings.parse(settingFlags)
        } catch  where error.isUsage {
            throw ValidationError(error.description)
        } catch {}
    }

    func run() async throws {
        let environment = FileSystem.environment()
        let executable = FileSystem.linkTarget("/proc/self/exe") ?? CommandLine.arguments[0]
        if printSettings {
            PrintSettings.print(json: json, environment: environment, executablePath: executable)
            return
        }
        let flags: SettingValues
        let settings: DaemonSettings
        do {
            (flags, settings) = try DaemonSettings.resolve(
                arguments: settingFlags, environment: environment, executablePath: executable)
        } catch {
            try await runNotConfigured(error, environment: environment, executable: executable)
            return
        }
        try await Daemon.run(
            settings: settings, flags: flags, environment: environment,
            executablePath: executable, signals: Self.signals, spawner: Self.spawner, hardening: Self.hardening)
    }

    /// A configuration the daemon cannot use. Run by hand, that is the end (status 1, the
    /// message on stderr). Socket-activated, it serves the problem until it is mended, then
    /// starts again in this process (`UnconfiguredDaemon`, `SelfExec`).
    private func runNotConfigured(_ problem: ConfigurationError, environment: [String: String], executable: String) async throws {
        guard case .success(_?) = SocketActivation.listeners(environment: environment, pid: getpid()) else { throw problem }
        switch try await UnconfiguredDaemon.run(
            problem: problem, arguments: settingFlags, environment: environment, executablePath: executable,
            signals: Self.signals)
        {
        case .stopped:
            return
        case .restart(let listener):
            let failure = await SelfExec.exec(
                executable: executable, arguments: CommandLine.arguments, environment: environment, listener: listener,
                spawner: Self.spawner)
            throw ConfigurationError("cannot start again with the mended configuration: \(failure)")
        }
    }
}
