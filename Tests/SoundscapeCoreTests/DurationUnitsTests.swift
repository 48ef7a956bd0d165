import SoundscapeCore
import Testing

@Suite struct DurationUnitsTests {
    @Test func wholeUnitsTowardZeroByDefault() {
        #expect(Duration.milliseconds(1500).inNanoseconds() == 1_500_000_000)
        #expect(Duration.nanoseconds(2_999).inMicroseconds() == 2)
        #expect(Duration.microseconds(1999).inMilliseconds() == 1)
        #expect(Duration.microseconds(-1999).inMilliseconds() == -1)
        #expect(Duration.seconds(3).inMilliseconds() == 3000)
        #expect(Duration.zero.inNanoseconds() == 0)
    }

    @Test func roundingUpNeverEndsEarly() {
        #expect(Duration.nanoseconds(1).inMilliseconds(rounded: .up) == 1)
        #expect(Duration.milliseconds(2).inMilliseconds(rounded: .up) == 2)
        #expect(Duration.microseconds(2001).inMilliseconds(rounded: .up) == 3)
        #expect(Duration.microseconds(-2001).inMilliseconds(rounded: .up) == -2)
        #expect((Duration.nanoseconds(5) + .init(secondsComponent: 0, attosecondsComponent: 1)).inNanoseconds(rounded: .up) == 6)
    }

    @Test func otherRules() {
        let oneAndAHalf = Duration.microseconds(1500)
        #expect(oneAndAHalf.inMilliseconds(rounded: .down) == 1)
        #expect(oneAndAHalf.inMilliseconds(rounded: .toNearestOrAwayFromZero) == 2)
        #expect(oneAndAHalf.inMilliseconds(rounded: .toNearestOrEven) == 2)
        #expect(Duration.microseconds(2500).inMilliseconds(rounded: .toNearestOrEven) == 2)
        #expect(Duration.microseconds(-1500).inMilliseconds(rounded: .awayFromZero) == -2)
        #expect(Duration.microseconds(-1500).inMilliseconds(rounded: .down) == -2)
    }

    @Test func clampsInsteadOfOverflowing() {
        #expect(Duration.seconds(Int64.max / 2).inNanoseconds() == .max)
        #expect(Duration.seconds(-(Int64.max / 2)).inMicroseconds() == .min)
        #expect(Duration.seconds(Int64.max / 2).inMilliseconds(rounded: .up) == .max)
    }
}
