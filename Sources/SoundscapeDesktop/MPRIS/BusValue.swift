/// A D-Bus value as the MPRIS properties need them: what a property holds,
/// kept apart from sd-bus so the model can be built and compared without a bus.
public indirect enum BusValue: Sendable, Equatable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case byte(UInt8)
    case double(Double)
    case int64(Int64)
    case strings([String])
    /// `a{sv}`, in key order (a stable order makes equal dictionaries encode alike).
    case dictionary([String: BusValue])

    /// The D-Bus signature of the value.
    public var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .bool: "b"
        case .byte: "y"
        case .double: "d"
        case .int64: "x"
        case .strings: "as"
        case .dictionary: "a{sv}"
        }
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}
