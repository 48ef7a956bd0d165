/// What a media control asked for.
public enum MPRISCommand: Sendable, Equatable {
    case play, pause, playPause, stop, next, previous
    case setVolume(Double)
}

/// `/org/mpris/MediaPlayer2` on the session bus: the root and Player
/// interfaces, their properties (Get, GetAll, Set) and introspection.
///
/// Methods reply at once, as MPRIS players do; what they change arrives
/// later as PropertiesChanged, fed by the daemon's own events (so a property
/// never claims what the daemon has not done). Seek, SetPosition and OpenUri
/// are accepted and do nothing (CanSeek is false; a soundscape has no position).
final class MPRISObject {
    private let model: () -> MPRISModel
    private let command: (MPRISCommand) -> Void

    init(model: @escaping () -> MPRISModel, command: @escaping (MPRISCommand) -> Void) {
        self.model = model
        self.command = command
    }

    func handle(_ message: BusMessage) -> Bool {
        guard let interface = message.interface, let member = message.member else { return false }
        switch (interface, member) {
        case ("org.freedesktop.DBus.Properties", "Get"):
            guard let name = message.readString(), let property = message.readString() else { return invalid(message) }
            guard let value = properties(of: name)?[property] else {
                message.replyError(name: "org.freedesktop.DBus.Error.UnknownProperty", text: "no property \(name).\(property)")
                return true
            }
            message.reply { $0.append(variant: value) }
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            guard let name = message.readString() else { return invalid(message) }
            guard let values = properties(of: name) else {
                message.replyError(name: "org.freedesktop.DBus.Error.UnknownInterface", text: "no interface \(name)")
                return true
            }
            message.reply { $0.append(dictionary: values) }
        case ("org.freedesktop.DBus.Properties", "Set"):
            guard let name = message.readString(), let property = message.readString() else { return invalid(message) }
            guard name == MPRISModel.playerInterface, property == "Volume" else {
                message.replyError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", text: "\(name).\(property) cannot be set")
                return true
            }
            guard let volume = message.readVariantNumber(), volume.isFinite else {
                message.replyError(name: "org.freedesktop.DBus.Error.InvalidArgs", text: "Volume takes a double")
                return true
            }
            message.reply()
            command(.setVolume(min(max(volume, 0), 1)))
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            message.reply { $0.append(string: Self.introspection) }
        case (MPRISModel.rootInterface, "Raise"), (MPRISModel.rootInterface, "Quit"):
            message.reply()
        case (MPRISModel.playerInterface, _):
            let commands: [String: MPRISCommand] = [
                "Play": .play, "Pause": .pause, "PlayPause": .playPause, "Stop": .stop, "Next": .next, "Previous": .previous,
            ]
            if let wanted = commands[member] {
                message.reply()
                command(wanted)
            } else if ["Seek", "SetPosition", "OpenUri"].contains(member) {
                message.reply()
            } else {
                return false
            }
        default:
            return false
        }
        return true
    }

    private func properties(of interface: String) -> [String: BusValue]? {
        switch interface {
        case MPRISModel.rootInterface: MPRISModel.rootProperties
        case MPRISModel.playerInterface: model().playerProperties
        default: nil
        }
    }

    private func invalid(_ message: BusMessage) -> Bool {
        message.replyError(name: "org.freedesktop.DBus.Error.InvalidArgs", text: "wrong arguments")
        return true
    }

    static let introspection = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId"><arg name="machine_uuid" type="s" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface" type="s" direction="in"/><arg name="property" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface" type="s" direction="in"/><arg name="property" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface" type="s"/><arg name="changed" type="a{sv}"/><arg name="invalidated" type="as"/>
            </signal>
          </interface>
          <interface name="org.mpris.MediaPlayer2">
            <method name="Raise"/>
            <method name="Quit"/>
            <property name="CanQuit" type="b" access="read"/>
            <property name="CanRaise" type="b" access="read"/>
            <property name="HasTrackList" type="b" access="read"/>
            <property name="Identity" type="s" access="read"/>
            <property name="DesktopEntry" type="s" access="read"/>
            <property name="SupportedUriSchemes" type="as" access="read"/>
            <property name="SupportedMimeTypes" type="as" access="read"/>
          </interface>
          <interface name="org.mpris.MediaPlayer2.Player">
            <method name="Next"/>
            <method name="Previous"/>
            <method name="Pause"/>
            <method name="PlayPause"/>
            <method name="Stop"/>
            <method name="Play"/>
            <method name="Seek"><arg name="Offset" type="x" direction="in"/></method>
            <method name="SetPosition">
              <arg name="TrackId" type="o" direction="in"/><arg name="Position" type="x" direction="in"/>
            </method>
            <method name="OpenUri"><arg name="Uri" type="s" direction="in"/></method>
            <signal name="Seeked"><arg name="Position" type="x"/></signal>
            <property name="PlaybackStatus" type="s" access="read"/>
            <property name="Rate" type="d" access="read"/>
            <property name="Metadata" type="a{sv}" access="read"/>
            <property name="Volume" type="d" access="readwrite"/>
            <property name="Position" type="x" access="read"/>
            <property name="MinimumRate" type="d" access="read"/>
            <property name="MaximumRate" type="d" access="read"/>
            <property name="CanGoNext" type="b" access="read"/>
            <property name="CanGoPrevious" type="b" access="read"/>
            <property name="CanPlay" type="b" access="read"/>
            <property name="CanPause" type="b" access="read"/>
            <property name="CanSeek" type="b" access="read"/>
            <property name="CanControl" type="b" access="read"/>
          </interface>
        </node>
        """
}
