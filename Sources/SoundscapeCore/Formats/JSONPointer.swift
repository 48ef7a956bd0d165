/// A JSON document as `JSONPointer` walks it: the daemon's JSON type conforms
/// (Core imports no JSON parser), and the tests' own small one does.
public protocol JSONNode: Equatable {
    /// The member `name`, if this is an object that has one.
    func member(_ name: String) -> Self?
    /// The elements, if this is an array.
    var elements: [Self]? { get }
}

/// A JSON Pointer (RFC 6901): `/health/isConnected`, `/peers/0/online`, or the
/// empty pointer for the whole document. In a token `~1` stands for `/` and `~0`
/// for `~` (`/a~1b` is the member `a/b`); any other `~` is an error.
public struct JSONPointer: Sendable, Equatable, CustomStringConvertible {
    /// The reference tokens, unescaped.
    public let tokens: [String]

    public init(tokens: [String]) {
        self.tokens = tokens
    }

    /// `text` as a pointer; the error says what is wrong with it.
    public init(parsing text: String) throws(JSONPointerError) {
        guard !text.isEmpty else {
            tokens = []
            return
        }
        guard text.hasPrefix("/") else { throw JSONPointerError("a JSON pointer starts with /, '\(text)' does not") }
        var tokens: [String] = []
        for escaped in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var scalars = escaped.unicodeScalars.makeIterator()
            while let scalar = scalars.next() {
                guard scalar == "~" else {
                    token.unicodeScalars.append(scalar)
                    continue
                }
                switch scalars.next() {
                case "0": token += "~"
                case "1": token += "/"
                default: throw JSONPointerError("in a JSON pointer ~ must be followed by 0 or 1 (~0 is ~, ~1 is /): '\(text)'")
                }
            }
            tokens.append(token)
        }
        self.tokens = tokens
    }

    /// As written, escapes and all.
    public var description: String {
        tokens.map { "/" + $0.replacingAll("~", with: "~0").replacingAll("/", with: "~1") }.joined()
    }

    /// The value it points to in `document`; nil when there is none (a missing member,
    /// an index past the end or not an index, a scalar on the way).
    public func resolve<Node: JSONNode>(in document: Node) -> Node? {
        var node = document
        for token in tokens {
            if let elements = node.elements {
                guard let index = Self.arrayIndex(token), index < elements.count else { return nil }
                node = elements[index]
            } else {
                guard let member = node.member(token) else { return nil }
                node = member
            }
        }
        return node
    }

    /// RFC 6901's array index: `0`, or digits without a leading zero (`-`, the element
    /// after the last, never exists in a document).
    static func arrayIndex(_ token: String) -> Int? {
        guard let first = token.utf8.first, token.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            first != 0x30 || token.utf8.count == 1
        else { return nil }
        return Int(token)
    }
}

public struct JSONPointerError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// `signer-health-json`: `POINTER OP VALUE`, a condition on a JSON document: the
/// value `POINTER` points to is (`==`) or is not (`!=`) `VALUE`.
///
/// The pointer is what comes before the first `==` or `!=`, the value what comes
/// after, each trimmed. `VALUE` is kept as JSON text: the daemon parses it with the
/// same JSON parser as the document (Core has none), and `SettingContext.checkJSON`
/// refuses a bad one when the setting is read.
public struct JSONCondition: Sendable, Equatable, CustomStringConvertible {
    public enum Operator: String, Sendable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
    }

    public var pointer: JSONPointer
    public var op: Operator
    /// The JSON value compared with, as written (`true`, `3`, `"ok"`, `null`).
    public var value: String

    public static let syntax = "POINTER == VALUE or POINTER != VALUE (a JSON pointer such as /health/isConnected, and a JSON value)"

    public init(pointer: JSONPointer, op: Operator, value: String) {
        self.pointer = pointer
        self.op = op
        self.value = value
    }

    /// `/health/isConnected == true`; the error says what is wrong.
    public init(parsing text: String) throws(JSONPointerError) {
        let found = Operator.allCases.compactMap { op in text.firstRange(of: op.rawValue).map { (op, $0) } }
            .min { $0.1.lowerBound < $1.1.lowerBound }
        guard let (op, range) = found else { throw JSONPointerError("expected \(Self.syntax), got '\(text)'") }
        let value = String(text[range.upperBound...].trimmingSpaces())
        guard !value.isEmpty else { throw JSONPointerError("no JSON value after \(op.rawValue) in '\(text)'") }
        self.pointer = try JSONPointer(parsing: String(text[..<range.lowerBound].trimmingSpaces()))
        self.op = op
        self.value = value
    }

    public var description: String { "\(pointer) \(op.rawValue) \(value)" }

    /// Whether `document` meets the condition, `expected` being `value` parsed: nil when
    /// it does, else why not, in words (`/health/isConnected is false, not true`).
    /// `describe` writes a value as JSON.
    public func failure<Node: JSONNode>(in document: Node, expected: Node, describe: (Node) -> String) -> String? {
        guard let found = pointer.resolve(in: document) else {
            return "\(pointerName) is missing"
        }
        switch (op, found == expected) {
        case (.equal, true), (.notEqual, false): return nil
        case (.equal, false): return "\(pointerName) is \(Self.short(describe(found))), not \(Self.short(describe(expected)))"
        case (.notEqual, true): return "\(pointerName) is \(Self.short(describe(found)))"
        }
    }

    /// What a passing check found, for the signer's status line (`/health/isConnected is true`).
    public func passed<Node: JSONNode>(in document: Node, describe: (Node) -> String) -> String {
        "\(pointerName) is " + (pointer.resolve(in: document).map { Self.short(describe($0)) } ?? "missing")
    }

    /// The pointer as a message names it (the empty pointer is the whole body).
    private var pointerName: String { pointer.tokens.isEmpty ? "the body" : pointer.description }

    /// A value cut to fit a status line.
    static func short(_ text: String) -> String {
        text.count <= 60 ? text : String(text.prefix(59)) + "…"
    }
}

extension String {
    /// Every `target` replaced by `replacement` (Core has no Foundation).
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
