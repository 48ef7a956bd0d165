import Testing
@testable import SoundscapeCore

@Suite struct KeepAwakeMachineTests {
    @Test func takesWhenWantedAndReleasesWhenNotWanted() {
        var machine = KeepAwakeMachine()
        #expect(machine.handle(.wanted(false)) == [])
        #expect(machine.handle(.wanted(true)) == [.take(attempt: 1)])
        // Wanting it again while it is being taken asks nothing more.
        #expect(machine.handle(.wanted(true)) == [])
        #expect(machine.status(preferenceOn: true) == KeepAwakeStatus(state: .taking, detail: nil))
        #expect(machine.handle(.held(attempt: 1)) == [])
        #expect(machine.state == .held(attempt: 1))
        #expect(machine.handle(.wanted(false)) == [.release(attempt: 1)])
        #expect(machine.state == .idle)
        // The next session takes a fresh one.
        #expect(machine.handle(.wanted(true)) == [.take(attempt: 2)])
    }

    @Test func aReleaseWhileTakingIsNotUndoneByALateHeld() {
        var machine = KeepAwakeMachine()
        _ = machine.handle(.wanted(true))
        #expect(machine.handle(.wanted(false)) == [.release(attempt: 1)])
        #expect(machine.handle(.held(attempt: 1)) == [])
        #expect(machine.handle(.ended(attempt: 1, reason: "released")) == [])
        #expect(machine.state == .idle)
        #expect(machine.status(preferenceOn: true) == KeepAwakeStatus(state: .idle, detail: nil))
    }

    @Test func aFailureIsShownAndNotRetriedUntilWantedAgain() {
        var machine = KeepAwakeMachine()
        _ = machine.handle(.wanted(true))
        let reason = "Failed to inhibit: The name org.freedesktop.login1 was not provided by any .service files"
        #expect(machine.handle(.ended(attempt: 1, reason: reason)) == [.release(attempt: 1)])
        #expect(machine.status(preferenceOn: true) == KeepAwakeStatus(state: .unavailable, detail: reason))
        #expect(machine.handle(.wanted(true)) == [])
        #expect(machine.handle(.wanted(false)) == [])
        #expect(machine.handle(.wanted(true)) == [.take(attempt: 2)])
    }

    @Test func aHeldInhibitorThatGoesAwayIsReported() {
        var machine = KeepAwakeMachine()
        _ = machine.handle(.wanted(true))
        _ = machine.handle(.held(attempt: 1))
        // A stale report about an older attempt changes nothing.
        #expect(machine.handle(.ended(attempt: 0, reason: "old")) == [])
        #expect(machine.handle(.ended(attempt: 1, reason: "systemd-inhibit killed by signal 9 (SIGKILL)")) == [.release(attempt: 1)])
        #expect(machine.state == .unavailable(reason: "systemd-inhibit killed by signal 9 (SIGKILL)"))
    }

    @Test func statusIsAbsentWhileThePreferenceIsOff() {
        #expect(KeepAwakeMachine().status(preferenceOn: false) == nil)
    }
}
