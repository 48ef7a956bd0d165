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
    ///
    /// Read by Unicode scalars, not `Character`s: a quote, a backslash or a space
    /// followed by a combining mark is still a quote, a backslash or a space, as in
    /// a shell (`SeparatedText` says why).
    public static func split(_ text: String, home: String? = nil) throws(ParseError) -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        var inWord = false
        var iterator = text.unicodeScalars.makeIterator()
        var lookahead: Unicode.Scalar?
        func next() -> Unicode.Scalar? {
            if let pending = lookahead {
                lookahead = nil
                return pending
            }
            return iterator.next()
        }
        while let scalar = next() {
            switch scalar {
            case "~" where !inWord:
                inWord = true
                let following = next()
                lookahead = following
                guard following.map({ "/ \t\n\r".unicodeScalars.contains($0) }) ?? true else {
                    throw ParseError(description: "'~user' is not expanded: write the path, or quote it to keep the ~")
                }
                guard let home, FilePaths.isAbsolute(home) else {
                    throw ParseError(description: "a word starts with ~, but HOME is not set to expand it")
                }
                current.append(contentsOf: home.unicodeScalars)
            case " ", "\t", "\n", "\r":
                if inWord {
                    words.append(String(current))
                    current = String.UnicodeScalarView()
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
                        if !"\"\\$`".unicodeScalars.contains(escaped) { current.append("\\") }
                        current.append(escaped)
                    } else {
                        current.append(inner)
                    }
                }
                guard closed else { throw ParseError(description: "unterminated double quote") }
            case "\\":
                guard let escaped = next() else { throw ParseError(description: "a backslash ends the line") }
                // Backslash-newline (LF or CRLF) is a line continuation: it adds nothing, not even an empty word.
                if escaped == "\r" {
                    let following = next()
                    if following == "\n" { continue }
                    lookahead = following
                }
                if escaped != "\n" {
                    inWord = true
                    current.append(escaped)
                }
            default:
                inWord = true
                current.append(scalar)
            }
        }
        if inWord { words.append(String(current)) }
        return words
    }

    /// `words` written so that `split` gives them back: a word of only plain characters
    /// as it is, any other in single quotes (a `'` in it as `'\''`), an empty one as `''`.
    /// A leading `~` is quoted too, so it stays a `~`.
    public static func quote(_ words: [String]) -> String {
        words.map { word in
            guard !word.isEmpty, word.unicodeScalars.allSatisfy(isPlain) else {
                return "'" + SeparatedText.pieces(word, at: "'").joined(separator: "'\\''") + "'"
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
