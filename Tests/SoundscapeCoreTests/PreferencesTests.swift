import Foundation
import Testing
@testable import SoundscapeCore

/// The interruption tests' sinks and preferences (Support/InterruptionFixtures.swift).
private typealias Fixtures = InterruptionPolicyTests

/// The user's preferences: their values by name, as `soundscapectl set` gives them, and their JSON.
@Suite struct PreferencesTests {
    private static func applying(_ name: String, _ value: String, to start: Preferences = .default)
        -> Result<Preferences, Preferences.ValueError>
    {
        var preferences = start
        do throws(Preferences.ValueError) {
            try preferences.set(name, to: value)
            return .success(preferences)
        } catch {
            #expect(preferences == start, "a refused value changes nothing")
            return .failure(error)
        }
    }

    private static func refused(_ description: String) -> Result<Preferences, Preferences.ValueError> {
        .failure(Preferences.ValueError(description: description))
    }

    @Test func defaults() {
        #expect(Preferences.default == Fixtures.preferences(.pause, duckLevel: 30, autoResume: true, pinnedSink: nil))
        #expect(
            Preferences.names == [
                "interruption-mode", "duck-level", "auto-resume", "pinned-sink", "keep-awake",
                "notifications", "signer-down-sound",
            ])
        #expect(Preferences.default.signerDownSound == .cue)
    }

    @Test func interruptionMode() {
        for mode in Preferences.InterruptionMode.allCases {
            #expect(Self.applying("interruption-mode", mode.rawValue) == .success(Fixtures.preferences(mode)))
        }
        #expect(Self.applying("interruption-mode", "Duck") == .success(Fixtures.preferences(.duck)))
        for bad in ["", "loud", "pausing"] {
            #expect(Self.applying("interruption-mode", bad) == Self.refused("interruption-mode must be one of pause, duck, ignore"))
        }
    }

    @Test func duckLevel() {
        for (value, level) in [("0", 0), ("50", 50), ("100", 100), ("20%", 20), ("0%", 0), ("100%", 100)] {
            #expect(Self.applying("duck-level", value) == .success(Fixtures.preferences(duckLevel: level)))
        }
        for bad in ["", "%", "101", "-1", "150%", "50%%", "half", "5 0", "0x10"] {
            #expect(
                Self.applying("duck-level", bad) == Self.refused("duck-level must be a percentage from 0 to 100"),
                "\(bad)")
        }
    }

    @Test func autoResume() {
        let off = Fixtures.preferences(autoResume: false)
        for value in ["off", "false", "no", "0", "OFF", "No"] {
            #expect(Self.applying("auto-resume", value) == .success(off))
        }
        for value in ["on", "true", "yes", "1", "On", "TRUE"] {
            #expect(Self.applying("auto-resume", value, to: off) == .success(.default))
        }
        for bad in ["", "maybe", "2", "enabled"] {
            #expect(Self.applying("auto-resume", bad) == Self.refused("auto-resume must be on or off"))
        }
    }

    @Test func pinnedSink() {
        #expect(Self.applying("pinned-sink", Fixtures.usb) == .success(Fixtures.preferences(pinnedSink: Fixtures.usb)))
        let pinned = Fixtures.preferences(pinnedSink: Fixtures.usb)
        for unpin in ["none", "default", ""] {
            #expect(Self.applying("pinned-sink", unpin, to: pinned) == .success(.default))
        }
        let longest = String(repeating: "a", count: 256)
        #expect(Self.applying("pinned-sink", longest) == .success(Fixtures.preferences(pinnedSink: longest)))
        for bad in [String(repeating: "a", count: 257), String(repeating: "é", count: 129), "a\nb", "a\r\nb"] {
            #expect(Self.applying("pinned-sink", bad, to: pinned) == Self.refused("pinned-sink must be a node.name, or none"))
        }
    }

    @Test func keepAwakeAndNotifications() {
        var expected = Preferences.default
        expected.keepAwake = true
        #expect(Self.applying("keep-awake", "on") == .success(expected))
        expected = .default
        expected.notifications = false
        #expect(Self.applying("notifications", "off") == .success(expected))
        #expect(Self.applying("keep-awake", "maybe") == Self.refused("keep-awake must be on or off"))
        #expect(expected.changedNames(since: .default) == ["notifications"])
    }

    @Test func signerDownSound() {
        for sound in Preferences.SignerDownSound.allCases {
            var expected = Preferences.default
            expected.signerDownSound = sound
            #expect(Self.applying("signer-down-sound", sound.rawValue.uppercased()) == .success(expected))
        }
        for bad in ["", "chime", "on", "mute"] {
            #expect(
                Self.applying("signer-down-sound", bad)
                    == Self.refused("signer-down-sound must be one of cue, silence, keep"))
        }
        var silence = Preferences.default
        silence.signerDownSound = .silence
        #expect(silence.changedNames(since: .default) == ["signer-down-sound"])
    }

    @Test func unknownNames() {
        for name in ["volume", "", "Duck-Level", "interruption_mode"] {
            #expect(
                Self.applying(name, "on")
                    == Self.refused(
                        "unknown preference '\(name)' (known: interruption-mode, duck-level, auto-resume, pinned-sink, keep-awake, notifications, signer-down-sound)"
                    ))
        }
    }

    /// Every preference differs from its default here.
    static let nonDefault = Preferences(
        interruptionMode: .duck, duckLevel: 12, autoResume: false, pinnedSink: "alsa_output.usb-headset",
        keepAwake: true, notifications: false, signerDownSound: .silence)

    /// What the state database keeps of preferences is each one's name and `value(named:)`,
    /// restored through `set`: that must give every value back, and cover every stored property.
    @Test func everyValueComesBackThroughSet() throws {
        #expect(Self.nonDefault.changedNames(since: .default) == Preferences.names, "the example must change every preference")
        #expect(
            Mirror(reflecting: Preferences.default).children.count == Preferences.names.count,
            "a stored property without a name is neither settable nor saved")
        for preferences in [Self.nonDefault, .default] {
            var restored = Preferences.default == preferences ? Self.nonDefault : Preferences.default
            for name in Preferences.names {
                try restored.set(name, to: try #require(preferences.value(named: name)))
            }
            #expect(restored == preferences)
        }
        #expect(
            Preferences.names.map { Self.nonDefault.value(named: $0) }
                == ["duck", "12", "off", "alsa_output.usb-headset", "on", "off", "silence"])
        #expect(Preferences.names.map { Preferences.default.value(named: $0) } == ["pause", "30", "on", "none", "off", "on", "cue"])
        #expect(Preferences.default.value(named: "volume") == nil)
    }

    @Test func changedNamesFollowTheOrderOfNames() {
        var changed = Self.nonDefault
        changed.signerDownSound = .keep
        changed.duckLevel = 13
        #expect(changed.changedNames(since: Self.nonDefault) == ["duck-level", "signer-down-sound"])
        #expect(Self.nonDefault.changedNames(since: Self.nonDefault).isEmpty)
        changed = .default
        changed.pinnedSink = "none-of-these"
        #expect(changed.changedNames(since: .default) == ["pinned-sink"])
    }

    @Test func jsonWritesPinnedSinkAsExplicitNull() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(
            String(decoding: try encoder.encode(Preferences.default), as: UTF8.self)
                == #"{"autoResume":true,"duckLevel":30,"interruptionMode":"pause","keepAwake":false,"notifications":true,"pinnedSink":null,"signerDownSound":"cue"}"#
        )
        let pinned = Fixtures.preferences(.duck, duckLevel: 45, autoResume: false, pinnedSink: Fixtures.usb)
        #expect(try JSONDecoder().decode(Preferences.self, from: encoder.encode(pinned)) == pinned)
        #expect(
            try JSONDecoder().decode(
                Preferences.self,
                from: Data(
                    #"{"autoResume":true,"duckLevel":30,"interruptionMode":"pause","pinnedSink":null}"#.utf8)) == .default)
        #expect(
            try JSONDecoder().decode(
                Preferences.self,
                from: Data(
                    #"{"autoResume":true,"duckLevel":30,"interruptionMode":"ignore"}"#.utf8)) == Fixtures.preferences(.ignore))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(
                Preferences.self,
                from: Data(
                    #"{"autoResume":true,"duckLevel":30,"interruptionMode":"loud","pinnedSink":null}"#.utf8))
        }
    }

    @Test func interruptionCauseOrder() {
        #expect(
            InterruptionCause.allCases == [
                .communicationStream, .callRoute, .serverPaused, .signerDown, .muted,
                .roleCorked, .asleep,
            ])
        #expect(InterruptionCause.communicationStream < .callRoute)
        #expect(InterruptionCause.callRoute < .serverPaused)
        #expect(!(InterruptionCause.serverPaused < .communicationStream))
        #expect(!(InterruptionCause.callRoute < .callRoute))
        let all: Set<InterruptionCause> = [.serverPaused, .communicationStream, .callRoute]
        #expect(all.sorted().map(\.rawValue) == ["communicationStream", "callRoute", "serverPaused"])
        #expect(RouteChangeCause.allCases.map(\.rawValue) == ["newDefault", "deviceUnavailable", "pinnedDeviceReturned"])
    }
}
