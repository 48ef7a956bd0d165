/// A path's text as the kernel reads it: bytes, with "/" the separator.
///
/// Swift's `Character`s are grapheme clusters, and a slash followed by a combining
/// mark ("/\u{306}") is one of them, not a slash: `"a/\u{306}b".contains("/")` is false
/// although the kernel opens "a", then "\u{306}b". So every question about a path's
/// slashes and dots is asked here, of its UTF-8 bytes, and nowhere of its characters
/// (a manifest's file "../\u{306}x" once passed a `contains("/")` check; Fuzz/ found it).
public enum FilePaths {
    static let slash = UInt8(ascii: "/")

    /// Whether `path` begins with a slash.
    public static func isAbsolute(_ path: some StringProtocol) -> Bool {
        path.utf8.first == slash
    }

    /// Whether `name` is one entry's name in a directory: not empty, no slash or
    /// NUL byte, and neither "." nor "..".
    public static func isPlainName(_ name: String) -> Bool {
        let bytes = name.utf8
        return !bytes.isEmpty && !bytes.contains(slash) && !bytes.contains(0)
            && !bytes.elementsEqual(".".utf8) && !bytes.elementsEqual("..".utf8)
    }

    /// What follows the last slash, trailing slashes aside ("" for "/" and "").
    public static func lastComponent(_ path: String) -> String {
        var bytes = path.utf8[...]
        while bytes.last == slash { bytes = bytes.dropLast() }
        if let cut = bytes.lastIndex(of: slash) { bytes = bytes[bytes.index(after: cut)...] }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `directory/name`, with exactly one slash between them.
    public static func join(_ directory: String, _ name: String) -> String {
        let trimmed = trimmingTrailingSlashes(directory)
        return trimmed == "/" ? "/" + name : trimmed + "/" + name
    }

    /// The directory that holds `path` ("/" for "/" and for top-level names, "."
    /// for a bare name).
    public static func parent(_ path: String) -> String {
        let bytes = trimmingTrailingSlashes(path).utf8
        guard let cut = bytes.lastIndex(of: slash) else { return "." }
        return cut == bytes.startIndex ? "/" : String(decoding: bytes[..<cut], as: UTF8.self)
    }

    /// `path` without the slashes that end it, but "/" stays "/".
    static func trimmingTrailingSlashes(_ path: String) -> String {
        var bytes = path.utf8[...]
        while bytes.count > 1 && bytes.last == slash { bytes = bytes.dropLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
