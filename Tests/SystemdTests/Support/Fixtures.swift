import Glibc
import Logging
import Synchronization

/// Log records kept for assertions.
final class LogRecorder: Sendable {
    private let records = Mutex<[(level: Logger.Level, message: String)]>([])

    var logger: Logger {
        var logger = Logger(label: "systemd-tests") { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    func messages(atLeast level: Logger.Level = .trace) -> [String] {
        records.withLock { $0.filter { $0.level >= level }.map(\.message) }
    }

    fileprivate func append(_ level: Logger.Level, _ message: String) {
        records.withLock { $0.append((level, message)) }
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            recorder.append(event.level, "\(event.message)")
        }
    }
}

/// A health check whose answer the test sets, and which counts how often it was asked.
final class HealthSwitch: Sendable {
    private let healthy: Atomic<Bool>
    private let asked = Atomic<Int>(0)

    init(healthy: Bool) {
        self.healthy = Atomic(healthy)
    }

    var count: Int { asked.load(ordering: .relaxed) }

    func set(_ value: Bool) { healthy.store(value, ordering: .relaxed) }

    var check: @Sendable () async -> Bool {
        { [self] in
            asked.add(1, ordering: .relaxed)
            return healthy.load(ordering: .relaxed)
        }
    }
}

/// A health check that does not answer until released, like an actor stuck in a deadlock.
final class StuckCheck: Sendable {
    private let waiters = Mutex<(released: Bool, continuations: [CheckedContinuation<Void, Never>])>((false, []))
    private let asked = Atomic<Int>(0)

    var count: Int { asked.load(ordering: .relaxed) }

    var check: @Sendable () async -> Bool {
        { [self] in
            asked.add(1, ordering: .relaxed)
            await withCheckedContinuation { continuation in
                let released = waiters.withLock { state in
                    if !state.released { state.continuations.append(continuation) }
                    return state.released
                }
                if released { continuation.resume() }
            }
            return true
        }
    }

    func release() {
        let continuations = waiters.withLock { state in
            state.released = true
            defer { state.continuations = [] }
            return state.continuations
        }
        for continuation in continuations { continuation.resume() }
    }
}
