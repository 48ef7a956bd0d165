import Foundation
import Testing
@testable import SoundscapeCore

/// The sinks, calls and preferences the interruption and route tests share: statics of
/// `InterruptionPolicyTests`, so its nested suites name them unqualified.
extension InterruptionPolicyTests {
    static let speaker = "alsa_output.pci-0000_00_1f.3.analog-stereo"
    static let headset = "bluez_output.00_1B_66_AA_BB_CC.1"
    static let usb = "alsa_output.usb-Focusrite_Scarlett-00.analog-stereo"
    static let linphone = "Linphone (Communication)"
    static let discord = "Discord (Communication)"

    static func sink(_ name: String, callRoute: Bool = false) -> GraphFacts.Sink {
        GraphFacts.Sink(name: name, isCallRoute: callRoute)
    }

    static func facts(_ sinks: [GraphFacts.Sink], default defaultSink: String?, calls: [String] = []) -> GraphFacts {
        GraphFacts(sinks: sinks, defaultSink: defaultSink, communicationStreams: calls)
    }

    /// The built-in speaker, default, nothing else going on.
    static let onSpeaker = facts([sink(speaker)], default: speaker)
    /// The same, with a call.
    static let callOnSpeaker = facts([sink(speaker)], default: speaker, calls: [linphone])
    /// A Bluetooth headset in its call profile has become the default.
    static let headsetInCallProfile = facts([sink(speaker), sink(headset, callRoute: true)], default: headset)

    static func preferences(
        _ mode: Preferences.InterruptionMode = .pause, duckLevel: Int = 30, autoResume: Bool = true,
        pinnedSink: String? = nil
    ) -> Preferences {
        Preferences(interruptionMode: mode, duckLevel: duckLevel, autoResume: autoResume, pinnedSink: pinnedSink)
    }

    static func volume(_ percent: Int) -> Volume { Volume(percent: percent)! }

    static let interruptedByCall = PlayerMachine.Action.emit(
        .interrupted, message: "a call is active: Linphone (Communication)", cause: "communicationStream")
    static let interruptedByHeadset = PlayerMachine.Action.emit(
        .interrupted, message: "the default output is a call route (\(headset))", cause: "callRoute")

    struct Emitted: Equatable {
        var reason: EventReason
        var message: String?
        var cause: String?
    }
}

extension [PlayerMachine.Action] {
    var emitted: [InterruptionPolicyTests.Emitted] {
        compactMap {
            if case .emit(let reason, let message, let cause) = $0 {
                InterruptionPolicyTests.Emitted(reason: reason, message: message, cause: cause)
            } else {
                nil
            }
        }
    }
}

extension MachineDriver {
    /// Playing `rain` at 50 % and streaming, `preferences` applied, `graph` known (the target set) and
    /// linked to `route`, with the `started` event already out.
    static func playingLinked(
        with preferences: Preferences = .default,
        graph: GraphFacts = InterruptionPolicyTests.onSpeaker,
        route: String? = InterruptionPolicyTests.speaker
    ) -> MachineDriver {
        var driver = MachineDriver.playing()
        if preferences != .default { driver.send(.setPreferences(preferences)) }
        driver.send(.graphChanged(graph))
        driver.send(.routeChanged(route))
        precondition(driver.status.state == .playing && driver.machine.route == route)
        return driver
    }

    /// Lets a stop's fade-out finish: the graph stops running us, then the output goes idle.
    mutating func finishFadeOut() {
        precondition(machine.output == .stopping)
        send(.outputStreaming(false), after: .milliseconds(300))
        send(.outputStopped)
        precondition(machine.output == .idle)
    }
}
