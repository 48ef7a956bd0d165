import Testing
import SoundscapeCore
@testable import SoundscapeDesktop

@Suite struct KeepAliveAlarmTests {
    let origin = ContinuousClock.now

    func status(_ state: PlayerState, flowing: Bool, signer: SignerStatus.State? = nil) -> PlayerStatus {
        var status = PlayerStatus(
            state: state, isPlaying: flowing, soundscape: SoundscapeID("rain")!,
            volume: Volume(clamping: 50), route: flowing ? "speaker" : nil,
            wantsPlaying: state != .stopped && state != .paused)
        if let signer {
            status.signer = SignerStatus(state: signer, pid: nil, restarts: 5, lastExit: "exited with status 1")
            status.signer?.name = "igloo-signer"
        }
        return status
    }

    func shown(_ actions: [KeepAliveAlarm.Action]) -> [KeepAliveAlarm.Message] {
        actions.compactMap { if case .show(let message) = $0 { message } else { nil } }
    }

    @Test func aFailedSignerRaisesOneNotificationThatNamesItAndRecoveryUpdatesIt() {
        var alarm = KeepAliveAlarm()
        #expect(alarm.update(status(.playing, flowing: true, signer: .running), now: origin).isEmpty)
        let broken = shown(alarm.update(status(.playing, flowing: true, signer: .failed), now: origin + .seconds(1)))
        #expect(broken.count == 1)
        #expect(broken.first?.body.contains("igloo-signer") == true)
        #expect(broken.first?.critical == true)
        // The same facts again raise nothing more.
        #expect(shown(alarm.update(status(.playing, flowing: true, signer: .failed), now: origin + .seconds(2))).isEmpty)
        // Restored within the minute: it waits for the minute, then updates the same incident.
        let early = alarm.update(status(.playing, flowing: true, signer: .running), now: origin + .seconds(30))
        #expect(shown(early).isEmpty)
        #expect(early.contains(.scheduleTick(at: origin + .seconds(61))))
        let restored = shown(alarm.tick(now: origin + .seconds(61)))
        #expect(restored.map(\.summary) == ["Keep-alive restored"])
        #expect(restored.first?.incident == broken.first?.incident)
    }

    @Test func aDaemonThatIsNotConfiguredRaisesOneNotificationSayingWhy() {
        var alarm = KeepAliveAlarm()
        let reason = "/home/me/.config/soundscaped/soundscaped.conf: line 2: unknown key 'signer-comand'"
        let broken = shown(alarm.notConfigured(reason, now: origin))
        #expect(broken.count == 1)
        #expect(broken.first?.body.contains(reason) == true)
        #expect(broken.first?.critical == true)
        // Every reconnect hears it again: nothing more, even after the silence threshold.
        #expect(shown(alarm.update(nil, now: origin + .seconds(1))).isEmpty)
        #expect(shown(alarm.notConfigured(reason, now: origin + .seconds(2))).isEmpty)
        #expect(shown(alarm.tick(now: origin + .seconds(90))).isEmpty)
        // Mended: the daemon answers with a status, and the incident closes.
        let restored = shown(alarm.update(status(.playing, flowing: true), now: origin + .seconds(91)))
        #expect(restored.map(\.summary) == ["Keep-alive restored"])
        #expect(restored.first?.incident == broken.first?.incident)
    }

    @Test func silenceCountsOnlyAfterTheThresholdAndOnlyWhileSoundIsWanted() {
        var alarm = KeepAliveAlarm()
        let actions = alarm.update(status(.recovering, flowing: false), now: origin)
        #expect(shown(actions).isEmpty)
        #expect(actions.contains(.scheduleTick(at: origin + .seconds(10))))
        #expect(shown(alarm.tick(now: origin + .seconds(9))).isEmpty)
        let broken = shown(alarm.tick(now: origin + .seconds(10)))
        #expect(broken.count == 1 && broken[0].body.contains("No sound"))

        // Paused or interrupted on purpose is not a breakage.
        var quiet = KeepAliveAlarm()
        #expect(quiet.update(status(.paused, flowing: false), now: origin).isEmpty)
        #expect(shown(quiet.tick(now: origin + .seconds(100))).isEmpty)
        #expect(quiet.update(status(.interrupted, flowing: false), now: origin + .seconds(101)).isEmpty)
    }

    @Test func aBlipShorterThanTheThresholdRaisesNothing() {
        var alarm = KeepAliveAlarm()
        _ = alarm.update(status(.recovering, flowing: false), now: origin)
        #expect(shown(alarm.update(status(.playing, flowing: true), now: origin + .seconds(3))).isEmpty)
        #expect(shown(alarm.tick(now: origin + .seconds(20))).isEmpty)
    }

    @Test func anUnreachableDaemonThatWasPlayingIsABreakage() {
        var alarm = KeepAliveAlarm()
        _ = alarm.update(status(.playing, flowing: true), now: origin)
        _ = alarm.update(nil, now: origin + .seconds(1))
        let broken = shown(alarm.tick(now: origin + .seconds(11)))
        #expect(broken.first?.body.contains("not answered") == true)
        // A daemon that was stopped being away is no breakage.
        var idle = KeepAliveAlarm()
        _ = idle.update(status(.stopped, flowing: false), now: origin)
        _ = idle.update(nil, now: origin + .seconds(1))
        #expect(shown(idle.tick(now: origin + .seconds(30))).isEmpty)
    }

    @Test func neverMoreThanOneAMinuteAndANewIncidentGetsANewNumber() {
        var alarm = KeepAliveAlarm()
        let first = shown(alarm.update(status(.playing, flowing: true, signer: .failed), now: origin))
        _ = alarm.update(status(.playing, flowing: true, signer: .running), now: origin + .seconds(1))
        var sent = first
        var now = origin + .seconds(1)
        // Flapping for two minutes: at most one message per minute goes out.
        for step in 0..<120 {
            now = origin + .seconds(2 + step)
            let state: SignerStatus.State = step % 2 == 0 ? .failed : .running
            sent += shown(alarm.update(status(.playing, flowing: true, signer: state), now: now))
            sent += shown(alarm.tick(now: now))
        }
        #expect(sent.count <= 3)
        #expect(sent.count >= 2)
        _ = alarm.update(status(.playing, flowing: true, signer: .running), now: now + .seconds(61))
        let later = shown(alarm.update(status(.playing, flowing: true, signer: .failed), now: now + .seconds(200)))
        #expect(later.count == 1)
        #expect(later[0].incident != first[0].incident)
    }

    @Test func switchedOffShowsNothing() {
        var alarm = KeepAliveAlarm()
        alarm.setEnabled(false)
        #expect(shown(alarm.update(status(.playing, flowing: true, signer: .failed), now: origin)).isEmpty)
    }
}
