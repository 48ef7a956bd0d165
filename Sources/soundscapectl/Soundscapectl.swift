import ArgumentParser
import SoundscapeCore
import Varlink

@main
struct Soundscapectl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundscapectl",
        abstract: "Control soundscaped, the keep-alive soundscape service.",
        discussion: """
            --socket may stand before the subcommand or after it.

            Exit status: 0 success; 1 the daemon refused a valid request, or it failed; \
            2 the daemon is not reachable; 64 the command line is wrong (EX_USAGE: \
            no subcommand, an unknown subcommand or option, a missing or extra argument, \
            or a value the command does not take, such as volume 101 or set keep-awake maybe, \
            whether soundscapectl or the daemon finds it).
            """,
        version: SoundscapedVersion.string,
        subcommands: [
            Play.self, LayerCommand.self, SaveMix.self, DeleteMix.self, SleepCommand.self, Pause.self, Stop.self, VolumeCommand.self, Status.self,
            Reload.self, List.self,
            Events.self, Health.self, SetPreference.self,
            ShowPreferences.self, ImportCommand.self, Remove.self, ImportWorkerCommand.self,
        ])

    /// `soundscapectl --socket PATH status`: ArgumentParser parses an option of a parent
    /// command wherever it stands, and a subcommand's `ConnectionOptions` sees the same value.
    @OptionGroup var connection: ConnectionOptions

    /// No subcommand: a usage error (64) like any other, the help on stderr; a script
    /// that forgot its subcommand must not read as a success.
    func run() async throws {
        writeStderr("Error: no subcommand; name one of those below.\n\n" + Self.helpMessage() + "\n")
        throw ExitCode.validationFailure
    }
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
        abstract: "Start playing (or switch to) a soundscape, several as layers, or a saved mix; without one, what played last.",
        discussion: """
            One ID plays alone. Several play together as layers (at most \(Mix.maximumLayers)), each at its own \
            LEVEL, 0-100 (default 100), under the volume: play rain ocean-waves=40. Switching cross-fades; \
            a layer in both changes level only. One word that is no soundscape's id but a saved mix's \
            name (see save) plays the mix.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(
        help: ArgumentHelp(
            "Soundscape id, as `soundscapectl list` shows, with =LEVEL for a layer's level; or a saved mix's name.",
            valueName: "id[=level]"),
        completion: .custom { words, _, _ in await Completion.playableNames(completing: words) })
    var names: [String] = []

    /// The layers asked for; nil for a single id (or none), which plays alone.
    func layers() throws -> [Mix.Layer]? {
        // "=" found by its byte (`SeparatedText`), as the daemon's flags are read.
        guard names.count > 1 || names.first.map({ SeparatedText.contains($0, "=") }) == true else { return nil }
        let layers = try names.map { word throws -> Mix.Layer in
            let parts = SeparatedText.cut(word, at: "=").map { [String($0.before), String($0.after)] } ?? [word]
            guard let id = SoundscapeID(parts[0]) else { throw ValidationError("'\(parts[0])' is not a soundscape id") }
            guard parts.count == 2 else { return Mix.Layer(id) }
            guard let level = Int(parts[1]), (0...Mix.fullLevel).contains(level) else {
                throw ValidationError("the level of '\(id)' must be 0-100, not '\(parts[1])'")
            }
            return Mix.Layer(id, level: level)
        }
        do {
            return try Mix(layers: layers).layers
        } catch {
            throw ValidationError(error.description)
        }
    }

    func validate() throws {
        _ = try layers()
    }

    func run() async throws {
        let layers = try layers()
        try await Control.session(connection, for: Self.self) { control in
            let status: PlayerStatus
            if let layers { status = try await control.play(layers: layers) } else { status = try await control.play(names.first) }
            Output.describePlay(status)
        }
    }
}

struct LayerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "layer",
        abstract: "Set one layer's level, adding it to what plays; off takes it out.",
        discussion: """
            A new layer fades in; off fades it out. What plays changes (or what would play, while \
            stopped); nothing starts. A mix has at most \(Mix.maximumLayers) layers, and its last layer \
            cannot go (play another soundscape, or stop).
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(
        help: "Soundscape id, as `soundscapectl list` shows.",
        completion: .custom { words, _, _ in await Completion.soundscapeIDs(completing: words) })
    var id: String
    @Argument(help: ArgumentHelp("0-100, or off.", valueName: "level"), completion: .list(["off", "25", "50", "75", "100"]))
    var level: String

    /// nil for off.
    func parsedLevel() throws -> Int? {
        if level == "off" { return nil }
        guard let value = Int(level), (0...Mix.fullLevel).contains(value) else {
            throw ValidationError("a layer's level is 0-100 or off, not '\(level)'")
        }
        return value
    }

    func validate() throws {
        _ = try parsedLevel()
        guard SoundscapeID(id) != nil else { throw ValidationError("'\(id)' is not a soundscape id") }
    }

    func run() async throws {
        let level = try parsedLevel()
        try await Control.session(connection, for: Self.self) { control in
            let status = try await control.setLayer(id, level: level)
            print("Layers: \(status.playsInWords)" + (status.wantsPlaying ? "" : " (not playing; play starts them)"))
        }
    }
}

struct SaveMix: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save",
        abstract: "Save what plays (its layers and their levels) as a mix; play NAME plays it again.",
        discussion: """
            A mix saved under the same name is replaced. A name has letters, digits, spaces and \
            - _ . + ( ) , ' only, and is no soundscape's id. list shows the saved mixes.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The mix's name.", completion: .custom { words, _, _ in await Completion.mixNames(completing: words) })
    var name: String

    func run() async throws {
        try await Control.session(connection, for: Self.self) { control in
            let mix = try await control.saveMix(name)
            print("Saved \(mix.name): \(mix.layersInWords)")
        }
    }
}

struct DeleteMix: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a saved mix (what plays goes on).")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The mix's name.", completion: .custom { words, _, _ in await Completion.mixNames(completing: words) })
    var name: String

    func run() async throws {
        try await Control.session(connection, for: Self.self) { control in
            try await control.deleteMix(name)
            print("Deleted \(name)")
        }
    }
}

struct SleepCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sleep",
        abstract: "Fade the sound away after a time, keeping the signer running; off cancels.",
        discussion: """
            DURATION is \(SleepTimer.formatHelp). The sound fades over the last third of the time \
            (at most a minute); then the keep-alive goes on silently, as at volume 0: the signer \
            keeps running and being checked. play wakes the sound. While asleep, a signer that \
            goes down is announced (events, the desktop's notification) but no cue sounds.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(
        help: ArgumentHelp("How long until silence (90s, 45m, 1h30m), or off.", valueName: "duration"),
        completion: .list(["off", "15m", "30m", "45m", "1h", "1h30m"]))
    var duration: String

    /// nil for off.
    func parsed() throws -> Duration? {
        if duration == "off" { return nil }
        guard let value = SleepTimer.parse(duration) else {
            throw ValidationError("sleep takes \(SleepTimer.formatHelp), or off; not '\(duration)'")
        }
        return value
    }

    func validate() throws {
        _ = try parsed()
    }

    func run() async throws {
        let seconds = try parsed().map { Int($0.components.seconds) }
        try await Control.session(connection, for: Self.self) { control in
            let status = try await control.sleep(seconds: seconds)
            print(status.sleepInWords.map { "Sleep: \($0)" } ?? "Sleep timer off")
        }
    }
}

struct Pause: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fade out but keep the session: the signer host keeps running; play resumes.")
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await Control.session(connection, for: Self.self) { control in
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
        try await Control.session(connection, for: Self.self) { control in
            let status = try await control.stop()
            print("Stopped (\(status.soundscape) at \(status.volume.percent)%)")
        }
    }
}

struct VolumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume",
        abstract: "Print the volume, or set it: 0–100, +N/-N, or off, low, medium, high, max.",
        discussion: """
            N is 0–100 in every form. A step +N or -N stops at 0 or 100: at 90%, +50 gives 100%. \
            A number outside 0–100, as a volume or as a step (101, +200), is a usage error (exit status 64).
            """)

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

    /// The change asked for, nil to print the volume. A word `VolumeChange` does not take
    /// (`101`, `+200`, `loud`) is a usage error, found here before the daemon is asked.
    func change() throws -> VolumeChange? {
        guard let value = words.first else { return nil }
        do {
            return try VolumeChange(parsing: value)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func validate() throws {
        guard words.count <= 1 else { throw ValidationError("expected one volume, got \(words.joined(separator: " "))") }
        _ = try change()
    }

    func run() async throws {
        let change = try change()
        try await Control.session(connection, for: Self.self) { control in
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
        try await Control.session(connection, for: Self.self) { control in
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
        try await Control.session(connection, for: Self.self) { control in
            let changes = try await control.reload()
            print(changes.isEmpty ? "Reloaded: nothing changed" : "Reloaded:\n" + changes.map { "  \($0)" }.joined(separator: "\n"))
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the soundscapes the daemon can play, and the saved mixes.",
        discussion: "--json prints ListSoundscapes' reply with a mixes key added: ListMixes' saved mixes.")
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the list as JSON.") var json = false

    func run() async throws {
        try await Control.session(connection, for: Self.self) { control in
            if json {
                var list = try await control.rawCall("ListSoundscapes")
                list["mixes"] = .array(try await control.mixes())
                print(Output.json(.object(list)))
            } else {
                let status = try await control.status()
                Output.describe(try await control.soundscapes(), current: status.soundscape)
                let mixes = try await control.mixes().map { try Output.decode(SavedMixItem.self, from: $0) }
                Output.describe(mixes: mixes, current: status.mix)
            }
        }
    }
}

struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow events as they happen, across restarts of the daemon (until interrupted).",
        discussion: """
            The first line is a snapshot of the current state (reason "snapshot"). When the daemon goes away \
            (a restart, a crash), soundscapectl says so once on stderr and waits for it, as journalctl -f \
            waits for more journal: it tries again after 0.1 s, then less often, every 2 s at most (under \
            systemd the first try starts the daemon: the socket is systemd's). When one answers, \
            "reconnected: soundscaped VERSION, state STATE" goes to stderr and the lines go on from that \
            daemon's snapshot (its seq starts again). With --no-follow it ends instead, exit status 2. \
            When no daemon answers at the start it ends at once (exit status 2), as every command does.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "One JSON object per line, exactly as the daemon sends it.") var json = false
    @Flag(name: .customLong("no-follow"), help: "End when the daemon goes away (exit status 2) instead of waiting for it.")
    var noFollow = false

    func run() async throws {
        let json = json
        let show: ([String: JSONValue]) throws -> Void = { reply in
            if json {
                print(reply["event"].map(Output.json) ?? "null")
            } else {
                Output.describe(event: try Output.decodeEvent(reply))
            }
            fflushStdout()
        }
        // The first subscription is any command's call: what keeps it from its snapshot ends
        // the command with its exit status. What ends it later is followed (`Following`).
        var streamed = false
        var ended: (any Error)?
        try await Control.session(connection, for: Self.self) { control in
            do {
                try await control.followEvents { reply in
                    streamed = true
                    try show(reply)
                }
            } catch {
                guard streamed, !noFollow else { throw error }
                ended = error
            }
            if noFollow { Control.fail("soundscaped closed the event stream", status: 2) }
        }
        await Following.reconnect(to: Control.socketPath(connection), after: ended, show)
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
        try await Control.session(connection, for: Self.self) { control in
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
        try await Control.session(connection, for: Self.self) { control in
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
        try await Control.session(connection, for: Self.self) { control in
            let preferences = try await control.rawCall("GetPreferences")["preferences"] ?? .null
            if json { print(Output.json(preferences)) } else { Output.describe(preferences: preferences) }
        }
    }
}
