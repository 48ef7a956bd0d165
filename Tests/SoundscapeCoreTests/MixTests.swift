import Foundation
import Testing

@testable import SoundscapeCore

@Suite struct MixTests {
    let rain = SoundscapeID("rain")!
    let ocean = SoundscapeID("ocean-waves")!
    let wind = SoundscapeID("wind")!

    @Test func aSingleSoundscapeIsOneLayerAtFull() {
        let mix = Mix(rain)
        #expect(mix.layers == [Mix.Layer(rain, level: 100)])
        #expect(mix.isSingle)
        #expect(mix.description == "rain")
    }

    @Test func layersAreValidatedWithMessagesAUserCanActOn() {
        #expect(throws: MixError("a mix needs at least one soundscape")) { try Mix(layers: []) }
        let seven = (1...7).map { Mix.Layer(SoundscapeID("s\($0)")!) }
        #expect(throws: MixError("a mix has at most 6 layers; 7 were given")) { try Mix(layers: seven) }
        #expect(throws: MixError("'rain' is in the mix twice")) { try Mix(layers: [.init(rain), .init(rain, level: 3)]) }
        #expect(throws: MixError("the level of 'rain' must be 0-100, not 101")) { try Mix(layers: [.init(rain, level: 101)]) }
        #expect((try? Mix(layers: Array(seven.prefix(6))))?.layers.count == 6)
    }

    @Test func aLayerIsSetAddedLastOrTakenOutButNeverTheLast() throws {
        let mix = try Mix(layers: [.init(rain), .init(ocean, level: 40)], name: "night")
        let louder = try mix.setting(ocean, to: 70)
        #expect(louder.layers == [.init(rain), .init(ocean, level: 70)])
        #expect(louder.name == nil, "a changed saved mix is a mix of its own")
        #expect(try mix.setting(wind, to: 20).soundscapes == [rain, ocean, wind])
        #expect(try mix.removing(rain).layers == [.init(ocean, level: 40)])
        #expect(throws: MixError("'rain' is the only layer; play another soundscape or stop instead")) {
            try Mix(rain).removing(rain)
        }
        #expect(throws: MixError("'wind' is not in the mix")) { try mix.removing(wind) }
        #expect(mix.description == "rain + ocean-waves=40")
        #expect(mix.title == "night")
    }

    @Test func aLayerEncodesAsTheStatusNamesIt() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(Mix.Layer(rain, level: 40))
        #expect(String(decoding: data, as: UTF8.self) == #"{"id":"rain","level":40}"#)
    }
}

@Suite struct SleepTimerTests {
    let origin = ContinuousClock.now

    @Test(arguments: [
        ("90s", 90), ("45m", 2700), ("1h30m", 5400), ("2h15m30s", 8130), ("1h", 3600), ("24h", 86400),
    ])
    func durationsParse(text: String, seconds: Int64) {
        #expect(SleepTimer.parse(text) == .seconds(seconds))
    }

    @Test(arguments: ["", "90", "m", "1m1h", "1h1h", "0s", "25h", "1.5h", "-5m", "5 m", "５m"])
    func otherTextIsRefused(text: String) {
        #expect(SleepTimer.parse(text) == nil)
    }

    @Test func durationsAreDescribedAsTheyAreWritten() {
        #expect(SleepTimer.describe(.seconds(5400)) == "1h30m")
        #expect(SleepTimer.describe(.seconds(90)) == "1m30s")
        #expect(SleepTimer.describe(.seconds(20)) == "20s")
        #expect(SleepTimer.describe(.zero) == "0s")
    }

    @Test func theFadeIsTheLastThirdAtMostAMinute() {
        #expect(SleepTimer.fadeLength(of: .seconds(9)) == .seconds(3))
        #expect(SleepTimer.fadeLength(of: .seconds(180)) == .seconds(60))
        #expect(SleepTimer.fadeLength(of: .seconds(3600)) == .seconds(60))
    }

    @Test func itCountsThenFadesThenSleeps() {
        var timer = SleepTimer()
        #expect(timer.set(.seconds(9), now: origin) == [.scheduleTick(at: origin + .seconds(6))])
        #expect(timer.ends == origin + .seconds(9))
        #expect(timer.tick(now: origin + .seconds(5)) == [], "an early tick changes nothing")
        #expect(timer.tick(now: origin + .seconds(6)) == [.dim(over: .seconds(3)), .scheduleTick(at: origin + .seconds(9))])
        #expect(timer.isDimming && !timer.isAsleep)
        #expect(timer.tick(now: origin + .seconds(9)) == [])
        #expect(timer.isAsleep)
        #expect(timer.cancel() == [.undim], "waking brings the dimmed sound back")
        #expect(timer.state == .off)
    }

    @Test func aLateTickAfterTheEndSleepsAtOnce() {
        var timer = SleepTimer()
        _ = timer.set(.seconds(3), now: origin)
        #expect(timer.tick(now: origin + .seconds(10)) == [.dim(over: .zero)])
        #expect(timer.isAsleep)
    }

    @Test func cancellingWhileCountingHasNothingToUndo() {
        var timer = SleepTimer()
        _ = timer.set(.seconds(60), now: origin)
        #expect(timer.cancel() == [])
        #expect(timer.tick(now: origin + .seconds(60)) == [], "a cancelled timer's tick does nothing")
    }

    @Test func settingAgainWhileFadingUndimsAndCountsAfresh() {
        var timer = SleepTimer()
        _ = timer.set(.seconds(6), now: origin)
        _ = timer.tick(now: origin + .seconds(4))
        #expect(timer.set(.seconds(60), now: origin + .seconds(5)) == [.undim, .scheduleTick(at: origin + .seconds(45))])
        #expect(!timer.isDimming)
    }
}
