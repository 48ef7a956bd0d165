import Foundation
import Logging
import NIOPosix
import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary
import SoundscapeStore
import SoundscapeSystem
import TestSupport
@testable import SoundscapeDaemon

/// A real `Player` — real soundscape files (the repository's built-in ones
/// plus a user directory), a real SQLite store in a temporary directory, the
/// real event hub and worker thread — over a `FakeAudioOutput`.
final class PlayerHarness: @unchecked Sendable {
    static let rain = SoundscapeID("rain")!
    static let wind = SoundscapeID("wind")!
    static let ocean = SoundscapeID("ocean-waves")!

    let directory: URL
    let userSoundscapes: URL
    let output: FakeAudioOutput
    let clock = VirtualClock()
    let hub = EventHub(initialStatus: nil)
    let worker = WorkerThread(name: "test-io")
    let player: Player
    let events: EventHub.Subscription
    private var runTask: Task<Void, Never>?

    /// The repository's `soundscapes/`, found from this file.
    static var builtinSoundscapes: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("soundscapes").path
    }

    /// - Parameters:
    ///   - saved: written to the database before the player starts, as an earlier run would have.
    ///   - preferences: likewise.
    ///   - mixes: likewise, the saved mixes.
    init(
        saved: PersistedState? = nil, preferences: Preferences? = nil, mixes: [SavedMix] = [],
        signer: SignerConfiguration? = nil, userFiles: [String: [UInt8]] = [:],
        configuration: PlayerMachine.Configuration = .init(), saveWait: Duration = .seconds(1),
        finishesFades: Bool = true
    ) throws {
        output = FakeAudioOutput(finishesFades: finishesFades)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("player-test-\(UUID().uuidString)")
        userSoundscapes = directory.appendingPathComponent("soundscapes")
        try FileManager.default.createDirectory(at: userSoundscapes, withIntermediateDirectories: true)
        for (name, bytes) in userFiles {
            try Data(bytes).write(to: userSoundscapes.appendingPathComponent(name))
        }
        let stateDirectory = directory.appendingPathComponent("state").path
        let store = try StateStore(directory: stateDirectory)
        if let saved { try store.save(saved) }
        if let preferences { try store.save(preferences) }
        for mix in mixes { try store.save(mix) }
        var logger = Logger(label: "player-test")
        logger.logLevel = .critical
        let (hub, socket) = (self.hub, directory.appendingPathComponent("control.sock").path)
        let signerHost = try signer.map {
            try SignerHost(
                configuration: $0, baseEnvironment: ["PATH": "/usr/bin:/bin"], socketPath: socket, hub: hub,
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger, spawner: .unhardened)
        }
        player = Player(
            .init(
                output: output, outputEvents: output.events, outputEventSink: output.eventSink, store: store,
                locations: .init(builtin: Self.builtinSoundscapes, extra: [], user: userSoundscapes.path),
                hub: hub, worker: worker, logger: logger, clock: clock),
            signerHost: signerHost, configuration: configuration, saveWait: saveWait)
        events = hub.subscribe(queueLimit: 1000)
    }

    deinit {
        events.cancel()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts the player's run loop (it starts the output, then restores the
    /// saved state) and returns once the saved state is loaded.
    func start() async throws {
        runTask = Task { [player] in await player.run() }
        try await output.waitForCall(.start)
        try await withTimeout("the player to load its saved state", seconds: 5) { [player] in await player.untilRunning() }
    }

    /// Shuts the player down and waits for its run loop to end.
    func shutdown() async {
        await player.shutdown(fadeBound: .milliseconds(200))
        await runTask?.value
    }

    /// The next event with `reason`, skipping others; fails after `seconds`.
    @discardableResult
    func nextEvent(_ reason: EventReason, seconds: Double = 5) async throws -> PlayerEvent {
        let events = self.events
        return try await withTimeout("a '\(reason)' event", seconds: seconds) {
            for await published in events.events where published.event.reason == reason {
                return published.event
            }
            throw HarnessError("the event stream ended before a '\(reason)' event")
        }
    }

    /// What is on disk now, read through a second connection after the player's writes are done.
    func savedState() async throws -> PersistedState? {
        await player.keeper.saved()
        return try StateStore(directory: directory.appendingPathComponent("state").path).load()
    }
}
