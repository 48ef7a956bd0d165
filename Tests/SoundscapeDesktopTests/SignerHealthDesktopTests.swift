import Testing
import SoundscapeCore
@testable import SoundscapeDesktop

/// What the desktop companion makes of the signer's health and status line: the
/// MPRIS line under the title, and the keep-alive notification.
@Suite struct SignerHealthDesktopTests {
    let origin = ContinuousClock.now

    func status(
        signer state: SignerStatus.State, health: SignerStatus.Health = .unknown,
        says: String? = nil
    ) -> PlayerStatus {
        var status = PlayerStatus(
            state: .playing, isPlaying: true, soundscape: SoundscapeID("rain")!,
            volume: Volume(clamping: 50), route: "speaker", wantsPlaying: true)
        status.signer = SignerStatus(
            state: state, pid: state == .running ? 42 : nil, restarts: 0, lastExit: nil,
            health: health, status: says)
        status.signer?.name = "igloo-signer"
        return status
    }

    func shown(_ actions: [KeepAliveAlarm.Action]) -> [KeepAliveAlarm.Message] {
        actions.compactMap { if case .show(let message) = $0 { message } else { nil } }
    }

    @Test func theArtistLineIsTheSignersOwnStatusWhileItRuns() {
        let model = MPRISModel(status: status(signer: .running, health: .healthy, says: "3/3 relays"))
        #expect(model.metadata["xesam:artist"] == .strings(["igloo-signer: 3/3 relays"]))
        #expect(MPRISModel(status: status(signer: .running)).signerLine == "igloo-signer running")
        // Its words are not shown for a signer that does not run: they may be stale.
        #expect(MPRISModel(status: status(signer: .restarting, says: "3/3 relays")).signerLine == "igloo-signer starting")
        #expect(MPRISModel(status: status(signer: .stopped, says: "3/3 relays")).signerLine == "igloo-signer stopped")
    }

    @Test func anUnhealthySignerSaysSo() {
        #expect(
            MPRISModel(status: status(signer: .running, health: .unhealthy, says: "3/3 relays")).signerLine
                == "igloo-signer unhealthy")
        #expect(MPRISModel(status: status(signer: .restarting, health: .unhealthy)).signerLine == "igloo-signer unhealthy")
    }

    @Test func aChangedStatusLineIsSignalledAsChangedMetadata() {
        let before = MPRISModel(status: status(signer: .running, says: "2/3 relays"))
        let after = MPRISModel(status: status(signer: .running, says: "3/3 relays"))
        #expect(Set(after.changedPlayerProperties(since: before).keys) == ["Metadata"])
    }

    @Test func turningUnhealthyRaisesTheNotificationAndHealingClosesIt() {
        var alarm = KeepAliveAlarm()
        #expect(alarm.update(status(signer: .running, health: .healthy), now: origin).isEmpty)
        let broken = shown(alarm.update(status(signer: .running, health: .unhealthy), now: origin + .seconds(1)))
        #expect(broken.count == 1)
        #expect(broken.first?.summary == "Keep-alive broken")
        #expect(broken.first?.body == "igloo-signer fails its health check: it may not be signing.")
        #expect(broken.first?.critical == true)
        // Restarted, still unhealthy: the same incident, nothing new.
        #expect(shown(alarm.update(status(signer: .restarting, health: .unhealthy), now: origin + .seconds(2))).isEmpty)
        let restored = shown(alarm.update(status(signer: .running, health: .healthy), now: origin + .seconds(70)))
        #expect(restored.map(\.summary) == ["Keep-alive restored"])
        #expect(restored.first?.incident == broken.first?.incident)
    }

    @Test func aFailedSignerIsNamedOnceEvenIfAlsoUnhealthy() {
        var alarm = KeepAliveAlarm()
        let broken = shown(alarm.update(status(signer: .failed, health: .unhealthy), now: origin))
        #expect(broken.count == 1)
        #expect(broken.first?.body.contains("keeps crashing") == true)
        #expect(broken.first?.body.contains("health check") == false)
    }

    @Test func anUnknownHealthRaisesNothing() {
        var alarm = KeepAliveAlarm()
        #expect(shown(alarm.update(status(signer: .running), now: origin)).isEmpty)
        #expect(shown(alarm.update(status(signer: .starting), now: origin + .seconds(100))).isEmpty)
    }
}
