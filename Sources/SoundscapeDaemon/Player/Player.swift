import Logging
import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary
import SoundscapeStore
import SoundscapeSystem

/// Why a player command was refused.
public enum PlayerError: Error, Sendable, Equatable, CustomStringConvertible {
    case noSuchSoundscape(SoundscapeID)
    case decodeFailed(SoundscapeDecodeError)
    /// A mix that cannot be (too many layers, the last one taken out…), or a
    /// request that makes no sense now (a sleep timer with nothing playing).
    case refused(String)
    /// No saved mix has this name.
    case noSuchMix(String)

    public var description: String {
        switch self {
        case .noSuchSoundscape(let id): "no soundscape named '\(id)'"
        case .noSuchMix(let name): "no saved mix named '\(name)'"
        case .decodeFailed(let error): error.description
        case .refused(let why): why
        }
    }
}

/// The one owner of the player's state.
///
/// Commands from clients and facts from the audio output all arrive here and
/// go through `PlayerMachine`; this actor only carries out the actions the
/// machine returns (tell the output, persist, publish) — see
/// `Player+Actions.swift` — and keeps the signer host going through its
/// `SignerSupervisor`. Its own life (starting, running, shutting down, and who
/// waits for what meanwhile) is `PlayerLifecycle`, as pure as the machine.
///
/// It runs on the daemon's event loop, which also answers the control socket,
/// so it never blocks: files are scanned and opened on the worker thread
/// (`SoundscapeLoader`), the database is read and written on a thread of its
/// own (`StateKeeper`), and the output's methods return at once. While it
/// awaits either thread, other calls (a status query, say) are served. Time
/// comes from an injected `PlayerClock`.
public actor Player {
    public struct Dependencies: Sendable {
        public var output: any AudioOutput
        public var outputEvents: AsyncStream<AudioOutputEvent>
        /// Finished on shutdown, which ends the run loop.
        public var outputEventSink: AsyncStream<AudioOutputEvent>.Continuation
        public var store: StateStore?
        public var locations: SoundscapeCatalog.Locations
        public var hub: EventHub
        public var worker: WorkerThread
        public var logger: Logger
        /// What time it is, and the timers for the machines' deadlines.
        public var clock: any PlayerClock
        /// The daemon's environment (children such as `systemd-inhibit` take what they need of it).
        public var environment: [String: String]
        /// Where `FingerprintMemo` keeps the soundscapes' fingerprints: the PCM
        /// cache's directory, whose file names they are (nil: none, every open hashes).
        public var fingerprintDirectory: String?

        public init(
            output: any AudioOutput, outputEvents: AsyncStream<AudioOutputEvent>,
            outputEventSink: AsyncStream<AudioOutputEvent>.Continuation, store: StateStore?,
            locations: SoundscapeCatalog.Locations, hub: EventHub, worker: WorkerThread, logger: Logger,
            clock: any PlayerClock, environment: [String: String] = [:], fingerprintDirectory: String? = nil
        ) {
            self.environment = environment
            self.fingerprintDirectory = fingerprintDirectory
            self.output = output
            self.outputEvents = outputEvents
            self.outputEventSink = outputEventSink
            self.store = store
            self.locations = locations
            self.hub = hub
            self.worker = worker
            self.logger = logger
            self.clock = clock
        }
    }

    typealias Waiter = CheckedContinuation<Void, Never>

    var machine: PlayerMachine
    let configuration: PlayerMachine.Configuration
    let output: any AudioOutput
    let outputEvents: AsyncStream<AudioOutputEvent>
    let outputEventSink: AsyncStream<AudioOutputEvent>.Continuation
    let keeper: StateKeeper
    let loader: SoundscapeLoader
    var catalog = SoundscapeCatalog(entries: [], defaultID: SoundscapeCatalog.fallbackDefault)
    let hub: EventHub
    let logger: Logger
    let clock: any PlayerClock
    var lifecycle = PlayerLifecycle<Waiter>()
    /// play, pause and stop take effect in the order they were called.
    var sessionCommands = CommandQueue<Waiter>()
    /// Inputs for the machine, in order: one that an action causes waits here
    /// until the actions before it are carried out (see `apply`).
    var inbox: [PlayerMachine.Input] = []
    /// The machines' deadlines, served by one timer.
    var ticks = TickSchedule()
    var tickTimer: ScheduledCall?
    /// The opened files of what plays (and the last switch target), so a resume
    /// after an interruption or a reconnect needs no disk access.
    var loaded: [SoundscapeID: SoundscapeData] = [:]
    /// The signer-down cue, opened once at start (nil if it is missing: silence plays instead).
    var cue: SoundscapeData?
    /// The saved mixes, each with its name, sorted by name (see `Player+Mixes.swift`).
    var mixes: [Mix] = []
    /// Made in `restore` (its reports come back to this actor), or by a reload.
    var signer: SignerSupervisor<SignerHost>?
    /// Whether the user wants the keep-alive session, as the machine last said
    /// (`.signerSession`): what a signer host configured by a reload starts from.
    var signerSession = false
    var signerHost: SignerHost?
    /// The `keep-awake` preference's sleep inhibitor (see `Player+KeepAwake.swift`).
    var keepAwake = KeepAwakeMachine()
    var inhibitors: [Int: SleepInhibitor] = [:]
    /// What `systemd-inhibit` runs with (PATH, the system bus address).
    let inhibitorEnvironment: [String: String]
    /// Files (moved to the background once the saved state is restored).
    let worker: WorkerThread
    /// What the start reads from disk, begun the moment the player exists (see `restore`).
    let startupReads: StartupReads

    struct StartupReads: Sendable {
        var saved: WorkerThread.Job<StateKeeper.Restored>
        var catalog: WorkerThread.Job<SoundscapeCatalog>
        var signerDownCue: WorkerThread.Job<SoundscapeData?>
    }

    /// How long at most a command's answer waits for its change to be written.
    private let saveWait: Duration

    init(
        _ dependencies: Dependencies, signerHost: SignerHost? = nil,
        configuration: PlayerMachine.Configuration = .init(), saveWait: Duration = .seconds(1)
    ) {
        self.saveWait = saveWait
        output = dependencies.output
        outputEvents = dependencies.outputEvents
        outputEventSink = dependencies.outputEventSink
        keeper = StateKeeper(store: dependencies.store, logger: dependencies.logger)
        loader = SoundscapeLoader(
            locations: dependencies.locations, worker: dependencies.worker,
            fingerprints: dependencies.fingerprintDirectory.map(FingerprintMemo.init(directory:)))
        worker = dependencies.worker
        hub = dependencies.hub
        logger = dependencies.logger
        clock = dependencies.clock
        self.configuration = configuration
        // A stand-in until `run` has loaded what was saved; nobody sees it (calls wait for `running`).
        machine = PlayerMachine(
            desired: DesiredState(
                intent: .stopped, soundscape: SoundscapeCatalog.fallbackDefault,
                volume: .default), configuration: configuration)
        self.signerHost = signerHost
        inhibitorEnvironment = SleepInhibitor.environment(from: dependencies.environment)
        // On their threads from now on, while the daemon sets up the rest: by the time `run`
        // needs them they are usually read.
        startupReads = StartupReads(
            saved: keeper.startRestoring(), catalog: loader.startScan(cleaningUp: true),
            signerDownCue: loader.startLoadingSignerDownCue())
    }

    // MARK: Commands

    /// Plays `id` alone (or the current mix) and returns once the start is
    /// confirmed by the graph or has visibly failed.
    public func play(_ id: SoundscapeID?) async throws(PlayerError) -> PlayerStatus {
        try await play(mix: id.map { Mix($0) })
    }

    /// Plays `mix` (or the current one), replacing what plays, and returns once
    /// the start is confirmed by the graph or has visibly failed. Every layer is
    /// opened first: one that cannot be refuses the whole command.
    public func play(mix: Mix?) async throws(PlayerError) -> PlayerStatus {
        try await play(mix, unlessMissing: nil)
    }

    /// `play(mix:)`; with `saved`, that instead if the mix's first soundscape is not
    /// in the catalog (`play(named:)`), decided in the same trip to the worker.
    func play(_ mix: Mix?, unlessMissing saved: Mix?) async throws(PlayerError) -> PlayerStatus {
        await untilRunning()
        await beginSessionCommand()
        var target = mix ?? machine.desired.mix
        do {
            try await openLayers(target.soundscapes, unlessMissing: saved?.soundscapes)
            if let saved, let first = target.soundscapes.first, catalog.entry(first) == nil { target = saved }
        } catch {
            endSessionCommand()
            throw error
        }
        apply(.play(target))
        // A press of play is also a fresh chance for a signer that had given up.
        performSigner(signer?.resetFailure() ?? [])
        endSessionCommand()
        await settle()
        return await answer(currentStatus())
    }

    /// Silence, keeping the keep-alive session and its signer host.
    public func pause() async -> PlayerStatus {
        await untilRunning()
        await beginSessionCommand()
        apply(.pause)
        endSessionCommand()
        return await answer(currentStatus())
    }

    public func stop() async -> PlayerStatus {
        await untilRunning()
        await beginSessionCommand()
        apply(.stop)
        endSessionCommand()
        return await answer(currentStatus())
    }

    /// `soundscapectl layer ID LEVEL`: one layer's level, the layer added (last) if
    /// absent; nil takes it out. What plays (or would play) changes; nothing starts.
    public func setLayer(_ id: SoundscapeID, level: Int?) async throws(PlayerError) -> PlayerStatus {
        await untilRunning()
        let mix: Mix
        do throws(MixError) {
            if let level {
                mix = try machine.desired.mix.setting(id, to: level)
            } else {
                mix = try machine.desired.mix.removing(id)
            }
        } catch {
            throw .refused(error.description)
        }
        if level != nil { try await openLayers([id]) }
        apply(.setMix(mix))
        return await answer(currentStatus())
    }

    /// `soundscapectl sleep DURATION`: the sound fades away by then, the keep-alive
    /// goes on silently; nil (`sleep off`) cancels.
    public func sleep(_ duration: Duration?) async throws(PlayerError) -> PlayerStatus {
        await untilRunning()
        if duration != nil && !machine.desired.wantsPlaying {
            throw .refused("nothing plays: the sleep timer fades away the sound that plays (play first)")
        }
        apply(.sleep(duration))
        return await answer(currentStatus())
    }

    /// Opens each soundscape (off the event loop, in one job) and keeps it for
    /// the output; the first that cannot be opened is the error, and news. With
    /// `fallback`: those instead when the first of `ids` is not in the catalog.
    private func openLayers(_ ids: [SoundscapeID], unlessMissing fallback: [SoundscapeID]? = nil) async throws(PlayerError) {
        let (catalog, result) = await loader.load(ids, unlessMissing: fallback)
        self.catalog = catalog
        switch result {
        case .failure(.noSuchSoundscape(let id)):
            throw .noSuchSoundscape(id)
        case .failure(.decodeFailed(let error)):
            // A refused command changes nothing but is still news.
            hub.publish(type: .player, reason: .decodeError, message: error.description, status: currentStatus())
            throw .decodeFailed(error)
        case .success(let opened):
            keepLoaded(opened)
        }
    }

    public func setVolume(_ volume: Volume) async -> PlayerStatus {
        await untilRunning()
        apply(.setVolume(volume))
        return await answer(currentStatus())
    }

    public func preferences() async -> Preferences {
        await untilRunning()
        return machine.preferences
    }

    /// `soundscapectl set NAME VALUE`; a bad name or value is refused, nothing changes.
    public func setPreference(_ name: String, to value: String) async throws(Preferences.ValueError) -> Preferences {
        await untilRunning()
        let before = machine.preferences
        var preferences = before
        try preferences.set(name, to: value)
        apply(.setPreferences(preferences))
        // An echo of the command, after what it caused (a resume, a duck): for clients that
        // act on a preference, such as the desktop companion's notifications.
        let changed = machine.preferences.changedNames(since: before)
        if !changed.isEmpty {
            hub.publish(
                type: .player, reason: .preferencesChanged, message: changed.joined(separator: ", "),
                status: currentStatus())
        }
        return await answer(machine.preferences)
    }

    /// `reply` once what the command changed is written: a client that was
    /// answered can count on the change surviving a crash. The status is taken
    /// before the wait, so it is what this command made. A database that is
    /// locked or a disk that hangs holds the answer back `saveWait` at most;
    /// the change stays queued, and is written when the disk lets it.
    func answer<Reply: Sendable>(_ reply: Reply) async -> Reply {
        await keeper.saved(within: saveWait, clock: clock)
        return reply
    }

    public func status() async -> PlayerStatus {
        await untilRunning()
        return currentStatus()
    }

    /// The status as it is now (callers inside the actor know it is running).
    func currentStatus() -> PlayerStatus {
        var status = machine.status(now: clock.now)
        status.signer = signer?.status
        if let program = signerHost?.configuration.command.first {
            status.signer?.name = FilePaths.lastComponent(program)
        }
        status.keepAwake = keepAwake.status(preferenceOn: machine.preferences.keepAwake)
        if let remaining = status.sleep?.remaining {
            // The machine counts on the monotonic clock; a user reads the wall clock.
            let now = Timestamp.now()
            status.sleep?.ends =
                Timestamp(millisecondsSince1970: now.millisecondsSince1970 + Int64(remaining) * 1000)
                .description
        }
        return status
    }

    /// A trivial round trip through the actor: proves its executor is not stuck.
    public func ping() -> Bool { true }

    /// Every soundscape, freshly scanned.
    public func soundscapes() async -> (entries: [SoundscapeEntry], defaultID: SoundscapeID) {
        let catalog = await loader.scan()
        self.catalog = catalog
        return (catalog.entries, catalog.defaultID)
    }

    /// Whether a play, pause or stop is under way (the next one waits for it).
    var sessionCommandRunning: Bool { sessionCommands.isBusy }

    /// How many plays wait for their start to settle.
    var settlingCount: Int { lifecycle.settlingCount }

    private func beginSessionCommand() async {
        guard !sessionCommands.enter() else { return }
        await withCheckedContinuation { sessionCommands.wait($0) }
    }

    private func endSessionCommand() {
        resume(sessionCommands.leave())
    }

    func resume(_ waiters: [Waiter]) {
        for waiter in waiters { waiter.resume() }
    }
}
