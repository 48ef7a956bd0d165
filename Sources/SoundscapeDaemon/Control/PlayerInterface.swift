import SoundscapeCore
import SoundscapeLibrary
import SoundscapeSystem
import Synchronization
import Varlink

/// `io.soundscaped.Player` on the control socket: translates calls into
/// `Player` commands and streams the event hub to subscribers.
struct PlayerInterface: VarlinkInterface {
    let name = PlayerInterfaceDefinition.name
    let description = PlayerInterfaceDefinition.idl
    let player: Player
    let hub: EventHub
    /// Large replies (the soundscape list) are encoded here, off the event loop.
    let worker: WorkerThread
    /// Events a subscriber may fall behind before it is dropped.
    let subscriberQueueLimit: Int
    let reloader: Reloader
    let listEncoding = ListEncoding()

    func handle(_ call: VarlinkCall) async throws {
        switch call.unqualifiedMethod {
        case "Play":
            try call.parameters.rejectUnknown(allowed: ["soundscape", "layers", "mix"])
            let name = try call.parameters.optionalString("soundscape").map(PlayerErrors.soundscapeID)
            let layers = try call.parameters.optionalArray("layers")?.map(PlayerErrors.layer)
            let mixName = try call.parameters.optionalString("mix")
            do {
                let status: PlayerStatus
                switch (name, layers, mixName) {
                case (let name?, nil, nil): status = try await player.play(named: name)
                case (nil, let layers?, nil):
                    let mix: Mix
                    do throws(MixError) { mix = try Mix(layers: layers) } catch { throw PlayerErrors.refused(error.description) }
                    status = try await player.play(mix: mix)
                case (nil, nil, let mixName?): status = try await player.play(mixNamed: mixName)
                case (nil, nil, nil): status = try await player.play(mix: nil)
                default: throw PlayerErrors.refused("give one of a soundscape, layers or a mix")
                }
                try await call.reply(StatusReply(status: status))
            } catch let error as PlayerError {
                throw PlayerErrors.varlinkError(for: error)
            }

        case "SaveMix":
            try call.parameters.rejectUnknown(allowed: ["name"])
            let name = try call.parameters.string("name")
            do {
                try await call.reply(SavedMixReply(mix: SavedMixInfo(await player.saveMix(name))))
            } catch let error as PlayerError {
                throw PlayerErrors.varlinkError(for: error)
            }

        case "DeleteMix":
            try call.parameters.rejectUnknown(allowed: ["name"])
            let name = try call.parameters.string("name")
            do {
                try await player.deleteMix(name)
                try await call.reply(EmptyReply())
            } catch let error as PlayerError {
                throw PlayerErrors.varlinkError(for: error)
            }

        case "ListMixes":
            try call.parameters.rejectUnknown(allowed: [])
            try await call.reply(MixListReply(mixes: await player.savedMixes().map(SavedMixInfo.init)))

        case "SetLayer":
            try call.parameters.rejectUnknown(allowed: ["soundscape", "level"])
            let id = try PlayerErrors.soundscapeID(try call.parameters.string("soundscape"))
            let level = try call.parameters.optionalInt("level")
            if let level, !(0...Mix.fullLevel).contains(level) { throw VarlinkError.invalidParameter(parameter: "level") }
            do {
                try await call.reply(StatusReply(status: await player.setLayer(id, level: level)))
            } catch let error as PlayerError {
                throw PlayerErrors.varlinkError(for: error)
            }

        case "Sleep":
            try call.parameters.rejectUnknown(allowed: ["seconds"])
            let seconds = try call.parameters.optionalInt("seconds")
            let longest = Int(SleepTimer.longest.components.seconds)
            if let seconds, !(1...longest).contains(seconds) { throw VarlinkError.invalidParameter(parameter: "seconds") }
            do {
                try await call.reply(StatusReply(status: await player.sleep(seconds.map { .seconds($0) })))
            } catch let error as PlayerError {
                throw PlayerErrors.varlinkError(for: error)
            }

        case "Pause":
            try call.parameters.rejectUnknown(allowed: [])
            try await call.reply(StatusReply(status: await player.pause()))

        case "Stop":
            try call.parameters.rejectUnknown(allowed: [])
            try await call.reply(StatusReply(status: await player.stop()))

        case "SetVolume":
            try call.parameters.rejectUnknown(allowed: ["volume"])
            guard let volume = Volume(percent: try call.parameters.int("volume")) else {
                throw VarlinkError.invalidParameter(parameter: "volume")
            }
            try await call.reply(StatusReply(status: await player.setVolume(volume)))

        case "GetStatus":
            try call.parameters.rejectUnknown(allowed: [])
            try await call.reply(StatusReply(status: await player.status()))

        case "ListSoundscapes":
            try call.parameters.rejectUnknown(allowed: [])
            let (entries, defaultID) = await player.soundscapes()
            try await call.reply(preEncoded: try await listEncoding.encoded(entries, defaultID: defaultID, on: worker))

        case "GetPreferences":
            try call.parameters.rejectUnknown(allowed: [])
            try await call.reply(PreferencesReply(preferences: await player.preferences()))

        case "SetPreference":
            try call.parameters.rejectUnknown(allowed: ["name", "value"])
            let name = try call.parameters.string("name")
            let value = try call.parameters.string("value")
            do {
                try await call.reply(PreferencesReply(preferences: await player.setPreference(name, to: value)))
            } catch let error as Preferences.ValueError {
                throw VarlinkError(
                    name: "\(PlayerInterfaceDefinition.name).InvalidPreference",
                    parameters: ["name": .string(name), "reason": .string(error.description)])
            }

        case "GetHealth":
            try call.parameters.rejectUnknown(allowed: [])
            try await call.reply(await PlayerHealth.report(player: player))

        case "Reload":
            try call.parameters.rejectUnknown(allowed: [])
            switch await reloader.reload(reason: "Reload()") {
            case .applied(let changes):
                try await call.reply(ReloadReply(changes: changes))
            case .refused(let error):
                throw VarlinkError(
                    name: "\(PlayerInterfaceDefinition.name).InvalidConfiguration",
                    parameters: ["reason": .string(error.description)])
            }

        case "Subscribe":
            try call.parameters.rejectUnknown(allowed: [])
            guard call.wantsMore else { throw VarlinkError.expectedMore() }
            try await stream(to: call)

        default:
            throw call.methodNotFound
        }
    }

    /// Relays every event until the client leaves (the task is cancelled and
    /// the subscription ends) or falls too far behind (a final error).
    private func stream(to call: VarlinkCall) async throws {
        let subscription = hub.subscribe(queueLimit: subscriberQueueLimit)
        defer { subscription.cancel() }
        for await published in subscription.events {
            try await call.reply(preEncoded: .wrapping(field: "event", jsonObject: published.json), continues: true)
        }
        if subscription.overflowed {
            throw PlayerErrors.subscriberTooSlow(limit: subscriberQueueLimit)
        }
    }
}

struct ReloadReply: Encodable, Sendable {
    let changes: [String]
}

struct PreferencesReply: Encodable, Sendable {
    let preferences: Preferences
}

struct StatusReply: Encodable, Sendable {
    let status: PlayerStatus
}

struct EmptyReply: Encodable, Sendable {}

/// A saved mix as the IDL's `SavedMix` has it.
struct SavedMixInfo: Encodable, Sendable {
    let name: String
    let layers: [Mix.Layer]

    init(_ mix: Mix) {
        name = mix.name ?? mix.description
        layers = mix.layers
    }
}

struct SavedMixReply: Encodable, Sendable {
    let mix: SavedMixInfo
}

struct MixListReply: Encodable, Sendable {
    let mixes: [SavedMixInfo]
}

struct SoundscapeInfo: Encodable, Sendable {
    let id: String
    let title: String
    let origin: String
    let path: String
    let gain: Float
    let isDefault: Bool
    let unplayable: String?
    let credit: String?

    init(entry: SoundscapeEntry, isDefault: Bool) {
        id = entry.id.rawValue
        title = entry.title
        origin = entry.origin.rawValue
        path = entry.path
        gain = entry.gain
        self.isDefault = isDefault
        unplayable = entry.unplayable
        credit = entry.credit
    }
}

struct SoundscapeList: Encodable, Sendable {
    let soundscapes: [SoundscapeInfo]
    let `default`: String
}

/// The interface's own errors, named as its IDL declares them.
enum PlayerErrors {
    static func noSuchSoundscape(_ name: String) -> VarlinkError {
        VarlinkError(name: "\(PlayerInterfaceDefinition.name).NoSuchSoundscape", parameters: ["soundscape": .string(name)])
    }

    static func decodeFailed(_ soundscape: String, reason: String) -> VarlinkError {
        VarlinkError(
            name: "\(PlayerInterfaceDefinition.name).DecodeFailed",
            parameters: ["soundscape": .string(soundscape), "reason": .string(reason)])
    }

    /// The daemon cannot use its configuration (`UnconfiguredDaemon`): `reason` names the file and line.
    static func notConfigured(_ reason: String) -> VarlinkError {
        VarlinkError(name: "\(PlayerInterfaceDefinition.name).NotConfigured", parameters: ["reason": .string(reason)])
    }

    /// The configuration resolves now and the daemon starts again with it: ask again.
    static let restarting = VarlinkError(name: "\(PlayerInterfaceDefinition.name).Restarting", parameters: [:])

    static func subscriberTooSlow(limit: Int) -> VarlinkError {
        VarlinkError(name: "\(PlayerInterfaceDefinition.name).SubscriberTooSlow", parameters: ["limit": .number(Double(limit))])
    }

    static func noSuchMix(_ name: String) -> VarlinkError {
        VarlinkError(name: "\(PlayerInterfaceDefinition.name).NoSuchMix", parameters: ["name": .string(name)])
    }

    static func refused(_ reason: String) -> VarlinkError {
        VarlinkError(name: "\(PlayerInterfaceDefinition.name).Refused", parameters: ["reason": .string(reason)])
    }

    /// One `Layer` of a call: `{"id": "rain", "level": 40}`.
    static func layer(_ value: JSONValue) throws(VarlinkError) -> Mix.Layer {
        guard case .object(let fields) = value, let name = fields["id"]?.stringValue,
            let level = fields["level"]?.intValue, fields.keys.allSatisfy({ ["id", "level"].contains($0) })
        else { throw .invalidParameter(parameter: "layers") }
        return Mix.Layer(try soundscapeID(name), level: level)
    }

    /// A soundscape id from a call; a name no soundscape can have is no such soundscape.
    static func soundscapeID(_ name: String) throws(VarlinkError) -> SoundscapeID {
        guard let id = SoundscapeID(name) else { throw noSuchSoundscape(name) }
        return id
    }

    static func varlinkError(for error: PlayerError) -> VarlinkError {
        switch error {
        case .refused(let reason): refused(reason)
        case .noSuchSoundscape(let id): noSuchSoundscape(id.rawValue)
        case .noSuchMix(let name): noSuchMix(name)
        case .decodeFailed(let failure): decodeFailed(failure.soundscape.rawValue, reason: failure.reason)
        }
    }
}

/// The `ListSoundscapes` reply, encoded on the worker thread (hundreds of
/// entries take milliseconds: long enough to delay every other client of the
/// event loop) and kept until the catalog changes.
final class ListEncoding: Sendable {
    private let last = Mutex<(entries: [SoundscapeEntry], defaultID: SoundscapeID, encoded: VarlinkEncodedParameters)?>(nil)

    func encoded(
        _ entries: [SoundscapeEntry], defaultID: SoundscapeID,
        on worker: WorkerThread
    ) async throws -> VarlinkEncodedParameters {
        if let cached = last.withLock({ $0 }), cached.defaultID == defaultID, cached.entries == entries {
            return cached.encoded
        }
        let encoded = try await worker.run {
            Result {
                try VarlinkEncodedParameters(
                    SoundscapeList(
                        soundscapes: entries.map { SoundscapeInfo(entry: $0, isDefault: $0.id == defaultID) },
                        default: defaultID.rawValue))
            }
        }.get()
        last.withLock { $0 = (entries, defaultID, encoded) }
        return encoded
    }
}
