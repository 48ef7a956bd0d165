import Glibc
import Logging
import ServiceLifecycle
import Testing
@testable import SoundscapeDaemon

/// Readiness, status, watchdog pings and the stop notice, through a real ServiceGroup.
@Suite struct NotifierServiceTests {
    private let logs = LogRecorder()
    private let groupLogger = Logger(label: "group") { _ in SwiftLogNoOpLogHandler() }

    private func environment(_ sink: DatagramSink, watchdogUsec: Int? = nil) -> [String: String] {
        var environment = ["NOTIFY_SOCKET": sink.address]
        if let watchdogUsec {
            environment["WATCHDOG_USEC"] = "\(watchdogUsec)"
            environment["WATCHDOG_PID"] = "\(getpid())"
        }
        return environment
    }

    /// Runs `service` in a group until `body` returns, then shuts the group down gracefully.
    private func running(_ service: SystemdNotifierService, _ body: (ServiceGroup) async throws -> Void) async throws {
        let group = ServiceGroup(configuration: .init(services: [.init(service: service)], logger: groupLogger))
        let run = Task { try await group.run() }
        do {
            try await body(group)
        } catch {
            await group.triggerGracefulShutdown()
            try await run.value
            throw error
        }
        await group.triggerGracefulShutdown()
        try await run.value
    }

    private static func pings(_ messages: [String]) -> Int {
        messages.count { $0 == "WATCHDOG=1" }
    }

    @Test func readyIsSentOnceAndStatusOnlyWhenItChanges() throws {
        let sink = try DatagramSink(.path)
        let health = HealthSwitch(healthy: true)
        let service = SystemdNotifierService(environment: environment(sink), logger: logs.logger, healthCheck: health.check)
        service.setStatus("Connecting to PipeWire")
        service.markReady(status: "Playing ocean-waves at 50% on speaker")
        service.markReady(status: "Playing ocean-waves at 50% on speaker")
        service.markReady(status: "Playing rain at 50% on speaker")
        service.setStatus("Playing rain at 50% on speaker")
        service.setStatus("PipeWire not available; retrying")
        // A status before READY is held back: READY's own line is the first systemd sees.
        #expect(
            sink.messages() == [
                "READY=1\nSTATUS=Playing ocean-waves at 50% on speaker",
                "STATUS=Playing rain at 50% on speaker",
                "STATUS=PipeWire not available; retrying",
            ])
        #expect(health.count == 0)
    }

    @Test func watchdogPingsAtHalfTheTimeout() async throws {
        let sink = try DatagramSink(.abstract)
        let health = HealthSwitch(healthy: true)
        let service = SystemdNotifierService(
            environment: environment(sink, watchdogUsec: 200_000),
            logger: logs.logger, healthCheck: health.check)
        try await running(service) { _ in
            let first = await sink.wait { Self.pings($0) >= 1 }
            try #require(Self.pings(first) == 1)
            // 100 ms apart: about 6 in 0.6 s. Loose bounds, for a loaded two-core machine.
            let window = await sink.collect(for: .milliseconds(600))
            let count = Self.pings(window) - 1
            #expect((4...8).contains(count), "\(count) pings in 0.6 s")
        }
        #expect(sink.messages().last == "STOPPING=1")
        #expect(sink.messages().count { $0 == "STOPPING=1" } == 1)
    }

    @Test func noPingsWhileUnhealthyAndPingsAgainOnceHealthy() async throws {
        let sink = try DatagramSink(.path)
        let health = HealthSwitch(healthy: false)
        let service = SystemdNotifierService(
            environment: environment(sink, watchdogUsec: 100_000),
            logger: logs.logger, healthCheck: health.check)
        try await running(service) { _ in
            while health.count < 4 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(Self.pings(sink.messages()) == 0)
            #expect(logs.messages(atLeast: .warning).count == 1, "the first withheld ping is a warning, later ones are not")
            health.set(true)
            let after = await sink.wait { Self.pings($0) >= 1 }
            #expect(Self.pings(after) >= 1)
        }
        #expect(logs.messages(atLeast: .notice).contains { $0.contains("resumed") })
    }

    @Test func aCheckThatDoesNotAnswerWithholdsPingsWithoutPilingUp() async throws {
        let sink = try DatagramSink(.path)
        let stuck = StuckCheck()
        let service = SystemdNotifierService(
            environment: environment(sink, watchdogUsec: 100_000),
            logger: logs.logger, healthCheck: stuck.check)
        try await running(service) { _ in
            let waiting = "an earlier health check has still not answered"
            while logs.messages().count(where: { $0.contains(waiting) }) < 3 {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(logs.messages(atLeast: .warning).contains { $0.contains("did not answer in time") })
            #expect(stuck.count == 1, "no second check while the first one hangs")
            #expect(Self.pings(sink.messages()) == 0)
            stuck.release()
            let after = await sink.wait { Self.pings($0) >= 1 }
            #expect(Self.pings(after) >= 1)
        }
    }

    @Test func stoppingOnGracefulShutdownWithoutWatchdog() async throws {
        let sink = try DatagramSink(.path)
        let health = HealthSwitch(healthy: true)
        let service = SystemdNotifierService(environment: environment(sink), logger: logs.logger, healthCheck: health.check)
        try await running(service) { _ in
            service.markReady(status: "Stopped")
        }
        #expect(sink.messages() == ["READY=1\nSTATUS=Stopped", "STOPPING=1"])
        #expect(health.count == 0, "without a watchdog nothing is checked")
        service.markReady(status: "late")
        #expect(sink.messages().count == 2, "no READY after STOPPING")
    }

    @Test func stoppingWhenTheGroupIsCancelled() async throws {
        let sink = try DatagramSink(.path)
        let health = HealthSwitch(healthy: true)
        let service = SystemdNotifierService(
            environment: environment(sink, watchdogUsec: 100_000),
            logger: logs.logger, healthCheck: health.check)
        let group = ServiceGroup(configuration: .init(services: [.init(service: service)], logger: groupLogger))
        let run = Task { try await group.run() }
        await sink.wait { Self.pings($0) >= 1 }
        run.cancel()
        _ = try? await run.value
        #expect(sink.messages().last == "STOPPING=1")
        #expect(sink.messages().count { $0 == "STOPPING=1" } == 1)
    }

    @Test func outsideSystemdTheServiceOnlyWaits() async throws {
        let health = HealthSwitch(healthy: true)
        let service = SystemdNotifierService(
            environment: ["WATCHDOG_USEC": "100000"], logger: logs.logger,
            healthCheck: health.check)
        try await running(service) { _ in
            service.markReady(status: "Playing")
            service.setStatus("Stopped")
        }
        #expect(health.count == 0)
        #expect(logs.messages().isEmpty)
    }
}
