import Foundation
import SoundscapeSystem
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The control socket under attack from a local client: the daemon keeps
/// playing and answering a well-behaved client throughout, and once the
/// attackers are gone its descriptors and resident memory come back.
@Suite("Hostile clients", .serialized, .timeLimit(.minutes(2)))
struct HostileClientTests {
    @Test("three rounds of hostile clients: memory settles within 5 MB of where it started, a good client is never refused")
    func memoryComesBack() throws {
        HostileRound.raiseFileLimit()
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            let process = try daemon.start()
            try daemon.must("play")
            let pid = process.pid
            // Warm up what a first round would allocate once for good (the volume path, the event encoder).
            try HostileRound(
                socket: daemon.socket, idle: 10, halfSent: 10, stuckSubscribers: 10, volumeChanges: 10,
                garbageFrames: 10, hugeFrameBytes: 1 << 20
            ).run()
            let descriptors = try Self.settle(pid, "the warm-up's connections to close") { _ in true }
            let start = HostileRound.residentKilobytes(pid)

            var afterEachRound: [Int] = []
            var latencies: [Double] = []
            for round in 1...3 {
                try HostileRound(socket: daemon.socket).run {
                    // A well-behaved client while every attacker is connected.
                    let good = try FramedSocket(path: daemon.socket, timeout: .seconds(5))
                    for _ in 0..<50 {
                        let t0 = ContinuousClock.now
                        let reply = try good.call(json: #"{"method":"io.soundscaped.Player.GetStatus"}"#)
                        latencies.append((ContinuousClock.now - t0) / .milliseconds(1))
                        #expect(reply.errorName == nil, "a good client was refused in round \(round): \(reply)")
                    }
                }
                _ = try Self.settle(pid, "round \(round)'s connections to close") { $0 <= descriptors }
                // The daemon gives freed memory back once the burst has drained; wait (bounded) for it.
                // A timeout is not the failure: the memory expectations below say what was found.
                _ = try? waitUntil(timeout: .seconds(10), "RSS to settle after round \(round)") {
                    HostileRound.residentKilobytes(pid) - start < 5_000
                }
                afterEachRound.append(HostileRound.residentKilobytes(pid))
            }
            latencies.sort()
            let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
            print("hostile clients: RSS \(start) kB at start, \(afterEachRound) kB after each round; good client p99 \(p99) ms")
            #expect(try daemon.status()["state"] as? String == "playing", "playback did not survive the attack")
            for (round, rss) in afterEachRound.enumerated() {
                #expect(rss - start < 5_000, "after round \(round + 1) RSS is \(rss) kB, \(rss - start) kB over the start (\(start) kB)")
            }
        }
    }

    /// Waits until the daemon's descriptors satisfy `condition` (connections closed
    /// on its side), then returns their count.
    static func settle(_ pid: Int32, _ what: String, _ condition: @escaping (Int) -> Bool) throws -> Int {
        var count = 0
        try waitUntil(timeout: .seconds(30), what) {
            count = HostileRound.openDescriptors(pid)
            return condition(count)
        }
        return count
    }
}
