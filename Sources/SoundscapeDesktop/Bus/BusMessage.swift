import CSystemdBus
import Glibc

/// A borrowed sd-bus message: reading a call's arguments, writing a reply's.
/// Valid only while sd-bus hands it to us (inside a handler or reply callback).
public struct BusMessage {
    let message: OpaquePointer

    init(_ message: OpaquePointer) {
        self.message = message
    }

    private static func type(_ character: Character) -> CChar {
        CChar(bitPattern: character.asciiValue!)
    }

    public var interface: String? { sd_bus_message_get_interface(message).map { String(cString: $0) } }
    public var member: String? { sd_bus_message_get_member(message).map { String(cString: $0) } }
    public var sender: String? { sd_bus_message_get_sender(message).map { String(cString: $0) } }

    // MARK: Reading

    public func readString() -> String? {
        var value: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(message, Self.type("s"), &value) > 0, let value else { return nil }
        return String(cString: value)
    }

    public func readUInt32() -> UInt32? {
        var value: UInt32 = 0
        guard sd_bus_message_read_basic(message, Self.type("u"), &value) > 0 else { return nil }
        return value
    }

    /// A variant holding a double (or an integer, which some clients send for 0 and 1).
    public func readVariantNumber() -> Double? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(message, &type, &contents) > 0, type == Self.type("v"),
            let contents
        else { return nil }
        let signature = String(cString: contents)
        guard sd_bus_message_enter_container(message, Self.type("v"), contents) > 0 else { return nil }
        defer { sd_bus_message_exit_container(message) }
        switch signature {
        case "d":
            var value: Double = 0
            return sd_bus_message_read_basic(message, Self.type("d"), &value) > 0 ? value : nil
        case "i":
            var value: Int32 = 0
            return sd_bus_message_read_basic(message, Self.type("i"), &value) > 0 ? Double(value) : nil
        case "x":
            var value: Int64 = 0
            return sd_bus_message_read_basic(message, Self.type("x"), &value) > 0 ? Double(value) : nil
        default:
            return nil
        }
    }

    // MARK: Writing

    public func append(string: String) {
        _ = sd_bus_message_append_basic(message, Self.type("s"), string)
    }

    public func append(uint32 value: UInt32) {
        var value = value
        _ = sd_bus_message_append_basic(message, Self.type("u"), &value)
    }

    public func append(int32 value: Int32) {
        var value = value
        _ = sd_bus_message_append_basic(message, Self.type("i"), &value)
    }

    public func append(strings: [String]) {
        _ = sd_bus_message_open_container(message, Self.type("a"), "s")
        for string in strings { append(string: string) }
        _ = sd_bus_message_close_container(message)
    }

    /// `a{sv}`, keys in sorted order.
    public func append(dictionary: [String: BusValue]) {
        _ = sd_bus_message_open_container(message, Self.type("a"), "{sv}")
        for key in dictionary.keys.sorted() {
            _ = sd_bus_message_open_container(message, Self.type("e"), "sv")
            append(string: key)
            append(variant: dictionary[key]!)
            _ = sd_bus_message_close_container(message)
        }
        _ = sd_bus_message_close_container(message)
    }

    public func append(variant value: BusValue) {
        _ = sd_bus_message_open_container(message, Self.type("v"), value.signature)
        append(value)
        _ = sd_bus_message_close_container(message)
    }

    public func append(_ value: BusValue) {
        switch value {
        case .string(let string):
            append(string: string)
        case .objectPath(let path):
            _ = sd_bus_message_append_basic(message, Self.type("o"), path)
        case .bool(let bool):
            var raw: Int32 = bool ? 1 : 0
            _ = sd_bus_message_append_basic(message, Self.type("b"), &raw)
        case .byte(let byte):
            var raw = byte
            _ = sd_bus_message_append_basic(message, Self.type("y"), &raw)
        case .double(let double):
            var raw = double
            _ = sd_bus_message_append_basic(message, Self.type("d"), &raw)
        case .int64(let int):
            var raw = int
            _ = sd_bus_message_append_basic(message, Self.type("x"), &raw)
        case .strings(let strings):
            append(strings: strings)
        case .dictionary(let dictionary):
            append(dictionary: dictionary)
        }
    }

    // MARK: Replying

    /// Replies to this call; `body` appends the return values.
    public func reply(_ body: (BusMessage) -> Void = { _ in }) {
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return }
        defer { sd_bus_message_unref(reply) }
        body(BusMessage(reply))
        sd_bus_send(sd_bus_message_get_bus(message), reply, nil)
    }

    /// Replies with a D-Bus error.
    public func replyError(name: String, text: String) {
        name.withCString { name in
            text.withCString { text in
                var error = sd_bus_error(name: name, message: text, _need_free: 0)
                _ = sd_bus_reply_method_error(message, &error)
            }
        }
    }
}
