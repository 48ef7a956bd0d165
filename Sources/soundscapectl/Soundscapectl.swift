import ArgumentParser
import SoundscapeCore

@main
struct Soundscapectl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundscapectl",
        abstract: "Control soundscaped, the keep-alive soundscape service.",
        discussion: """
            --socket may stand before the subcommand or after it.

            Exit status: 0 success; 1 the daemon refused or the request failed; \
            2 the daemon is not reachable; 64 the command line is wrong (EX_USAGE: \
            an unknown subcommand or option, a missing or extra argument).
            """,
        version: SoundscapedVersion.string,
        subcommands: [
            Play.self, Pause.self, Stop.self, VolumeCommand.self, Status.self, Reload.self, List.self, Events.self, Health.self, SetPreference.self,
            ShowPreferences.self,
        ])

    /// `soundscapectl --socket PATH status`: ArgumentParser parses an option of a parent
    /// command wherever it stands, and a subcommand's `ConnectionOptions` sees the same value.
    @OptionGroup var connection: ConnectionOptions
}

/// Options every subcommand shares (and the root command, so they may come first).
struct ConnectionOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Control socket of the daemon.",
            discussion: "Default: $SOUNDSCAPED_SOCKET, else $XDG_RUNTIME_DIR/soundscaped/control.sock.",
            valueName: "path"),
        completion: .file())
    var socket: String?
}

struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start playing (or switch to) a soundscape; without NAME, the current one.")

    @OptionGroup var connection: ConnectionOptions
    @Argument(
        help: "Soundscape id, as `soundscapectl list` shows.",
        completion: .custom { words, _, _ in await Completion.soundscapeIDs(completing: words) })
    var name: String?

    func run() async throws {
        try await Control.session(connection) { control in
            let status = try await control.play(name)
            Output.describePlay(status)
        }
    }
}

struct Pause: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fade out but keep the session: the signer host keeps running; play resumes.")
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await Control.session(connection) { control in
            let status = try await control.pause()
            print(
                status.state == .paused
                    ? "Paused (\(status.soundscape) at \(status.volume.percent)%)"
                    : "Nothing to pause (\(status.state.rawValue))")
        }
    }
}

struct Stop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Fade out and end the session (the signer host stops too).")
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await Control.session(connection) { control in
            let status = try await control.stop()
            print("Stopped (\(status.soundscape) at \(status.volume.percent)%)")
        }
    }
}

struct VolumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume",
        abstract: "Print the volume, or set it: 0–100, +N/-N, or off, low, medium, high, max.")

    @OptionGroup var connection: ConnectionOptions
    // `.allUnrecognized` lets `-10` through as a value instead of an unknown flag.
    @Argument(
        parsing: .allUnrecognized, help: "New volume; without it the current volume is printed.",
        completion: .list(Completion.volumeWords))
    var values: [String] = []

    /// The values, less a `--` that ends the options (`volume -- -80`): `.allUnrecognized` keeps it.
    var words: [String] {
        guard let end = values.firstIndex(of: "--") else { return values }
        return Array(values[..<end] + values[(end + 1)...])
    }

    func validate() throws {
        guard words.count <= 1 else { throw ValidationError("expected one volume, got \(words.joined(separator: " "))") }
    }

    func run() async throws {
        let value = words.first
        let change: VolumeChange?
        do {
            change = try value.map { value throws(VolumeChange.ParseError) in try VolumeChange(parsing: value) }
        } catch {
            // A value the daemon would refuse is a refusal (exit 1), like any other bad input.
            Control.fail(error.description, status: 1)
        }
        try await Control.session(connection) { control in
            guard let change else {
                print("\(try await control.status().volume.percent)%")
                return
            }
            let target: Volume
            switch change {
            case .absolute(let volume): target = volume
            case .relative: target = change.applied(to: try await control.status().volume)
            }
            print("Volume \(try await control.setVolume(target).volume.percent)%")
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what the daemon is doing.")
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the status as one JSON object.") var json = false

    func run() async throws {
        try await Control.session(connection) { control in
            if json {
                print(try await control.rawCall("GetStatus")["status"].map(Output.json) ?? "null")
            } else {
                let status = try await control.status()
                Output.describe(status)
                // The status names the daemon's version; an older daemon's only in GetInfo.
                let daemon: String
                if let version = status.version { daemon = version } else { daemon = try await control.daemonVersion() ?? "?" }
                print(
                    "Version".padded(to: 12)
                        + (daemon == SoundscapedVersion.string
                            ? daemon : "soundscaped \(daemon), soundscapectl \(SoundscapedVersion.string)"))
            }
        }
    }
}

struct Reload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make the daemon read its config file again (as SIGHUP does).",
        discussion:
            "Prints what changed and when each change takes effect. A file that does not parse is refused with its line named (exit status 1); the daemon keeps its settings."
    )
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await Control.session(connection) { control in
            let changes = try await control.reload()
            print(changes.isEmpty ? "Reloaded: nothing changed" : "Reloaded:\n" + changes.map { "  \($0)" }.joined(separator: "\n"))
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the soundscapes the daemon can play.")
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the list as JSON.") var json = false

    func run() async throws {
        try await Control.session(connection) { control in
            if json {
                print(Output.json(.object(try await control.rawCall("ListSoundscapes"))))
            } else {
                let current = try await control.status().soundscape
                Output.describe(try await control.soundscapes(), current: current)
            }
        }
    }
}

struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow events as they happen (until interrupted).",
        discussion: "The first line is a snapshot of the current state (reason \"snapshot\").")
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "One JSON object per line, exactly as the daemon sends it.") var json = false

    func run() async throws {
        try await Control.session(connection) { control in
            try await control.followEvents { reply in
                if json {
                    print(reply["event"].map(Output.json) ?? "null")
                } else {
                    Output.describe(event: try Output.decodeEvent(reply))
                }
                fflushStdout()
            }
            throw ControlFailure(message: "the daemon closed the event stream")
        }
    }
}

struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the daemon's health.",
        discussion:
            "Exit status: 0 healthy; 1 unhealthy (the failing checks are named); 2 the daemon is not reachable; 64 the command line is wrong."
    )
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the report as one JSON object.") var json = false

    func run() async throws {
        var healthy = false
        try await Control.session(connection) { control in
            let raw = try await control.rawCall("GetHealth")
            let report = try Output.decode(HealthReport.self, from: .object(raw))
            healthy = report.healthy
            if json {
                print(Output.json(.object(raw)))
            } else {
                Output.describe(report)
            }
        }
        if !healthy { throw ExitCode(1) }
    }
}

struct SetPreference: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set a preference: "
            + Preferences.names.map { "\($0) \(Preferences.valueSyntax(for: $0))" }.joined(separator: ", ") + "."
    )
    @OptionGroup var connection: ConnectionOptions
    @Argument(
        help: ArgumentHelp(Preferences.names.joined(separator: ", ") + "."),
        completion: .list(Preferences.names))
    var name: String
    @Argument(
        help: "The new value.",
        completion: .custom { words, index, _ in await Completion.preferenceValues(completing: words, at: index) })
    var value: String

    func run() async throws {
        try await Control.session(connection) { control in
            let raw = try await control.rawCall("SetPreference", ["name": .string(name), "value": .string(value)])
            Output.describe(preferences: raw["preferences"] ?? .null)
        }
    }
}

struct ShowPreferences: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "preferences", abstract: "Show the preferences.")
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print them as one JSON object.") var json = false

    func run() async throws {
        try await Control.session(connection) { control in
            let preferences = try await control.rawCall("GetPreferences")["preferences"] ?? .null
            if json { print(Output.json(preferences)) } else { Output.describe(preferences: preferences) }
        }
    }
}
