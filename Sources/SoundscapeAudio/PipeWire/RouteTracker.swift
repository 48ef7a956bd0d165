/// Works out which sink our stream plays to from the registry's nodes and
/// links, so status can name the real route instead of the one we asked for.
///
/// A pure value: the PipeWire connection feeds it globals and removals, and
/// asks for the route; tests feed it by hand.
struct RouteTracker: Sendable {
    struct Node: Sendable, Equatable {
        var name: String
        var mediaClass: String?
    }

    private(set) var nodes: [UInt32: Node] = [:]
    /// Link id -> (output node, input node).
    private(set) var links: [UInt32: (output: UInt32, input: UInt32)] = [:]

    mutating func addNode(id: UInt32, name: String, mediaClass: String?) {
        nodes[id] = Node(name: name, mediaClass: mediaClass)
    }

    mutating func addLink(id: UInt32, output: UInt32, input: UInt32) {
        links[id] = (output, input)
    }

    mutating func remove(id: UInt32) {
        nodes[id] = nil
        links[id] = nil
    }

    mutating func removeAll() {
        nodes.removeAll()
        links.removeAll()
    }

    /// The `node.name` of the node our stream's links lead into; the lowest
    /// link id wins so the answer is stable while ports are being linked.
    func route(from node: UInt32?) -> String? {
        guard let node else { return nil }
        let target =
            links
            .filter { $0.value.output == node }
            .min { $0.key < $1.key }?
            .value.input
        return target.flatMap { nodes[$0]?.name }
    }
}
