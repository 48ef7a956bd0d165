/// Reads a field out of a varlink frame without decoding its JSON: for event
/// swarms and load generators, where decoding every frame would cost more than
/// what they measure. Keys include their quotes and colon, e.g. `"seq":`.
public enum FrameScan {
    /// The offset where `needle` first starts in `haystack`.
    public static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        outer: for i in 0...(haystack.count - needle.count) {
            for j in 0..<needle.count where haystack[i + j] != needle[j] { continue outer }
            return i
        }
        return nil
    }

    /// The unsigned decimal number right after `key` (spaces skipped).
    public static func number(after key: [UInt8], in frame: [UInt8]) -> UInt64? {
        guard let at = find(key, in: frame) else { return nil }
        var i = at + key.count
        while i < frame.count, frame[i] == UInt8(ascii: " ") { i += 1 }
        var value: UInt64 = 0
        var digits = 0
        while i < frame.count, frame[i] >= 0x30, frame[i] <= 0x39 {
            value = value * 10 + UInt64(frame[i] - 0x30)
            digits += 1
            i += 1
        }
        return digits > 0 ? value : nil
    }

    /// What follows `key` up to the next quote (give the key with its opening quote).
    public static func string(after key: [UInt8], in frame: [UInt8]) -> String? {
        guard let at = find(key, in: frame) else { return nil }
        let start = at + key.count
        guard let end = frame[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: frame[start..<end], as: UTF8.self)
    }
}
