import Foundation
import NIOCore
import NIOPosix
import Synchronization
import TestSupport
import Varlink

/// What one subscriber received: the arrival time (CLOCK_MONOTONIC, taken
/// first thing in channelRead, before any parsing) and seq of every message.
final class SubscriberLog: Sendable {
    struct Message: Sendable {
        var nanos: UInt64
        var seq: UInt64?
        var isError: Bool
        /// Raw JSON, kept only for the subscriber that validates the events.
        var raw: [UInt8]?
    }

    let index: Int
    let keepRaw: Bool
    private let state = Mutex<[Message]>([])
    private let lastSeq = Atomic<UInt64>(0)
    private let errors = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)

    init(index: Int, keepRaw: Bool) {
        self.index = index
        self.keepRaw = keepRaw
    }

    func append(_ message: Message) {
        state.withLock { $0.append(message) }
        if let seq = message.seq { lastSeq.store(seq, ordering: .releasing) }
        if message.isError { errors.add(1, ordering: .relaxed) }
    }

    func markClosed() { closed.store(true, ordering: .releasing) }

    var messages: [Message] { state.withLock { $0 } }
    var latestSeq: UInt64 { lastSeq.load(ordering: .acquiring) }
    var errorCount: Int { errors.load(ordering: .relaxed) }
    var isClosed: Bool { closed.load(ordering: .acquiring) }
    var messageCount: Int { state.withLock { $0.count } }
}

/// Splits the byte stream on NUL and logs each message. Runs on the event loop.
final class SubscriberHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let log: SubscriberLog
    private var pending: [UInt8] = []

    init(log: SubscriberLog) {
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = monoNanos()
        var buffer = unwrapInboundIn(data)
        guard let bytes = buffer.readBytes(length: buffer.readableBytes) else { return }
        var start = 0
        for (i, byte) in bytes.enumerated() where byte == 0 {
            let message: [UInt8]
            if pending.isEmpty {
                message = Array(bytes[start..<i])
            } else {
                pending.append(contentsOf: bytes[start..<i])
                message = pending
                pending = []
            }
            start = i + 1
            log.append(
                .init(
                    nanos: now, seq: Self.seq(in: message), isError: Self.isError(message),
                    raw: log.keepRaw ? message : nil))
        }
        if start < bytes.count { pending.append(contentsOf: bytes[start...]) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        log.markClosed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private static let seqKey = Array("\"seq\":".utf8)
    private static let errorKey = Array("\"error\":".utf8)

    /// The number after the first `"seq":` (cheap: no JSON decoding on the loop).
    static func seq(in message: [UInt8]) -> UInt64? { FrameScan.number(after: seqKey, in: message) }

    static func isError(_ message: [UInt8]) -> Bool { FrameScan.find(errorKey, in: message) != nil }
}

struct FanOutResult: Codable, Sendable {
    var subscribers: Int
    var events: Int
    var spacingMs: Double
    var connectSeconds: Double
    /// Latency from just before each SetVolume call to each subscriber's receipt of that event.
    var latencyMs: Summary
    var pairs: Int
    var missingPairs: Int
    var subscribersWithGaps: Int
    var subscriberErrors: Int
    var eventsValidated: Bool
    var notes: [String]
    /// Daemon CPU (utime+stime) and wake-ups over the event burst.
    var daemonCPUSeconds: Double
    var daemonVoluntarySwitches: Double
    /// The bench process's own CPU over the burst (its subscriber reads run
    /// on `--client-threads` event-loop threads; per event this bounds the
    /// delay the client side can add to the last subscriber).
    var benchCPUSeconds: Double
}

/// N varlink connections each subscribed with `more`, driven by SetVolume calls.
struct FanOutBench {
    let daemon: DaemonUnderTest
    let group: any EventLoopGroup

    func log(_ text: String) {
        FileHandle.standardError.write(Data("[bench] \(text)\n".utf8))
    }

    /// Connects one subscriber, retrying EAGAIN (full listen backlog) for up to ~5 s.
    static func connect(log: SubscriberLog, group: any EventLoopGroup, path: String, retries: Counter)
        async throws -> any Channel
    {
        var attempt = 0
        while true {
            do {
                return try await ClientBootstrap(group: group)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(SubscriberHandler(log: log))
                        }
                    }
                    .connect(unixDomainSocketPath: path).get()
            } catch let error as IOError where error.errnoCode == EAGAIN && attempt < 500 {
                attempt += 1
                retries.increment()
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    static let subscribeCall: [UInt8] = Array(#"{"method":"io.soundscaped.Player.Subscribe","more":true}"#.utf8) + [0]

    func run(subscribers n: Int, events: Int, spacingMs: Double) async throws -> FanOutResult {
        log("fan-out: connecting \(n) subscribers")
        // Every call must change the volume (else there is no event): start away from the current value.
        let current = try await daemon.status()["volume"]?.intValue ?? 50
        let other = current >= 100 ? 99 : current + 1
        let volumes = (current, other)
        var notes: [String] = []
        let logs = (0..<n).map { SubscriberLog(index: $0, keepRaw: $0 == 0) }
        var channels: [any Channel] = []
        channels.reserveCapacity(n)
        let connectStart = monoNanos()
        defer {
            for channel in channels { channel.close(promise: nil) }
        }
        // In batches, each subscribed (snapshot received) before the next, so
        // the daemon's listen backlog (256) is never the limit being measured.
        // A Unix-socket connect with a full backlog fails with EAGAIN; that is
        // retried (as a client would) and counted.
        let batch = 50
        let retries = Counter()
        var next = 0
        while next < n {
            let range = next..<min(n, next + batch)
            let made = try await withThrowingTaskGroup(of: (any Channel).self) { tasks in
                for i in range {
                    let log = logs[i]
                    tasks.addTask {
                        let channel = try await Self.connect(log: log, group: group, path: daemon.socket, retries: retries)
                        try await channel.writeAndFlush(ByteBuffer(bytes: Self.subscribeCall)).get()
                        return channel
                    }
                }
                var out: [any Channel] = []
                for try await channel in tasks { out.append(channel) }
                return out
            }
            channels += made
            try await waitAsync(timeout: .seconds(20), "subscribers \(range.lowerBound)..<\(range.upperBound) to receive their snapshot") {
                logs[range].allSatisfy { $0.messageCount >= 1 || $0.isClosed }
            }
            next = range.upperBound
        }
        let connectRetries = retries.value
        if connectRetries > 0 { notes.append("\(connectRetries) connects were retried after EAGAIN (listen backlog full)") }
        let connectSeconds = secondsBetween(connectStart, monoNanos())
        let closedEarly = logs.filter(\.isClosed).count
        if closedEarly > 0 { notes.append("\(closedEarly) subscribers were closed before the burst") }
        let snapshotSeqs = logs.compactMap { $0.messages.first?.seq }
        guard let baseSeq = snapshotSeqs.max() else { throw HarnessError("no snapshot carried a seq") }
        if Set(snapshotSeqs).count > 1 {
            notes.append("snapshots carried different seqs (\(snapshotSeqs.min()!)...\(baseSeq)): events happened while connecting")
        }
        log(
            "fan-out: \(n) subscribed in \(String(format: "%.2f", connectSeconds)) s (snapshot seq \(baseSeq)); \(events) SetVolume calls \(Int(spacingMs)) ms apart"
        )

        // The burst: note the time just before each call; pace calls start to start.
        var sentAt: [UInt64] = []
        var values: [Int] = []
        let window = ProcessWindow()
        window.begin([daemon.pid ?? 0, getpid()])
        for i in 0..<events {
            let volume = i % 2 == 0 ? volumes.1 : volumes.0
            let t0 = monoNanos()
            sentAt.append(t0)
            values.append(volume)
            try await daemon.call("SetVolume", ["volume": .number(Double(volume))])
            let nextAt = t0 + UInt64(spacingMs * 1e6)
            let now = monoNanos()
            if nextAt > now { try await Task.sleep(for: .nanoseconds(Int64(nextAt - now))) }
        }
        let lastSeq = baseSeq + UInt64(events)
        do {
            try await waitAsync(timeout: .seconds(15), "every subscriber to receive seq \(lastSeq)") {
                logs.allSatisfy { $0.latestSeq >= lastSeq || $0.isClosed || $0.errorCount > 0 }
            }
        } catch {
            notes.append("\(error)")
        }
        let measured = window.end()
        let burst = measured[0]
        let bench = measured[1]

        // Which seq is which call: seq base+1+i must be the volumeChanged event of call i.
        var validated = true
        let reference = logs[0].messages.dropFirst()
        for (i, volume) in values.enumerated() {
            let seq = baseSeq + 1 + UInt64(i)
            guard let raw = reference.first(where: { $0.seq == seq })?.raw,
                let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(raw)),
                let event = object["parameters"]?["event"]
            else {
                validated = false
                notes.append("subscriber 0 has no event with seq \(seq)")
                break
            }
            let reason = event["reason"]?.stringValue
            let got = event["volume"]?.intValue
            if reason != "volumeChanged" || got != volume {
                validated = false
                notes.append("seq \(seq) is \(reason ?? "?") volume \(got.map(String.init) ?? "?"), expected volumeChanged \(volume)")
                break
            }
        }

        var latencies: [Double] = []
        latencies.reserveCapacity(n * events)
        var missing = 0
        var gapped = 0
        var errors = 0
        for log in logs {
            let messages = log.messages
            errors += messages.filter(\.isError).count
            guard let first = messages.first?.seq else {
                gapped += 1
                missing += events
                continue
            }
            let seqs = messages.dropFirst().compactMap(\.seq)
            let expected: [UInt64] = lastSeq > first ? Array((first + 1)...lastSeq) : []
            if Array(seqs.prefix(expected.count)) != expected { gapped += 1 }
            var arrival: [UInt64: UInt64] = [:]
            for m in messages.dropFirst() { if let s = m.seq, arrival[s] == nil { arrival[s] = m.nanos } }
            for i in 0..<events {
                if let t = arrival[baseSeq + 1 + UInt64(i)] {
                    latencies.append(secondsBetween(sentAt[i], t) * 1000)
                } else {
                    missing += 1
                }
            }
        }
        if errors > 0 { notes.append("\(errors) subscribers got an error reply (e.g. SubscriberTooSlow)") }
        return FanOutResult(
            subscribers: n, events: events, spacingMs: spacingMs, connectSeconds: connectSeconds,
            latencyMs: Summary(latencies), pairs: latencies.count, missingPairs: missing,
            subscribersWithGaps: gapped, subscriberErrors: errors, eventsValidated: validated, notes: notes,
            daemonCPUSeconds: burst.cpuSeconds, daemonVoluntarySwitches: burst.voluntarySwitchesPerSecond * burst.seconds,
            benchCPUSeconds: bench.scheduledCPUSeconds)
    }
}

final class Counter: Sendable {
    private let atomic = Atomic<Int>(0)
    func increment() { atomic.add(1, ordering: .relaxed) }
    var value: Int { atomic.load(ordering: .relaxed) }
}

/// Polls `condition` every 10 ms until true, or throws after `timeout`.
func waitAsync(timeout: Duration, _ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { throw HarnessError("timed out after \(timeout) waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}
