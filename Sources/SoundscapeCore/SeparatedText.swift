/// Text cut at an ASCII separator, found by its byte, as a shell, systemd and
/// the kernel read `key = value`, `--flag=value`, `NAME=VALUE`, `NAME:path`,
/// a `PATH` or `LISTEN_FDNAMES`.
///
/// Swift's `Character`s are grapheme clusters, and a separator followed by a
/// combining mark ("=\u{306}") is one of them, and not the separator:
/// `"a=\u{306}b".firstIndex(of: "=")` is nil, so `a=\u{306}b` was refused as
/// "expects NAME=VALUE" although its value is "\u{306}b". So every cut at such a
/// separator is made here, on UTF-8 bytes (as `FilePaths` asks about slashes), and
/// the pieces keep every byte: a combining mark stays with what follows the cut.
public enum SeparatedText {
    /// What comes before the first `separator` (ASCII) in `text` and what after it;
    /// nil when there is none.
    public static func cut(_ text: Substring, at separator: Unicode.Scalar) -> (before: Substring, after: Substring)? {
        guard let index = text.utf8.firstIndex(of: byte(separator)) else { return nil }
        // A byte below 0x80 starts a scalar, and so does the one after it: both are
        // boundaries the subscript takes as they are.
        return (text[..<index], text[text.utf8.index(after: index)...])
    }

    public static func cut(_ text: String, at separator: Unicode.Scalar) -> (before: Substring, after: Substring)? {
        cut(text[...], at: separator)
    }

    /// The pieces of `text` between its `separator`s (ASCII), empty pieces kept:
    /// "a::b" is ["a", "", "b"], "" is [""].
    public static func pieces(_ text: String, at separator: Unicode.Scalar) -> [Substring] {
        var pieces: [Substring] = []
        var rest = text[...]
        while let (before, after) = cut(rest, at: separator) {
            pieces.append(before)
            rest = after
        }
        pieces.append(rest)
        return pieces
    }

    /// Whether `text`'s bytes begin with `prefix`'s ("--\u{306}x" begins with "--";
    /// `String.hasPrefix`, comparing characters, says no).
    public static func hasPrefix(_ text: some StringProtocol, _ prefix: String) -> Bool {
        text.utf8.starts(with: prefix.utf8)
    }

    /// Whether `text` holds the byte of `separator` (ASCII).
    public static func contains(_ text: some StringProtocol, _ separator: Unicode.Scalar) -> Bool {
        text.utf8.contains(byte(separator))
    }

    private static func byte(_ separator: Unicode.Scalar) -> UInt8 {
        precondition(separator.isASCII, "a separator found by its byte must be ASCII")
        return UInt8(separator.value)
    }
}
