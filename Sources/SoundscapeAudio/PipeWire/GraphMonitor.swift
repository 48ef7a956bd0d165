import CPipeWire
import CSoundscapeShims
import SoundscapeCore

/// Registry type names (macros in C).
enum InterfaceType {
    static let node = "PipeWire:Interface:Node"
    static let link = "PipeWire:Interface:Link"
    static let metadata = "PipeWire:Interface:Metadata"
}

/// Watches the graph for what the player must react to: sinks (and whether
/// they are call routes or role-policy sinks), the default sink, calls, and
/// the links between them. Registry globals carry only a few properties, so
/// sinks and streams are bound to read their full properties and state; the
/// `default` metadata is bound to follow (and set) routing. What the nodes
/// and links mean is `GraphFacts(nodes:links:…)`'s to judge. Lives on the
/// connection's loop thread.
final class GraphMonitor {
    private let registry: OpaquePointer
    private var detection: CallDetection
    private let ownNodeName: String
    private var nodes: [UInt32: NodeWatch] = [:]
    /// Every link in the graph; those between watched nodes make facts.
    private var links: [UInt32: GraphLink] = [:]
    private var metadata: MetadataWatch?
    private(set) var defaultSink: String?
    /// The `default` metadata's `suspend.playback` (WirePlumber 0.5's role-based policy).
    private var playbackSuspended = false
    /// Our own stream nodes the registry has announced. A stream learns its node
    /// id before the server registers the node, and the server refuses metadata
    /// about an id it has not registered yet (ESTALE), so a target waits here
    /// until both the node and the `default` metadata are in the registry.
    private var announcedOwnNodes: Set<UInt32> = []
    private var pendingTarget: (node: UInt32, sink: String?)?
    private var lastFacts: GraphFacts?
    /// Called on the loop thread whenever the facts change.
    var onChange: ((GraphFacts) -> Void)?
    /// Facts are published only once the first picture is whole: a graph seen
    /// half enumerated ("no sinks" a millisecond before the sinks arrive) would
    /// be judged as real. Two round trips to the server: the registry's globals
    /// (and with them our binds) first, then what the binds return (node
    /// properties, the default sink).
    private var startup: Startup = .idle
    private var sync: (() -> Int32)?

    private enum Startup: Equatable {
        case idle
        case enumerating(sequence: Int32)
        case binding(sequence: Int32)
        case complete
    }

    init(registry: OpaquePointer, detection: CallDetection, ownNodeName: String) {
        self.registry = registry
        self.detection = detection
        self.ownNodeName = ownNodeName
    }

    deinit {
        close()
    }

    /// Starts the round trips that complete the first picture; `sync` asks the
    /// server for a `done` and returns its sequence number.
    func begin(sync: @escaping () -> Int32) {
        self.sync = sync
        startup = .enumerating(sequence: sync())
    }

    /// The core's `done` for `sequence`; true when it was one of ours.
    func coreDone(sequence: Int32) -> Bool {
        switch startup {
        case .enumerating(sequence) where sync != nil:
            startup = .binding(sequence: sync!())
            return true
        case .binding(sequence):
            startup = .complete
            publish()
            return true
        default:
            return false
        }
    }

    /// New rules for what counts as a call (a reload): the graph is judged again at once.
    func setDetection(_ detection: CallDetection) {
        guard detection != self.detection else { return }
        self.detection = detection
        publish()
    }

    func close() {
        for watch in nodes.values { watch.close() }
        nodes.removeAll()
        metadata?.close()
        metadata = nil
    }

    // MARK: Registry globals

    func nodeAdded(id: UInt32, properties: UnsafePointer<spa_dict>?) {
        if lookup(properties, PW_KEY_NODE_NAME) == ownNodeName {
            announcedOwnNodes.insert(id)
            applyPendingTarget()
            return
        }
        guard let mediaClass = lookup(properties, PW_KEY_MEDIA_CLASS),
            mediaClass == "Audio/Sink" || mediaClass.hasPrefix("Stream/"),
            nodes[id] == nil
        else { return }
        guard let watch = NodeWatch(registry: registry, id: id, monitor: self) else { return }
        nodes[id] = watch
    }

    func metadataAdded(id: UInt32, properties: UnsafePointer<spa_dict>?) {
        guard lookup(properties, PW_KEY_METADATA_NAME) == "default", metadata == nil else { return }
        metadata = MetadataWatch(registry: registry, id: id, monitor: self)
        applyPendingTarget()
    }

    func linkAdded(id: UInt32, output: UInt32, input: UInt32) {
        links[id] = GraphLink(output: output, input: input)
        publish()
    }

    func removed(id: UInt32) {
        announcedOwnNodes.remove(id)
        if let watch = nodes.removeValue(forKey: id) {
            watch.close()
            publish()
        }
        if links.removeValue(forKey: id) != nil {
            publish()
        }
        if metadata?.id == id {
            metadata?.close()
            metadata = nil
            defaultSink = nil
            playbackSuspended = false
            publish()
        }
    }

    // MARK: Routing

    /// Asks the session manager to link node `node` to the sink named `sink`
    /// (`target.object` in the `default` metadata, which WirePlumber follows).
    func setTarget(node: UInt32, sink: String?) {
        pendingTarget = (node, sink)
        applyPendingTarget()
    }

    private func applyPendingTarget() {
        guard let target = pendingTarget, let metadata, announcedOwnNodes.contains(target.node) else { return }
        pendingTarget = nil
        metadata.set(subject: target.node, key: "target.object", value: target.sink)
    }

    // MARK: Facts

    fileprivate func nodeChanged() { publish() }

    fileprivate func defaultSinkChanged(_ name: String?) {
        defaultSink = name
        publish()
    }

    fileprivate func playbackSuspendedChanged(_ suspended: Bool) {
        playbackSuspended = suspended
        publish()
    }

    private func publish() {
        guard startup == .complete else { return }
        let facts = GraphFacts(
            nodes: nodes.values.map { GraphNode(id: $0.id, properties: $0.properties, isRunning: $0.state == PW_NODE_STATE_RUNNING) },
            links: links.values, defaultSink: defaultSink, playbackSuspended: playbackSuspended, detection: detection)
        guard facts != lastFacts else { return }
        lastFacts = facts
        onChange?(facts)
    }
}

/// An object bound from the registry and the hook of its one listener, which
/// stays at a fixed address until `close`.
private struct BoundProxy {
    let proxy: OpaquePointer
    let hook: UnsafeMutablePointer<spa_hook>

    init?<Version: BinaryInteger>(registry: OpaquePointer, id: UInt32, type: String, version: Version) {
        guard let bound = pw_registry_bind(registry, id, type, UInt32(version), 0) else { return nil }
        proxy = OpaquePointer(bound)
        hook = .allocate(capacity: 1)
        hook.initialize(to: spa_hook())
    }

    func close() {
        spa_hook_remove(hook)
        pw_proxy_destroy(proxy)
        hook.deinitialize(count: 1)
        hook.deallocate()
    }
}

/// One bound node: its full properties and state, kept current by `info` events.
private final class NodeWatch {
    let id: UInt32
    private let bound: BoundProxy
    private unowned let monitor: GraphMonitor
    private(set) var properties: [String: String] = [:]
    private(set) var state: pw_node_state = PW_NODE_STATE_CREATING

    init?(registry: OpaquePointer, id: UInt32, monitor: GraphMonitor) {
        guard let bound = BoundProxy(registry: registry, id: id, type: InterfaceType.node, version: PW_VERSION_NODE) else {
            return nil
        }
        self.id = id
        self.monitor = monitor
        self.bound = bound
        _ = scs_node_add_listener(bound.proxy, bound.hook, Self.events, Unmanaged.passUnretained(self).toOpaque())
    }

    func close() {
        bound.close()
    }

    private func update(_ info: UnsafePointer<pw_node_info>) {
        let mask = info.pointee.change_mask
        if mask & UInt64(PW_NODE_CHANGE_MASK_PROPS) != 0 {
            properties = SoundscapeAudio.properties(of: info.pointee.props.map { UnsafePointer($0) })
        }
        if mask & UInt64(PW_NODE_CHANGE_MASK_STATE) != 0 {
            state = info.pointee.state
        }
        monitor.nodeChanged()
    }

    // `nonisolated(unsafe)`: written once at first use, read-only afterwards.
    nonisolated(unsafe) private static let events: UnsafeMutablePointer<pw_node_events> = {
        let events = UnsafeMutablePointer<pw_node_events>.allocate(capacity: 1)
        events.initialize(to: pw_node_events())
        events.pointee.version = UInt32(PW_VERSION_NODE_EVENTS)
        events.pointee.info = { data, info in
            guard let info else { return }
            Unmanaged<NodeWatch>.fromOpaque(data!).takeUnretainedValue().update(info)
        }
        return events
    }()
}

/// The bound `default` metadata: the default sink, and where we ask to be linked.
private final class MetadataWatch {
    let id: UInt32
    private let bound: BoundProxy
    private unowned let monitor: GraphMonitor

    init?(registry: OpaquePointer, id: UInt32, monitor: GraphMonitor) {
        guard let bound = BoundProxy(registry: registry, id: id, type: InterfaceType.metadata, version: PW_VERSION_METADATA) else {
            return nil
        }
        self.id = id
        self.monitor = monitor
        self.bound = bound
        _ = scs_metadata_add_listener(bound.proxy, bound.hook, Self.events, Unmanaged.passUnretained(self).toOpaque())
    }

    func close() {
        bound.close()
    }

    func set(subject: UInt32, key: String, value: String?) {
        _ = scs_metadata_set_property(bound.proxy, subject, key, value == nil ? nil : "Spa:String", value)
    }

    /// `default.audio.sink` holds `{"name": "…"}`; `suspend.playback` is "1"
    /// while WirePlumber's role-based policy holds its links inactive.
    private func property(subject: UInt32, key: String?, value: String?) {
        guard subject == PW_ID_CORE else { return }
        if key == nil {
            monitor.defaultSinkChanged(nil)  // everything was cleared
            monitor.playbackSuspendedChanged(false)
        } else if key == "default.audio.sink" {
            monitor.defaultSinkChanged(value.flatMap { SPAJSON.string(forKey: "name", in: $0) })
        } else if key == "suspend.playback" {
            monitor.playbackSuspendedChanged(value == "1")
        }
    }

    // `nonisolated(unsafe)`: written once at first use, read-only afterwards.
    nonisolated(unsafe) private static let events: UnsafeMutablePointer<pw_metadata_events> = {
        let events = UnsafeMutablePointer<pw_metadata_events>.allocate(capacity: 1)
        events.initialize(to: pw_metadata_events())
        events.pointee.version = UInt32(PW_VERSION_METADATA_EVENTS)
        events.pointee.property = { data, subject, key, _, value in
            Unmanaged<MetadataWatch>.fromOpaque(data!).takeUnretainedValue()
                .property(subject: subject, key: key.map { String(cString: $0) }, value: value.map { String(cString: $0) })
            return 0
        }
        return events
    }()
}
