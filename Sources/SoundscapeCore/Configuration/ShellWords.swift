/// Splits a command line into words the way a POSIX shell would, without
/// running one: whitespace separates words; single quotes keep everything
/// literally; double quotes keep everything but `\"`, `\\`, `\$` and `` \` ``;
/// a backslash outside quotes escapes the next character. Nothing is expanded
/// (`$HOME`, `~` and globs stay as written), so a config file cannot run code.
public enum ShellWords {
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    public static func split(_ text: String) throws(ParseError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var iterator = text.makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n", "\r", "\r\n":
                if inWord {
                    words.append(current)
                    current = ""
                    inWord = false
                }
            case "'":
                inWord = true
                var closed = false
                while let inner = iterator.next() {
                    if inner == "'" { closed = true; break }
                    current.append(inner)
                }
                guard closed else { throw ParseError(description: "unterminated single quote") }
            case "\"":
                inWord = true
                var closed = false
                while let inner = iterator.next() {
                    if inner == "\"" { closed = true; break }
                    if inner == "\\" {
                        guard let escaped = iterator.next() else { break }
                        if !"\"\\$`".contains(escaped) { current.append("\\") }
                        current.append(escaped)
                    } else {
                        current.append(inner)
                    }
                }
                guard closed else { throw ParseError(description: "unterminated double quote") }
            case "\\":
                guard let escaped = iterator.next() else { throw ParseError(description: "a backslash ends the line") }
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
}
