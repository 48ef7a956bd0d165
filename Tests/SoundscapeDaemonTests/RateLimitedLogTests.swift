import Synchronization
import Testing
@testable import SoundscapeDaemon

@Suite struct RateLimitedLogTests {
    final class Clock: Sendable {
        let origin = ContinuousClock.now
        private let offset = Mutex<Duration>(.zero)
        func advance(_ duration: Duration) { offset.withLock { $0 += duration } }
        var now: ContinuousClock.Instant { origin + offset.withLock { $0 } }
    }

    @Test func aBurstPassesTheRestIsCountedAndReportedWithTheNextWindow() {
        let clock = Clock()
        let lines = Mutex<[String]>([])
        let log = RateLimitedLog(burst: 3, per: .seconds(10), now: { clock.now }) { line in lines.withLock { $0.append(line) } }
        for index in 1...100 { log("line \(index)") }
        #expect(lines.withLock { $0 } == ["line 1", "line 2", "line 3"])
        clock.advance(.seconds(9))
        log("still held")
        #expect(lines.withLock { $0.count } == 3)
        clock.advance(.seconds(1))
        log("next window")
        #expect(lines.withLock { $0.last } == "next window (and 98 more like it held back in the last 10.0 seconds)")
        log("again")
        #expect(lines.withLock { $0.last } == "again")
    }
}
