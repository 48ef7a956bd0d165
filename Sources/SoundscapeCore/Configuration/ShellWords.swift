/// Splits a command line into words the way a POSIX shell would, without
/// running one: whitespace separates words; single quotes keep everything
/// literally; double quotes keep everything but `\"`, `\\`, `\$` and `` \` ``;
/// a backslash outside quotes escapes the next character. Nothing is expanded
/// (`$HOME` and globs stay as written), so a config file cannot run code, but for
/// a word's leading, unquoted `~` or `~/`, which is the home directory, as a shell
/// and systemd's `%h` make it (`~user` is refused: it would need the user database).
public enum ShellWords {
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// `home`: what a leading `~` stands for; nil refuses a word that starts with one.
    public static func split(_ text: String, home: String? = nil) throws(ParseError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var iterator = text.makeIterator()
        var lookahead: Character?
        func next() -> Character? {
            if let pending = lookahead {
                lookahead = nil
                return pending
            }
            return iterator.next()
        }
        while let character = next() {
            switch character {
            case "~" where !inWord:
                inWord = true
                let following = next()
                lookahead = following
                guard following.map({ "/ \t\n\r".contains($0) || $0 == "\r\n" }) ?? true else {
                    throw ParseError(description: "'~user' is not expanded: write the path, or quote it to keep the ~")
                }
                guard let home, FilePaths.isAbsolute(home) else {
                    throw ParseError(description: "a word starts with ~, but HOME is not set to expand it")
                }
                current.append(contentsOf: home)
            case " ", "\t", "\n", "\r", "\r\n":
                if inWord {
                    words.append(current)
                    current = ""
                    inWord = false
                }
            case "'":
                inWord = true
                var closed = false
                while let inner = next() {
                    if inner == "'" { closed = true; break }
                    current.append(inner)
                }
                guard closed else { throw ParseError(description: "unterminated single quote") }
            case "\"":
                inWord = true
                var closed = false
                while let inner = next() {
                    if inner == "\"" { closed = true; break }
                    if inner == "\\" {
                        guard let escaped = next() else { break }
                        if !"\"\\$`".contains(escaped) { current.append("\\") }
                        current.append(escaped)
                    } else {
                        current.append(inner)
                    }
                }
                guard closed else { throw ParseError(description: "unterminated double quote") }
            case "\\":
                guard let escaped = next() else { throw ParseError(description: "a backslash ends the line") }
                // Backslash-newline is a line continuation: it adds nothing, not even an empty word.
                if escaped != "\n" && escaped != "\r\n" {
                    inWord = true
                    current.append(escaped)
                }
            default:
                inWord = true
                current.append(character)
            }
        }
        if inWord { words.append(current) }
        return words
    }

    /// `words` written so that `split` gives them back: a word of only plain characters
    /// as it is, any other in single quotes (a `'` in it as `'\''`), an empty one as `''`.
    /// A leading `~` is quoted too, so it stays a `~`.
    public static func quote(_ words: [String]) -> String {
        words.map { word in
            guard !word.isEmpty, word.unicodeScalars.allSatisfy(isPlain) else {
                return "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
            }
            return word
        }.joined(separator: " ")
    }

    private static func isPlain(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".", "/", ":", "=", ",", "+", "@", "%", "^": true
        default: false
        }
    }
}
