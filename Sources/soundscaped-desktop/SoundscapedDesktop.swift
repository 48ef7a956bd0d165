import ArgumentParser
import Glibc
import Logging
import SoundscapeCore
import SoundscapeDesktop
import SoundscapeSystem

@main
struct SoundscapedDesktop: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundscaped-desktop",
        abstract: "Desktop companion of soundscaped: media controls (MPRIS) and notifications.",
        discussion: """
            Shows the soundscape in the desktop's media controls as \
            org.mpris.MediaPlayer2.soundscaped (playerctl -p soundscaped), with its title and \
            whether the signer host runs; play, pause, next, previous, stop and volume control \
            the daemon. Raises a notification when the keep-alive breaks (the signer host \
            failed, or no sound for a while) and when it is restored, unless the daemon's \
            'notifications' preference is off. Started with the graphical session by \
            soundscaped-desktop.service; follows the daemon through restarts.
            """,
        version: SoundscapedVersion.string)

    @Option(
        help: ArgumentHelp(
            "The daemon's control socket.",
            discussion: """
                Default: $SOUNDSCAPED_SOCKET, else $XDG_RUNTIME_DIR/soundscaped/control.sock.
                """))
    var socket: String?

    @Option(help: "Seconds without sound, while it should play, before a notification.")
    var silenceThreshold: Int = 10

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func validate() throws {
        guard (1...3600).contains(silenceThreshold) else {
            throw ValidationError("--silence-threshold must be 1 to 3600 seconds")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level '\(logLevel)'") }
    }

    func run() throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        signal(SIGPIPE, SIG_IGN)
        guard let path = DaemonPaths.socket(explicit: socket, environment: FileSystem.environment()) else {
            throw ValidationError("no socket path: set XDG_RUNTIME_DIR or SOUNDSCAPED_SOCKET, or pass --socket")
        }
        var options = Companion.Options(socketPath: path, artURL: Self.iconURL())
        options.alarm.silenceThreshold = .seconds(silenceThreshold)
        let logger = Logger(label: "soundscaped-desktop")
        do {
            try Companion(options: options, logger: logger).run()
        } catch {
            logger.error("\(error)")
            throw ExitCode(1)
        }
    }

    /// The installed icon beside this binary (…/bin → …/share/icons/…), as a file:// URL.
    static func iconURL() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let executable = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let prefix = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast(2).joined(separator: "/")
        let icon = prefix + "/share/icons/hicolor/scalable/apps/soundscaped.svg"
        return access(icon, R_OK) == 0 ? "file://" + icon : nil
    }
}
