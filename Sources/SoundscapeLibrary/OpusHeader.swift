/// Whether a file begins as an Ogg Opus stream must: an Ogg page whose first packet
/// is Opus's identification header (RFC 7845: "OpusHead", version 1). Read from the
/// file's first bytes at every catalog scan, so a file that cannot play (a text file
/// named `.opus`, an Ogg Vorbis file) is listed as unplayable, with why, instead of
/// looking playable until `play` refuses it. It reads no further: a stream cut short
/// later is found by the decoder, as before.
public enum OpusHeader {
    /// How many of a file's first bytes `problem` needs: an Ogg page header with the
    /// longest segment table, and the identification header's first fields.
    public static let prefixLength = 27 + 255 + 19

    /// Why `bytes` (a file's start) are not an Ogg Opus stream; nil when they begin one.
    public static func problem(_ bytes: [UInt8]) -> String? {
        guard bytes.count >= 4, bytes.starts(with: Array("OggS".utf8)) else {
            return bytes.isEmpty ? "the file is empty" : "not an Ogg Opus file (it does not start with an Ogg page)"
        }
        guard bytes.count >= 27 else { return "its first Ogg page is cut short" }
        let packet = 27 + Int(bytes[26])
        guard bytes.count >= packet + 9 else { return "its first Ogg page is cut short" }
        let magic = bytes[packet..<(packet + 8)]
        guard magic.elementsEqual("OpusHead".utf8) else {
            if magic.dropFirst().starts(with: Array("vorbis".utf8)) { return "an Ogg Vorbis file, not Opus (convert it with opusenc)" }
            return "an Ogg file, but not Opus"
        }
        // RFC 7845: the version's upper four bits are the major version, 0 for every version a decoder can play.
        guard bytes[packet + 8] & 0xF0 == 0 else { return "an Opus header of a version no decoder plays" }
        return nil
    }
}
