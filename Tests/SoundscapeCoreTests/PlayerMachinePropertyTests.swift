import Testing
import SoundscapeCore

@Suite struct PlayerMachinePropertyTests {
    typealias D = MachineDriver

    static let ids = [D.rain, D.ocean, D.wind]
    static let volumes = [0, 30, 50, 100].map { Volume(percent: $0)! }

    static func randomInput(using generator: inout SplitMix64) -> PlayerMachine.Input {
        func id() -> SoundscapeID { ids.randomElement(using: &generator)! }
        switch Int.random(in: 0..<13, using: &generator) {
        case 0, 1: return .play(id())
        case 2: return .stop
        case 3: return .setVolume(volumes.randomElement(using: &generator)!)
        case 4: return .outputConnected
        case 5: return .outputDisconnected(reason: "lost")
        case 6, 7: return .outputStreaming(Bool.random(using: &generator))
        case 8: return .outputStopped
        case 9: return .routeChanged([nil, "sink-a", "sink-b"].randomElement(using: &generator)!)
        case 10:
            let fallback: SoundscapeID? = Bool.random(using: &generator) ? id() : nil
            return .decodeFailed(id(), message: "bad", fallback: fallback)
        default: return .tick
        }
    }

    static func randomDelay(using generator: inout SplitMix64) -> Duration {
        .milliseconds([0, 10, 500, 1500, 2999, 3000, 4000].randomElement(using: &generator)!)
    }

    /// Runs `steps` random inputs and returns every invariant violation found, described.
    static func violations(
        seed: UInt64, steps: Int,
        check: (
            _ before: DesiredState, _ input: PlayerMachine.Input,
            _ actions: [PlayerMachine.Action], _ driver: MachineDriver
        ) -> String?
    ) -> [String] {
        var generator = SplitMix64(seed: seed)
        var driver = D(wantsPlaying: Bool.random(using: &generator))
        var found: [String] = []
        for step in 0..<steps {
            let before = driver.desired
            let input = randomInput(using: &generator)
            let actions = driver.send(input, after: randomDelay(using: &generator))
            if let problem = check(before, input, actions, driver) {
                found.append("seed \(seed) step \(step): \(input) → \(actions): \(problem)")
            }
        }
        return found
    }

    static let seeds: [UInt64] = [1, 2, 3, 0xC0FFEE, 0xDEAD_BEEF]

    @Test(arguments: seeds)
    func invariantsHoldAfterEveryInput(seed: UInt64) {
        let found = Self.violations(seed: seed, steps: 4000) { before, _, actions, driver in
            let persists = actions.compactMap { if case .persist(let state) = $0 { state } else { nil } }
            let status = driver.status
            if actions.emits.count > 1 { return "more than one event" }
            if before != driver.desired, persists != [driver.desired] {
                return "desired changed but was not persisted exactly once with the new value"
            }
            if persists.contains(where: { $0 != driver.desired }) { return "persisted a stale state" }
            if !driver.desired.wantsPlaying, actions.startsOutput { return "started while not wanting to play" }
            if actions.contains(where: {
                if case .startOutput(let mix, let volume, _) = $0 {
                    mix != driver.desired.mix || volume != driver.desired.volume
                } else {
                    false
                }
            }) {
                return "started something other than the desired soundscape/volume"
            }
            let deadlines = [driver.now + D.timeout, driver.now + driver.machine.configuration.serverPauseGrace]
            if actions.contains(where: { if case .scheduleTick(let at) = $0 { !deadlines.contains(at) } else { false } }) {
                return "tick not scheduled at now + startTimeout or now + serverPauseGrace"
            }
            if status.isPlaying != (status.state == .playing) { return "isPlaying disagrees with state" }
            if !status.wantsPlaying, status.state != .stopped { return "not wanting to play but \(status.state)" }
            if status.wantsPlaying != driver.desired.wantsPlaying || status.soundscape != driver.desired.soundscape
                || status.volume != driver.desired.volume
            {
                return "status does not reflect desired"
            }
            return nil
        }
        #expect(found.isEmpty, "\(found.count) violations, first: \(found.prefix(3))")
    }

    @Test(arguments: seeds)
    func persistAppearsOnlyWhenDesiredChanged(seed: UInt64) {
        let found = Self.violations(seed: seed, steps: 4000) { before, _, actions, driver in
            let persisted = actions.contains { if case .persist = $0 { true } else { false } }
            return persisted && before == driver.desired ? "persisted an unchanged state" : nil
        }
        #expect(found.isEmpty, "\(found.count) violations, first: \(found.prefix(3))")
    }

    @Test func theRandomRunsExerciseEveryState() {
        // Guards the property tests against a generator that never reaches the interesting states.
        var generator = SplitMix64(seed: 1)
        var driver = D()
        var seen = Set<PlayerState>()
        var reasons = Set<EventReason>()
        for _ in 0..<4000 {
            let actions = driver.send(Self.randomInput(using: &generator), after: Self.randomDelay(using: &generator))
            seen.insert(driver.status.state)
            reasons.formUnion(actions.emits)
        }
        #expect(seen == [.stopped, .resuming, .playing, .recovering, .interrupted])
        #expect(
            reasons.isSuperset(of: [
                .started, .stopped, .resumed, .resumeFailed, .routeChanged,
                .decodeError, .volumeChanged, .soundscapeChanged,
            ]))
    }
}
