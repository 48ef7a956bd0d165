import Foundation
import Testing
import SoundscapeCore

@Suite struct VolumeTests {
    @Test func halfVolumeIsOneEighthGainAboutMinus18dB() {
        let half = Volume(percent: 50)!
        #expect(half.gain == 0.125)
        let decibels = 20 * log10(Double(half.gain))
        #expect(abs(decibels - (-18.0618)) < 0.001)
    }

    @Test func zeroIsSilenceAndHundredIsUnity() {
        #expect(Volume(percent: 0)!.gain == 0)
        #expect(Volume(percent: 100)!.gain == 1)
    }

    @Test func gainFollowsACubicCurve() {
        #expect(Volume(percent: 10)!.gain == Float(0.1) * Float(0.1) * Float(0.1))
        #expect(abs(20 * log10(Double(Volume(percent: 10)!.gain)) - (-60)) < 0.001)
        #expect(Volume.gain(forPosition: 0.5) == 0.125)
        // Strictly increasing over the whole range.
        for percent in 1...100 {
            #expect(Volume(percent: percent)!.gain > Volume(percent: percent - 1)!.gain)
        }
    }

    @Test func failableInitRefusesValuesOutsideTheRange() {
        #expect(Volume(percent: -1) == nil)
        #expect(Volume(percent: 101) == nil)
        #expect(Volume(percent: 0)?.percent == 0)
        #expect(Volume(percent: 100)?.percent == 100)
    }

    @Test func clampingInitClampsToTheEnds() {
        #expect(Volume(clamping: -20).percent == 0)
        #expect(Volume(clamping: 250).percent == 100)
        #expect(Volume(clamping: 42).percent == 42)
        #expect(Volume.default.percent == 50)
    }

    @Test func codableRoundTripsAsABareNumber() throws {
        let data = try JSONEncoder().encode([Volume(percent: 37)!])
        #expect(String(decoding: data, as: UTF8.self) == "[37]")
        let decoded = try JSONDecoder().decode([Volume].self, from: data)
        #expect(decoded == [Volume(percent: 37)!])
    }

    @Test func decodingRefusesAnOutOfRangeVolume() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([Volume].self, from: Data("[150]".utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([Volume].self, from: Data("[-1]".utf8))
        }
    }
}

@Suite struct VolumeChangeTests {
    @Test(arguments: [
        ("70", 70), ("70%", 70), (" 5 ", 5), ("0", 0), ("100", 100), ("100%", 100),
    ])
    func parsesAbsoluteLevels(input: String, percent: Int) throws {
        #expect(try VolumeChange(parsing: input) == .absolute(Volume(percent: percent)!))
    }

    @Test(arguments: [("+5", 5), ("-10", -10), ("+100", 100), ("-100", -100), ("+0", 0)])
    func parsesRelativeSteps(input: String, step: Int) throws {
        #expect(try VolumeChange(parsing: input) == .relative(step))
    }

    @Test(arguments: [
        ("off", 0), ("low", 25), ("medium", 50), ("high", 75), ("max", 100),
        ("OFF", 0), ("Low", 25), ("MEDIUM", 50), ("High", 75), ("mAx", 100),
    ])
    func parsesPresetsCaseInsensitively(input: String, percent: Int) throws {
        #expect(try VolumeChange(parsing: input) == .absolute(Volume(percent: percent)!))
    }

    @Test(arguments: ["", "+", "-", "abc", "101", "1.5", "+200", "-101", "%", "5 0", "loud"])
    func refusesInvalidInput(input: String) {
        let error = #expect(throws: VolumeChange.ParseError.self) {
            try VolumeChange(parsing: input)
        }
        #expect(error?.input == input)
    }

    @Test(arguments: ["++5", "--5", "+-5", "-+5"])
    func refusesDoubledSigns(input: String) {
        let error = #expect(throws: VolumeChange.ParseError.self) {
            try VolumeChange(parsing: input)
        }
        #expect(error?.input == input)
    }

    @Test func appliedClampsAtBothEnds() {
        #expect(VolumeChange.relative(10).applied(to: Volume(percent: 95)!).percent == 100)
        #expect(VolumeChange.relative(-10).applied(to: Volume(percent: 5)!).percent == 0)
        #expect(VolumeChange.relative(-10).applied(to: Volume(percent: 50)!).percent == 40)
        #expect(VolumeChange.relative(5).applied(to: Volume(percent: 50)!).percent == 55)
        #expect(VolumeChange.absolute(Volume(percent: 20)!).applied(to: Volume(percent: 90)!).percent == 20)
    }

    @Test func parseErrorDescriptionNamesTheInputAndListsThePresets() {
        let error = #expect(throws: VolumeChange.ParseError.self) { try VolumeChange(parsing: "loud") }
        let description = error?.description ?? ""
        #expect(description.contains("'loud'"))
        #expect(description.contains("off, low, medium, high, max"))
        #expect(description.contains("0–100"))
    }
}
