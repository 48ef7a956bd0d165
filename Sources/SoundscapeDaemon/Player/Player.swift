#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Logging
import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary
import SoundscapeStore

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
/// machine returns (tell the output, persist, publish) and does the I/O the
/// machine must not (reading soundscape files, the database).
public actor Player {
    private var machine: PlayerMachine
    private let output: PipeWireOutput
    private let outputEvents: AsyncStream<AudioOutputEvent>
    private let store: StateStore?
    private let locations: SoundscapeCatalog.Locations
    private var catalog: SoundscapeCatalog
    private let hub: EventHub
    private let logger: Logger
    /// The decoded-ready bytes of what plays (and the last switch target), so a
    /// resume after an interruption or reconnect needs no disk access.
    private var loaded: [SoundscapeID: SoundscapeData] = [:]
    private var settleWaiters: [CheckedContinuation<Void, Never>] = []
    private var tickTasks: [Int: Task<Void, Never>] = [:]
    private var nextTickID = 0
    private var shuttingDown = false
    private let outputEventSink: AsyncStream<AudioOutputEvent>.Continuation
    public private(set) var storeWritable = true

    // The signer host: a second machine, fed from here like the first.
    private var signer: SignerMachine?
    private let signerHost: SignerHost?
    private var signerInstance: SignerInstance?
    private var nextSignerInstance = 0
    /// With keep-running, the signer stays up once a session has started.
    private var signerSessionStarted = false
    private var signerStopWaiters: [CheckedContinuation<Void, Never>] = []

    init(output: PipeWireOutput, outputEvents: AsyncStream<AudioOutputEvent>,
                outputEventSink: AsyncStream<AudioOutputEvent>.Continuation, store: StateStore?,
                locations: SoundscapeCatalog.Locations, hub: EventHub, logger: Logger,
                signerHost: SignerHost? = nil, signerConfiguration: SignerMachine.Configuration = .init(),
                configuration: PlayerMachine.Configuration = .init()) {
        self.signerHost = signerHost
        if let signerHost {
            var machineConfiguration = signerConfiguration
            machineConfiguration.stopTimeout = signerHost.configuration.stopTimeout
            machineConfiguration.livenessTimeout = signerHost.configuration.livenessTimeout
            machineConfiguration.backoffInitial = signerHost.configuration.restartDelay
            machineConfiguration.backoffMaximum = max(.seconds(60), signerHost.configuration.restartDelay)
            machineConfiguration.crashLoopLimit = signerHost.configuration.crashLoopLimit
            signer = SignerMachine(configuration: machineConfiguration)
        }
        self.output = output
        self.outputEvents = outputEvents
        self.outputEventSink = outputEventSink
        self.store = store
        self.locations = locations
        self.hub = hub
        self.logger = logger
        let catalog = SoundscapeCatalog.scan(locations)
        self.catalog = catalog
        for problem in catalog.problems { logger.warning("\(problem)") }

        var notices: [String] = []
        var desired = DesiredState(wantsPlaying: false, soundscape: catalog.defaultID, volume: .default)
        do {
            if let saved = try store?.load() {
                desired.volume = Volume(clamping: saved.volume)
                desired.intent = saved.wantsPlaying ? .playing : .stopped
                if let name = saved.soundscape, let id = SoundscapeID(name) {
                    if catalog.entry(id) != nil {
                        desired.soundscape = id
                    } else {
                        notices.append("the saved soundscape '\(name)' is no longer available; using '\(catalog.defaultID)'")
                    }
                }
            }
        } catch {
            notices.append("\(error); starting with defaults")
        }
        var preferences = Preferences.default
        do {
            if let saved = try store?.loadPreferences() {
                preferences.interruptionMode = Preferences.InterruptionMode(rawValue: saved.interruptionMode) ?? .pause
                preferences.duckLevel = min(max(saved.duckLevel, 0), 100)
                preferences.autoResume = saved.autoResume
                preferences.pinnedSink = saved.pinnedSink
            }
        } catch {
            notices.append("\(error); using default preferences")
        }
        machine = PlayerMachine(desired: desired, preferences: preferences, configuration: configuration)
        for notice in notices + (store?.notices ?? []) { logger.warning("\(notice)") }
        startupNotices = notices
        var initial = machine.status(now: .now)
        initial.signer = signer?.status
        hub.setInitialStatus(initial)
    }

    private let startupNotices: [String]

    // MARK: Commands

    /// Plays `id` (or the current soundscape) and returns once the start is
    /// confirmed by the graph or has visibly failed.
    public func play(_ id: SoundscapeID?) async throws(PlayerError) -> PlayerStatus {
        let target = id ?? machine.desired.soundscape
        rescan()
        guard let entry = catalog.entry(target) else { throw .noSuchSoundscape(target) }
        do {
            loaded[target] = try load(entry)
        } catch {
            apply(.decodeFailed(target, message: error.description, fallback: nil), announceOnly: true)
            throw .decodeFailed(error)
        }
        apply(.play(target))
        // A press of play is also a fresh chance for a signer that had given up.
        applySigner(.resetFailure)
        await settle()
        return status()
    }

    public func stop() -> PlayerStatus {
        apply(.stop)
        return status()
    }

    public func setVolume(_ volume: Volume) -> PlayerStatus {
        apply(.setVolume(volume))
        return status()
    }

    public func preferences() -> Preferences {
        machine.preferences
    }

    /// `soundscapectl set NAME VALUE`; a bad name or value is refused, nothing changes.
    public func setPreference(_ name: String, to value: String) throws(Preferences.ValueError) -> Preferences {
        var preferences = machine.preferences
        try preferences.set(name, to: value)
        apply(.setPreferences(preferences))
        return machine.preferences
    }

    public func status() -> PlayerStatus {
        var status = machine.status(now: .now)
        status.signer = signer?.status
        return status
    }

    /// Every check but the loop's own (the caller times this call for that).
    public func health() -> [HealthReport.Check] {
        let status = status()
        var checks: [HealthReport.Check] = []
        let connected = machine.output != .unavailable
        checks.append(.init(name: HealthReport.Name.pipewire, ok: connected,
                            detail: connected ? nil : "not connected to a PipeWire server; retrying"))
        if machine.desired.wantsPlaying {
            let flowing = status.state == .playing
            checks.append(.init(name: HealthReport.Name.audio, ok: flowing,
                                detail: flowing ? nil : "wanted playing but \(status.state.rawValue)"))
        } else {
            checks.append(.init(name: HealthReport.Name.audio, ok: true, detail: "not wanted (stopped)"))
        }
        if let signer = status.signer {
            let wanted = self.signer?.wanted ?? false
            let ok = !wanted || signer.state == .running || signer.state == .starting
            checks.append(.init(name: HealthReport.Name.signer, ok: ok,
                                detail: ok ? (wanted ? nil : "not wanted") : "signer host \(signer.state.rawValue)\(signer.lastExit.map { " (last \($0))" } ?? "")"))
        }
        if let store {
            do {
                try store.checkWritable()
                storeWritable = true
                checks.append(.init(name: HealthReport.Name.store, ok: true))
            } catch {
                storeWritable = false
                checks.append(.init(name: HealthReport.Name.store, ok: false, detail: error.description))
            }
        } else {
            checks.append(.init(name: HealthReport.Name.store, ok: false, detail: "the state database could not be opened"))
        }
        return checks
    }

    /// A trivial round trip through the actor: proves its executor is not stuck.
    public func ping() -> Bool { true }

    public func soundscapes() -> (entries: [SoundscapeEntry], defaultID: SoundscapeID) {
        rescan()
        return (catalog.entries, catalog.defaultID)
    }

    // MARK: Running

    /// Starts the output and consumes its facts until `shutdown` ends them.
    public func run() async {
        publishStartupNotices()
        output.start()
        for await event in outputEvents {
            if shuttingDown {
                if event == .stopped { fadeOutFinished() }
                continue
            }
            handle(event)
        }
        output.shutdown()
    }

    /// Fades the sound out and stops the signer host, keeping the user's wish
    /// to play (already persisted) so that the next start resumes. Bounded: a
    /// graph that no longer runs us cannot hold up the exit, and the signer gets
    /// its stop timeout before SIGKILL.
    public func shutdown(fadeBound: Duration = .seconds(1)) async {
        guard !shuttingDown else { return }
        shuttingDown = true
        for waiter in settleWaiters { waiter.resume() }
        settleWaiters.removeAll()
        output.stop()
        let fadeTimeout = Task { [weak self] in
            try? await Task.sleep(for: fadeBound)
            await self?.fadeOutFinished()
        }
        await stopSigner()
        if !fadeDone { await withCheckedContinuation { fadeWaiters.append($0) } }
        fadeTimeout.cancel()
        for task in tickTasks.values { task.cancel() }
        tickTasks.removeAll()
        outputEventSink.finish()
    }

    private var fadeDone = false
    private var fadeWaiters: [CheckedContinuation<Void, Never>] = []

    private func fadeOutFinished() {
        fadeDone = true
        for waiter in fadeWaiters { waiter.resume() }
        fadeWaiters.removeAll()
    }

    private func publishStartupNotices() {
        for notice in startupNotices {
            hub.publish(type: .player, reason: .soundscapeChanged, message: notice, status: status())
        }
    }

    private func handle(_ event: AudioOutputEvent) {
        switch event {
        case .connected: apply(.outputConnected)
        case .disconnected(let reason): apply(.outputDisconnected(reason: reason))
        case .streaming(let streaming): apply(.outputStreaming(streaming))
        case .stopped: apply(.outputStopped)
        case .route(let route): apply(.routeChanged(route))
        case .graph(let facts): apply(.graphChanged(facts))
        case .stalled: apply(.outputStalled)
        case .flowing: apply(.outputFlowing)
        case .decodeFailed(let error):
            logger.error("\(error)")
            loaded[error.soundscape] = nil
            apply(.decodeFailed(error.soundscape, message: error.description, fallback: fallback(for: error.soundscape)))
        }
    }

    // MARK: Carrying out the machine's actions

    /// Feeds `input` to the machine and performs what it returns. With
    /// `announceOnly`, only events are published (a refused command must not
    /// change what plays).
    private func apply(_ input: PlayerMachine.Input, announceOnly: Bool = false) {
        if announceOnly, case .decodeFailed(_, let message, _) = input {
            hub.publish(type: .player, reason: .decodeError, message: message, status: status())
            return
        }
        let now = ContinuousClock.now
        let actions = machine.handle(input, now: now)
        for action in actions { perform(action) }
        if !machine.isSettling(now: now) {
            for waiter in settleWaiters { waiter.resume() }
            settleWaiters.removeAll()
        }
        reconcileSigner()
    }

    private func perform(_ action: PlayerMachine.Action) {
        switch action {
        case .startOutput(let id, let volume):
            if let data = data(for: id) { output.play(data, volume: volume) }
        case .switchSoundscape(let id, let volume):
            if let data = data(for: id) { output.play(data, volume: volume) }
        case .setVolume(let volume):
            output.setVolume(volume)
        case .stopOutput:
            output.stop()
        case .persist(let desired):
            persist(desired)
        case .emit(let reason, let message, let cause):
            hub.publish(type: .player, reason: reason, message: message, cause: cause, status: status())
        case .persistPreferences(let preferences):
            persist(preferences)
        case .setTarget(let sink):
            output.setTarget(sink)
        case .scheduleTick(let deadline):
            scheduleTick(at: deadline)
        case .revive(let step):
            logger.warning("watchdog: audio stalled; \(step)")
            switch step {
            case .reactivate: output.reactivate()
            case .recreateStream: output.recreateStream()
            case .reconnect: output.reconnectNow(reason: "the watchdog found audio stalled")
            }
        }
    }

    /// The loaded bytes for `id`, loading them if needed. A failure is fed back
    /// to the machine as a fact (which picks a fallback) and yields nil.
    private func data(for id: SoundscapeID) -> SoundscapeData? {
        if let data = loaded[id] { return data }
        rescan()
        do {
            guard let entry = catalog.entry(id) else {
                throw SoundscapeDecodeError(soundscape: id, reason: "it is no longer available")
            }
            let data = try load(entry)
            loaded[id] = data
            return data
        } catch let error as SoundscapeDecodeError {
            logger.error("\(error)")
            apply(.decodeFailed(id, message: error.description, fallback: fallback(for: id)))
            return nil
        } catch {
            return nil
        }
    }

    private func fallback(for id: SoundscapeID) -> SoundscapeID? {
        id == catalog.defaultID ? nil : catalog.defaultID
    }

    private func load(_ entry: SoundscapeEntry) throws(SoundscapeDecodeError) -> SoundscapeData {
        let data = try SoundscapeData(id: entry.id, gain: entry.gain, path: entry.path)
        // Keep only what plays and what is about to: a handful of loops would otherwise pile up.
        let keep = Set([machine.desired.soundscape, entry.id])
        loaded = loaded.filter { keep.contains($0.key) }
        return data
    }

    private func persist(_ preferences: Preferences) {
        guard let store else { return }
        do {
            try store.save(PersistedPreferences(
                interruptionMode: preferences.interruptionMode.rawValue, duckLevel: preferences.duckLevel,
                autoResume: preferences.autoResume, pinnedSink: preferences.pinnedSink))
        } catch {
            logger.error("\(error)")
            storeWritable = false
        }
    }

    private func persist(_ desired: DesiredState) {
        guard let store else { return }
        do {
            try store.save(PersistedState(volume: desired.volume.percent, soundscape: desired.soundscape.rawValue,
                                          wantsPlaying: desired.wantsPlaying))
            if !storeWritable { logger.info("the state database is writable again") }
            storeWritable = true
        } catch {
            // Keep playing on the in-memory state; the next change retries the write.
            if storeWritable { logger.error("\(error)") }
            storeWritable = false
        }
    }

    private func rescan() {
        catalog = SoundscapeCatalog.scan(locations)
    }

    // MARK: Time

    private func settle() async {
        guard machine.isSettling(now: .now) else { return }
        await withCheckedContinuation { settleWaiters.append($0) }
    }

    // MARK: The signer host

    /// Wanted while the user wants the keep-alive (or, with keep-running, once a session began).
    private func reconcileSigner() {
        guard let signer, let signerHost else { return }
        if machine.desired.wantsPlaying { signerSessionStarted = true }
        let wanted = !shuttingDown && (machine.desired.wantsPlaying
            || (signerHost.configuration.keepRunningWhenStopped && signerSessionStarted))
        if wanted != signer.wanted { applySigner(.setWanted(wanted)) }
    }

    private func applySigner(_ input: SignerMachine.Input) {
        guard signer != nil else { return }
        let actions = signer!.handle(input, now: .now)
        for action in actions { performSigner(action) }
        if signer!.status.state == .stopped || signer!.status.state == .failed, signerInstance == nil {
            for waiter in signerStopWaiters { waiter.resume() }
            signerStopWaiters.removeAll()
        }
    }

    private func performSigner(_ action: SignerMachine.Action) {
        switch action {
        case .spawn:
            guard let signerHost else { return }
            nextSignerInstance += 1
            do {
                let instance = try signerHost.start(instance: nextSignerInstance) { [weak self] fact in
                    await self?.signerFact(fact)
                }
                signerInstance = instance
                logger.info("signer host started", metadata: ["pid": "\(instance.pid)"])
                applySigner(.spawned(pid: instance.pid))
            } catch {
                logger.error("cannot start the signer host: \(error)")
                applySigner(.spawnFailed("\(error)"))
            }
        case .terminate:
            signerInstance?.signal(SIGTERM)
        case .kill:
            signerInstance?.signal(SIGKILL)
        case .scheduleTick(let deadline):
            scheduleTick(at: deadline, evenWhenShuttingDown: true)
        case .emit(let reason, let message):
            if reason == .signerExited || reason == .signerFailed || reason == .signerHung {
                logger.warning("signer host: \(reason.rawValue)\(message.map { ": \($0)" } ?? "")")
            }
            hub.publish(type: .signer, reason: reason, message: message, status: status())
        }
    }

    private func signerFact(_ fact: SignerFact) {
        switch fact {
        case .heartbeat(let instance):
            if instance == signerInstance?.id { applySigner(.heartbeat) }
        case .exited(let instance, let reason):
            guard instance == signerInstance?.id else { return }
            signerInstance = nil
            applySigner(.exited(reason))
        }
    }

    /// SIGTERM, SIGKILL after the stop timeout, and wait until the group is gone.
    private func stopSigner() async {
        guard signer != nil else { return }
        reconcileSigner()
        guard signerInstance != nil else { return }
        await withCheckedContinuation { signerStopWaiters.append($0) }
    }

    /// One task per deadline: they are rare (one per start), and each tick
    /// re-evaluates everything, so none may be lost by coalescing.
    private func scheduleTick(at deadline: ContinuousClock.Instant, evenWhenShuttingDown: Bool = false) {
        guard !shuttingDown || evenWhenShuttingDown else { return }
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
        applySigner(.tick)
    }
}
