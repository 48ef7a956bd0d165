import Foundation
import Varlink

// Types describing what `pw-dump` shows. Nested in `PipeWireGraph` so that
// generic names (Node, Link) never clash with the product modules. Its JSON is
// the one `JSONValue` of the varlink module.
extension PipeWireGraph {
    /// A PipeWire node as seen in `pw-dump`.
    public struct Node: Sendable, Hashable, CustomStringConvertible {
        public var id: Int
        /// `node.name`
        public var name: String?
        /// `node.description`
        public var nodeDescription: String?
        /// `media.class`, e.g. `Audio/Sink`, `Stream/Output/Audio`.
        public var mediaClass: String?
        /// `info.state`: "creating", "suspended", "idle", "running" or "error".
        public var state: String?
        /// `info.error` when state is "error".
        public var error: String?
        /// All `info.props`, flattened to strings.
        public var props: [String: String]
        /// `client.id` prop, if the node belongs to a client.
        public var clientID: Int? { props["client.id"].flatMap { Int($0) } }

        public var description: String {
            "Node(\(id), \(name ?? "?"), \(mediaClass ?? "-"), \(state ?? "?"))"
        }
    }

    /// A PipeWire link (port to port); node ids are what tests usually need.
    public struct Link: Sendable, Hashable, CustomStringConvertible {
        public var id: Int
        public var outputNodeID: Int
        public var outputPortID: Int
        public var inputNodeID: Int
        public var inputPortID: Int
        /// "init", "negotiating", "allocating", "paused", "active", "error", "unlinked".
        public var state: String?

        public var description: String {
            "Link(\(id): \(outputNodeID).\(outputPortID) -> \(inputNodeID).\(inputPortID), \(state ?? "?"))"
        }
    }

    /// A PipeWire device: hardware a monitor found (a sound card, a Bluetooth
    /// headset, a camera), or one made by hand with `pw-cli create-device`.
    public struct Device: Sendable, Hashable, CustomStringConvertible {
        public var id: Int
        public var props: [String: String]

        public var description: String {
            let name = props["device.name"] ?? props["device.nick"] ?? props["factory.name"] ?? "?"
            return "Device(\(id), \(name), \(props["device.api"] ?? "-"))"
        }
    }

    /// A PipeWire client (connection).
    public struct Client: Sendable, Hashable {
        public var id: Int
        public var props: [String: String]
        public var processID: Int32? { props["application.process.id"].flatMap { Int32($0) } }
        public var applicationName: String? { props["application.name"] }
    }

    public struct MetadataEntry: Sendable, Hashable {
        public var subject: Int
        public var key: String
        public var type: String?
        public var value: JSONValue
    }

    /// One consistent view of the graph from a single `pw-dump` run.
    ///
    /// Note: `pw-dump` omits metadata objects that have no entries yet (e.g. the
    /// "default" metadata before any sink exists).
    public struct Snapshot: Sendable {
        public var nodes: [Node]
        public var links: [Link]
        public var clients: [Client]
        public var devices: [Device]
        /// metadata.name -> entries
        public var metadata: [String: [MetadataEntry]]
        /// Every object as raw JSON, for anything not modelled above.
        public var rawObjects: [JSONValue]

        public init(pwDumpJSON data: Data) throws {
            let objects: [JSONValue]
            do {
                objects = try JSONDecoder().decode([JSONValue].self, from: data)
            } catch {
                throw HarnessError(
                    "Cannot parse pw-dump output (\(data.count) bytes): \(error)\n\(String(decoding: data.prefix(500), as: UTF8.self))"
                )
            }
            var nodes: [Node] = []
            var links: [Link] = []
            var clients: [Client] = []
            var devices: [Device] = []
            var metadata: [String: [MetadataEntry]] = [:]
            for object in objects {
                guard let id = object["id"]?.intValue, let type = object["type"]?.stringValue else { continue }
                let info = object["info"]
                switch type {
                case "PipeWire:Interface:Node":
                    let props = Self.flatten(info?["props"])
                    nodes.append(
                        Node(
                            id: id, name: props["node.name"], nodeDescription: props["node.description"],
                            mediaClass: props["media.class"], state: info?["state"]?.stringValue,
                            error: info?["error"]?.stringValue, props: props))
                case "PipeWire:Interface:Link":
                    guard let info,
                        let outNode = info["output-node-id"]?.intValue,
                        let inNode = info["input-node-id"]?.intValue
                    else { continue }
                    links.append(
                        Link(
                            id: id, outputNodeID: outNode, outputPortID: info["output-port-id"]?.intValue ?? -1,
                            inputNodeID: inNode, inputPortID: info["input-port-id"]?.intValue ?? -1,
                            state: info["state"]?.stringValue))
                case "PipeWire:Interface:Client":
                    clients.append(Client(id: id, props: Self.flatten(info?["props"])))
                case "PipeWire:Interface:Device":
                    devices.append(Device(id: id, props: Self.flatten(info?["props"])))
                case "PipeWire:Interface:Metadata":
                    guard let name = object["props"]?["metadata.name"]?.stringValue else { continue }
                    let entries = (object["metadata"]?.arrayValue ?? []).compactMap { e -> MetadataEntry? in
                        guard let key = e["key"]?.stringValue else { return nil }
                        return MetadataEntry(
                            subject: e["subject"]?.intValue ?? 0, key: key, type: e["type"]?.stringValue,
                            value: e["value"] ?? .null)
                    }
                    metadata[name, default: []].append(contentsOf: entries)
                default:
                    break
                }
            }
            self.nodes = nodes
            self.links = links
            self.clients = clients
            self.devices = devices
            self.metadata = metadata
            self.rawObjects = objects
        }

        /// Property maps flattened to strings: strings as they are, anything else as its
        /// JSON (integral numbers without a fraction, bools as true/false).
        static func flatten(_ value: JSONValue?) -> [String: String] {
            guard let o = value?.objectValue else { return [:] }
            return o.mapValues { $0.stringValue ?? $0.description }
        }

        // MARK: Queries

        public func node(id: Int) -> Node? { nodes.first { $0.id == id } }

        public func node(named name: String) -> Node? { nodes.first { $0.name == name } }

        public var sinks: [Node] { nodes.filter { $0.mediaClass == "Audio/Sink" } }

        /// Nodes created by the process with this pid (via its client's `application.process.id`).
        public func nodes(ofProcess pid: Int32) -> [Node] {
            let clientIDs = Set(clients.filter { $0.processID == pid }.map(\.id))
            return nodes.filter { $0.clientID.map(clientIDs.contains) ?? false }
        }

        public func clients(ofProcess pid: Int32) -> [Client] { clients.filter { $0.processID == pid } }

        public func links(from outputNodeID: Int) -> [Link] { links.filter { $0.outputNodeID == outputNodeID } }

        public func links(to inputNodeID: Int) -> [Link] { links.filter { $0.inputNodeID == inputNodeID } }

        /// Distinct (output node id, input node id) pairs.
        public var linkedNodePairs: Set<NodePair> {
            Set(links.map { NodePair(output: $0.outputNodeID, input: $0.inputNodeID) })
        }

        public func isLinked(output: Int, input: Int) -> Bool {
            links.contains { $0.outputNodeID == output && $0.inputNodeID == input }
        }

        /// Node ids that `nodeID` feeds into.
        public func downstreamNodes(of nodeID: Int) -> [Node] {
            Set(links(from: nodeID).map(\.inputNodeID)).compactMap { node(id: $0) }
        }

        public func metadataValue(_ key: String, in name: String = "default", subject: Int = 0) -> JSONValue? {
            metadata[name]?.last { $0.key == key && $0.subject == subject }?.value
        }

        /// `default.audio.sink` (the sink WirePlumber actually uses).
        public var defaultSink: String? { Self.nodeName(from: metadataValue("default.audio.sink")) }

        /// `default.configured.audio.sink` (the user's choice).
        public var configuredDefaultSink: String? { Self.nodeName(from: metadataValue("default.configured.audio.sink")) }

        static func nodeName(from value: JSONValue?) -> String? {
            guard let value else { return nil }
            if let name = value["name"]?.stringValue { return name }
            // Some versions store the JSON as a string.
            if let s = value.stringValue, let data = s.data(using: .utf8),
                let parsed = try? JSONDecoder().decode(JSONValue.self, from: data)
            {
                return parsed["name"]?.stringValue
            }
            return nil
        }
    }

    public struct NodePair: Sendable, Hashable {
        public var output: Int
        public var input: Int
    }
}
