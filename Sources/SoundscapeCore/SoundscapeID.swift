/// A soundscape's identifier: the manifest id, or a user file's name without `.opus`.
///
/// Ids travel through the socket, the database and file names, so they are
/// limited to a safe alphabet; anything else is refused with a clear error
/// instead of being passed to the file system.
public struct SoundscapeID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public static let maximumLength = 128

    public init?(_ rawValue: String) {
        guard !rawValue.isEmpty, rawValue.utf8.count <= Self.maximumLength,
            rawValue.utf8.first != UInt8(ascii: "."), rawValue.utf8.first != UInt8(ascii: "-"),
            rawValue.unicodeScalars.allSatisfy(Self.isAllowed)
        else { return nil }
        self.rawValue = rawValue
    }

    /// An id no soundscape file can have (ids never begin with "."), for what
    /// the daemon plays on its own account rather than the user's.
    private init(reserved rawValue: String) {
        self.rawValue = rawValue
    }

    /// The cue that plays instead of the soundscape while the signer is down
    /// (`signer-down-sound = cue`).
    public static let signerDownCue = SoundscapeID(reserved: ".signer-down")

    public var description: String { rawValue }

    public static func < (lhs: SoundscapeID, rhs: SoundscapeID) -> Bool { lhs.rawValue < rhs.rawValue }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".", " ", "+", "(", ")", ",", "'": true
        // Letters beyond ASCII, and combining marks so that a decomposed "été" is as good as a composed one.
        default:
            scalar.value >= 0x80
                && (scalar.properties.isAlphabetic
                    || scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .spacingMark)
        }
    }
}

extension SoundscapeID: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = SoundscapeID(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid soundscape id '\(text)'")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
