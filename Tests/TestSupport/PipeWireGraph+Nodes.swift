import Foundation
import Varlink
#if canImport(Glibc)
import Glibc
#endif

/// What the graph holds (one `pw-dump`, parsed), and the sinks and the default a test sets up.
extension PipeWireGraph {
    // MARK: - Inspecting the graph

    /// One `pw-dump`, parsed.
    public func snapshot() throws -> Snapshot {
        let result = try run(["pw-dump"], timeout: .seconds(5))
        guard result.succeeded else { throw HarnessError("pw-dump failed: \(result)") }
        return try Snapshot(pwDumpJSON: Data(result.stdout.utf8))
    }

    public func nodes() throws -> [Node] { try snapshot().nodes }

    public func links() throws -> [Link] { try snapshot().links }

    public func clients() throws -> [Client] { try snapshot().clients }

    /// The sink WirePlumber currently uses (`default.audio.sink`), or nil.
    public func defaultSink() throws -> String? { try snapshot().defaultSink }

    /// The user-configured default (`default.configured.audio.sink`), or nil.
    public func configuredDefaultSink() throws -> String? { try snapshot().configuredDefaultSink }

    /// Polls `pw-dump` until a node satisfies `predicate` and returns it.
    @discardableResult
    public func waitForNode(
        where predicate: (Node) -> Bool, timeout: Duration = .seconds(5), description: String = "a matching node"
    ) throws -> Node {
        var last: Snapshot?
        do {
            return try waitForValue(timeout: timeout, "node") { () -> Node? in
                guard let snap = try? snapshot() else { return nil }
                last = snap
                return snap.nodes.first(where: predicate)
            }
        } catch {
            throw HarnessError(
                "Timed out after \(formatSeconds(timeout)) waiting for \(description); nodes: \(last?.nodes.map(\.description).joined(separator: ", ") ?? "<pw-dump failed>")"
            )
        }
    }

    /// Polls until no node satisfies `predicate`.
    public func waitForNoNode(
        where predicate: (Node) -> Bool, timeout: Duration = .seconds(5), description: String = "node to disappear"
    ) throws {
        try waitUntil(timeout: timeout, description) {
            guard let snap = try? snapshot() else { return false }
            return !snap.nodes.contains(where: predicate)
        }
    }

    /// Creates a `support.null-audio-sink` (stereo FL/FR, `object.linger`) and
    /// waits until it shows up. `properties` override/extend the defaults; values
    /// starting with `[` or `{` and numbers/bools are passed raw, others quoted.
    @discardableResult
    public func createNullSink(name: String, properties: [String: String] = [:], timeout: Duration = .seconds(5))
        throws -> Node
    {
        var props: [String: String] = [
            "factory.name": "support.null-audio-sink",
            "node.name": name,
            "node.description": name,
            "media.class": "Audio/Sink",
            "object.linger": "true",
            "audio.position": "[ FL FR ]",
        ]
        props.merge(properties) { $1 }
        let spa = "{ " + props.keys.sorted().map { "\($0)=\(Self.spaValue(props[$0]!))" }.joined(separator: " ") + " }"
        let result = try run(["pw-cli", "create-node", "adapter", spa])
        if !result.succeeded || result.stdout.contains("Error") || result.stderr.contains("Error") {
            throw HarnessError("Creating null sink '\(name)' failed: \(result)")
        }
        return try waitForNode(where: { $0.name == name }, timeout: timeout, description: "null sink '\(name)'")
    }

    static func spaValue(_ value: String) -> String {
        if value.hasPrefix("[") || value.hasPrefix("{") || value == "true" || value == "false" || Double(value) != nil {
            return value
        }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(escaped)\""
    }

    /// Destroys every node named `name` and waits until none is left. Returns when the
    /// first was destroyed (its `pw-cli destroy` started), in seconds on CLOCK_MONOTONIC,
    /// for a caller that times what follows (the soak's sink-loss, through
    /// `soundscape-bench graph`): finding the node takes a `pw-dump` first.
    @discardableResult
    public func destroyNode(name: String, timeout: Duration = .seconds(5)) throws -> Double {
        let ids = try snapshot().nodes.filter { $0.name == name }.map(\.id)
        guard !ids.isEmpty else { throw HarnessError("destroyNode: no node named '\(name)'") }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        for id in ids {
            try run(["pw-cli", "destroy", String(id)]).requireSuccess()
        }
        try waitForNoNode(where: { $0.name == name }, timeout: timeout, description: "node '\(name)' to be destroyed")
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Sets `default.configured.audio.sink` and waits until WirePlumber has
    /// made it the effective default (`default.audio.sink`).
    ///
    /// Watched by one `pw-metadata -m`, bound before the change, not by polling
    /// `pw-dump`: while a client's binding of a metadata is being set up,
    /// PipeWire's module-metadata (`metadata_property`, in 0.3.65, 1.4 and
    /// upstream's today) forwards a change only to that binding, so a poll
    /// binding at the moment WirePlumber switched the default hid the switch
    /// from the daemon under test (3 switches of some 350 in a stress run). The
    /// owner answers the monitor's binding before it sees the write, so the
    /// switch the write causes reaches every client.
    ///
    /// The monitor is left running until the graph stops. module-metadata
    /// counts the bindings being set up (until the owner answers the server's
    /// ping, after the metadata as it is has been sent), and while any is, it
    /// forwards changes only to those. A binding that goes away before that
    /// answer is never taken off the count (`global_unbind` does not call
    /// `remove_pending`), and from then on no settled client, the daemon under
    /// test included, hears a change again. Stopped as soon as it had printed
    /// the default (the sink was the default already), a monitor could do just
    /// that. For the same reason nothing here reads the metadata anew while
    /// WirePlumber may still switch the default: a reader being set up at that
    /// moment would hide the switch from the daemon. The wait is as long as the
    /// tests' wait for the daemon's own `routeChanged` (10 s): twice in CI runs
    /// the monitor heard nothing of a write for 5 s, WirePlumber having just
    /// started.
    public func setDefaultSink(name: String, timeout: Duration = .seconds(10)) throws {
        let monitor = try spawn("pw-metadata", ["-m", "-n", "default"], name: "pw-metadata-monitor", stdout: .capture)
        var seen: [String] = []
        /// The next `default.audio.sink` the monitor prints.
        func nextDefault(until deadline: ContinuousClock.Instant) throws -> String? {
            while let line = monitor.nextLine(timeout: max(.zero, deadline - ContinuousClock.now)) {
                seen.append(line)
                if line.contains("key:'default.audio.sink'") { return Self.metadataName(inMonitorLine: line) }
            }
            let sinks = (try? snapshot().sinks.compactMap(\.name)) ?? []
            throw HarnessError(
                """
                Default sink did not become '\(name)' within \(formatSeconds(timeout)); sinks: \(sinks); \
                pw-metadata -m printed: \(seen)
                """)
        }
        let deadline = ContinuousClock.now + timeout
        // Its first lines are the metadata as it is: the default sink is among them once a sink exists.
        let current = try nextDefault(until: deadline)
        let value = "{ \"name\": \"\(name)\" }"
        try run(["pw-metadata", "-n", "default", "0", "default.configured.audio.sink", value, "Spa:String:JSON"])
            .requireSuccess()
        guard current != name else { return }
        while try nextDefault(until: deadline) != name {}
    }

    /// The sink name in a `pw-metadata -m` line such as
    /// `update: id:0 key:'default.audio.sink' value:'{"name":"speaker"}' type:'Spa:String:JSON'`.
    static func metadataName(inMonitorLine line: String) -> String? {
        guard let start = line.range(of: "value:'"), let end = line.range(of: "' type:", options: .backwards),
            start.upperBound <= end.lowerBound
        else { return nil }
        let json = String(line[start.upperBound..<end.lowerBound])
        return try? Snapshot.nodeName(from: JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)))
    }

    /// Waits until WirePlumber reports `name` as the default sink (e.g. after
    /// creating the first sink).
    public func waitForDefaultSink(_ name: String, timeout: Duration = .seconds(5)) throws {
        try waitUntil(timeout: timeout, "default sink to become '\(name)'") { (try? defaultSink()) == name }
    }
}
