import Foundation
import Testing
import SoundscapeCore
@testable import SoundscapeDaemon
import TestSupport

/// Yields until `condition` holds, failing after `seconds`.
func eventually(_ what: String, seconds: Double = 5, _ condition: @escaping @Sendable () -> Bool) async throws {
    try await withTimeout(what, seconds: seconds) {
        while !condition() {
            try Task.checkCancellation()
            await Task.yield()
        }
    }
}

extension EventHub.Subscription {
    /// Everything buffered so far, up to `count` events, without waiting for more.
    func take(_ count: Int) async -> [PublishedEvent] {
        var iterator = events.makeAsyncIterator()
        var taken: [PublishedEvent] = []
        while taken.count < count, let event = await iterator.next() { taken.append(event) }
        return taken
    }
}

@Suite struct EventHubTests {
    static let rain = SoundscapeID("rain")!
    static let stopped = PlayerStatus(
        state: .stopped, isPlaying: false, soundscape: rain,
        volume: Volume(percent: 50)!, route: nil, wantsPlaying: false)
    static let playing = PlayerStatus(
        state: .playing, isPlaying: true, soundscape: rain,
        volume: Volume(percent: 70)!, route: "alsa_output.pci",
        wantsPlaying: true,
        signer: SignerStatus(state: .running, pid: 12, restarts: 1, lastExit: nil))
    static let fixedTime = Timestamp(millisecondsSince1970: 1_795_208_645_123)

    static func hub(_ initial: PlayerStatus? = stopped) -> EventHub {
        EventHub(initialStatus: initial, clock: { fixedTime })
    }

    static func status(volume: Int) -> PlayerStatus {
        var status = playing
        status.volume = Volume(percent: volume)!
        return status
    }

    @Test func seqGrowsByOnePerPublish() {
        let hub = Self.hub()
        #expect(hub.latest.seq == 0)
        #expect(hub.latest.status == Self.stopped)
        for expected in UInt64(1)...5 {
            let published = hub.publish(
                type: .player, reason: .volumeChanged, message: nil,
                status: Self.status(volume: Int(expected)))
            #expect(published.event.seq == expected)
            #expect(published.event.status == Self.status(volume: Int(expected)))
            #expect(published.event.time == Self.fixedTime)
            #expect(hub.latest.seq == expected)
            #expect(hub.latest.status == Self.status(volume: Int(expected)))
        }
    }

    @Test func firstElementIsASnapshotOfTheLatestState() async {
        let hub = Self.hub()
        hub.publish(type: .player, reason: .started, message: nil, status: Self.playing)
        hub.publish(type: .signer, reason: .signerStarted, message: "pid 12", status: Self.playing)
        let subscription = hub.subscribe(queueLimit: 10)
        hub.publish(type: .player, reason: .stopped, message: nil, status: Self.stopped)

        let events = await subscription.take(2)
        #expect(
            events.map(\.event) == [
                PlayerEvent(seq: 2, time: Self.fixedTime, type: .player, reason: .snapshot, message: nil, status: Self.playing),
                PlayerEvent(seq: 3, time: Self.fixedTime, type: .player, reason: .stopped, message: nil, status: Self.stopped),
            ])
    }

    @Test func snapshotBeforeAnyEventCarriesTheInitialStatusAndSeqZero() async {
        let hub = Self.hub()
        let first = await hub.subscribe(queueLimit: 4).take(1)
        #expect(first.map(\.event.seq) == [0])
        #expect(first.map(\.event.reason) == [.snapshot])
        #expect(first.map(\.event.status) == [Self.stopped])
    }

    /// A client that subscribed while the daemon was still restoring its state (the
    /// soak's events follower, reconnecting after a daemon-kill) still starts from a snapshot.
    @Test func aSubscriberBeforeAnyStatusGetsItsSnapshotWithTheInitialStatus() async {
        let hub = Self.hub(nil)
        let subscription = hub.subscribe(queueLimit: 4)
        hub.setInitialStatus(Self.stopped)
        hub.publish(type: .player, reason: .started, message: nil, status: Self.playing)
        let events = await subscription.take(2)
        #expect(events.map(\.event.reason) == [.snapshot, .started])
        #expect(events.map(\.event.seq) == [0, 1])
        #expect(events.map(\.event.status) == [Self.stopped, Self.playing])
    }

    @Test func aSubscriberBeforeAnyStatusGetsASnapshotBeforeTheFirstEvent() async {
        let hub = Self.hub(nil)
        let subscription = hub.subscribe(queueLimit: 4)
        hub.publish(type: .player, reason: .started, message: nil, status: Self.playing)
        hub.publish(type: .player, reason: .stopped, message: nil, status: Self.stopped)
        let events = await subscription.take(3)
        #expect(events.map(\.event.reason) == [.snapshot, .started, .stopped])
        #expect(events.map(\.event.seq) == [0, 1, 2])
        // Subscribed after the first status: one snapshot, not two.
        let later = hub.subscribe(queueLimit: 4)
        hub.publish(type: .player, reason: .started, message: nil, status: Self.playing)
        #expect(await later.take(2).map(\.event.reason) == [.snapshot, .started])
    }

    @Test func setInitialStatusChangesTheSnapshotButNotSeq() async {
        let hub = Self.hub(nil)
        hub.setInitialStatus(Self.playing)
        #expect(hub.latest.seq == 0)
        #expect(hub.latest.status == Self.playing)
        let first = await hub.subscribe(queueLimit: 4).take(1)
        #expect(first.map(\.event.status) == [Self.playing])
        #expect(first.map(\.event.reason) == [.snapshot])
    }

    @Test func subscribersSeeEveryEventInOrder() async {
        let hub = Self.hub()
        let a = hub.subscribe(queueLimit: 100)
        let b = hub.subscribe(queueLimit: 100)
        let reasons: [EventReason] = [.started, .volumeChanged, .routeChanged, .signerStarted, .stopped]
        for (index, reason) in reasons.enumerated() {
            hub.publish(type: .player, reason: reason, message: "m\(index)", status: Self.status(volume: index))
        }
        for subscription in [a, b] {
            let events = await subscription.take(6).map(\.event)
            #expect(events.map(\.seq) == [0, 1, 2, 3, 4, 5])
            #expect(events.map(\.reason) == [.snapshot] + reasons)
            #expect(events.dropFirst().map(\.message) == ["m0", "m1", "m2", "m3", "m4"])
            #expect(!subscription.overflowed)
        }
    }

    @Test func slowSubscriberIsCutOffWhileAFastOneKeepsEverything() async {
        let hub = Self.hub()
        let slow = hub.subscribe(queueLimit: 5)
        let fast = hub.subscribe(queueLimit: 5)
        var fastIterator = fast.events.makeAsyncIterator()
        var fastSeqs: [UInt64] = []
        if let snapshot = await fastIterator.next() { fastSeqs.append(snapshot.event.seq) }

        // Five events behind (plus the snapshot) is still within the limit.
        for volume in 1...5 {
            hub.publish(type: .player, reason: .volumeChanged, message: nil, status: Self.status(volume: volume))
            if let event = await fastIterator.next() { fastSeqs.append(event.event.seq) }
        }
        #expect(!slow.overflowed)
        #expect(hub.subscriberCount == 2)

        // The sixth is one too many.
        for volume in 6...20 {
            hub.publish(type: .player, reason: .volumeChanged, message: nil, status: Self.status(volume: volume))
            if let event = await fastIterator.next() { fastSeqs.append(event.event.seq) }
        }
        #expect(slow.overflowed)
        #expect(!fast.overflowed)
        #expect(hub.subscriberCount == 1)
        #expect(fastSeqs == Array(0...20))

        // The slow one still gets what was queued before the cut, in order, then its stream ends.
        var slowSeqs: [UInt64] = []
        for await event in slow.events { slowSeqs.append(event.event.seq) }
        #expect(slowSeqs == [0, 1, 2, 3, 4, 5])
    }

    @Test func cancelRemovesTheSubscriber() async {
        let hub = Self.hub()
        let a = hub.subscribe(queueLimit: 10)
        let b = hub.subscribe(queueLimit: 10)
        #expect(hub.subscriberCount == 2)
        a.cancel()
        #expect(hub.subscriberCount == 1)
        #expect(!a.overflowed)
        hub.publish(type: .player, reason: .started, message: nil, status: Self.playing)
        // A cancelled stream delivers what it had, then ends; it gets nothing new.
        var seqs: [UInt64] = []
        for await event in a.events { seqs.append(event.event.seq) }
        #expect(seqs == [0])
        #expect(await b.take(2).map(\.event.seq) == [0, 1])
        b.cancel()
        b.cancel()
        #expect(hub.subscriberCount == 0)
    }

    @Test func cancellingTheConsumingTaskUnregisters() async throws {
        let hub = Self.hub()
        let subscription = hub.subscribe(queueLimit: 10)
        let other = hub.subscribe(queueLimit: 10)
        let consumer = Task {
            var count = 0
            for await _ in subscription.events { count += 1 }
            return count
        }
        hub.publish(type: .player, reason: .started, message: nil, status: Self.playing)
        #expect(hub.subscriberCount == 2)
        consumer.cancel()
        _ = await consumer.value
        try await eventually("the cancelled subscriber to be removed") { hub.subscriberCount == 1 }
        #expect(!subscription.overflowed)
        // Publishing afterwards is fine and reaches the remaining subscriber.
        hub.publish(type: .player, reason: .stopped, message: nil, status: Self.stopped)
        #expect(await other.take(3).map(\.event.seq) == [0, 1, 2])
    }

    @Test func publishedJSONDecodesToTheSameEvent() throws {
        let hub = EventHub(initialStatus: nil)
        for (reason, message, status) in [
            (EventReason.started, String?.none, Self.playing),
            (.signerExited, "exited with status 3 — \"quoted\" / slashed", Self.playing),
            (.stopped, nil, Self.stopped),
        ] {
            let published = hub.publish(type: .signer, reason: reason, message: message, status: status)
            let decoded = try JSONDecoder().decode(PlayerEvent.self, from: Data(published.json))
            #expect(decoded == published.event)
            #expect(published.json.last == UInt8(ascii: "}"))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(published.json)) as? [String: Any])
            // Flat on the wire, with explicit nulls for route and signer.
            #expect(object["seq"] as? Int == Int(published.event.seq))
            #expect(object["state"] as? String == status.state.rawValue)
            #expect(object["route"] != nil)
            #expect(object["signer"] != nil)
            #expect((object["message"] as? String) == message)
        }
        // Slashes are not escaped.
        let slashed = hub.publish(type: .player, reason: .routeChanged, message: "a/b", status: Self.playing)
        #expect(String(decoding: slashed.json, as: UTF8.self).contains("\"a/b\""))
    }

    @Test func snapshotJSONDecodesToTheSnapshot() async throws {
        let hub = Self.hub(Self.playing)
        let snapshot = try #require(await hub.subscribe(queueLimit: 1).take(1).first)
        #expect(try JSONDecoder().decode(PlayerEvent.self, from: Data(snapshot.json)) == snapshot.event)
    }

    @Test func manySubscribersConsumingConcurrentlyGetEveryEvent() async throws {
        let subscriberCount = 200
        let eventCount = 300
        let hub = EventHub(initialStatus: Self.stopped)
        let subscriptions = (0..<subscriberCount).map { _ in hub.subscribe(queueLimit: eventCount + 10) }
        #expect(hub.subscriberCount == subscriberCount)

        let results = try await withTimeout("\(subscriberCount) subscribers × \(eventCount) events", seconds: 30) {
            try await withThrowingTaskGroup(of: [UInt64].self) { group in
                for subscription in subscriptions {
                    group.addTask {
                        var seqs: [UInt64] = []
                        for await event in subscription.events {
                            seqs.append(event.event.seq)
                            if seqs.count == eventCount + 1 { break }
                        }
                        return seqs
                    }
                }
                group.addTask {
                    for index in 0..<eventCount {
                        hub.publish(
                            type: .player, reason: .volumeChanged, message: nil,
                            status: Self.status(volume: index % 101))
                        if index % 16 == 0 { await Task.yield() }
                    }
                    return []
                }
                var all: [[UInt64]] = []
                for try await seqs in group where !seqs.isEmpty { all.append(seqs) }
                return all
            }
        }
        #expect(results.count == subscriberCount)
        let expected = Array(UInt64(0)...UInt64(eventCount))
        let wrong = results.filter { $0 != expected }
        #expect(wrong.isEmpty, "\(wrong.count) subscribers saw gaps or disorder; first: \(wrong.first.map { Array($0.prefix(20)) } ?? [])")
        #expect(subscriptions.allSatisfy { !$0.overflowed })
    }

    @Test func concurrentPublishersProduceOneGaplessOrder() async throws {
        let publishers = 8
        let perPublisher = 100
        let hub = Self.hub()
        let subscriptions = (0..<4).map { _ in hub.subscribe(queueLimit: publishers * perPublisher + 10) }
        let returned = try await withTimeout("concurrent publishers", seconds: 10) {
            try await withThrowingTaskGroup(of: [UInt64].self) { group in
                for publisher in 0..<publishers {
                    group.addTask {
                        (0..<perPublisher).map { index in
                            hub.publish(
                                type: .player, reason: .volumeChanged, message: "\(publisher)-\(index)",
                                status: Self.status(volume: index)
                            ).event.seq
                        }
                    }
                }
                var all: [UInt64] = []
                for try await seqs in group { all += seqs }
                return all
            }
        }
        let total = UInt64(publishers * perPublisher)
        #expect(returned.sorted() == Array(1...total))
        for subscription in subscriptions {
            let seqs = await subscription.take(Int(total) + 1).map(\.event.seq)
            #expect(seqs == Array(0...total))
        }
    }
}
