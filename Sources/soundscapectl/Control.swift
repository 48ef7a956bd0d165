import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import SoundscapeCore
import Varlink

/// A refused or failed request: printed on stderr, exit status 1.
struct ControlFailure: Error {
    let message: String
}

/// The CLI's side of `io.soundscaped.Player`.
struct Control {
    static let interface = "io.soundscaped.Player"
    let client: VarlinkClient

    /// Connects, runs `body`, and maps failures to the documented exit codes.
    static func session(_ options: ConnectionOptions, _ body: (Control) async throws -> Void) async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = DaemonPaths.socket(explicit: options.socket, environment: environment) else {
            fail(
                "cannot find the daemon: XDG_RUNTIME_DIR is not set; pass --socket PATH or set SOUNDSCAPED_SOCKET",
                status: 2)
        }
        let client: VarlinkClient
        do {
            client = try await VarlinkClient.connect(unixPath: path)
        } catch {
            fail(
                """
                soundscaped is not running (no answer on \(path)).
                Start it with `soundscaped` (or `systemctl --user start soundscaped`), or point --socket at its socket.
                """, status: 2)
        }
        do {
            try await body(Control(client: client))
            await client.close()
        } catch let error as VarlinkError {
            await client.close()
            fail(describe(error), status: 1)
        } catch let error as ControlFailure {
            await client.close()
            fail(error.message, status: 1)
        } catch let error as VarlinkClientError {
            await client.close()
            fail("lost the connection to soundscaped: \(error)", status: 2)
        }
    }

    static func fail(_ message: String, status: Int32) -> Never {
        writeStderr("soundscapectl: \(message)\n")
        exit(status)
    }

    /// Readable text for the daemon's named errors.
    static func describe(_ error: VarlinkError) -> String {
        let parameters = error.parameters
        switch error.name {
        case "\(interface).NoSuchSoundscape":
            return "no soundscape named '\(parameters["soundscape"]?.stringValue ?? "?")' (see `soundscapectl list`)"
        case "\(interface).DecodeFailed":
            return "cannot play '\(parameters["soundscape"]?.stringValue ?? "?")': \(parameters["reason"]?.stringValue ?? "decode error")"
        case "\(interface).InvalidPreference":
            return parameters["reason"]?.stringValue ?? "invalid preference"
        case "\(interface).InvalidConfiguration":
            return "the config file was refused; the daemon keeps its settings: \(parameters["reason"]?.stringValue ?? "?")"
        case "\(interface).SubscriberTooSlow":
            return "the daemon dropped this event stream because it was read too slowly"
        case "org.varlink.service.InvalidParameter":
            return "invalid value for '\(parameters["parameter"]?.stringValue ?? "?")'"
        default:
            return "\(error.name)\(parameters.isEmpty ? "" : " \(Output.json(.object(parameters)))")"
        }
    }

    // MARK: Calls

    func play(_ name: String?) async throws -> PlayerStatus {
        try await statusCall("Play", ["soundscape": name.map(JSONValue.string) ?? .null])
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
        try await client.call(
            "\(Self.interface).Reload", parameters: [String: JSONValue](),
            returning: ReloadReply.self
        ).changes
    }

    /// The daemon's version, from `org.varlink.service.GetInfo`.
    func daemonVersion() async throws -> String? {
        try await client.call("org.varlink.service.GetInfo", parameters: [String: JSONValue]())["version"]?.stringValue
    }

    func soundscapes() async throws -> SoundscapeListReply {
        try await client.call(
            "\(Self.interface).ListSoundscapes", parameters: [String: JSONValue](),
            returning: SoundscapeListReply.self)
    }

    func rawCall(_ method: String, _ parameters: [String: JSONValue] = [:]) async throws -> [String: JSONValue] {
        try await client.call("\(Self.interface).\(method)", parameters: parameters)
    }

    /// Calls `body` for every Subscribe reply until the stream ends.
    func followEvents(_ body: ([String: JSONValue]) throws -> Void) async throws {
        for try await reply in client.callMore("\(Self.interface).Subscribe") {
            try body(reply)
        }
    }

    private func statusCall(_ method: String, _ parameters: [String: JSONValue] = [:]) async throws -> PlayerStatus {
        try await client.call("\(Self.interface).\(method)", parameters: parameters, returning: StatusReply.self).status
    }
}

struct ReloadReply: Decodable, Sendable {
    let changes: [String]
}

struct StatusReply: Decodable, Sendable {
    let status: PlayerStatus
}

struct SoundscapeListReply: Decodable, Sendable {
    struct Item: Decodable, Sendable {
        let id: String
        let title: String
        let origin: String
        let path: String
        let isDefault: Bool
    }

    let soundscapes: [Item]
    let `default`: String
}
