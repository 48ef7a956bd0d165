import Testing
import TestSupport
@testable import SoundscapeCore

// Call routes in the graph WirePlumber 0.5 makes: judged from the nodes and
// links the output sees (`GraphFacts(nodes:links:…)`), with the properties
// WirePlumber 0.5.13 and PipeWire 1.4 give them (`PipeWireGraph.WirePlumber05`).

private typealias WP = PipeWireGraph.WirePlumber05

private let address = "00:1B:66:AA:BB:CC"
private let headsetDevice = 57
private let loopbackName = "bluez_output.00:1B:66:AA:BB:CC"
private let internalName = "bluez_output_internal.00_1B_66_AA_BB_CC.1"
private let speakerName = "alsa_output.pci-0000_00_1f.3.analog-stereo"

private let speakerNode = GraphNode(
    id: 40,
    properties: [
        "node.name": speakerName, "media.class": "Audio/Sink", "device.id": "41", "factory.name": "api.alsa.pcm.sink",
    ])

/// The headset as WirePlumber 0.5.13 shows it: the loopback sink, and the real node in `profile`.
private func headset(_ profile: WP.BluetoothProfile, deviceID: Int = headsetDevice) -> [GraphNode] {
    [
        GraphNode(
            id: 60,
            properties: WP.bluetoothLoopbackSink(
                address: address, description: "WH-1000XM4",
                deviceID: deviceID, linkGroup: "loopback-1234-21")),
        GraphNode(
            id: 61,
            properties: WP.bluetoothInternalSink(
                address: address, description: "WH-1000XM4",
                deviceID: deviceID, profile: profile)),
    ]
}

private func facts(_ nodes: [GraphNode], links: [GraphLink] = [], default defaultSink: String? = nil) -> GraphFacts {
    GraphFacts(nodes: nodes, links: links, defaultSink: defaultSink, detection: CallDetection())
}

private func callRoutes(_ facts: GraphFacts) -> [String] {
    facts.sinks.filter(\.isCallRoute).map(\.name)
}

@Suite struct CallRouteTests {
    // MARK: Bluetooth behind WirePlumber 0.5.13's loopback

    @Test func theLoopbackSinkCarriesNothingThatNamesACall() {
        // What made the old check miss it: no profile, no factory, no intended roles.
        let loopback = WP.bluetoothLoopbackSink(
            address: address, description: "WH-1000XM4", deviceID: headsetDevice,
            linkGroup: "loopback-1234-21")
        #expect(
            loopback["api.bluez5.profile"] == nil && loopback["factory.name"] == nil
                && loopback["device.intended-roles"] == nil)
        #expect(!CallDetection().isCallRoute(properties: loopback))
    }

    @Test func inTheHeadsetProfileTheLoopbackIsACallRouteThroughItsDevice() {
        let graph = facts([speakerNode] + headset(.headset), default: loopbackName)
        #expect(callRoutes(graph) == [loopbackName, internalName])
        #expect(graph.defaultIsCallRoute)
    }

    @Test func inA2DPNeitherIs() {
        let graph = facts([speakerNode] + headset(.a2dp), default: loopbackName)
        #expect(callRoutes(graph) == [])
        #expect(!graph.defaultIsCallRoute)
    }

    @Test func withoutDeviceIDTheLoopbackIsTiedByItsBluetoothAddress() {
        // A loopback that does not carry device.id: its name has the address with `:`, the real node's with `_`.
        var nodes = headset(.headset)
        nodes[0].properties["device.id"] = nil
        nodes[1].properties["device.id"] = nil
        #expect(callRoutes(facts(nodes)) == [loopbackName, internalName])
        // The real node without api.bluez5.address: its name still has the address.
        nodes[1].properties["api.bluez5.address"] = nil
        #expect(callRoutes(facts(nodes)) == [loopbackName, internalName])
    }

    @Test func anotherDeviceInItsCallProfileDoesNotMakeOurSinkACallRoute() {
        var other = headset(.headset, deviceID: 99)
        other[0].properties["node.name"] = "bluez_output.11:22:33:44:55:66"
        other[1].properties["node.name"] = "bluez_output_internal.11_22_33_44_55_66.1"
        other[1].properties["api.bluez5.address"] = "11:22:33:44:55:66"
        for index in other.indices { other[index].id += 10 }
        let graph = facts([speakerNode] + headset(.a2dp) + other)
        #expect(callRoutes(graph) == ["bluez_output.11:22:33:44:55:66", "bluez_output_internal.11_22_33_44_55_66.1"])
    }

    @Test func aSinkFedByALoopbackIntoACallRouteIsOne() {
        // A loopback (its stream shares the sink's node.link-group) whose stream plays into
        // the headset in its call profile: what plays into the loopback ends up in the call.
        let filter = GraphNode(
            id: 70,
            properties: [
                "node.name": "input.loopback.sink.role.multimedia", "media.class": "Audio/Sink", "node.link-group": "loopback-1234-9",
            ])
        let filterStream = GraphNode(
            id: 71,
            properties: [
                "node.name": "output.loopback.sink.role.multimedia", "media.class": "Stream/Output/Audio",
                "node.link-group": "loopback-1234-9",
            ])
        let nodes = [speakerNode, filter, filterStream] + headset(.headset)
        #expect(callRoutes(facts(nodes, links: [GraphLink(output: 71, input: 61)])).contains(filter.properties["node.name"]!))
        #expect(!callRoutes(facts(nodes, links: [GraphLink(output: 71, input: 40)])).contains(filter.properties["node.name"]!))
        // Two loopbacks in a row end in the call route too.
        let second = GraphNode(id: 80, properties: ["node.name": "eq", "media.class": "Audio/Sink", "node.link-group": "g2"])
        let secondStream = GraphNode(
            id: 81,
            properties: [
                "node.name": "eq.out", "media.class": "Stream/Output/Audio",
                "node.link-group": "g2",
            ])
        let chain = facts(nodes + [second, secondStream], links: [GraphLink(output: 81, input: 70), GraphLink(output: 71, input: 61)])
        #expect(callRoutes(chain).contains("eq"))
    }

    // MARK: Intended roles

    @Test(arguments: [
        "Communication", "Music Communication", "Phone",
        #"[ "Communication", "Phone" ]"#, #"["Music","Communication"]"#, "[ Communication ]",
    ])
    func intendedRolesForACallMakeACallRoute(roles: String) {
        #expect(CallDetection().isCallRoute(properties: ["media.class": "Audio/Sink", "device.intended-roles": roles]))
    }

    @Test(arguments: [
        "Music", #"[ "Music", "Movie", "Game", "Multimedia" ]"#, #"[ "Alert", "Emergency" ]"#, "Communications", "[]", "",
    ])
    func otherIntendedRolesDoNot(roles: String) {
        #expect(!CallDetection().isCallRoute(properties: ["media.class": "Audio/Sink", "device.intended-roles": roles]))
    }

    @Test func theIntendedRolesAreTheConfiguredCallRoles() {
        let sink = ["media.class": "Audio/Sink", "device.intended-roles": #"[ "Voip" ]"#]
        #expect(!CallDetection().isCallRoute(properties: sink))
        #expect(CallDetection(roles: ["Voip"]).isCallRoute(properties: sink))
    }

    @Test func spaJSONWords() {
        #expect(SPAJSON.words(#"[ "Communication", "Phone" ]"#) == ["Communication", "Phone"])
        #expect(SPAJSON.words("[ Communication Phone ]") == ["Communication", "Phone"])
        #expect(SPAJSON.words("Music Communication") == ["Music", "Communication"])
        #expect(SPAJSON.words(#"["a b", "c\"d"]"#) == ["a b", #"c"d"#])
        #expect(SPAJSON.words("") == [])
        // The default metadata's sinks, by name.
        #expect(SPAJSON.string(forKey: "name", in: #"{"name":"bluez_output.00:1B:66:AA:BB:CC"}"#) == "bluez_output.00:1B:66:AA:BB:CC")
        #expect(SPAJSON.string(forKey: "name", in: #"{ "name": "speaker" }"#) == "speaker")
        #expect(SPAJSON.string(forKey: "name", in: #"{ "name": "a \"b\"" }"#) == #"a "b""#)
        #expect(SPAJSON.string(forKey: "name", in: #"{ "nick": "speaker" }"#) == nil)
        #expect(SPAJSON.string(forKey: "name", in: #"{ "name": }"#) == nil)
        #expect(SPAJSON.string(forKey: "name", in: #"{ "name": "", "nick": "x" }"#) == "")
    }

    // MARK: Role sinks (media-role-nodes.conf)

    @Test func theCommunicationRoleSinkIsACallRouteAndTheOthersAreNot() {
        let sinks: [WP.RoleSink] = [.multimedia, .navigation, .communication, .alert]
        let nodes = sinks.enumerated().map { index, sink in
            GraphNode(id: UInt32(100 + index), properties: sink.properties(linkGroup: "loopback-1234-\(index)"))
        }
        #expect(callRoutes(facts(nodes)) == [WP.RoleSink.communication.name])
    }

    // MARK: Calls and facts

    @Test func callsAreRunningCallStreamsAndTheOwnStreamIsNeverSeen() {
        let call = GraphNode(
            id: 90,
            properties: [
                "node.name": "linphone", "media.class": "Stream/Output/Audio",
                "media.role": "Communication", "application.name": "Linphone",
            ],
            isRunning: true)
        var idle = call
        idle.id = 91
        idle.isRunning = false
        let graph = facts([speakerNode, call, idle], default: speakerName)
        #expect(graph.communicationStreams == ["Linphone (Communication)"])
        #expect(graph.sinks.map(\.name) == [speakerName])
    }

    // MARK: The player

    @Test func theHeadsetSwitchingToItsCallProfileBehindTheLoopbackPausesUs() {
        var driver = MachineDriver.playing()
        driver.send(.graphChanged(facts([speakerNode] + headset(.a2dp), default: loopbackName)))
        driver.send(.routeChanged(loopbackName))
        #expect(driver.status.state == .playing)

        // WirePlumber replaces the real node; the loopback we play to stays.
        let actions = driver.send(.graphChanged(facts([speakerNode] + headset(.headset), default: loopbackName)))
        #expect(actions.contains(.stopOutput))
        #expect(
            actions.contains(
                .emit(
                    .interrupted, message: "the default output is a call route (\(loopbackName))",
                    cause: "callRoute")))
        #expect(driver.status.interruptions == ["callRoute"])

        driver.send(.outputStreaming(false), after: .milliseconds(300))
        driver.send(.outputStopped)
        let back = driver.send(.graphChanged(facts([speakerNode] + headset(.a2dp), default: loopbackName)))
        #expect(back.startsOutput)
        #expect(driver.status.interruptions == [])
    }
}
