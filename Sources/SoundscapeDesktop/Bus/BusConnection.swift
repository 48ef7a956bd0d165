import CSystemdBus
import Glibc

public struct BusError: Error, Sendable, CustomStringConvertible {
    public let description: String
    /// The D-Bus error name, when the error came from the bus.
    public let name: String?

    init(_ description: String, name: String? = nil) {
        self.description = description
        self.name = name
    }

    init(_ what: String, code: Int32) {
        self.init("\(what): \(String(cString: strerror(-code)))")
    }
}

/// The session bus through sd-bus, driven by the companion's own poll loop.
///
/// sd-bus objects are not thread-safe; this one is created and used on the
/// loop's thread only. Only sd-bus's non-variadic calls are used.
public final class BusConnection {
    let bus: OpaquePointer
    private var slots: [OpaquePointer] = []

    /// Connects to the user's session bus (`DBUS_SESSION_BUS_ADDRESS`, else
    /// `$XDG_RUNTIME_DIR/bus`).
    public init() throws(BusError) {
        var bus: OpaquePointer?
        let result = sd_bus_open_user(&bus)
        guard result >= 0, let bus else { throw BusError("cannot connect to the session bus", code: result) }
        self.bus = bus
    }

    deinit {
        for slot in slots { sd_bus_slot_unref(slot) }
        sd_bus_flush_close_unref(bus)
    }

    /// Owns `name`; another owner is an error (a second companion must not run).
    public func requestName(_ name: String) throws(BusError) {
        let result = sd_bus_request_name(bus, name, 0)
        if result == -EEXIST || result == -EALREADY {
            throw BusError("\(name) is already owned on the session bus (is another soundscaped-desktop running?)")
        }
        guard result >= 0 else { throw BusError("cannot own \(name)", code: result) }
    }

    /// Every method call to `path` goes to `handler`, which returns true when it
    /// replied (false lets sd-bus answer UnknownMethod, and Peer calls).
    public func addObject(path: String, handler: @escaping (BusMessage) -> Bool) throws(BusError) {
        let box = Unmanaged.passRetained(HandlerBox(handler)).toOpaque()
        var slot: OpaquePointer?
        let result = sd_bus_add_object(
            bus, &slot, path,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                let box = Unmanaged<HandlerBox>.fromOpaque(userdata).takeUnretainedValue()
                return box.handler(BusMessage(message)) ? 1 : 0
            }, box)
        guard result >= 0, let slot else {
            Unmanaged<HandlerBox>.fromOpaque(box).release()
            throw BusError("cannot serve \(path)", code: result)
        }
        slots.append(slot)
    }

    // MARK: The loop

    public var fileDescriptor: Int32 { sd_bus_get_fd(bus) }
    public var pollEvents: Int16 { Int16(truncatingIfNeeded: max(sd_bus_get_events(bus), 0)) }

    /// Milliseconds until sd-bus needs to run again (a call's timeout), nil for never.
    public var timeoutMilliseconds: Int32? {
        var deadline: UInt64 = 0
        guard sd_bus_get_timeout(bus, &deadline) >= 0, deadline != UInt64.max else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        guard deadline > nowMicroseconds else { return 0 }
        return Int32(clamping: (deadline - nowMicroseconds + 999) / 1000)
    }

    /// Handles everything that is ready; throws when the bus is gone.
    public func processAll() throws(BusError) {
        while true {
            let result = sd_bus_process(bus, nil)
            guard result >= 0 else { throw BusError("the session bus connection ended", code: result) }
            if result == 0 { return }
        }
    }

    // MARK: Sending

    /// `org.freedesktop.DBus.Properties.PropertiesChanged` for `changed` (no invalidated names).
    public func emitPropertiesChanged(path: String, interface: String, changed: [String: BusValue]) {
        guard !changed.isEmpty else { return }
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, path, "org.freedesktop.DBus.Properties", "PropertiesChanged") >= 0,
            let message
        else { return }
        defer { sd_bus_message_unref(message) }
        let writer = BusMessage(message)
        writer.append(string: interface)
        writer.append(dictionary: changed)
        writer.append(strings: [])
        sd_bus_send(bus, message, nil)
    }

    /// Calls a method without waiting; `reply` runs later on the loop's thread
    /// with the reply, or the error (also for a timeout or a vanished peer).
    public func callAsync(
        destination: String, path: String, interface: String, member: String,
        arguments: (BusMessage) -> Void, timeoutMicroseconds: UInt64 = 5_000_000,
        reply: @escaping (Result<BusMessage, BusError>) -> Void
    ) {
        var message: OpaquePointer?
        let created = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard created >= 0, let message else {
            reply(.failure(BusError("cannot call \(member)", code: created)))
            return
        }
        defer { sd_bus_message_unref(message) }
        arguments(BusMessage(message))
        let box = Unmanaged.passRetained(ReplyBox(reply)).toOpaque()
        let result = sd_bus_call_async(
            bus, nil, message,
            { message, userdata, _ in
                guard let userdata else { return 0 }
                let box = Unmanaged<ReplyBox>.fromOpaque(userdata).takeRetainedValue()
                guard let message else {
                    box.reply(.failure(BusError("no reply")))
                    return 0
                }
                if let error = sd_bus_message_get_error(message), sd_bus_error_is_set(error) != 0 {
                    let name = error.pointee.name.map { String(cString: $0) }
                    let text = error.pointee.message.map { String(cString: $0) } ?? name ?? "error"
                    box.reply(.failure(BusError(text, name: name)))
                } else {
                    box.reply(.success(BusMessage(message)))
                }
                return 1
            }, box, timeoutMicroseconds)
        if result < 0 {
            Unmanaged<ReplyBox>.fromOpaque(box).release()
            reply(.failure(BusError("cannot call \(member)", code: result)))
        }
    }

    private final class HandlerBox {
        let handler: (BusMessage) -> Bool
        init(_ handler: @escaping (BusMessage) -> Bool) { self.handler = handler }
    }

    private final class ReplyBox {
        let reply: (Result<BusMessage, BusError>) -> Void
        init(_ reply: @escaping (Result<BusMessage, BusError>) -> Void) { self.reply = reply }
    }
}
