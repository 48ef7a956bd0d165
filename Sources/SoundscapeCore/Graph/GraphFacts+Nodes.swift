/// A node of the graph as the output's monitor sees it: a sink or a stream,
/// never our own.
public struct GraphNode: Sendable, Equatable {
    public var id: UInt32
    public var properties: [String: String]
    /// The node is in the `running` state.
    public var isRunning: Bool

    public init(id: UInt32, properties: [String: String], isRunning: Bool = false) {
        self.id = id
        self.properties = properties
        self.isRunning = isRunning
    }

    var name: String? { properties["node.name"] }
    var isSink: Bool { properties["media.class"] == "Audio/Sink" }
    var isPlaybackStream: Bool { properties["media.class"]?.hasPrefix("Stream/Output/") == true }
}

/// A link from one node's output to another's input (PipeWire links ports;
/// the graph's facts only need the nodes).
public struct GraphLink: Sendable, Hashable {
    public var output: UInt32
    public var input: UInt32

    public init(output: UInt32, input: UInt32) {
        self.output = output
        self.input = input
    }
}

extension GraphFacts {
    /// The facts of a graph made of `nodes` and `links`: its sinks, each judged
    /// as a call route and placed in the role-based policy, and its calls.
    public init(
        nodes: [GraphNode], links: some Collection<GraphLink>, defaultSink: String?,
        playbackSuspended: Bool = false, detection: CallDetection
    ) {
        let nodes = nodes.sorted { $0.id < $1.id }
        let byID = Dictionary(nodes.map { ($0.id, $0) }) { first, _ in first }
        let sinks = nodes.filter { $0.isSink && $0.name != nil }
        let callRoutes = Self.callRoutes(sinks: sinks, byID: byID, links: links, detection: detection)
        self.init(
            sinks: sinks.map { sink in
                let policy = RolePolicy(properties: sink.properties)
                let streams =
                    policy == nil ? [] : Set(links.filter { $0.input == sink.id && byID[$0.output]?.isPlaybackStream == true }.map(\.output))
                return Sink(
                    name: sink.name!, isCallRoute: callRoutes.contains(sink.id), rolePolicy: policy,
                    linkedStreams: streams.count)
            },
            defaultSink: defaultSink,
            communicationStreams: nodes.filter { !$0.isSink && $0.isRunning && detection.isCall(properties: $0.properties) }
                .map { node in
                    let who = node.properties["application.name"] ?? node.name ?? "node \(node.id)"
                    return node.properties["media.role"].map { "\(who) (\($0))" } ?? who
                },
            playbackSuspended: playbackSuspended)
    }

    /// The ids of the sinks that are call routes. Judged by the device as well
    /// as the node: WirePlumber 0.5.13 puts a loopback sink `bluez_output.<address>`
    /// (no profile, factory or intended roles) in front of a Bluetooth headset and
    /// renames the real node `bluez_output_internal.<address>.<n>`, so any sink of a
    /// device in its headset profile makes all the device's sinks call routes. And
    /// a sink whose own stream (its `node.link-group`: a loopback, a filter) feeds
    /// a call route is one too.
    static func callRoutes(
        sinks: [GraphNode], byID: [UInt32: GraphNode], links: some Collection<GraphLink>,
        detection: CallDetection
    ) -> Set<UInt32> {
        var routes = Set(sinks.filter { detection.isCallRoute(properties: $0.properties) }.map(\.id))
        let inCallProfile = Set(
            sinks.filter { CallDetection.isInHeadsetProfile(properties: $0.properties) }
                .flatMap { deviceKeys(of: $0) })
        for sink in sinks where deviceKeys(of: sink).contains(where: inCallProfile.contains) {
            routes.insert(sink.id)
        }
        // Until nothing changes: a chain of loopbacks ends in a call route too.
        var changed = true
        while changed {
            changed = false
            for sink in sinks where !routes.contains(sink.id) {
                guard let group = sink.properties["node.link-group"] else { continue }
                let feedsACallRoute = links.contains { link in
                    guard routes.contains(link.input), let stream = byID[link.output] else { return false }
                    return stream.isPlaybackStream && stream.properties["node.link-group"] == group
                }
                if feedsACallRoute {
                    routes.insert(sink.id)
                    changed = true
                }
            }
        }
        return routes
    }

    /// What ties a sink to its device: `device.id` (which the 0.5.13 loopback
    /// sink carries too), and for Bluetooth the address, from
    /// `api.bluez5.address` or from the name WirePlumber gives the node
    /// (`bluez_output.<address>[.<n>]`, `bluez_output_internal.<address>.<n>`;
    /// the real node's name has the address's `:` made `_`, the loopback's not).
    static func deviceKeys(of sink: GraphNode) -> [String] {
        var keys: [String] = []
        if let device = sink.properties["device.id"] { keys.append("device:\(device)") }
        if let address = sink.properties["api.bluez5.address"] {
            keys.append("bluez:\(sanitized(address))")
        }
        if let name = sink.name {
            for prefix in ["bluez_output.", "bluez_output_internal."] where name.hasPrefix(prefix) {
                let address = name.dropFirst(prefix.count).prefix { $0 != "." }
                if !address.isEmpty { keys.append("bluez:\(sanitized(String(address)))") }
            }
        }
        return keys
    }

    /// WirePlumber's node-name sanitising: every character but letters, digits, `_`, `-` and `.` becomes `_`.
    private static func sanitized(_ text: String) -> String {
        String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) ? $0 : "_" })
    }
}
