/// Wall-clock time in an event, written as RFC 3339 UTC with milliseconds
/// (`2026-11-20T21:04:05.123Z`), which every JSON consumer can parse.
///
/// Formatting is done here, from the civil-calendar algorithm, so the pure
/// core needs no Foundation and the output never depends on a locale.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    public var description: String {
        let millis = millisecondsSince1970
        var days = millis >= 0 ? millis / 86_400_000 : (millis - 86_399_999) / 86_400_000
        let msOfDay = millis - days * 86_400_000
        // Howard Hinnant's days_from_civil inverse.
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPortion = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPortion + 2) / 5 + 1
        let month = monthPortion < 10 ? monthPortion + 3 : monthPortion - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)

        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        let ms = msOfDay % 1000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(ms, 3))Z"
    }

    private func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

extension Timestamp: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let parsed = Timestamp(rfc3339: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid timestamp '\(text)'")
        }
        self = parsed
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Parses what `description` writes (UTC, `Z`, optional fraction); clients echo times back.
    public init?(rfc3339 text: String) {
        let utf8 = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= utf8.count else { return nil }
            var value: Int64 = 0
            for byte in utf8[range] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        func byte(_ index: Int, is character: Unicode.Scalar) -> Bool {
            index < utf8.count && utf8[index] == UInt8(ascii: character)
        }
        guard utf8.count >= 20, utf8.last == UInt8(ascii: "Z"),
            byte(4, is: "-"), byte(7, is: "-"), byte(10, is: "T"), byte(13, is: ":"), byte(16, is: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...Self.days(inMonth: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 61
        else { return nil }
        var millis: Int64 = 0
        if utf8[19] == UInt8(ascii: ".") {
            let digits = utf8[20..<(utf8.count - 1)]
            // Every fraction digit must be a digit; only the first three count.
            guard !digits.isEmpty,
                digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let fraction = number(20..<(20 + min(3, digits.count)))
            else { return nil }
            millis = fraction * [100, 10, 1][min(3, digits.count) - 1]
        } else if utf8.count != 20 {
            return nil
        }
        // days_from_civil
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        millisecondsSince1970 = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
    }

    static func days(inMonth month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
