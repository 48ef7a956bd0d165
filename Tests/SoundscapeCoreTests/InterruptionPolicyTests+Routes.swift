import Foundation
import Testing
@testable import SoundscapeCore

// MARK: - Routes: where we ask to be linked

extension InterruptionPolicyTests {
    @Suite struct Targets {
        typealias D = MachineDriver

        @Test func theTargetFollowsTheDefault() {
            var driver = D.playing()
            #expect(driver.send(.graphChanged(onSpeaker)) == [.setTarget(speaker)])
            #expect(driver.machine.desiredTarget() == speaker)
            let withHeadset = facts([sink(speaker), sink(headset)], default: headset)
            #expect(driver.send(.graphChanged(withHeadset)) == [.setTarget(headset)])
            #expect(driver.send(.graphChanged(withHeadset)) == [])
            #expect(driver.send(.graphChanged(facts([sink(headset), sink(speaker)], default: headset))) == [])
            #expect(driver.send(.graphChanged(facts([sink(speaker), sink(headset)], default: speaker))) == [.setTarget(speaker)])
            #expect(driver.status.state == .playing)
        }

        @Test func theTargetIsSetWhileStoppedToo() {
            var driver = D()
            driver.send(.outputConnected)
            #expect(driver.send(.graphChanged(onSpeaker)) == [.setTarget(speaker)])
            #expect(driver.status.state == .stopped)
        }

        @Test func aPinnedSinkIsTheTargetWhileItExists() {
            var driver = D.playing()
            let both = facts([sink(speaker), sink(headset)], default: speaker)
            #expect(driver.send(.graphChanged(both)) == [.setTarget(speaker)])
            let pinned = preferences(pinnedSink: headset)
            #expect(driver.send(.setPreferences(pinned)) == [.persistPreferences(pinned), .setTarget(headset)])
            #expect(driver.machine.desiredTarget() == headset)
            // It vanishes: the default; it returns: itself.
            #expect(driver.send(.graphChanged(onSpeaker)) == [.setTarget(speaker)])
            #expect(driver.send(.graphChanged(both)) == [.setTarget(headset)])
            // The default changing does not matter while pinned.
            #expect(driver.send(.graphChanged(facts([sink(speaker), sink(headset), sink(usb)], default: usb))) == [])
            // Unpinning follows the default again.
            #expect(driver.send(.setPreferences(.default)) == [.persistPreferences(.default), .setTarget(usb)])
            #expect(driver.status.state == .playing)
        }

        @Test func aPinnedSinkNeverSeenIsNotATarget() {
            let driver = D.playingLinked(with: preferences(pinnedSink: usb))
            #expect(driver.machine.desiredTarget() == speaker)
        }

        @Test func aCallRouteDefaultIsNeverATarget() {
            var driver = D()
            driver.send(.outputConnected)
            #expect(driver.send(.graphChanged(facts([sink(headset, callRoute: true)], default: headset))) == [])
            #expect(driver.machine.desiredTarget() == nil)
            #expect(driver.send(.graphChanged(facts([sink(headset, callRoute: true), sink(speaker)], default: headset))) == [])
            #expect(driver.machine.desiredTarget() == nil)
            #expect(driver.send(.graphChanged(facts([sink(headset), sink(speaker)], default: headset))) == [.setTarget(headset)])
            // Back in the call profile: the last request stands (there is nothing better to ask for).
            #expect(driver.send(.graphChanged(facts([sink(headset, callRoute: true), sink(speaker)], default: headset))) == [])
            #expect(driver.status.state == .stopped)
        }

        @Test func noUsableSinkIsRouteChangeFailedUntilOneAppears() {
            var driver = D.playingLinked()
            let gone = driver.send(.graphChanged(facts([], default: nil)), after: .seconds(5))
            #expect(gone == [.emit(.routeChangeFailed, message: "no sink to play to; waiting for one")])
            #expect(driver.status.state == .recovering)
            #expect(driver.status.interruptions == [])
            #expect(driver.status.noSink, "status says there is no sink")
            #expect(driver.send(.routeChanged(nil)) == [])
            let pausedAt = driver.now
            #expect(driver.send(.outputStreaming(false)) == [.scheduleTick(at: pausedAt + D.timeout)])
            #expect(driver.send(.tick, after: .seconds(3)) == [])
            #expect(driver.send(.graphChanged(facts([], default: nil))) == [])

            #expect(driver.send(.graphChanged(facts([sink(usb)], default: usb)), after: .seconds(10)) == [.setTarget(usb)])
            #expect(driver.status.state == .recovering)
            #expect(!driver.status.noSink)
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
            #expect(driver.status.state == .playing)
            #expect(
                driver.send(.routeChanged(usb))
                    == [.emit(.routeChanged, message: "\(speaker) → \(usb)", cause: "deviceUnavailable")])
            #expect(driver.status.route == usb)
        }

        @Test
        func aSinkAppearingAfterALongGapIsARouteChangeNotAServerPause() {
            var driver = D.playingLinked()
            driver.send(.graphChanged(facts([], default: nil)), after: .seconds(5))
            driver.send(.routeChanged(nil))
            driver.send(.outputStreaming(false))
            driver.send(.tick, after: .seconds(3))
            #expect(driver.send(.graphChanged(facts([sink(usb)], default: usb)), after: .seconds(10)) == [.setTarget(usb)])
            // Linked to the new sink; the graph has not started running us yet (it does a moment later).
            #expect(
                driver.send(.routeChanged(usb))
                    == [.emit(.routeChanged, message: "\(speaker) → \(usb)", cause: "deviceUnavailable")])
            #expect(driver.status.interruptions == [])
            #expect(driver.send(.outputStreaming(true), after: .milliseconds(20)) == [.emit(.resumed, message: nil)])
        }

        @Test func onlyACallRouteLeftIsAnInterruption() {
            var driver = D.playing()
            let hfpOnly = facts([sink(headset, callRoute: true)], default: headset)
            #expect(driver.send(.graphChanged(hfpOnly)) == [.stopOutput, interruptedByHeadset])
        }

        @Test func playWithNoUsableSinkStartsAndSaysSo() {
            var driver = D()
            driver.send(.outputConnected)
            #expect(driver.send(.graphChanged(facts([], default: nil))) == [])
            #expect(driver.status.state == .stopped)
            #expect(
                driver.send(.play(D.rain)) == [
                    .persist(driver.desired(wantsPlaying: true)), .startOutput(D.rain, D.half, .gentle),
                    .scheduleTick(at: driver.now + D.timeout),
                    .emit(.routeChangeFailed, message: "no sink to play to; waiting for one"),
                ])
            #expect(driver.send(.graphChanged(onSpeaker)) == [.setTarget(speaker)])
            #expect(driver.send(.outputStreaming(true)) == [.emit(.started, message: nil)])
        }

        @Test func aNewConnectionGetsTheTargetAgain() {
            var driver = D.playingLinked()
            #expect(
                driver.send(.outputDisconnected(reason: "gone"))
                    == [.emit(.serverLost, message: "PipeWire is not available: gone")])
            #expect(driver.machine.graph == nil)
            #expect(driver.send(.routeChanged(nil)) == [])
            #expect(
                driver.send(.outputConnected, after: .seconds(1)) == [
                    .startOutput(D.rain, D.half, .prompt), .scheduleTick(at: driver.now + D.timeout), .emit(.serverRestored, message: nil),
                ])
            #expect(driver.send(.graphChanged(onSpeaker)) == [.setTarget(speaker)])
            #expect(driver.send(.routeChanged(speaker)) == [], "back on the same sink: no route change")
            #expect(driver.send(.outputStreaming(true)) == [.emit(.resumed, message: nil)])
        }

        @Test func factsBeforeTheConnectEventAreTargetedOnConnect() {
            var driver = D.playingLinked()
            driver.send(.outputDisconnected(reason: "gone"))
            // The output reports the new connection's graph before it says it is connected.
            #expect(driver.send(.graphChanged(onSpeaker)) == [])
            #expect(
                driver.send(.outputConnected) == [
                    .startOutput(D.rain, D.half, .prompt), .scheduleTick(at: driver.now + D.timeout), .setTarget(speaker),
                    .emit(.serverRestored, message: nil),
                ])
        }
    }
}

// MARK: - Routes: why the route changed

extension InterruptionPolicyTests {
    @Suite struct RouteCauses {
        typealias D = MachineDriver

        static let both = facts([sink(speaker), sink(headset)], default: speaker)

        @Test func aVanishedDeviceIsDeviceUnavailable() {
            var driver = D.playingLinked(graph: Self.both)
            #expect(driver.send(.graphChanged(facts([sink(headset)], default: headset))) == [.setTarget(headset)])
            #expect(driver.send(.routeChanged(nil)) == [])
            #expect(
                driver.send(.routeChanged(headset))
                    == [.emit(.routeChanged, message: "\(speaker) → \(headset)", cause: "deviceUnavailable")])
            #expect(driver.status.route == headset)
        }

        @Test func thePinnedSinkReturningIsPinnedDeviceReturned() {
            var driver = D.playingLinked(with: preferences(pinnedSink: headset), graph: onSpeaker)
            #expect(driver.send(.graphChanged(Self.both)) == [.setTarget(headset)])
            #expect(
                driver.send(.routeChanged(headset))
                    == [.emit(.routeChanged, message: "\(speaker) → \(headset)", cause: "pinnedDeviceReturned")])
        }

        @Test func anythingElseIsNewDefault() {
            var driver = D.playingLinked(graph: Self.both)
            #expect(driver.send(.graphChanged(facts([sink(speaker), sink(headset)], default: headset))) == [.setTarget(headset)])
            #expect(
                driver.send(.routeChanged(headset))
                    == [.emit(.routeChanged, message: "\(speaker) → \(headset)", cause: "newDefault")])
        }

        @Test func aMoveThroughNilIsOneChange() {
            var driver = D.playingLinked(graph: Self.both)
            #expect(driver.send(.routeChanged(nil)) == [])
            #expect(driver.status.route == nil)
            #expect(
                driver.send(.routeChanged(headset))
                    == [.emit(.routeChanged, message: "\(speaker) → \(headset)", cause: "newDefault")])
        }

        @Test func relinkingToTheSameSinkIsNoChange() {
            var driver = D.playingLinked(graph: Self.both)
            #expect(driver.send(.routeChanged(nil)) == [])
            #expect(driver.send(.routeChanged(speaker)) == [])
            #expect(driver.send(.routeChanged(speaker)) == [])
        }

        @Test func noRouteEventsWhileStopped() {
            var driver = D()
            driver.send(.outputConnected)
            driver.send(.graphChanged(Self.both))
            #expect(driver.send(.routeChanged(speaker)) == [])
            #expect(driver.send(.routeChanged(headset)) == [])
            #expect(driver.send(.graphChanged(facts([sink(speaker)], default: speaker))) == [])
            #expect(driver.send(.routeChanged(speaker)) == [])
            #expect(driver.status.route == speaker)
        }
    }
}
