import NIOCore

/// A JSON document as plain data.
///
/// Varlink parameters are arbitrary JSON objects; handlers and the CLI need to inspect them
/// without declaring a `Codable` type for every method, and tests need to compare them.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// JSON has one number type; like most JSON stacks we carry it as a `Double`.
    /// Use ``intValue`` to read it back as an integer without silently truncating.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var doubleValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number as an `Int`, or `nil` if it is not a number, has a fractional part or
    /// does not fit: 50.5 must not become 50 behind the caller's back.
    public var intValue: Int? {
        guard case .number(let value) = self, value.rounded(.towardZero) == value,
            value >= -0x1p63, value < 0x1p63
        else { return nil }
        return Int(value)
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Member lookup for objects; `nil` for other kinds or a missing key.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON, keys sorted, exactly as ``JSONCoding`` puts it on the wire:
    /// `{"a":[1,2.5,null]}`, so a log line or a failed expectation shows what a peer would read.
    /// A number JSON cannot carry (NaN, an infinity) is spelt as Swift spells it.
    public var description: String {
        if let encoded = try? JSONCoding.encode(self) { return String(buffer: encoded) }
        switch self {
        case .number(let value): return "\(value)"
        case .array(let items): return "[" + items.map(\.description).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.sorted { $0.key < $1.key }.map { "\(JSONValue.string($0.key)):\($0.value)" }.joined(separator: ",") + "}"
        case .null, .bool, .string: return "null"  // always encodable: not reached
        }
    }
}
