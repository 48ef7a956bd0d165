import Foundation
import Testing
@testable import SoundscapeCore

/// The interruption tests' sinks and graphs (Support/InterruptionFixtures.swift).
private typealias Fixtures = InterruptionPolicyTests

/// Which streams are calls and which sinks are call routes (`CallDetection`, `GraphFacts`).
@Suite struct CallDetectionTests {
    static let playback = "Stream/Output/Audio"

    @Test(arguments: ["Communication", "Phone"])
    func callRolesAreCalls(role: String) {
        #expect(CallDetection().isCall(properties: ["media.class": Self.playback, "media.role": role]))
        #expect(CallDetection().isCall(properties: ["media.class": "Stream/Input/Audio", "media.role": role]))
    }

    @Test func knownApplicationsAreCallsCaseInsensitively() {
        let detection = CallDetection()
        #expect(detection.isCall(properties: ["media.class": Self.playback, "application.process.binary": "linphone"]))
        #expect(detection.isCall(properties: ["media.class": Self.playback, "application.process.binary": "Discord"]))
        #expect(detection.isCall(properties: ["media.class": "Stream/Input/Audio", "application.name": "ZOOM"]))
        #expect(
            detection.isCall(properties: [
                "media.class": Self.playback, "application.name": "Firefox",
                "application.process.binary": "signal-desktop",
            ]))
        // Whole names only.
        #expect(!detection.isCall(properties: ["media.class": Self.playback, "application.name": "Zoom Player"]))
    }

    @Test func onlyStreamsAreCalls() {
        let detection = CallDetection()
        #expect(!detection.isCall(properties: ["media.role": "Communication"]))
        #expect(!detection.isCall(properties: ["media.class": "Audio/Sink", "media.role": "Communication"]))
        #expect(!detection.isCall(properties: ["media.class": "Audio/Source", "application.name": "linphone"]))
        #expect(!detection.isCall(properties: ["media.class": "stream/output/audio", "media.role": "Communication"]))
    }

    @Test func aMusicStreamIsNotACall() {
        let detection = CallDetection()
        #expect(
            !detection.isCall(properties: [
                "media.class": Self.playback, "media.role": "Music",
                "application.name": "Firefox", "application.process.binary": "firefox",
            ]))
        #expect(!detection.isCall(properties: ["media.class": Self.playback]))
        #expect(!detection.isCall(properties: [:]))
    }

    @Test func customRolesAndApplicationsReplaceTheDefaults() {
        let detection = CallDetection(roles: ["VoIP"], applications: ["MyPhone"])
        #expect(detection.isCall(properties: ["media.class": Self.playback, "media.role": "VoIP"]))
        #expect(detection.isCall(properties: ["media.class": Self.playback, "application.process.binary": "myphone"]))
        #expect(detection.isCall(properties: ["media.class": Self.playback, "application.name": "MYPHONE"]))
        #expect(!detection.isCall(properties: ["media.class": Self.playback, "media.role": "Communication"]))
        #expect(!detection.isCall(properties: ["media.class": Self.playback, "application.name": "linphone"]))
    }

    @Test(arguments: [
        ["api.bluez5.profile": "headset-head-unit"],
        ["api.bluez5.profile": "headset-audio-gateway"],
        ["api.bluez5.profile": "hfp_hf"],
        ["api.bluez5.profile": "hfp_ag"],
        ["api.bluez5.profile": "hsp_hs"],
        ["factory.name": "api.bluez5.sco.sink"],
        ["device.intended-roles": "Communication"],
        ["device.intended-roles": "Music Communication"],
    ])
    func callRoutes(properties: [String: String]) {
        #expect(CallDetection().isCallRoute(properties: properties.merging(["media.class": "Audio/Sink"]) { a, _ in a }))
    }

    @Test(arguments: [
        ["media.class": "Audio/Sink", "node.name": "alsa_output.pci-0000_00_1f.3.analog-stereo"],
        ["media.class": "Audio/Sink", "api.bluez5.profile": "a2dp-sink"],
        ["media.class": "Audio/Sink", "factory.name": "api.bluez5.a2dp.sink"],
        ["media.class": "Audio/Sink", "device.intended-roles": "Music"],
        ["media.class": "Audio/Sink", "device.intended-roles": "Communications"],
        [:],
    ])
    func notCallRoutes(properties: [String: String]) {
        #expect(!CallDetection().isCallRoute(properties: properties))
    }

    @Test func defaultIsCallRoute() {
        #expect(Fixtures.headsetInCallProfile.defaultIsCallRoute)
        #expect(!Fixtures.onSpeaker.defaultIsCallRoute)
        #expect(!Fixtures.facts([Fixtures.sink(Fixtures.headset, callRoute: true)], default: nil).defaultIsCallRoute)
        #expect(!Fixtures.facts([Fixtures.sink(Fixtures.headset, callRoute: true)], default: "gone").defaultIsCallRoute)
        #expect(!GraphFacts().defaultIsCallRoute)
    }
}
