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
        // A limit reached says which, and what to run (issue 37).
        #expect(broken.first?.body.contains("signer-crash-limit") == true, "\(broken.first?.body ?? "")")
        #expect(broken.first?.body.contains("soundscapectl play") == true, "\(broken.first?.body ?? "")")
    }

    @Test func anUnknownHealthRaisesNothing() {
        var alarm = KeepAliveAlarm()
        #expect(shown(alarm.update(status(signer: .running), now: origin)).isEmpty)
        #expect(shown(alarm.update(status(signer: .starting), now: origin + .seconds(100))).isEmpty)
    }
}

/// A degraded signer (its check warns, it still signs): shown, and notified at normal urgency.
@Suite struct SignerDegradedDesktopTests {
    let origin = ContinuousClock.now
    let base = SignerHealthDesktopTests()

    @Test func theArtistLineSaysDegradedWithTheSignersWords() {
        let model = MPRISModel(status: base.status(signer: .running, health: .degraded, says: "PEERS WARNING - 2/3 online"))
        #expect(model.signerLine == "igloo-signer degraded: PEERS WARNING - 2/3 online")
        #expect(MPRISModel(status: base.status(signer: .running, health: .degraded)).signerLine == "igloo-signer degraded")
    }

    @Test func degradedRaisesOneNotificationABreakOutranksItAndHealingRestores() {
        var alarm = KeepAliveAlarm()
        #expect(alarm.update(base.status(signer: .running, health: .healthy), now: origin).isEmpty)
        let degraded = base.shown(
            alarm.update(base.status(signer: .running, health: .degraded, says: "2/3 peers online"), now: origin + .seconds(1)))
        #expect(degraded.map(\.summary) == ["Keep-alive degraded"])
        #expect(degraded.first?.body == "igloo-signer signs, but its health check warns: 2/3 peers online")
        #expect(degraded.first?.critical == false)
        // Turning unhealthy within the minute: the same incident, shown once the minute is up.
        let soon = alarm.update(base.status(signer: .running, health: .unhealthy), now: origin + .seconds(2))
        #expect(base.shown(soon).isEmpty)
        #expect(soon == [.scheduleTick(at: origin + .seconds(61))])
        let broken = base.shown(alarm.tick(now: origin + .seconds(61)))
        #expect(broken.map(\.summary) == ["Keep-alive broken"])
        #expect(broken.first?.incident == degraded.first?.incident)
        let restored = base.shown(alarm.update(base.status(signer: .running, health: .healthy), now: origin + .seconds(130)))
        #expect(restored.map(\.summary) == ["Keep-alive restored"])
        // Closed: the next degradation is a new incident.
        let again = base.shown(alarm.update(base.status(signer: .running, health: .degraded), now: origin + .seconds(200)))
        #expect(again.map(\.summary) == ["Keep-alive degraded"])
        #expect(again.first?.incident != degraded.first?.incident)
    }
}
