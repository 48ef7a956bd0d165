/// The volume the user chooses, 0–100 %.
///
/// Gain follows a cubic curve because loudness is perceived roughly
/// logarithmically: x³ puts 50 % at −18 dB and 10 % at −60 dB, so equal steps
/// sound like equal steps, and 0 is true silence without a dB special case.
public struct Volume: Sendable, Hashable, Comparable {
    public static let range = 0...100
    /// A comfortable background level for a first start.
    public static let `default` = Volume(clamping: 50)

    public let percent: Int

    /// Fails for values outside 0–100 so that a bad request is refused, not silently clamped.
    public init?(percent: Int) {
        guard Self.range.contains(percent) else { return nil }
        self.percent = percent
    }

    public init(clamping percent: Int) {
        self.percent = min(max(percent, Self.range.lowerBound), Self.range.upperBound)
    }

    /// Linear amplitude factor applied to samples.
    public var gain: Float { Volume.gain(forPosition: Float(percent) / 100) }

    /// The curve on a 0…1 position; the audio path ramps the position and maps every
    /// sample through this, so a ramp sounds even from start to end.
    @inlinable
    public static func gain(forPosition position: Float) -> Float {
        position * position * position
    }

    public static func < (lhs: Volume, rhs: Volume) -> Bool { lhs.percent < rhs.percent }
}

extension Volume: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let value = try container.decode(Int.self)
        guard let volume = Volume(percent: value) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "volume \(value) is outside 0–100")
        }
        self = volume
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(percent)
    }
}

/// What `soundscapectl volume VALUE` asks for: an absolute level, a step, or a named preset.
public enum VolumeChange: Sendable, Equatable {
    case absolute(Volume)
    case relative(Int)

    public static let presets: [(name: String, volume: Int)] = [
        ("off", 0), ("low", 25), ("medium", 50), ("high", 75), ("max", 100),
    ]

    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let input: String
        public var description: String {
            let names = VolumeChange.presets.map(\.name).joined(separator: ", ")
            return "invalid volume '\(input)': expected 0–100, +N or -N, or one of \(names)"
        }
    }

    /// Parses `70`, `+5`, `-10`, `50%` or a preset name (case-insensitive).
    public init(parsing text: String) throws(ParseError) {
        var body = Substring(text.trimmingSpaces())
        if body.hasSuffix("%") { body = body.dropLast() }
        if let preset = VolumeChange.presets.first(where: { $0.name == body.lowercased() }) {
            self = .absolute(Volume(clamping: preset.volume))
            return
        }
        if let sign = body.first, sign == "+" || sign == "-" {
            let digits = body.dropFirst()
            guard Self.isDigits(digits), let step = Int(digits), step <= Volume.range.upperBound else {
                throw ParseError(input: text)
            }
            self = .relative(sign == "+" ? step : -step)
            return
        }
        guard Self.isDigits(body), let value = Int(body), let volume = Volume(percent: value) else {
            throw ParseError(input: text)
        }
        self = .absolute(volume)
    }

    /// Plain ASCII digits only: `Int("+5")` would let "++5" and "-+5" through.
    private static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// Steps clamp at the ends, so `+10` at 95 % gives 100 %.
    public func applied(to current: Volume) -> Volume {
        switch self {
        case .absolute(let volume): volume
        case .relative(let step): Volume(clamping: current.percent + step)
        }
    }
}

extension StringProtocol {
    /// Without the white space at either end, by Unicode scalars: a space followed
    /// by a combining mark is one `Character` that counts as white space, and
    /// trimming it would drop the mark.
    func trimmingSpaces() -> Substring {
        var scalars = Substring(self).unicodeScalars[...]
        while scalars.first?.properties.isWhitespace == true { scalars = scalars.dropFirst() }
        while scalars.last?.properties.isWhitespace == true { scalars = scalars.dropLast() }
        return Substring(scalars)
    }
}
