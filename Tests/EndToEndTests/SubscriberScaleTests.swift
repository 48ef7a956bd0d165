import Foundation
import SoundscapeSystem
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Hundreds of subscribers at once: fast ones see every event in order, a
/// slow one is dropped with a final error, and the daemon's memory stays flat.
@Suite("Subscribers at scale", .serialized, .timeLimit(.minutes(2)))
struct SubscriberScaleTests {
    static let subscribers = 300
    static let events = 1000
    /// Events are published in bursts well under the per-subscriber queue (256),
    /// and the next burst waits until every fast subscriber has caught up:
    /// "fast" means keeping up; one that does not is dropped by design.
    static let burst = 100

    static func residentKilobytes(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test("300 subscribers get all 1,000 events in order; a subscriber that never reads is dropped with SubscriberTooSlow")
    func manySubscribersAndASlowOne() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            let process = try daemon.start()

            let swarm = try SubscriberSwarm(path: daemon.socket, count: Self.subscribers)
            defer { swarm.stop() }
            try waitUntil(timeout: .seconds(20), "all \(Self.subscribers) snapshots") {
                swarm.counts.allSatisfy { $0 >= 1 }
            }
            let slow = try FramedSocket(path: daemon.socket, timeout: .seconds(5))
            try slow.sendMessage(#"{"method":"io.soundscaped.Player.Subscribe","more":true}"#)
            let memoryBefore = Self.residentKilobytes(process.pid)

            let control = try FramedSocket(path: daemon.socket, timeout: .seconds(5))
            for index in 0..<Self.events {
                let volume = index % 2 == 0 ? 31 : 32
                let reply = try control.call(json: #"{"method":"io.soundscaped.Player.SetVolume","parameters":{"volume":\#(volume)}}"#)
                #expect(reply.errorName == nil)
                if (index + 1) % Self.burst == 0 {
                    let expected = index + 2  // the snapshot and every event so far
                    try waitUntil(timeout: .seconds(20), "subscribers to catch up with event \(index + 1)") {
                        swarm.counts.allSatisfy { $0 >= expected }
                    }
                }
            }
            for index in 0..<Self.subscribers {
                let seqs = swarm.received(index)
                let first = try #require(seqs.first)
                #expect(seqs == Array(first...(first + Self.events)), "subscriber \(index) saw gaps or disorder")
            }
            #expect(swarm.errorNames.allSatisfy { $0 == nil }, "a fast subscriber was dropped")
            let memoryAfter = Self.residentKilobytes(process.pid)
            #expect(memoryAfter - memoryBefore < 20_000, "RSS grew from \(memoryBefore) kB to \(memoryAfter) kB")

            // The slow subscriber, reading at last, finds its stream ended by a named error.
            var lastReply: [String: Any]?
            while let reply = try slow.receiveObject() {
                lastReply = reply
                if reply.errorName != nil { break }
            }
            #expect(lastReply?.errorName == "io.soundscaped.Player.SubscriberTooSlow", "\(String(describing: lastReply))")
        }
    }
}
