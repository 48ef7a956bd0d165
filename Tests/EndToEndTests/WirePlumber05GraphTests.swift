import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The graph WirePlumber 0.5 makes, faked on this machine's WirePlumber 0.4
/// with nodes that carry 0.5's properties (`PipeWireGraph.WirePlumber05`, which
/// names the source of each), against the real daemon, with what reaches the
/// sink checked: a Bluetooth headset behind 0.5.13's loopback sink, and the
/// role-based policy's sinks and corks.
@Suite("WirePlumber 0.5's graph", .serialized, .timeLimit(.minutes(1)))
struct WirePlumber05GraphTests {
    typealias Setup = InterruptionTests.Setup
    typealias WP = PipeWireGraph.WirePlumber05

    /// The next `routeChanged` event, which must name `sink`; on failure, what the graph and the daemon say,
    /// and where each of the daemon's threads was.
    static func movedTo(_ sink: String, _ events: EventFollower, _ setup: Setup) throws {
        do {
            let moved = try events.next(reason: "routeChanged")
            guard moved["route"] as? String == sink else { throw HarnessError("moved elsewhere: \(moved)") }
        } catch {
            let metadata = (try? setup.graph.run(["pw-metadata", "-n", "default"]).stdout) ?? "?"
            let status = (try? setup.daemon.ctl("status", "--json").stdout) ?? "?"
            throw HarnessError(
                """
                not moved to \(sink): \(error)
                metadata:
                \(metadata)
                status: \(status)
                soundscaped's threads:
                \(setup.daemon.threadStacks())
                """)
        }
    }

    /// Waits until the graph no longer runs our stream (a pause's fade-out is over).
    static func waitUntilSilent(_ graph: PipeWireGraph) throws {
        try waitUntil(timeout: .seconds(5), "our node to stop running") {
            try graph.snapshot().node(named: "soundscaped")?.state != "running"
        }
    }

    @Test("a headset behind 0.5.13's loopback sink: its call profile pauses us, A2DP brings us back")
    func bluetoothLoopbackSink() throws {
        try PipeWireGraph.withGraph { graph in
            let setup = try Setup(graph: graph, extraSinks: [])
            let address = "00:1B:66:AA:BB:CC"
            let loopback = WP.bluetoothLoopbackSink(
                address: address, description: "WH-1000XM4", deviceID: 4242,
                linkGroup: "loopback-4242-21")
            let loopbackName = loopback["node.name"]!
            func internalSink(_ profile: WP.BluetoothProfile) -> [String: String] {
                WP.bluetoothInternalSink(address: address, description: "WH-1000XM4", deviceID: 4242, profile: profile)
            }
            let internalName = internalSink(.a2dp)["node.name"]!
            try graph.createNode(properties: loopback)
            try graph.createNode(properties: internalSink(.a2dp))
            let events = try setup.daemon.followEvents()
            try graph.setDefaultSink(name: loopbackName)
            try Self.movedTo(loopbackName, events, setup)
            #expect(try setup.level(on: loopbackName) > -15, "in A2DP the headset is ours to play to")

            // The headset takes a call: WirePlumber replaces the real node with the SCO one; the loopback stays.
            try graph.destroyNode(name: internalName)
            try graph.createNode(properties: internalSink(.headset))
            let interrupted = try events.next(reason: "interrupted")
            #expect(interrupted["cause"] as? String == "callRoute")
            #expect(interrupted["interruptions"] as? [String] == ["callRoute"])
            #expect(interrupted["message"] as? String == "the default output is a call route (\(loopbackName))")
            try Self.waitUntilSilent(graph)
            #expect(try graph.record(sink: loopbackName, seconds: 0.6).peak < 0.001, "the soundscape plays into a call")

            try graph.destroyNode(name: internalName)
            try graph.createNode(properties: internalSink(.a2dp))
            let resumed = try events.next(reason: "resumed")
            #expect(resumed["route"] as? String == loopbackName)
            #expect(try setup.level(on: loopbackName) > -15, "back in A2DP, the soundscape did not come back")
            events.stop()
        }
    }

    /// The role sinks of media-role-nodes.conf, with the daemon playing to the multimedia one.
    struct RoleSetup {
        let setup: Setup
        let events: EventFollower
        let multimedia = WP.RoleSink.multimedia.name
        let communication = WP.RoleSink.communication.name
        let alert = WP.RoleSink.alert.name

        init(graph: PipeWireGraph) throws {
            setup = try Setup(graph: graph, extraSinks: [])
            for (index, sink) in [WP.RoleSink.multimedia, .communication, .alert].enumerated() {
                try graph.createNode(properties: sink.properties(linkGroup: "loopback-4242-\(index + 1)"))
            }
            events = try setup.daemon.followEvents()
            try graph.setDefaultSink(name: multimedia)
            try WirePlumber05GraphTests.movedTo(multimedia, events, setup)
        }

        var graph: PipeWireGraph { setup.graph }

        /// What the policy does to a link it corks: it destroys its PipeWire links.
        func corkOurLink() throws {
            let snapshot = try graph.snapshot()
            let ours = try #require(snapshot.node(named: "soundscaped"))
            let links = snapshot.links(from: ours.id)
            guard !links.isEmpty else { throw HarnessError("our stream has no link to cork") }
            for link in links { try graph.run(["pw-cli", "destroy", String(link.id)]).requireSuccess() }
            try waitUntil(timeout: .seconds(5), "our links to go") { try graph.snapshot().links(from: ours.id).isEmpty }
        }

        /// What the policy does when it lets go: it links us again.
        func relinkUs() throws {
            for channel in ["FL", "FR"] {
                try graph.run(["pw-link", "soundscaped:output_\(channel)", "\(multimedia):playback_\(channel)"]).requireSuccess()
            }
        }
    }

    @Test("a role sink for calls is a call route; the others are sinks like any other")
    func roleSinksAsDefault() throws {
        try PipeWireGraph.withGraph { graph in
            let roles = try RoleSetup(graph: graph)
            #expect(try roles.setup.level(on: roles.multimedia) > -15, "no sound in the multimedia role sink")

            // Its intended roles are a JSON array, [ "Communication", "Phone" ].
            try graph.setDefaultSink(name: roles.communication)
            let interrupted = try roles.events.next(reason: "interrupted")
            #expect(interrupted["cause"] as? String == "callRoute")
            try Self.waitUntilSilent(graph)
            #expect(
                try graph.record(sink: roles.communication, seconds: 0.6).peak < 0.001,
                "the soundscape plays into the communication role sink")

            try graph.setDefaultSink(name: roles.multimedia)
            #expect(try roles.events.next(reason: "resumed")["route"] as? String == roles.multimedia)
            #expect(try roles.setup.level(on: roles.multimedia) > -15)
            roles.events.stop()
        }
    }

    @Test("a cork by the role policy is roleCorked: no stream is replaced for it, and it ends when our link returns")
    func roleCork() throws {
        try PipeWireGraph.withGraph { graph in
            let roles = try RoleSetup(graph: graph)
            let ourNode = try #require(try graph.snapshot().node(named: "soundscaped")).id
            let log = graph.logDirectory.appendingPathComponent("soundscaped.log")

            // An alert: WirePlumber corks our link (ours first), then links the alert stream.
            try roles.corkOurLink()
            let alert = try graph.play(roles.setup.call, mediaRole: "Alert", target: roles.alert)
            let corked = try roles.events.next(reason: "interrupted")
            let corkedAt = roles.events.seen.count
            #expect(corked["cause"] as? String == "roleCorked")
            #expect(corked["interruptions"] as? [String] == ["roleCorked"])
            #expect(
                corked["message"] as? String
                    == "the role-based policy corked our link to \(roles.multimedia) for a stream in \(roles.alert)")

            // No cycle reaches our stream: the output's watchdog reports the stall; the player must not act on it.
            try waitUntil(timeout: .seconds(10), "the output to report our stream stalled") {
                (try? String(contentsOf: log, encoding: .utf8))?.contains("PipeWire answers, but our stream runs no cycle") == true
            }
            let status = try roles.setup.daemon.status()
            #expect(status["state"] as? String == "interrupted")
            #expect(status["interruptions"] as? [String] == ["roleCorked"])
            #expect(try graph.snapshot().node(named: "soundscaped")?.id == ourNode, "the stream was replaced")
            #expect(try !String(contentsOf: log, encoding: .utf8).contains("watchdog: audio stalled"), "a revive step was taken")

            // The alert ends; WirePlumber links us again.
            alert.signal(SIGTERM)
            _ = alert.waitForExit(timeout: .seconds(5))
            try roles.relinkUs()
            let resumed = try roles.events.next(reason: "resumed")
            #expect(resumed["route"] as? String == roles.multimedia)
            #expect(resumed["interruptions"] as? [String] == [])
            let between = roles.events.seen[corkedAt...].compactMap { $0["reason"] as? String }
            #expect(between == ["resumed"], "events between the cork and its end: \(between)")
            #expect(try roles.setup.level(on: roles.multimedia) > -15, "the soundscape did not come back")
            #expect(try graph.snapshot().node(named: "soundscaped")?.id == ourNode)

            // suspend.playback in the default metadata corks every role link.
            try graph.run(["pw-metadata", "-n", "default", "0", "suspend.playback", "1"]).requireSuccess()
            try roles.corkOurLink()
            let suspended = try roles.events.next(reason: "interrupted")
            #expect(suspended["cause"] as? String == "roleCorked")
            #expect(
                suspended["message"] as? String
                    == "the role-based policy corked our link to \(roles.multimedia): playback is suspended")
            try graph.run(["pw-metadata", "-n", "default", "-d", "0", "suspend.playback"]).requireSuccess()
            try roles.relinkUs()
            _ = try roles.events.next(reason: "resumed")
            #expect(try roles.setup.level(on: roles.multimedia) > -15)
            roles.events.stop()
        }
    }
}
