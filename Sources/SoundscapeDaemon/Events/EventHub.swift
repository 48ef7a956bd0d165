#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import SoundscapeCore
import Synchronization

/// An event as it leaves the daemon: the value, and its JSON encoded once so
/// that a thousand subscribers share one encoding.
public struct PublishedEvent: Sendable {
    public let event: PlayerEvent
    /// The event as a JSON object, without a trailing newline or NUL.
    public let json: [UInt8]
}

/// Numbers and fans out events to every subscriber, each through its own
/// bounded queue.
///
/// A subscriber that falls `queueLimit` events behind is cut off (its stream
/// ends and `overflowed` is set) instead of slowing the daemon or growing its
/// memory; fast subscribers are unaffected and see every event in order.
/// `seq` is assigned here, under the same lock as the fan-out, so every
/// subscriber sees the same order and a subscription's snapshot is exact.
public final class EventHub: Sendable {
    public final class Subscription: Sendable {
        public let events: AsyncStream<PublishedEvent>
        private let overflowFlag = Atomic<Bool>(false)
        fileprivate let id: Int
        fileprivate let continuation: AsyncStream<PublishedEvent>.Continuation
        private weak let hub: EventHub?
        private let onOverflow: (@Sendable () -> Void)?

        fileprivate init(id: Int, limit: Int, hub: EventHub, onOverflow: (@Sendable () -> Void)?) {
            self.id = id
            self.hub = hub
            self.onOverflow = onOverflow
            (events, continuation) = AsyncStream.makeStream(of: PublishedEvent.self, bufferingPolicy: .bufferingOldest(limit))
            // A consumer that goes away (task cancelled, stream dropped) unregisters itself.
            continuation.onTermination = { [weak hub] _ in hub?.remove(id) }
        }

        /// True when the stream ended because the subscriber fell too far behind.
        public var overflowed: Bool { overflowFlag.load(ordering: .acquiring) }

        fileprivate func markOverflowed() {
            overflowFlag.store(true, ordering: .releasing)
            continuation.finish()
            onOverflow?()
        }

        public func cancel() {
            continuation.finish()
        }
    }

    private struct State {
        var seq: UInt64 = 0
        /// Nil until the player publishes its first status.
        var latest: PlayerStatus?
        var lastReason: EventReason?
        var nextID = 0
        var subscribers: [Int: Subscription] = [:]
    }

    private let state: Mutex<State>
    private let encoder: JSONEncoder
    private let clock: @Sendable () -> Timestamp

    public init(initialStatus: PlayerStatus?, clock: @escaping @Sendable () -> Timestamp = Timestamp.now) {
        state = Mutex(State(latest: initialStatus))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        self.encoder = encoder
        self.clock = clock
    }

    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Assigns the next `seq`, records `status` as current and delivers the event.
    @discardableResult
    public func publish(
        type: EventType, reason: EventReason, message: String?, cause: String? = nil,
        status: PlayerStatus
    ) -> PublishedEvent {
        let (published, overflowed) = state.withLock { state in
            if state.latest == nil { snapshotForWaiting(&state, status: status) }
            state.seq += 1
            state.latest = status
            state.lastReason = reason
            let event = PlayerEvent(
                seq: state.seq, time: clock(), type: type, reason: reason,
                message: message, cause: cause, status: status)
            let published = PublishedEvent(event: event, json: encode(event))
            var overflowed: [Subscription] = []
            for (id, subscriber) in state.subscribers {
                if case .dropped = subscriber.continuation.yield(published) {
                    overflowed.append(subscriber)
                    state.subscribers[id] = nil
                }
            }
            return (published, overflowed)
        }
        // Outside the lock: finishing a stream runs its termination handler, which takes the lock.
        for subscriber in overflowed { subscriber.markOverflowed() }
        return published
    }

    /// Sets the current status without an event (the player's state at start-up).
    public func setInitialStatus(_ status: PlayerStatus) {
        state.withLock { state in
            if state.latest == nil { snapshotForWaiting(&state, status: status) }
            state.latest = status
        }
    }

    /// The snapshot, `status` at the current seq, for every subscriber: called once,
    /// when the first status comes, so they are the ones that subscribed before it
    /// (a client that connected while the daemon was still restoring its state).
    private func snapshotForWaiting(_ state: inout State, status: PlayerStatus) {
        guard !state.subscribers.isEmpty else { return }
        let snapshot = PlayerEvent(seq: state.seq, time: clock(), type: .player, reason: .snapshot, message: nil, status: status)
        let published = PublishedEvent(event: snapshot, json: encode(snapshot))
        // A new subscription's queue holds more than one event: nothing is dropped here.
        for subscriber in state.subscribers.values { subscriber.continuation.yield(published) }
    }

    /// Registers a subscriber whose first event is a snapshot of the current state;
    /// before the player has a state, the snapshot comes when it has one.
    /// `onOverflow` runs (on the publisher's task) the moment it is cut off, even
    /// while its consumer is stuck, so the moment can be logged.
    public func subscribe(queueLimit: Int, onOverflow: (@Sendable () -> Void)? = nil) -> Subscription {
        state.withLock { state in
            let subscription = Subscription(
                id: state.nextID, limit: max(queueLimit, 1) + 1, hub: self,
                onOverflow: onOverflow)
            state.nextID += 1
            if let latest = state.latest {
                let snapshot = PlayerEvent(
                    seq: state.seq, time: clock(), type: .player, reason: .snapshot,
                    message: nil, status: latest)
                subscription.continuation.yield(PublishedEvent(event: snapshot, json: encode(snapshot)))
            }
            state.subscribers[subscription.id] = subscription
            return subscription
        }
    }

    /// The latest event number and status, for status queries that must agree with events.
    public var latest: (seq: UInt64, status: PlayerStatus?) {
        state.withLock { ($0.seq, $0.latest) }
    }

    fileprivate func remove(_ id: Int) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
    }

    private func encode(_ event: PlayerEvent) -> [UInt8] {
        // Encoding our own value types cannot fail; a failure here is a programming error.
        Array(try! encoder.encode(event))
    }
}

extension Timestamp {
    @Sendable public static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(millisecondsSince1970: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }
}
