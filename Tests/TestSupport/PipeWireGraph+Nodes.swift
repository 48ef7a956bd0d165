import Foundation
import Varlink
#if canImport(Glibc)
import Glibc
#endif

/// What the graph holds (one `pw-dump`, parsed), and the sinks and the default a test sets up.
extension PipeWireGraph {
    // MARK: - Inspecting the graph

    /// One `pw-dump`, parsed.
    ///
    /// `pw-dump` binds every metadata, and each binding waits for its owner
    /// (WirePlumber) to answer the server's ping. Killed while one waits, it
    /// would leave module-metadata forwarding no change to anyone again (see
    /// `setDefaultSink`), so its timeout is long enough for a WirePlumber
    /// that is slow under load and is only for one that hangs.
    public func snapshot() throws -> Snapshot {
        let result = try run(["pw-dump"], timeout: .seconds(30))
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
    ///
    /// `waitUntilGone: false` returns once `pw-cli destroy` has: the soak times the
    /// daemon's recovery from then on, and the wait polls `pw-dump`, a reader that
    /// binds the default metadata. Bound at the moment WirePlumber switches the default
    /// away from the lost sink, it hides that switch from the daemon under test (see
    /// `setDefaultSink`), and so slowed the very recovery being measured.
    @discardableResult
    public func destroyNode(name: String, timeout: Duration = .seconds(5), waitUntilGone: Bool = true) throws -> Double {
        let ids = try snapshot().nodes.filter { $0.name == name }.map(\.id)
        guard !ids.isEmpty else { throw HarnessError("destroyNode: no node named '\(name)'") }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        for id in ids {
            try run(["pw-cli", "destroy", String(id)]).requireSuccess()
        }
        if waitUntilGone {
            try waitForNoNode(where: { $0.name == name }, timeout: timeout, description: "node '\(name)' to be destroyed")
        }
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
    /// that.
    ///
    /// The monitor has still been seen to stay silent after a write, three
    /// times in CI runs and each time with WirePlumber just started: not even
    /// the write's own key came back. The likely cause was the harness's own:
    /// waiting for WirePlumber, it ran `pw-dump` with a 5 s timeout, and one
    /// killed while a busy WirePlumber had not yet answered is just such a
    /// binding (the wait now lists the registry with `pw-cli`, which binds
    /// the metadata too, and it and `snapshot` wait 30 s before a kill).
    /// The graph's `default-metadata.log` shows what a listener bound as
    /// early as the daemon heard.
    /// HarnessSmokeTests makes the metadata deaf that way. So when the monitor
    /// has printed nothing for `quiet` since the write, the metadata is read anew, once WirePlumber has
    /// had long enough to switch (a reader being set up while it switches
    /// would hide the switch from the daemon): the default already being
    /// `name` ends the wait, a configured sink that is not `name` (the write
    /// was lost) is written again, and anything else waits on. A timeout says
    /// what the monitor printed and what each reading found.
    public func setDefaultSink(name: String, timeout: Duration = .seconds(10), quiet: Duration = .seconds(2)) throws {
        let monitor = try spawn("pw-metadata", ["-m", "-n", "default"], name: "pw-metadata-monitor", stdout: .capture)
        let deadline = ContinuousClock.now + timeout
        var seen: [String] = []
        var readings: [String] = []
        func failure() -> HarnessError {
            let sinks = (try? snapshot().sinks.compactMap(\.name)) ?? []
            return HarnessError(
                """
                Default sink did not become '\(name)' within \(formatSeconds(timeout)); sinks: \(sinks); \
                pw-metadata -m printed: \(seen); read anew: \(readings)
                """)
        }
        /// The next line the monitor prints before `until`, or nil if none.
        func nextLine(until: ContinuousClock.Instant) -> String? {
            guard let line = monitor.nextLine(timeout: max(.zero, until - ContinuousClock.now)) else { return nil }
            seen.append(line)
            return line
        }
        func write() throws {
            let value = "{ \"name\": \"\(name)\" }"
            try run(["pw-metadata", "-n", "default", "0", "default.configured.audio.sink", value, "Spa:String:JSON"])
                .requireSuccess()
        }
        // Its first lines are the metadata as it is: the default sink is among them once a sink exists.
        var current: String?
        repeat {
            guard let line = nextLine(until: deadline) else { throw failure() }
            if line.contains("key:'default.audio.sink'") { current = Self.metadataName(inMonitorLine: line) ?? "" }
        } while current == nil
        try write()
        guard current != name else { return }
        while ContinuousClock.now < deadline {
            let quietEnd = min(deadline, ContinuousClock.now + quiet)
            var heard = false
            while let line = nextLine(until: quietEnd) {
                heard = true
                if line.contains("key:'default.audio.sink'"), Self.metadataName(inMonitorLine: line) == name { return }
            }
            guard !heard, ContinuousClock.now < deadline else { continue }
            let reading = try snapshot()
            readings.append("default \(reading.defaultSink ?? "none"), configured \(reading.configuredDefaultSink ?? "none")")
            FileHandle.standardError.write(
                Data(
                    "PipeWireGraph: pw-metadata -m printed nothing for \(formatSeconds(quiet)) after the write; read anew: \(readings.last!)\n".utf8))
            if reading.defaultSink == name { return }
            if reading.configuredDefaultSink != name { try write() }
        }
        throw failure()
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
