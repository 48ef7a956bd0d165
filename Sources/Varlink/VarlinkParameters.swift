/// The `parameters` object of a call, with accessors that turn a missing or ill-typed value
/// into the standard `org.varlink.service.InvalidParameter` error naming the parameter.
///
/// Handlers can then simply `try` each accessor: whatever they throw is the correct reply.
public struct VarlinkParameters: Sendable, Hashable {
    public var values: [String: JSONValue]

    public init(_ values: [String: JSONValue] = [:]) {
        self.values = values
    }

    public subscript(name: String) -> JSONValue? {
        values[name]
    }

    public func string(_ name: String) throws(VarlinkError) -> String {
        try required(name, optionalString(name))
    }

    /// A missing key and an explicit `null` both mean "not given": varlink encodes an unset
    /// optional field either way.
    public func optionalString(_ name: String) throws(VarlinkError) -> String? {
        try optional(name) { $0.stringValue }
    }

    /// An integral JSON number within `Int` range; 50.5 and "50" are invalid.
    public func int(_ name: String) throws(VarlinkError) -> Int {
        try required(name, optionalInt(name))
    }

    public func optionalInt(_ name: String) throws(VarlinkError) -> Int? {
        try optional(name) { $0.intValue }
    }

    /// A JSON array, its elements for the caller to read.
    public func optionalArray(_ name: String) throws(VarlinkError) -> [JSONValue]? {
        try optional(name) {
            if case .array(let elements) = $0 { return elements }
            return nil
        }
    }

    public func bool(_ name: String) throws(VarlinkError) -> Bool {
        try required(name, optionalBool(name))
    }

    public func optionalBool(_ name: String) throws(VarlinkError) -> Bool? {
        try optional(name) { $0.boolValue }
    }

    /// Rejects parameters the method does not define, so a client's typo ("volum") is an
    /// error rather than silently ignored. The offending name is reported; if there are
    /// several, the alphabetically first, so the reply is deterministic.
    public func rejectUnknown(allowed: Set<String>) throws(VarlinkError) {
        if let unknown = values.keys.filter({ !allowed.contains($0) }).min() {
            throw .invalidParameter(parameter: unknown)
        }
    }

    private func optional<T>(_ name: String, _ convert: (JSONValue) -> T?) throws(VarlinkError) -> T? {
        guard let value = values[name], !value.isNull else { return nil }
        guard let converted = convert(value) else { throw .invalidParameter(parameter: name) }
        return converted
    }

    private func required<T>(_ name: String, _ value: T?) throws(VarlinkError) -> T {
        guard let value else { throw .invalidParameter(parameter: name) }
        return value
    }
}
