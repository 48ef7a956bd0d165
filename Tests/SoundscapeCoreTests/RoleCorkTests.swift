import Testing
import TestSupport
@testable import SoundscapeCore

// WirePlumber 0.5's role-based policy (the media-role-nodes.conf example): its
// sinks in our facts, when it holds our link corked, and what the player does
// about it: an interruption of its own, no watchdog steps, an end when the
// link returns.

private typealias RoleSink = PipeWireGraph.WirePlumber05.RoleSink

private let multimedia = RoleSink.multimedia.name
private let alert = RoleSink.alert.name

private let speaker = GraphNode(id: 40, properties: ["node.name": "speaker", "media.class": "Audio/Sink"])

private func roleNodes(_ sinks: [RoleSink] = [.multimedia, .navigation, .communication, .alert]) -> [GraphNode] {
    sinks.enumerated().map { index, sink in
        GraphNode(id: UInt32(100 + index), properties: sink.properties(linkGroup: "loopback-1234-\(index)"))
    }
}

/// A stream of another application (node `id`, with `role`), playing.
private func stream(_ id: UInt32, role: String) -> GraphNode {
    GraphNode(
        id: id, properties: ["node.name": "app-\(id)", "media.class": "Stream/Output/Audio", "media.role": role],
        isRunning: true)
}

/// The role sinks with other streams linked into some of them: `streams` maps a sink to the streams in it.
private func facts(
    _ streams: [String: [GraphNode]] = [:], default defaultSink: String = multimedia,
    suspended: Bool = false
) -> GraphFacts {
    let sinks = roleNodes()
    var nodes = [speaker] + sinks
    var links: [GraphLink] = []
    for (sink, linked) in streams {
        let target = sinks.first { $0.properties["node.name"] == sink }!
        nodes += linked
        links += linked.map { GraphLink(output: $0.id, input: target.id) }
    }
    return GraphFacts(
        nodes: nodes, links: links, defaultSink: defaultSink, playbackSuspended: suspended,
        detection: CallDetection())
}

@Suite struct RoleCorkTests {
    // MARK: The policy's sinks

    @Test func roleSinksCarryTheirPolicy() {
        let graph = facts()
        #expect(graph.sink(named: multimedia)?.rolePolicy == RolePolicy(priority: 10, samePriority: .mix, lowerPriority: .mix))
        #expect(graph.sink(named: alert)?.rolePolicy == RolePolicy(priority: 100, samePriority: .mix, lowerPriority: .cork))
        #expect(graph.sink(named: "speaker")?.rolePolicy == nil)
        #expect(
            RolePolicy(properties: ["policy.role-based.target": "True"])
                == RolePolicy(priority: 0, samePriority: .mix, lowerPriority: .mix))
        #expect(
            RolePolicy(properties: ["policy.role-based.target": "1", "policy.role-based.action.lower-priority": "fade"])?
                .lowerPriority == .mix)
        #expect(RolePolicy(properties: ["policy.role-based.target": "false", "policy.role-based.priority": "10"]) == nil)
    }

    @Test func onlyOtherStreamsLinkedIntoRoleSinksAreCounted() {
        let graph = facts([alert: [stream(200, role: "Alert")], multimedia: [stream(201, role: "Music"), stream(202, role: "Movie")]])
        #expect(graph.sink(named: alert)?.linkedStreams == 1)
        #expect(graph.sink(named: multimedia)?.linkedStreams == 2)
        // A sink outside the policy: nothing to count.
        let plain = GraphFacts(
            nodes: [speaker, stream(200, role: "Music")], links: [GraphLink(output: 200, input: 40)],
            defaultSink: "speaker", detection: CallDetection())
        #expect(plain.sink(named: "speaker")?.linkedStreams == 0)
    }

    // MARK: When the policy corks a link

    @Test func aHigherPriorityStreamWhoseSinkCorksCorksUs() {
        #expect(facts([alert: [stream(200, role: "Alert")]]).roleCork(ofLinkInto: multimedia) == .outranked(by: alert))
        #expect(
            facts([RoleSink.communication.name: [stream(200, role: "Communication")]]).roleCork(ofLinkInto: multimedia)
                == .outranked(by: RoleSink.communication.name))
    }

    @Test func aDuckingOrMixingOneDoesNot() {
        #expect(facts([RoleSink.navigation.name: [stream(200, role: "Navigation")]]).roleCork(ofLinkInto: multimedia) == nil)
        #expect(facts([multimedia: [stream(200, role: "Music")]]).roleCork(ofLinkInto: multimedia) == nil)
        #expect(facts().roleCork(ofLinkInto: multimedia) == nil)
    }

    @Test func onlyTheHighestPriorityLinkActs() {
        // Navigation (30, ducks lower ones) and alert (100, corks): the alert holds the priority link.
        let both = facts([RoleSink.navigation.name: [stream(200, role: "GPS")], alert: [stream(201, role: "Alert")]])
        #expect(both.roleCork(ofLinkInto: multimedia) == .outranked(by: alert))
        // A lower-priority stream corks nothing above it.
        #expect(facts([multimedia: [stream(200, role: "Music")]]).roleCork(ofLinkInto: alert) == nil)
    }

    @Test func sameSamePriorityActionApplies() {
        var graph = facts([multimedia: [stream(200, role: "Music")]])
        let index = graph.sinks.firstIndex { $0.name == multimedia }!
        graph.sinks[index].rolePolicy?.samePriority = .cork
        #expect(graph.roleCork(ofLinkInto: multimedia) == .outranked(by: multimedia))
    }

    @Test func suspendPlaybackCorksEveryRoleLinkButNoOther() {
        #expect(facts(suspended: true).roleCork(ofLinkInto: multimedia) == .playbackSuspended)
        #expect(facts(suspended: true).roleCork(ofLinkInto: "speaker") == nil)
        #expect(facts([alert: [stream(200, role: "Alert")]]).roleCork(ofLinkInto: "speaker") == nil)
    }

    // MARK: The player

    /// Playing into the multimedia role sink, linked, `started` out.
    private static func playingIntoMultimedia() -> MachineDriver {
        var driver = MachineDriver.playing()
        driver.send(.graphChanged(facts()))
        driver.send(.routeChanged(multimedia))
        precondition(driver.status.state == .playing && driver.status.route == multimedia)
        return driver
    }

    @Test func aCorkIsAnInterruptionOfItsOwnThatEndsWhenTheLinkReturns() {
        var driver = Self.playingIntoMultimedia()
        // WirePlumber deactivates our link (its PipeWire links go), then links the alert.
        #expect(driver.send(.routeChanged(nil)) == [])
        let corked = driver.send(.graphChanged(facts([alert: [stream(200, role: "Alert")]])))
        #expect(
            corked == [
                .emit(
                    .interrupted, message: "the role-based policy corked our link to \(multimedia) for a stream in \(alert)",
                    cause: "roleCorked")
            ])
        #expect(driver.status.state == .interrupted)
        #expect(driver.status.interruptions == ["roleCorked"])
        #expect(
            driver.machine.output == .active(soundscape: MachineDriver.rain, streaming: true, since: driver.origin + .milliseconds(100)),
            "the stream is left as it is, ready for its link")

        // The graph stops running us; the watchdog reports a stall: nothing is replaced.
        let pausedAt = driver.now + .milliseconds(50)
        #expect(driver.send(.outputStreaming(false), after: .milliseconds(50)) == [.scheduleTick(at: pausedAt + MachineDriver.timeout)])
        #expect(driver.send(.tick, after: MachineDriver.timeout) == [])
        #expect(driver.send(.outputStalled, after: .seconds(1)) == [])
        #expect(driver.send(.tick, after: .seconds(10)) == [])
        #expect(driver.status.state == .interrupted)

        // The alert ends. WirePlumber links us again and the graph runs us: until it
        // does, the cork goes on (it is not a failed start).
        let releasedAt = driver.now
        #expect(driver.send(.graphChanged(facts())) == [.scheduleTick(at: releasedAt + MachineDriver.timeout)])
        #expect(driver.status.interruptions == ["roleCorked"])
        #expect(driver.send(.routeChanged(multimedia), after: .milliseconds(5)) == [])
        #expect(driver.status.state == .interrupted)
        #expect(driver.send(.outputStreaming(true), after: .milliseconds(5)) == [.emit(.resumed, message: nil)])
        #expect(driver.status.state == .playing && driver.status.route == multimedia)
        #expect(driver.status.interruptions == [])
        #expect(driver.send(.tick, after: MachineDriver.timeout) == [])
    }

    @Test func aCorkWhoseLinkNeverReturnsEndsAfterTheGraceAsAFailedStart() {
        var driver = Self.playingIntoMultimedia()
        driver.send(.routeChanged(nil))
        driver.send(.graphChanged(facts([alert: [stream(200, role: "Alert")]])))
        driver.send(.outputStreaming(false), after: .milliseconds(50))
        driver.send(.graphChanged(facts()), after: .seconds(5))
        // The return from a cork gets as long as a start.
        #expect(driver.send(.tick, after: MachineDriver.timeout - .milliseconds(1)) == [])
        #expect(driver.send(.tick, after: .milliseconds(1)) == [.emit(.resumeFailed, message: nil)])
        #expect(driver.status.interruptions == [])
        #expect(driver.status.state == .recovering)
    }

    @Test func aStallWhileCorkedIsIgnoredEvenWhenTheGraphSaysWeRun() {
        // An unlinked stream the server still counts as streaming (no cycles reach it).
        var driver = Self.playingIntoMultimedia()
        driver.send(.routeChanged(nil))
        driver.send(.graphChanged(facts([alert: [stream(200, role: "Alert")]])))
        #expect(driver.send(.outputStalled, after: .seconds(4)) == [])
        #expect(driver.send(.tick, after: .seconds(4)) == [])
        #expect(driver.status.state == .interrupted)

        // The same stall while nothing corks us starts the watchdog, as before.
        var uncorked = Self.playingIntoMultimedia()
        let stalledAt = uncorked.now + .seconds(4)
        #expect(
            uncorked.send(.outputStalled, after: .seconds(4))
                == [.revive(.reactivate), .scheduleTick(at: stalledAt + .seconds(3)), .emit(.stalled, message: nil)])
    }

    @Test func suspendedPlaybackIsACorkToo() {
        var driver = Self.playingIntoMultimedia()
        driver.send(.routeChanged(nil))
        #expect(
            driver.send(.graphChanged(facts(suspended: true)))
                == [
                    .emit(
                        .interrupted, message: "the role-based policy corked our link to \(multimedia): playback is suspended",
                        cause: "roleCorked")
                ])
    }

    @Test func aCallPausesUsFirstAndTheCorkIsNamedBesideIt() {
        // The usual case: a call into the communication role sink. Our own call detection pauses
        // us; the cork is listed too, and both must be gone before we resume.
        var driver = Self.playingIntoMultimedia()
        driver.send(.routeChanged(nil))
        let call = stream(200, role: "Communication")
        let actions = driver.send(.graphChanged(facts([RoleSink.communication.name: [call]])))
        #expect(actions.contains(.stopOutput))
        #expect(actions.emits == [.interrupted])
        #expect(driver.status.interruptions == ["communicationStream", "roleCorked"])
    }

    @Test func notCorkedWhileLinkedOrWhenOurSinkIsOutsideThePolicy() {
        var driver = Self.playingIntoMultimedia()
        // Still linked: the alert mixes with us as far as we can tell (WirePlumber may not have acted yet).
        #expect(driver.send(.graphChanged(facts([alert: [stream(200, role: "Alert")]]))) == [])
        #expect(driver.status.interruptions == [])
        // Playing to a plain sink: the policy has no say over our link.
        var plain = MachineDriver.playing()
        plain.send(.graphChanged(facts([alert: [stream(200, role: "Alert")]], default: "speaker")))
        plain.send(.routeChanged("speaker"))
        plain.send(.routeChanged(nil))
        #expect(plain.status.interruptions == [])
    }
}
