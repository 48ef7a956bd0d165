import Foundation

// The nodes WirePlumber 0.5 makes, with the properties it gives them, so that
// a test graph on any WirePlumber (0.4 on Debian 12) can carry them as null
// sinks (`createNode`) and the unit tests can judge the same properties.
// Each is read from the source named above it; what PipeWire adds is from
// PipeWire 1.4.
extension PipeWireGraph {
    public enum WirePlumber05 {
        /// A Bluetooth headset's profile: what its real sink node is made for.
        public enum BluetoothProfile: Sendable {
            case a2dp
            /// HSP/HFP, the profile calls use.
            case headset
        }

        /// The loopback sink WirePlumber 0.5.13 puts in front of a Bluetooth
        /// device that has both A2DP and headset profiles, so the sink stays
        /// when the profile changes (src/scripts/monitors/bluez.lua,
        /// `CreateDeviceLoopbackSink`, its `capture.props`). No profile, factory
        /// or intended roles; the name is the raw address. PipeWire's
        /// module-loopback.c adds `node.group` and `node.link-group`
        /// (`loopback-<pid>-<module id>`) and `resample.prefill`.
        public static func bluetoothLoopbackSink(
            address: String, description: String, deviceID: Int,
            linkGroup: String
        ) -> [String: String] {
            [
                "node.name": "bluez_output.\(address)",
                "node.description": description,
                "node.virtual": "false",
                "audio.position": "[FL, FR]",
                "media.class": "Audio/Sink",
                "device.id": "\(deviceID)",
                "card.profile.device": "1",
                "device.routes": "1",
                "priority.session": "2010",
                "bluez5.sink-loopback": "true",
                "filter.smart": "true",
                "filter.smart.target": "{ \"bluez5.sink-loopback-target\": true, \"bluez5.sink-loopback\": false, \"device.id\": \(deviceID) }",
                "node.group": linkGroup,
                "node.link-group": linkGroup,
                "resample.prefill": "true",
            ]
        }

        /// The device's real sink behind that loopback, renamed
        /// `bluez_output_internal.<address with _>.1` (src/scripts/monitors/bluez.lua,
        /// `createNode`: `device.id`, `factory.name`, `spa.object.id`,
        /// `node.pause-on-idle`, the description, the name, `priority.*`, and
        /// `api.bluez5.internal` and `bluez5.sink-loopback-target` because the
        /// loopback exists), with what PipeWire's spa/plugins/bluez5/bluez5-device.c
        /// `emit_node` gives a node: transport, profile (`spa_bt_profile_name`:
        /// `headset-head-unit` for HSP/HFP, `a2dp-sink`), codec, address,
        /// `device.routes`, `card.profile.device`, and `device.intended-roles =
        /// Communication` in the headset profile. The sink is SPA node 1 in both
        /// profiles, so both have the same name.
        public static func bluetoothInternalSink(
            address: String, description: String, deviceID: Int,
            profile: BluetoothProfile
        ) -> [String: String] {
            var properties = [
                "node.name": "bluez_output_internal.\(address.replacingOccurrences(of: ":", with: "_")).1",
                "node.description": description,
                "media.class": "Audio/Sink",
                "device.id": "\(deviceID)",
                "spa.object.id": "1",
                "node.pause-on-idle": "false",
                "priority.driver": "1010",
                "priority.session": "1010",
                "api.bluez5.internal": "true",
                "bluez5.sink-loopback-target": "true",
                "bluez5.sink-loopback": "false",
                "api.bluez5.transport": "pointer:0x55d0c3a1f2b0",
                "api.bluez5.address": address,
                "device.routes": "1",
                "card.profile.device": "1",
            ]
            switch profile {
            case .a2dp:
                properties["factory.name"] = "api.bluez5.a2dp.sink"
                properties["api.bluez5.profile"] = "a2dp-sink"
                properties["api.bluez5.codec"] = "sbc"
            case .headset:
                properties["factory.name"] = "api.bluez5.sco.sink"
                properties["api.bluez5.profile"] = "headset-head-unit"
                properties["api.bluez5.codec"] = "msbc"
                properties["device.intended-roles"] = "Communication"
            }
            return properties
        }

        /// One loopback of the role-based policy's example
        /// (src/config/wireplumber.conf.d.examples/media-role-nodes.conf, 0.5.4
        /// and later): its sink, the loopback's capture side. PipeWire's
        /// module-loopback.c names it `input.<node.name>` (the playback side is
        /// `output.<node.name>`) and adds the group properties and `node.virtual`.
        public struct RoleSink: Sendable {
            public let loopback: String
            public let description: String
            public let intendedRoles: [String]
            public let priority: Int
            public let samePriority: String
            public let lowerPriority: String
            public let preferredTarget: String?

            public static let multimedia = RoleSink(
                loopback: "loopback.sink.role.multimedia", description: "Multimedia",
                intendedRoles: ["Music", "Movie", "Game", "Multimedia"], priority: 10,
                samePriority: "mix", lowerPriority: "mix", preferredTarget: nil)
            public static let navigation = RoleSink(
                loopback: "loopback.sink.role.navigation", description: "Navigation",
                intendedRoles: ["Navigation", "GPS"], priority: 30,
                samePriority: "mix", lowerPriority: "duck", preferredTarget: nil)
            public static let communication = RoleSink(
                loopback: "loopback.sink.role.communication", description: "Communication",
                intendedRoles: ["Communication", "Phone"], priority: 50,
                samePriority: "mix", lowerPriority: "cork", preferredTarget: nil)
            public static let alert = RoleSink(
                loopback: "loopback.sink.role.alert", description: "Alert",
                intendedRoles: ["Alert", "Emergency"], priority: 100,
                samePriority: "mix", lowerPriority: "cork", preferredTarget: "Speaker")

            /// The sink's `node.name`.
            public var name: String { "input.\(loopback)" }

            /// Its properties; `linkGroup` is module-loopback's `loopback-<pid>-<module id>`.
            public func properties(linkGroup: String) -> [String: String] {
                var properties = [
                    "node.name": name,
                    "node.description": description,
                    "media.class": "Audio/Sink",
                    "audio.position": "[ FL, FR ]",
                    "device.intended-roles": "[ " + intendedRoles.map { "\"\($0)\"" }.joined(separator: ", ") + " ]",
                    "policy.role-based.target": "true",
                    "policy.role-based.priority": "\(priority)",
                    "policy.role-based.action.same-priority": samePriority,
                    "policy.role-based.action.lower-priority": lowerPriority,
                    "node.group": linkGroup,
                    "node.link-group": linkGroup,
                    "node.virtual": "true",
                    "resample.prefill": "true",
                ]
                properties["policy.role-based.preferred-target"] = preferredTarget
                return properties
            }
        }
    }

    /// Creates a null sink carrying `properties` (which must include
    /// `node.name`; `object.linger` is added) and waits until it shows up. All
    /// but `factory.name`: that is what the adapter makes the node from, so
    /// it stays `support.null-audio-sink`.
    @discardableResult
    public func createNode(properties: [String: String], timeout: Duration = .seconds(5)) throws -> Node {
        guard let name = properties["node.name"] else { throw HarnessError("createNode: no node.name in \(properties)") }
        return try createNullSink(name: name, properties: properties.filter { $0.key != "factory.name" }, timeout: timeout)
    }
}
