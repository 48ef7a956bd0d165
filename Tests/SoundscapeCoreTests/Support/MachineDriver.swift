import Testing
import SoundscapeCore

/// Drives a `PlayerMachine` with a fake clock: one real instant as the origin,
/// then only durations added to it.
///
/// The sound's suites look at the sound: unless `showsSession`, the session news for the
/// signer (`.signerSession`) is left out of what `send` returns. Its own suite
/// (SignerSessionActionTests) sees it.
struct MachineDriver {
    static let rain = SoundscapeID("rain")!
    static let ocean = SoundscapeID("ocean-waves")!
    static let wind = SoundscapeID("wind")!
    static let half = Volume(percent: 50)!
    static let timeout = Duration.seconds(3)

    var machine: PlayerMachine
    let origin: ContinuousClock.Instant
    private(set) var now: ContinuousClock.Instant
    var showsSession = false

    init(
        wantsPlaying: Bool = false, soundscape: SoundscapeID = rain, volume: Volume = half,
        origin: ContinuousClock.Instant = ContinuousClock.now
    ) {
        machine = PlayerMachine(
            desired: DesiredState(wantsPlaying: wantsPlaying, soundscape: soundscape, volume: volume),
            configuration: .init(startTimeout: Self.timeout))
        self.origin = origin
        now = origin
    }

    /// Advances the fake clock by `elapsed`, then feeds `input`.
    @discardableResult
    mutating func send(_ input: PlayerMachine.Input, after elapsed: Duration = .zero) -> [PlayerMachine.Action] {
        now = now + elapsed
        let actions = machine.handle(input, now: now)
        guard !showsSession else { return actions }
        return actions.filter { if case .signerSession = $0 { false } else { true } }
    }

    var status: PlayerStatus { machine.status(now: now) }
    var desired: DesiredState { machine.desired }

    func desired(wantsPlaying: Bool, soundscape: SoundscapeID = rain, volume: Volume = half) -> DesiredState {
        DesiredState(wantsPlaying: wantsPlaying, soundscape: soundscape, volume: volume)
    }

    /// Connected, playing `rain` and streaming, with the `started` event already out.
    static func playing(soundscape: SoundscapeID = rain) -> MachineDriver {
        var driver = MachineDriver(soundscape: soundscape)
        driver.send(.outputConnected)
        driver.send(.play(soundscape))
        driver.send(.outputStreaming(true), after: .milliseconds(100))
        precondition(driver.status.state == .playing)
        return driver
    }
}

extension [PlayerMachine.Action] {
    var emits: [EventReason] {
        compactMap { if case .emit(let reason, _, _) = $0 { reason } else { nil } }
    }

    var startsOutput: Bool {
        contains { if case .startOutput = $0 { true } else { false } }
    }
}
