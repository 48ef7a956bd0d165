import CPipeWire
import CSoundscapeShims
import Glibc

/// One connection to a PipeWire server: the core, a registry watch for our
/// route, and the playback stream. Created on connect and dropped whole when
/// the server goes away, so no half-dead proxy outlives its server.
///
/// Hooks and event tables live at fixed addresses for the objects' whole
/// life, as PipeWire requires. Used on the loop thread (or under its lock).
final class StreamConnection {
    struct ConnectError: Error, CustomStringConvertible {
        let description: String
    }

    let core: OpaquePointer
    let registry: OpaquePointer
    private(set) var stream: PlaybackStream
    let renderer: Renderer
    fileprivate unowned let output: PipeWireOutput
    private let coreHook: UnsafeMutablePointer<spa_hook>
    private let registryHook: UnsafeMutablePointer<spa_hook>
    private var routes = RouteTracker()
    let graph: GraphMonitor

    init(
        context: OpaquePointer, configuration: OutputConfiguration, renderer: Renderer,
        output: PipeWireOutput
    ) throws(ConnectError) {
        guard let core = pw_context_connect(context, makeProperties([:]), 0) else {
            throw ConnectError(description: "cannot connect to PipeWire: \(String(cString: strerror(errno)))")
        }
        self.core = core
        self.renderer = renderer
        self.output = output
        coreHook = .allocate(capacity: 1)
        coreHook.initialize(to: spa_hook())
        registryHook = .allocate(capacity: 1)
        registryHook.initialize(to: spa_hook())
        registry = pw_core_get_registry(core, UInt32(PW_VERSION_REGISTRY), 0)
        graph = GraphMonitor(registry: registry, detection: output.callDetection, ownNodeName: configuration.nodeName)
        do {
            stream = try PlaybackStream(core: core, configuration: configuration, renderer: renderer, output: output)
        } catch {
            pw_proxy_destroy(registry)
            pw_core_disconnect(core)
            for hook in [coreHook, registryHook] {
                hook.deinitialize(count: 1)
                hook.deallocate()
            }
            throw error
        }
        // Listeners go on once every stored property is set: they carry `self`.
        let userData = Unmanaged.passUnretained(self).toOpaque()
        _ = scs_core_add_listener(core, coreHook, Self.coreEvents, userData)
        _ = scs_registry_add_listener(registry, registryHook, Self.registryEvents, userData)
        graph.begin { [core] in scs_core_sync(core, UInt32(PW_ID_CORE), 0) }
    }

    /// Releases everything; safe after the server is gone (nothing is sent then).
    func close() {
        stream.destroy()
        graph.close()
        spa_hook_remove(registryHook)
        pw_proxy_destroy(registry)
        spa_hook_remove(coreHook)
        pw_core_disconnect(core)
        for hook in [coreHook, registryHook] {
            hook.deinitialize(count: 1)
            hook.deallocate()
        }
    }

    /// Asks the server to echo a `done` event once it has handled everything sent
    /// before: the proof that the server itself answers. Returns the sequence number.
    func syncServer() -> Int32 {
        scs_core_sync(core, UInt32(PW_ID_CORE), 0)
    }

    /// Replaces the stream with a new one on the same core (it starts inactive).
    func recreateStream(configuration: OutputConfiguration) throws(ConnectError) {
        stream.destroy()
        stream = try PlaybackStream(core: core, configuration: configuration, renderer: renderer, output: output)
    }

    func setActive(_ active: Bool) {
        _ = pw_stream_set_active(stream.stream, active)
    }

    /// Our stream's node id, once the server has assigned one.
    var nodeID: UInt32? {
        let node = pw_stream_get_node_id(stream.stream)
        return node == SPA_ID_INVALID ? nil : node
    }

    func currentRoute() -> String? {
        routes.route(from: nodeID)
    }

    // MARK: Event tables (static, so their addresses never change)
    // `nonisolated(unsafe)`: written once at first use, read-only afterwards.

    private static func connection(_ data: UnsafeMutableRawPointer?) -> StreamConnection {
        Unmanaged<StreamConnection>.fromOpaque(data!).takeUnretainedValue()
    }

    nonisolated(unsafe) private static let coreEvents: UnsafeMutablePointer<pw_core_events> = {
        let events = UnsafeMutablePointer<pw_core_events>.allocate(capacity: 1)
        events.initialize(to: pw_core_events())
        events.pointee.version = UInt32(PW_VERSION_CORE_EVENTS)
        events.pointee.done = { data, id, seq in
            guard id == PW_ID_CORE else { return }
            let connection = StreamConnection.connection(data)
            if !connection.graph.coreDone(sequence: seq) {
                connection.output.serverAnswered(sequence: seq)
            }
        }
        events.pointee.error = { data, id, _, result, message in
            let connection = StreamConnection.connection(data)
            let text = message.map { String(cString: $0) } ?? "error \(result)"
            if id == PW_ID_CORE && result == -EPIPE {
                connection.output.serverLost(text)
            } else {
                connection.output.logger.warning("PipeWire error", metadata: ["id": "\(id)", "error": "\(text)"])
            }
        }
        return events
    }()

    nonisolated(unsafe) private static let registryEvents: UnsafeMutablePointer<pw_registry_events> = {
        let events = UnsafeMutablePointer<pw_registry_events>.allocate(capacity: 1)
        events.initialize(to: pw_registry_events())
        events.pointee.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
        events.pointee.global = { data, id, _, type, _, props in
            guard let type else { return }
            let connection = StreamConnection.connection(data)
            switch String(cString: type) {
            case InterfaceType.node:
                guard let name = lookup(props, PW_KEY_NODE_NAME) else { return }
                connection.routes.addNode(id: id, name: name, mediaClass: lookup(props, PW_KEY_MEDIA_CLASS))
                connection.graph.nodeAdded(id: id, properties: props)
            case InterfaceType.metadata:
                connection.graph.metadataAdded(id: id, properties: props)
                return
            case InterfaceType.link:
                guard let output = lookup(props, PW_KEY_LINK_OUTPUT_NODE).flatMap(UInt32.init),
                    let input = lookup(props, PW_KEY_LINK_INPUT_NODE).flatMap(UInt32.init)
                else { return }
                connection.routes.addLink(id: id, output: output, input: input)
                connection.graph.linkAdded(id: id, output: output, input: input)
            default:
                return
            }
            connection.output.refreshRoute()
        }
        events.pointee.global_remove = { data, id in
            let connection = StreamConnection.connection(data)
            connection.routes.remove(id: id)
            connection.graph.removed(id: id)
            connection.output.refreshRoute()
        }
        return events
    }()
}
