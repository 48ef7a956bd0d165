import NIOCore

/// A call message as received, checked for the shape the varlink spec requires.
struct VarlinkRequest: Sendable, Hashable {
    var method: String
    var parameters: [String: JSONValue] = [:]
    var more = false
    var oneway = false
    var upgrade = false

    /// Parses one frame.
    ///
    /// A malformed call is answered with `org.varlink.service.InvalidParameter` naming the
    /// top-level field at fault. A frame that is not JSON, not an object, or has no string
    /// `method` blames `method`: without it there is no call at all, and it is the one field
    /// every call must carry.
    init(parsing message: ByteBuffer) throws(VarlinkError) {
        guard let document = try? JSONCoding.decode(JSONValue.self, from: message),
            let fields = document.objectValue,
            let method = fields["method"]?.stringValue
        else { throw .invalidParameter(parameter: "method") }

        self.method = method
        switch fields["parameters"] {
        case nil, .null?: break
        case .object(let parameters)?: self.parameters = parameters
        default: throw .invalidParameter(parameter: "parameters")
        }
        more = try Self.flag("more", in: fields)
        oneway = try Self.flag("oneway", in: fields)
        upgrade = try Self.flag("upgrade", in: fields)
        // A stream of replies nobody will receive would run until the server stops.
        if more && oneway { throw .invalidParameter(parameter: "oneway") }
    }

    private static func flag(_ name: String, in fields: [String: JSONValue]) throws(VarlinkError) -> Bool {
        switch fields[name] {
        case nil, .null?: return false
        case .bool(let value)?: return value
        default: throw .invalidParameter(parameter: name)
        }
    }
}
