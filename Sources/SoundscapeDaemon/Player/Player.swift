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

    public var description: String {
        switch self {
        case .noSuchSoundscape(let id): "no soundscape named '\(id)'"
        case .decodeFailed(let error): error.description
        }
    }
}

/// The one owner of the player's state.
///
/// Commands from clients and facts from the audio output all arrive here and
/// go through `PlayerMachine`; this actor only carries out the actions the
/// machine returns (tell the output, persist, publish) — see
/// `Player+Actions.swift` — and keeps the signer host going through its
/// `SignerSupervisor`.
///
/// It runs on the daemon's event loop, which also answers the control socket,
/// so it never blocks: files are scanned and opened on the worker thread
/// (`SoundscapeLoader`), the database is read and written on a thread of its
/// own (`StateKeeper`), and the output's methods return at once. While it
/// awaits either thread, other calls (a status query, say) are served.
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
        /// The daemon's environment (children such as `systemd-inhibit` take what they need of it).
        public var environment: [String: String]

        public init(output: any AudioOutput, outputEvents: AsyncStream<AudioOutputEvent>,
                    outputEventSink: AsyncStream<AudioOutputEvent>.Continuation, store: StateStore?,
                    locations: SoundscapeCatalog.Locations, hub: EventHub, worker: WorkerThread, logger: Logger,
                    environment: [String: String] = [:]) {
            self.environment = environment
            self.output = output
            self.outputEvents = outputEvents
            self.outputEventSink = outputEventSink
            self.store = store
            self.locations = locations
            self.hub = hub
            self.worker = worker
            self.logger = logger
        }
    }

    /// Where the player is in its life.
    enum Phase {
        /// Created; the saved state is not loaded yet. Calls wait for it.
        case starting(waiters: [CheckedContinuation<Void, Never>])
        case running
        case shuttingDown
    }

    var machine: PlayerMachine
    let configuration: PlayerMachine.Configuration
    let output: any AudioOutput
    private let outputEvents: AsyncStream<AudioOutputEvent>
    private let outputEventSink: AsyncStream<AudioOutputEvent>.Continuation
    let keeper: StateKeeper
    let loader: SoundscapeLoader
    private(set) var catalog = SoundscapeCatalog(entries: [], defaultID: SoundscapeCatalog.fallbackDefault)
    let hub: EventHub
    let logger: Logger
    private(set) var phase: Phase = .starting(waiters: [])
    /// The opened files of what plays (and the last switch target), so a resume
    /// after an interruption or a reconnect needs no disk access.
    var loaded: [SoundscapeID: SoundscapeData] = [:]
    private var settleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Until the output's first connection attempt is decided (connected or not),
    /// a start cannot be judged: a play that socket-activated the daemon would
    /// otherwise reply "recovering" a moment before PipeWire is there.
    private var outputUndecided = true
    private var tickTasks: [Int: Task<Void, Never>] = [:]
    private var nextTickID = 0
    /// play, pause and stop take effect in the order they were called, even
    /// though a play first waits for its file to be opened: one at a time, first come first served.
    private(set) var sessionCommandRunning = false
    private var sessionCommandWaiters: [CheckedContinuation<Void, Never>] = []
    /// Made in `restore` (its reports come back to this actor), or by a reload.
    var signer: SignerSupervisor?
    var signerHost: SignerHost?
    /// A reload removed the signer host: it is being stopped, and must not start again meanwhile.
    var signerRetiring = false
    private var fadeDone = false
    /// The `keep-awake` preference's sleep inhibitor (see `Player+KeepAwake.swift`).
    var keepAwake = KeepAwakeMachine()
    var inhibitors: [Int: SleepInhibitor] = [:]
    /// What `systemd-inhibit` runs with (PATH, the system bus address).
    let inhibitorEnvironment: [String: String]
    private var fadeWaiters: [CheckedContinuation<Void, Never>] = []
    /// Files (moved to the background once the saved state is restored).
    private let worker: WorkerThread

    /// How long at most a command's answer waits for its change to be written.
    private let saveWait: Duration

    init(_ dependencies: Dependencies, signerHost: SignerHost? = nil,
                configuration: PlayerMachine.Configuration = .init(), saveWait: Duration = .seconds(1)) {
        self.saveWait = saveWait
        output = dependencies.output
        outputEvents = dependencies.outputEvents
        outputEventSink = dependencies.outputEventSink
        keeper = StateKeeper(store: dependencies.store, logger: dependencies.logger)
        loader = SoundscapeLoader(locations: dependencies.locations, worker: dependencies.worker)
        worker = dependencies.worker
        hub = dependencies.hub
        logger = dependencies.logger
        self.configuration = configuration
        // A stand-in until `run` has loaded what was saved; nobody sees it (calls wait for `running`).
        machine = PlayerMachine(desired: DesiredState(intent: .stopped, soundscape: SoundscapeCatalog.fallbackDefault,
                                                      volume: .default), configuration: configuration)
        self.signerHost = signerHost
        inhibitorEnvironment = SleepInhibitor.environment(from: dependencies.environment)
    }

    // MARK: Commands

    /// Plays `id` (or the current soundscape) and returns once the start is
    /// confirmed by the graph or has visibly failed.
    public func play(_ id: SoundscapeID?) async throws(PlayerError) -> PlayerStatus {
        await untilRunning()
        await beginSessionCommand()
        let target = id ?? machine.desired.soundscape
        let (catalog, result) = await loader.load(target)
        self.catalog = catalog
        switch result {
        case .failure(.noSuchSoundscape(let id)):
            endSessionCommand()
            throw .noSuchSoundscape(id)
        case .failure(.decodeFailed(let error)):
            endSessionCommand()
            // A refused command changes nothing but is still news.
            hub.publish(type: .player, reason: .decodeError, message: error.description, status: currentStatus())
            throw .decodeFailed(error)
        case .success(let data):
            keepLoaded(data)
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
            hub.publish(type: .player, reason: .preferencesChanged, message: changed.joined(separator: ", "),
                        status: currentStatus())
        }
        return await answer(machine.preferences)
    }

    /// `reply` once what the command changed is written: a client that was
    /// answered can count on the change surviving a crash. The status is taken
    /// before the wait, so it is what this command made. A database that is
    /// locked or a disk that hangs holds the answer back `saveWait` at most;
    /// the change stays queued, and is written when the disk lets it.
    private func answer<Reply: Sendable>(_ reply: Reply) async -> Reply {
        await keeper.saved(within: saveWait)
        return reply
    }

    public func status() async -> PlayerStatus {
        await untilRunning()
        return currentStatus()
    }

    /// The status as it is now (callers inside the actor know it is running).
    func currentStatus() -> PlayerStatus {
        var status = machine.status(now: .now)
        status.signer = signer?.status
        if let program = signerHost?.configuration.command.first {
            status.signer?.name = program.split(separator: "/").last.map(String.init) ?? program
        }
        status.keepAwake = keepAwake.status(preferenceOn: machine.preferences.keepAwake)
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

    private func beginSessionCommand() async {
        guard sessionCommandRunning else {
            sessionCommandRunning = true
            return
        }
        await withCheckedContinuation { sessionCommandWaiters.append($0) }
    }

    private func endSessionCommand() {
        if sessionCommandWaiters.isEmpty {
            sessionCommandRunning = false
        } else {
            sessionCommandWaiters.removeFirst().resume()
        }
    }

    // MARK: Running

    /// Loads what was saved, starts the output and consumes its facts until
    /// `shutdown` ends them.
    public func run() async {
        await restore()
        // What was on the way to sound is done: from now on the worker only gets spare CPU.
        worker.moveToBackground()
        output.start()
        for await event in outputEvents {
            if case .shuttingDown = phase {
                if event == .stopped { fadeOutFinished() }
                continue
            }
            await handle(event)
        }
        output.shutdown()
    }

    /// Fades the sound out and stops the signer host, keeping the user's wish
    /// to play (already persisted) so that the next start resumes. Bounded: a
    /// graph that no longer runs us cannot hold up the exit, and the signer gets
    /// its stop timeout before SIGKILL.
    public func shutdown(fadeBound: Duration = .seconds(1)) async {
        if case .shuttingDown = phase { return }
        if case .starting(let waiters) = phase { for waiter in waiters { waiter.resume() } }
        phase = .shuttingDown
        for waiter in settleWaiters { waiter.resume() }
        settleWaiters.removeAll()
        output.stop()
        let fadeTimeout = Task { [weak self] in
            try? await Task.sleep(for: fadeBound)
            await self?.fadeOutFinished()
        }
        await stopSigner()
        reconcileKeepAwake()
        if !fadeDone { await withCheckedContinuation { fadeWaiters.append($0) } }
        fadeTimeout.cancel()
        for task in tickTasks.values { task.cancel() }
        tickTasks.removeAll()
        // What the last commands changed is on disk before the process ends.
        await keeper.saved()
        outputEventSink.finish()
    }

    var isShuttingDown: Bool {
        if case .shuttingDown = phase { true } else { false }
    }

    private func fadeOutFinished() {
        fadeDone = true
        for waiter in fadeWaiters { waiter.resume() }
        fadeWaiters.removeAll()
    }

    /// Suspends until the saved state is loaded (at once afterwards).
    func untilRunning() async {
        guard case .starting(var waiters) = phase else { return }
        await withCheckedContinuation { continuation in
            waiters.append(continuation)
            phase = .starting(waiters: waiters)
        }
    }

    /// The saved state, preferences and soundscape, loaded on the worker; then
    /// the machine that starts from them. A saved soundscape that has vanished,
    /// or no longer opens, gives way to the default for this run, with a notice.
    private func restore() async {
        let restored = await keeper.restore()
        var notices: [String] = []
        catalog = await loader.scan()
        for problem in catalog.problems { logger.warning("\(problem)") }

        var desired = DesiredState(intent: .stopped, soundscape: catalog.defaultID, volume: .default)
        if let saved = restored.state {
            desired.volume = Volume(clamping: saved.volume)
            desired.intent = saved.paused ? .paused : saved.wantsPlaying ? .playing : .stopped
            if let name = saved.soundscape, let id = SoundscapeID(name) {
                if catalog.entry(id) != nil {
                    desired.soundscape = id
                } else {
                    notices.append("the saved soundscape '\(name)' is no longer available; using '\(catalog.defaultID)'")
                }
            }
        }
        var preferences = Preferences.default
        if let saved = restored.preferences {
            preferences.interruptionMode = Preferences.InterruptionMode(rawValue: saved.interruptionMode) ?? .pause
            preferences.duckLevel = min(max(saved.duckLevel, 0), 100)
            preferences.autoResume = saved.autoResume
            preferences.pinnedSink = saved.pinnedSink
            preferences.keepAwake = saved.keepAwake
            preferences.notifications = saved.notifications
        }
        var failure = await open(desired.soundscape)
        if let error = failure, desired.soundscape != catalog.defaultID {
            // Like a vanished file: play the default this run, and keep the user's choice saved
            // (the file may be back, or mended, by the next start).
            notices.append("\(error); using '\(catalog.defaultID)'")
            desired.soundscape = catalog.defaultID
            failure = await open(desired.soundscape)
        }
        machine = PlayerMachine(desired: desired, preferences: preferences, configuration: configuration)
        if let signerHost {
            signer = makeSupervisor(signerHost)
        }

        guard case .starting(let waiters) = phase else { return }
        phase = .running
        for notice in restored.notices + notices { logger.warning("\(notice)") }
        hub.setInitialStatus(currentStatus())
        for notice in restored.notices {
            hub.publish(type: .player, reason: .storeProblem, message: notice, status: currentStatus())
        }
        for notice in notices {
            hub.publish(type: .player, reason: .soundscapeChanged, message: notice, status: currentStatus())
        }
        if let failure {
            // Not even the default opens: the machine gives up on playing, and says why.
            apply(.decodeFailed(desired.soundscape, message: failure.description, fallback: nil))
        }
        reconcileSigner()
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Facts

    private func handle(_ event: AudioOutputEvent) async {
        if outputUndecided, event == .connected || { if case .disconnected = event { true } else { false } }() {
            outputUndecided = false
        }
        switch event {
        case .connected: apply(.outputConnected)
        case .disconnected(let reason): apply(.outputDisconnected(reason: reason))
        case .streaming(let streaming): apply(.outputStreaming(streaming))
        case .stopped: apply(.outputStopped)
        case .route(let route): apply(.routeChanged(route))
        case .graph(let facts): apply(.graphChanged(facts))
        case .stalled: apply(.outputStalled)
        case .serverUnresponsive: apply(.outputServerUnresponsive)
        case .flowing: apply(.outputFlowing)
        case .decodeFailed(let error):
            logger.error("\(error)")
            loaded[error.soundscape] = nil
            let fallback = await fallback(for: error.soundscape)
            apply(.decodeFailed(error.soundscape, message: error.description, fallback: fallback))
        }
    }

    // MARK: Loaded soundscapes

    /// Opens `id` on the worker and keeps it; the error if it does not open.
    private func open(_ id: SoundscapeID) async -> SoundscapeDecodeError? {
        let (catalog, result) = await loader.load(id)
        self.catalog = catalog
        switch result {
        case .success(let data):
            keepLoaded(data)
            return nil
        case .failure(.noSuchSoundscape(let id)):
            return SoundscapeDecodeError(soundscape: id, reason: "it is no longer available")
        case .failure(.decodeFailed(let error)):
            return error
        }
    }

    /// The default soundscape, opened, to play instead of `id`; nil when `id` is
    /// the default or the default does not open either.
    private func fallback(for id: SoundscapeID) async -> SoundscapeID? {
        let fallback = catalog.defaultID
        guard fallback != id else { return nil }
        if loaded[fallback] != nil { return fallback }
        if let error = await open(fallback) {
            logger.error("\(error)")
            return nil
        }
        return fallback
    }

    /// Keeps `data` and what plays; a handful of loops would otherwise pile up.
    private func keepLoaded(_ data: SoundscapeData) {
        let keep: Set = [machine.desired.soundscape, data.id]
        loaded = loaded.filter { keep.contains($0.key) }
        loaded[data.id] = data
    }

    // MARK: The signer host

    func makeSupervisor(_ host: SignerHost) -> SignerSupervisor {
        SignerSupervisor(host: host, logger: logger) { [weak self] fact in
            await self?.signerFact(fact)
        }
    }

    private func signerFact(_ fact: SignerFact) {
        performSigner(signer?.handle(fact) ?? [])
    }

    /// SIGTERM, SIGKILL after the stop timeout, and wait until the group is gone.
    func stopSigner() async {
        guard let signer else { return }
        reconcileSigner()
        guard signer.hasInstance else { return }
        await withCheckedContinuation { signer.whenStopped($0) }
    }

    // MARK: Time

    /// Waits until the start the last command made is confirmed or has visibly failed.
    private func settle() async {
        guard machine.isSettling(now: .now) || outputUndecided, !isShuttingDown else { return }
        await withCheckedContinuation { settleWaiters.append($0) }
    }

    func settled(now: ContinuousClock.Instant) {
        guard !machine.isSettling(now: now), !outputUndecided else { return }
        for waiter in settleWaiters { waiter.resume() }
        settleWaiters.removeAll()
    }

    /// One task per deadline: they are rare (one per start), and each tick
    /// re-evaluates everything, so none may be lost by coalescing.
    func scheduleTick(at deadline: ContinuousClock.Instant, evenWhenShuttingDown: Bool = false) {
        guard !isShuttingDown || evenWhenShuttingDown else { return }
        let id = nextTickID
        nextTickID += 1
        tickTasks[id] = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled else { return }
            await self?.tick(id)
        }
    }

    private func tick(_ id: Int) {
        tickTasks[id] = nil
        apply(.tick)
        performSigner(signer?.tick() ?? [])
    }
}
