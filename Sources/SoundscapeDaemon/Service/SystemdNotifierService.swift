import Glibc
import Logging
import ServiceLifecycle
import Synchronization

/// Keeps systemd informed for the daemon's whole life: readiness, a readable status line,
/// watchdog pings while the daemon is healthy, and the start of a clean stop.
///
/// Place it last in the ServiceGroup: the group shuts services down in reverse order, so it
/// hears of the shutdown first and systemd learns at once that the stop is deliberate.
public final class SystemdNotifierService: Service, Sendable, CustomStringConvertible {
    /// Longest STATUS text sent; systemd drops an oversized datagram whole, losing the READY with it.
    public static let maximumStatusBytes = 1024

    private struct State {
        var isReady = false
        var isStopping = false
        var status: String?
        var isWithholdingPings = false
    }

    private let notifier: SystemdNotifier
    private let watchdogInterval: Duration?
    private let probe: HealthProbe
    private let logger: Logger
    private let state = Mutex(State())

    /// - Parameters:
    ///   - watchdogInterval: How often to ping; nil when systemd armed no watchdog for us.
    ///   - healthCheck: Answers whether the daemon's own loops still turn. It is asked
    ///     before every ping and must answer within half the interval; a false, late or
    ///     missing answer withholds that ping, and systemd restarts the daemon once
    ///     `WatchdogSec=` passes without one.
    public init(
        notifier: SystemdNotifier, watchdogInterval: Duration?, logger: Logger,
        healthCheck: @escaping @Sendable () async -> Bool
    ) {
        self.notifier = notifier
        self.watchdogInterval = watchdogInterval
        self.probe = HealthProbe(check: healthCheck)
        self.logger = logger
    }

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID`.
    public convenience init(
        environment: [String: String], logger: Logger,
        healthCheck: @escaping @Sendable () async -> Bool
    ) {
        self.init(
            notifier: SystemdNotifier(environment: environment, logger: logger),
            watchdogInterval: SystemdWatchdog.pingInterval(environment: environment, pid: getpid()),
            logger: logger, healthCheck: healthCheck)
    }

    public var description: String { "systemd notifier" }

    /// Sends `READY=1` with a first status line, once; later calls only update the status.
    ///
    /// Call it when clients can connect (the control socket listens) and the player runs.
    public func markReady(status: String) {
        let text = Self.bounded(status)
        state.withLock { state in
            guard !state.isStopping else { return }
            guard !state.isReady else {
                update(&state, to: text)
                return
            }
            state.isReady = true
            state.status = text
            notifier.ready(status: text)
        }
    }

    /// A reload begins: `RELOADING=1` (with `MONOTONIC_USEC=`); `reloadEnded` sends
    /// `READY=1` with the current status, so systemd shows the unit reloading meanwhile.
    /// Returns whether anything was sent (not before READY, nor while stopping).
    public func reloadBegins() -> Bool {
        state.withLock { state -> Bool in
            guard state.isReady, !state.isStopping else { return false }
            notifier.reloading()
            return true
        }
    }

    /// The process is about to become a new image of itself (`SelfExec`): `RELOADING=1`
    /// now, and no `STOPPING=1` when the services end; the new image's `READY=1` ends the
    /// reload, so systemd sees one service reloading, never one stopping.
    public func handOver() {
        state.withLock { state in
            guard !state.isStopping else { return }
            if state.isReady { notifier.reloading() }
            state.isStopping = true
        }
    }

    public func reloadEnded() {
        state.withLock { state in
            guard state.isReady, !state.isStopping else { return }
            notifier.reloaded(status: state.status ?? "Reloaded")
        }
    }

    /// Shows `text` in `systemctl --user status soundscaped`; sent only when it changes.
    public func setStatus(_ text: String) {
        let text = Self.bounded(text)
        state.withLock { update(&$0, to: text) }
    }

    /// Sends under the lock so that datagrams leave in the order the state changed.
    /// Before READY a status is only remembered: READY's own line is the first systemd sees.
    private func update(_ state: inout State, to text: String) {
        guard state.status != text else { return }
        state.status = text
        if state.isReady { notifier.status(text) }
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            await serve()
        } onGracefulShutdown: {
            self.announceStopping()
        }
        // Also when cancelled rather than shut down: the group is failing and we exit.
        announceStopping()
    }

    private func serve() async {
        guard notifier.isEnabled, let interval = watchdogInterval else {
            // Nothing to ping: no timer, no wake-up until the daemon stops.
            try? await gracefulShutdown()
            return
        }
        logger.debug("feeding the systemd watchdog", metadata: ["interval": "\(interval)"])
        try? await cancelWhenGracefulShutdown {
            try await self.feedWatchdog(every: interval)
        }
    }

    /// Pings on a fixed schedule, each ping only after a healthy answer.
    ///
    /// A check may take half an interval, so two pings are at most 1.5 intervals
    /// (three quarters of `WatchdogSec=`) apart while the daemon is healthy.
    private func feedWatchdog(every interval: Duration) async throws {
        let clock = ContinuousClock()
        var next = clock.now
        while true {
            let verdict = await probe.verdict(within: interval / 2)
            if verdict == .cancelled { return }
            record(verdict)
            next += interval
            if next < clock.now { next = clock.now }
            try await clock.sleep(until: next, tolerance: nil)
        }
    }

    private func record(_ verdict: HealthProbe.Verdict) {
        let healthy = verdict == .healthy
        if healthy { notifier.watchdog() }
        let changed = state.withLock { state in
            defer { state.isWithholdingPings = !healthy }
            return state.isWithholdingPings == healthy
        }
        switch (healthy, changed) {
        case (true, true):
            logger.notice("health check answers again; watchdog pings resumed")
        case (false, true):
            logger.warning("withholding the watchdog ping: \(Self.reason(verdict)); systemd restarts the daemon if this persists")
        case (false, false):
            logger.debug("withholding the watchdog ping: \(Self.reason(verdict))")
        case (true, false):
            break
        }
    }

    private static func reason(_ verdict: HealthProbe.Verdict) -> String {
        switch verdict {
        case .unhealthy: "the health check failed"
        case .timedOut: "the health check did not answer in time"
        case .stillWaiting: "an earlier health check has still not answered"
        case .healthy, .cancelled: "\(verdict)"
        }
    }

    private func announceStopping() {
        state.withLock { state in
            guard !state.isStopping else { return }
            state.isStopping = true
            notifier.stopping()
        }
    }

    /// Cuts at a character boundary below the limit.
    static func bounded(_ text: String) -> String {
        guard text.utf8.count > maximumStatusBytes else { return text }
        var result = ""
        for character in text {
            guard result.utf8.count + character.utf8.count <= maximumStatusBytes - 3 else { break }
            result.append(character)
        }
        return result + "…"
    }
}
