import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import SoundscapeCore
import Varlink

/// A refused or failed request: printed on stderr, exit status 1. (A request no daemon
/// would take is a usage error instead, 64: `Control.usageErrors`.)
struct ControlFailure: Error {
    let message: String
}

/// The CLI's side of `io.soundscaped.Player`.
struct Control {
    static let interface = "io.soundscaped.Player"
    let client: VarlinkClient

    /// How long the CLI waits for each thing, so that no command hangs: what it waited
    /// for is said when it gives up (`Waited`).
    enum Bound {
        /// A connection (immediate unless the socket's backlog is full).
        static let connect: Duration = .seconds(5)
        /// A reply: a daemon that socket activation is just starting included.
        static let reply: Duration = .seconds(15)
        /// `Play`'s reply, which waits until the sound flows at the sink, or the start has
        /// visibly failed (the daemon's own bound, 3 s after it tried).
        static let play: Duration = .seconds(30)
        /// Asking again after `Restarting` (the configuration was mended).
        static let restarts = 3
    }

    /// A wait that ran out: what for, and how long.
    struct Waited: Error {
        let what: String
        let bound: Duration
    }

    /// The daemon's answers to an argument no daemon would take (`volume 101` sent as
    /// SetVolume(101), `set keep-awake maybe`): a usage error, as if soundscapectl had found
    /// it. A valid request the daemon refuses (no such soundscape, a config file it will not
    /// load, not configured) stays a refusal, exit status 1.
    static let usageErrors: Set<String> = ["org.varlink.service.InvalidParameter", "\(interface).InvalidPreference"]

    /// Connects, runs `body`, and maps failures to the documented exit codes: 1 refused or
    /// failed, 2 not reachable, 64 (EX_USAGE) an argument the daemon calls invalid, with
    /// `command`'s usage. A daemon that answers `Restarting` (its configuration was mended;
    /// it starts again with it) is asked again, on a new connection.
    static func session(
        _ options: ConnectionOptions, for command: any ParsableCommand.Type, _ body: (Control) async throws -> Void
    ) async throws {
        let path = socketPath(options)
        for attempt in 1...(Bound.restarts + 1) {
            let client: VarlinkClient
            do {
                client = try await VarlinkClient.connect(unixPath: path, timeout: Bound.connect)
            } catch {
                fail(
                    """
                    soundscaped is not running (no answer on \(path)).
                    Start it with `systemctl --user start soundscaped` (or `soundscaped` from a checkout), or point --socket at its socket.
                    """, status: 2)
            }
            do {
                try await body(Control(client: client))
                await client.close()
                return
            } catch let error as VarlinkError where error.name == "\(interface).Restarting" && attempt <= Bound.restarts {
                await client.close()
            } catch let error as VarlinkError where usageErrors.contains(error.name) {
                await client.close()
                usageError(describe(error), command: command)
            } catch let error as VarlinkError {
                await client.close()
                fail(describe(error), status: 1)
            } catch let error as ControlFailure {
                await client.close()
                fail(error.message, status: 1)
            } catch let waited as Waited {
                fail(
                    """
                    soundscaped did not answer within \(waited.bound.components.seconds) s (waiting for \(waited.what)).
                    See `systemctl --user status soundscaped` and `journalctl --user -u soundscaped`.
                    """, status: 2)
            } catch let error as VarlinkClientError {
                await client.close()
                fail("lost the connection to soundscaped: \(error)", status: 2)
            }
        }
    }

    /// The daemon's socket: `--socket`, else `$SOUNDSCAPED_SOCKET`, else the default; exit
    /// status 2 when there is none.
    static func socketPath(_ options: ConnectionOptions) -> String {
        guard let path = DaemonPaths.socket(explicit: options.socket, environment: ProcessInfo.processInfo.environment) else {
            fail(
                "cannot find the daemon: XDG_RUNTIME_DIR is not set; pass --socket PATH or set SOUNDSCAPED_SOCKET",
                status: 2)
        }
        return path
    }

    static func fail(_ message: String, status: Int32) -> Never {
        writeStderr("soundscapectl: \(message)\n")
        exit(status)
    }

    /// A usage error the daemon found, said as swift-argument-parser says one soundscapectl
    /// finds: the message, `command`'s usage, where its help is; EX_USAGE.
    static func usageError(_ message: String, command: any ParsableCommand.Type) -> Never {
        let name = "\(Soundscapectl._commandName) \(command._commandName)"
        writeStderr(
            """
            Error: \(message)
            Usage: \(Soundscapectl.usageString(for: command))
              See '\(name) --help' for more information.

            """)
        exit(ExitCode.validationFailure.rawValue)
    }

    /// Readable text for the daemon's named errors.
    static func describe(_ error: VarlinkError) -> String {
        let parameters = error.parameters
        switch error.name {
        case "\(interface).NoSuchSoundscape":
            return "no soundscape named '\(parameters["soundscape"]?.stringValue ?? "?")' (see `soundscapectl list`)"
        case "\(interface).NoSuchMix":
            return "no saved mix named '\(parameters["name"]?.stringValue ?? "?")' (see `soundscapectl list`)"
        case "\(interface).DecodeFailed":
            return "cannot play '\(parameters["soundscape"]?.stringValue ?? "?")': \(parameters["reason"]?.stringValue ?? "decode error")"
        case "\(interface).InvalidPreference":
            return parameters["reason"]?.stringValue ?? "invalid preference"
        case "\(interface).InvalidConfiguration":
            return "the config file was refused; the daemon keeps its settings: \(parameters["reason"]?.stringValue ?? "?")"
        case "\(interface).NotConfigured":
            return """
                soundscaped is not configured: \(parameters["reason"]?.stringValue ?? "?")
                Mend it: the daemon reads it again when it changes (and on `soundscapectl reload`) and starts with it.
                """
        case "\(interface).Restarting":
            return "soundscaped is starting again with its mended configuration; it did not answer after \(Bound.restarts) tries"
        case "\(interface).SubscriberTooSlow":
            return "the daemon dropped this event stream because it was read too slowly"
        case "\(interface).Refused":
            return parameters["reason"]?.stringValue ?? "the daemon refused the request"
        case "org.varlink.service.InvalidParameter":
            return "invalid value for '\(parameters["parameter"]?.stringValue ?? "?")'"
        default:
            return "\(error.name)\(parameters.isEmpty ? "" : " \(Output.json(.object(parameters)))")"
        }
    }

    // MARK: Calls

    /// One word: the daemon plays the soundscape of that id, else the saved mix of that
    /// name, so a word that is neither is named as both.
    func play(_ name: String?) async throws -> PlayerStatus {
        do {
            return try await statusCall(
                "Play", ["soundscape": name.map(JSONValue.string) ?? .null], bound: Bound.play,
                waitingFor: "the sound to flow (Play's reply)")
        } catch let error as VarlinkError where error.name == "\(Self.interface).NoSuchSoundscape" && name != nil {
            throw ControlFailure(
                message: "no soundscape or saved mix named '\(name ?? "")' (see `soundscapectl list`)")
        }
    }

    /// Several layers together (`Play` with `layers`).
    func play(layers: [Mix.Layer]) async throws -> PlayerStatus {
        let values = layers.map { JSONValue.object(["id": .string($0.soundscape.rawValue), "level": .number(Double($0.level))]) }
        return try await statusCall(
            "Play", ["layers": .array(values)], bound: Bound.play, waitingFor: "the sound to flow (Play's reply)")
    }

    /// One layer's level; nil takes it out.
    func setLayer(_ id: String, level: Int?) async throws -> PlayerStatus {
        try await statusCall("SetLayer", ["soundscape": .string(id), "level": level.map { .number(Double($0)) } ?? .null])
    }

    /// The sleep timer; nil cancels it.
    func sleep(seconds: Int?) async throws -> PlayerStatus {
        try await statusCall("Sleep", ["seconds": seconds.map { .number(Double($0)) } ?? .null])
    }

    func stop() async throws -> PlayerStatus {
        try await statusCall("Stop")
    }

    func pause() async throws -> PlayerStatus {
        try await statusCall("Pause")
    }

    func setVolume(_ volume: Volume) async throws -> PlayerStatus {
        try await statusCall("SetVolume", ["volume": .number(Double(volume.percent))])
    }

    func status() async throws -> PlayerStatus {
        try await statusCall("GetStatus")
    }

    /// The config file read again; what changed.
    func reload() async throws -> [String] {
        try await bounded("the reply to Reload") {
            try await client.call("\(Self.interface).Reload", parameters: [String: JSONValue](), returning: ReloadReply.self).changes
        }
    }

    /// The daemon's version, from `org.varlink.service.GetInfo`.
    func daemonVersion() async throws -> String? {
        try await bounded("the reply to GetInfo") {
            try await client.call("org.varlink.service.GetInfo", parameters: [String: JSONValue]())["version"]?.stringValue
        }
    }

    func soundscapes() async throws -> SoundscapeListReply {
        try await bounded("the reply to ListSoundscapes") {
            try await client.call(
                "\(Self.interface).ListSoundscapes", parameters: [String: JSONValue](),
                returning: SoundscapeListReply.self)
        }
    }

    /// Saves what plays as `name`.
    func saveMix(_ name: String) async throws -> SavedMixItem {
        try await bounded("the reply to SaveMix") {
            try await client.call(
                "\(Self.interface).SaveMix", parameters: ["name": JSONValue.string(name)], returning: SavedMixReply.self
            ).mix
        }
    }

    func deleteMix(_ name: String) async throws {
        _ = try await rawCall("DeleteMix", ["name": .string(name)])
    }

    /// The saved mixes as `ListMixes` sends them; none from a daemon before saved mixes.
    func mixes() async throws -> [JSONValue] {
        do {
            return try await rawCall("ListMixes")["mixes"]?.arrayValue ?? []
        } catch let error as VarlinkError where error.name == "org.varlink.service.MethodNotFound" {
            return []
        }
    }

    func rawCall(_ method: String, _ parameters: [String: JSONValue] = [:]) async throws -> [String: JSONValue] {
        try await bounded("the reply to \(method)") {
            try await client.call("\(Self.interface).\(method)", parameters: parameters)
        }
    }

    /// Calls `body` for every Subscribe reply until the stream ends; the first (the
    /// snapshot) is waited for within a bound, the rest as long as they take.
    func followEvents(_ body: ([String: JSONValue]) throws -> Void) async throws {
        let giveUp = Self.giveUp(on: client, after: Bound.reply)
        var first = true
        do {
            for try await reply in client.callMore("\(Self.interface).Subscribe") {
                if first {
                    giveUp.cancel()
                    first = false
                }
                try body(reply)
            }
        } catch {
            giveUp.cancel()
            if await giveUp.value { throw Waited(what: "the first event (Subscribe's snapshot)", bound: Bound.reply) }
            throw error
        }
    }

    private func statusCall(
        _ method: String, _ parameters: [String: JSONValue] = [:], bound: Duration = Bound.reply, waitingFor: String? = nil
    ) async throws -> PlayerStatus {
        try await bounded(waitingFor ?? "the reply to \(method)", within: bound) {
            try await client.call("\(Self.interface).\(method)", parameters: parameters, returning: StatusReply.self).status
        }
    }

    /// `call`, given up after `bound` (the connection closed under it): a `Waited` naming `what`.
    private func bounded<T>(_ what: String, within bound: Duration = Bound.reply, _ call: () async throws -> T) async throws -> T {
        let giveUp = Self.giveUp(on: client, after: bound)
        do {
            let result = try await call()
            giveUp.cancel()
            return result
        } catch {
            giveUp.cancel()
            if await giveUp.value { throw Waited(what: what, bound: bound) }
            throw error
        }
    }

    /// A timer that closes the connection at `bound` unless cancelled first, which fails
    /// the call waiting on it; its value says whether it did.
    private static func giveUp(on client: VarlinkClient, after bound: Duration) -> Task<Bool, Never> {
        Task {
            guard (try? await Task.sleep(for: bound)) != nil else { return false }
            await client.close()
            return true
        }
    }
}

struct ReloadReply: Decodable, Sendable {
    let changes: [String]
}

struct StatusReply: Decodable, Sendable {
    let status: PlayerStatus
}

/// A saved mix, as `SaveMix` and `ListMixes` send it.
struct SavedMixItem: Decodable, Sendable {
    let name: String
    let layers: [Mix.Layer]

    /// `rain + ocean-waves=40`.
    var layersInWords: String { layers.map(\.description).joined(separator: " + ") }
}

struct SavedMixReply: Decodable, Sendable {
    let mix: SavedMixItem
}

struct SoundscapeListReply: Decodable, Sendable {
    struct Item: Decodable, Sendable {
        let id: String
        let title: String
        let origin: String
        let path: String
        let isDefault: Bool
        /// Why the file cannot play; nil when it can (and from a daemon before 0.3.1).
        let unplayable: String?
        /// Who made it, under which licence (an import's `--credit`); nil when not given.
        let credit: String?
    }

    let soundscapes: [Item]
    let `default`: String
}
