/// `signer-env-file`: systemd's `EnvironmentFile=` syntax (systemd.exec(5)), read the
/// way systemd's own parser reads it (`parse_env_file_internal` in src/basic/env-file.c,
/// as of systemd 254 and later), so a file written for a unit works unchanged:
///
/// - one `NAME=VALUE` a line; blank lines, and lines whose first non-blank character
///   is `#` or `;`, are comments (a `#` later in a line belongs to the value);
/// - spaces and tabs around the name, and before and after an unquoted value, are
///   dropped; inside the value they are kept;
/// - unquoted, a backslash keeps the character after it (`\\` is `\`, `\ ` a space
///   that is not trimmed), and a backslash at the end of a line joins the next one;
/// - `'…'` keeps everything verbatim up to the next `'`, newlines included;
/// - `"…"` does the same, except that `\"`, `\\`, `` \` `` and `\$` stand for the
///   character, a backslash before a newline joins the lines, and a backslash
///   before anything else stays, with that character;
/// - quoted and unquoted parts right after one another join (`A="x"y` is `xy`);
/// - a line without `=` is ignored, as systemd ignores it; a later assignment to a
///   name replaces an earlier one.
///
/// Stricter than systemd, because the file holds secrets and a signer started
/// without one is worse than a signer not started: a name that is not a valid
/// variable name (systemd drops the line with a warning; `export NAME=…` among
/// them), a quote left open at the end of the file (systemd takes the rest of the
/// file as the value), and a NUL byte (systemd stops reading there) are refused,
/// naming the line. Invalid UTF-8 is refused, as systemd refuses it.
///
/// No message ever quotes a value, nor the text of a line: a line a user got wrong
/// may be the secret itself.
public enum EnvironmentFile {
    /// One `NAME=VALUE`, and the line its name starts on.
    public struct Assignment: Sendable, Equatable {
        public let name: String
        public let value: String
        public let line: Int

        public init(name: String, value: String, line: Int) {
            self.name = name
            self.value = value
            self.line = line
        }
    }

    /// Why a file is refused, and where; never what the line says.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }

        public init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
    }

    /// The file's assignments, in order (a name may come more than once: see `variables`).
    public static func parse(_ bytes: [UInt8]) throws(Problem) -> [Assignment] {
        var parser = Parser()
        for byte in bytes { try parser.take(byte) }
        return try parser.finish()
    }

    /// The variables `assignments` set, a later assignment to a name replacing an earlier one.
    public static func variables(_ assignments: [Assignment]) -> [String: String] {
        var variables: [String: String] = [:]
        for assignment in assignments { variables[assignment.name] = assignment.value }
        return variables
    }

    /// systemd's state machine, byte by byte (its names, so the two can be read side by side).
    private struct Parser {
        enum State {
            case preKey, key, preValue, value, valueEscape, singleQuoteValue, doubleQuoteValue,
                doubleQuoteValueEscape, comment, commentEscape
        }

        var state = State.preKey
        var key: [UInt8] = []
        var value: [UInt8] = []
        /// Where trailing blanks of the key and of an unquoted value begin (nil: none yet).
        var lastKeyWhitespace: Int?
        var lastValueWhitespace: Int?
        /// The line being read, and the one the current name started on.
        var line = 1
        var keyLine = 1
        /// Where the quote that is open now was opened.
        var quoteLine = 1
        var assignments: [Assignment] = []

        static let newline: Set<UInt8> = [0x0A, 0x0D]
        static let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        static let comments: Set<UInt8> = [UInt8(ascii: "#"), UInt8(ascii: ";")]
        /// The characters a backslash stands for inside double quotes (systemd's SHELL_NEED_ESCAPE).
        static let shellNeedEscape: Set<UInt8> = [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "`"), UInt8(ascii: "$")]
        static let backslash = UInt8(ascii: "\\")

        mutating func take(_ c: UInt8) throws(Problem) {
            guard c != 0 else { throw Problem(line: line, reason: "it holds a NUL byte") }
            defer { if c == 0x0A { line += 1 } }
            switch state {
            case .preKey:
                if Self.comments.contains(c) {
                    state = .comment
                } else if !Self.whitespace.contains(c) {
                    state = .key
                    lastKeyWhitespace = nil
                    keyLine = line
                    key = [c]
                }
            case .key:
                if Self.newline.contains(c) {
                    // No `=`: ignored, as systemd ignores it.
                    state = .preKey
                    key = []
                } else if c == UInt8(ascii: "=") {
                    state = .preValue
                    lastValueWhitespace = nil
                } else {
                    if !Self.whitespace.contains(c) {
                        lastKeyWhitespace = nil
                    } else if lastKeyWhitespace == nil {
                        lastKeyWhitespace = key.count
                    }
                    key.append(c)
                }
            case .preValue:
                if Self.newline.contains(c) {
                    state = .preKey
                    try push(trimValue: false)
                } else if c == UInt8(ascii: "'") {
                    state = .singleQuoteValue
                    quoteLine = line
                } else if c == UInt8(ascii: "\"") {
                    state = .doubleQuoteValue
                    quoteLine = line
                } else if c == Self.backslash {
                    state = .valueEscape
                } else if !Self.whitespace.contains(c) {
                    state = .value
                    value.append(c)
                }
            case .value:
                if Self.newline.contains(c) {
                    state = .preKey
                    try push(trimValue: true)
                } else if c == Self.backslash {
                    state = .valueEscape
                    lastValueWhitespace = nil
                } else {
                    if !Self.whitespace.contains(c) {
                        lastValueWhitespace = nil
                    } else if lastValueWhitespace == nil {
                        lastValueWhitespace = value.count
                    }
                    value.append(c)
                }
            case .valueEscape:
                state = .value
                // An escaped newline is a continuation: eaten whole.
                if !Self.newline.contains(c) { value.append(c) }
            case .singleQuoteValue:
                if c == UInt8(ascii: "'") { state = .preValue } else { value.append(c) }
            case .doubleQuoteValue:
                if c == UInt8(ascii: "\"") {
                    state = .preValue
                } else if c == Self.backslash {
                    state = .doubleQuoteValueEscape
                } else {
                    value.append(c)
                }
            case .doubleQuoteValueEscape:
                state = .doubleQuoteValue
                if Self.shellNeedEscape.contains(c) {
                    value.append(c)
                } else if c != 0x0A {
                    // As a shell does: the backslash stays, with the character.
                    value += [Self.backslash, c]
                }
            case .comment:
                if c == Self.backslash {
                    state = .commentEscape
                } else if Self.newline.contains(c) {
                    state = .preKey
                }
            case .commentEscape:
                // Since systemd 254 a backslash ends a comment's line like any other
                // character; the next line is not part of the comment (as in a shell).
                state = Self.newline.contains(c) ? .preKey : .comment
            }
        }

        mutating func finish() throws(Problem) -> [Assignment] {
            switch state {
            case .preValue, .valueEscape: try push(trimValue: false)
            case .value: try push(trimValue: true)
            case .singleQuoteValue, .doubleQuoteValue, .doubleQuoteValueEscape:
                throw Problem(line: quoteLine, reason: "a quote opened here is never closed")
            case .preKey, .key, .comment, .commentEscape: break
            }
            return assignments
        }

        mutating func push(trimValue: Bool) throws(Problem) {
            defer {
                key = []
                value = []
            }
            if let end = lastKeyWhitespace { key.removeSubrange(end...) }
            if trimValue, let end = lastValueWhitespace { value.removeSubrange(end...) }
            guard let name = String(validating: key, as: UTF8.self) else {
                throw Problem(line: keyLine, reason: "its name is not valid UTF-8")
            }
            guard SettingParsers.isVariableName(name) else {
                if name.hasPrefix("export ") || name.hasPrefix("export\t") {
                    throw Problem(
                        line: keyLine,
                        reason: "'export' is a shell's, not part of the EnvironmentFile= syntax: write NAME=VALUE")
                }
                throw Problem(
                    line: keyLine,
                    reason: "the name before '=' is not a valid environment variable name (letters, digits and _, not starting with a digit)")
            }
            guard let text = String(validating: value, as: UTF8.self) else {
                throw Problem(line: keyLine, reason: "the value of \(name) is not valid UTF-8")
            }
            assignments.append(Assignment(name: name, value: text, line: keyLine))
        }
    }
}
