import Foundation
import Glibc
import Logging
import NIOPosix
import SoundscapeCore
import SoundscapeLibrary
import Testing
import TestSupport
@testable import SoundscapeDaemon

/// Every setting whose table entry says `effect: .now` changes what the running
/// daemon does when a reload brings it, each proved where its behaviour lives:
///
/// - the signer's timing and policies in `SignerMachine`, in virtual time,
///   reconfigured as `SignerSupervisor.reconfigure` does it (`machine.reconfigure`
///   with the `SignerMachine.Configuration` of the reloaded settings);
/// - the health check (command, exit codes, URL, JSON condition) in `SignerHost`,
///   which the supervisor's reconfigure hands the reloaded `SignerConfiguration`
///   and whose next probe runs with it;
/// - the soundscape directories in a real `Player`, through `Player.reconfigure`,
///   the call the `Reloader` makes;
/// - what counts as a call, the cache budget and the log level, which the
///   `Reloader` hands to the PipeWire output and the log handler, end to end
///   (ReloadTests' "the call rules, the cache budget and the log level" test).
///
/// The settings are those of a config file read, rewritten and read again under the
/// same flags (`DaemonSettings.resolve`, what `Reloader` does), never built by hand.
/// A `.now` setting added to the table without a case here fails
/// `everyNowSettingHasAProof`.
@Suite struct ReloadEffectTests {
    /// How a `.now` setting's effect is proved.
    enum Proof: Sendable {
        /// Here, by this closure.
        case here(@Sendable (Configs) async throws -> Void)
        /// By this test of Tests/EndToEndTests/ReloadTests.swift, whose source must name the key.
        case endToEnd(function: String)
    }

    static let signer = "signer-command = /bin/true\n"
    static let checked = signer + "signer-health-command = /bin/true\n"

    static let proofs: [String: Proof] = [
        // MARK: The machine's timing and policies
        Settings.signerStopSignal.key: .here { configs in
            var machine = try configs.runningMachine(signer)
            try machine.reload(configs.settings(signer + "signer-stop-signal = SIGINT\n"))
            #expect(machine.send(.session(false)).contains(.terminate(.int)), "the stop asked with the old signal")
        },
        Settings.signerStopTimeout.key: .here { configs in
            var machine = try configs.runningMachine(signer)
            try machine.reload(configs.settings(signer + "signer-stop-timeout = 2\n"))
            let stop = machine.send(.session(false))
            #expect(stop.contains(.terminate(.term)))
            #expect(stop.contains(.scheduleTick(at: machine.now + .seconds(2))), "\(stop)")
            #expect(machine.send(.tick, after: .seconds(2)).contains(.kill), "no SIGKILL at the new stop timeout")
        },
        Settings.signerLivenessTimeout.key: .here { configs in
            var machine = try configs.runningMachine(signer)
            try machine.reload(configs.settings(signer + "signer-liveness-timeout = 3\n"), after: .seconds(1))
            let tick = machine.send(.tick, after: .seconds(2))
            #expect(tick.contains { if case .emit(.signerHung, _) = $0 { true } else { false } }, "\(tick)")
            #expect(tick.contains(.terminate(.term)), "a silent signer was not stopped: \(tick)")
        },
        Settings.signerRestartDelay.key: .here { configs in
            var machine = try configs.runningMachine(signer)
            try machine.reload(configs.settings(signer + "signer-restart-delay = 4\n"))
            let exit = machine.send(.exited(.exited(code: 1)), after: .seconds(1))
            #expect(exit.contains(.emit(.signerRestarting, message: "restarting in 4 s")), "\(exit)")
            #expect(exit.contains(.scheduleTick(at: machine.now + .seconds(4))))
        },
        Settings.signerRestartMaxDelay.key: .here { configs in
            var machine = try configs.runningMachine(signer)
            try machine.reload(configs.settings(signer + "signer-restart-max-delay = 2\n"))
            // 1 s, then doubled to 2 s, then held at the new maximum (4 s under the old one).
            var delays: [String] = []
            for _ in 0..<3 {
                let exit = machine.send(.exited(.exited(code: 1)), after: .milliseconds(100))
                delays += exit.compactMap { if case .emit(.signerRestarting, let message?) = $0 { message } else { nil } }
                #expect(machine.send(.tick, after: .seconds(2)).contains(.spawn))
                machine.send(.spawned(instance: 101, pid: 101))
            }
            #expect(delays == ["restarting in 1 s", "restarting in 2 s", "restarting in 2 s"])
        },
        Settings.signerCrashLimit.key: .here { configs in
            var machine = try configs.runningMachine(signer)
            try machine.reload(configs.settings(signer + "signer-crash-limit = 2\n"))
            machine.send(.exited(.exited(code: 1)), after: .milliseconds(100))
            #expect(machine.send(.tick, after: .seconds(1)).contains(.spawn))
            machine.send(.spawned(instance: 101, pid: 101))
            let second = machine.send(.exited(.exited(code: 1)), after: .milliseconds(100))
            #expect(second.contains { if case .emit(.signerFailed, _) = $0 { true } else { false } }, "\(second)")
            #expect(machine.machine.status.state == .failed)
        },
        Settings.signerKeepRunning.key: .here { configs in
            var machine = try configs.runningMachine(signer)
            try machine.reload(configs.settings(signer + "signer-keep-running = true\n"))
            let stop = machine.send(.session(false))
            #expect(!stop.contains(.terminate(.term)), "keep-running did not keep the signer: \(stop)")
            #expect(machine.machine.status.state == .running)
            // And back: the stopped session no longer keeps it.
            let reloaded = try machine.reload(configs.settings(signer))
            #expect(reloaded.contains(.terminate(.term)), "\(reloaded)")
        },
        Settings.signerStartGrace.key: .here { configs in
            var machine = try configs.machine(signer)
            let start = machine.now
            #expect(machine.send(.session(true)).contains(.spawn))
            let reload = try machine.reload(configs.settings(signer + "signer-start-grace = 2\n"), after: .seconds(1))
            #expect(reload.contains(.scheduleTick(at: start + .seconds(2))), "\(reload)")
            let tick = machine.send(.tick, after: .seconds(1))
            #expect(tick.contains(.availability(.down(reason: "not running and ready for 2 s"))), "\(tick)")
        },
        Settings.signerHealthInterval.key: .here { configs in
            var machine = try configs.runningMachine(checked)
            let reload = try machine.reload(configs.settings(checked + "signer-health-interval = 2\n"), after: .seconds(1))
            #expect(reload.contains(.scheduleTick(at: machine.now + .seconds(2))), "\(reload)")
            #expect(machine.send(.tick, after: .seconds(2)).contains(.probe(instance: 100, timeout: .seconds(5))), "not probed at the new interval")
        },
        Settings.signerHealthTimeout.key: .here { configs in
            var machine = try configs.runningMachine(checked)
            try machine.reload(configs.settings(checked + "signer-health-timeout = 2\n"))
            #expect(machine.send(.tick, after: .seconds(10)).contains(.probe(instance: 100, timeout: .seconds(2))))
        },
        Settings.signerHealthRetries.key: .here { configs in
            let kept = checked + "signer-restart-on-unhealthy = false\n"
            var machine = try configs.runningMachine(kept)
            try machine.reload(configs.settings(kept + "signer-health-retries = 1\n"))
            #expect(machine.send(.tick, after: .seconds(10)).contains(.probe(instance: 100, timeout: .seconds(5))))
            let failed = machine.send(.probeFinished(instance: 100, .failed("exit status 1")), after: .milliseconds(10))
            #expect(failed.contains { if case .emit(.signerUnhealthy, _) = $0 { true } else { false } }, "\(failed)")
        },
        Settings.signerRestartOnUnhealthy.key: .here { configs in
            let once = checked + "signer-health-retries = 1\n"
            var machine = try configs.runningMachine(once + "signer-restart-on-unhealthy = false\n")
            try machine.reload(configs.settings(once + "signer-restart-on-unhealthy = true\n"))
            #expect(machine.send(.tick, after: .seconds(10)).contains(.probe(instance: 100, timeout: .seconds(5))))
            let failed = machine.send(.probeFinished(instance: 100, .failed("exit status 1")), after: .milliseconds(10))
            #expect(failed.contains(.terminate(.term)), "an unhealthy signer was not restarted: \(failed)")
        },

        // MARK: The health check itself, in the host
        Settings.signerHealthCommand.key: .here { configs in
            let results = try await configs.probes(
                signer + "signer-health-command = /bin/false\n", then: signer + "signer-health-command = /bin/true\n")
            #expect(results.before.isFailed && results.after.isPassed, "\(results)")
        },
        Settings.signerHealthExitCodes.key: .here { configs in
            let warning = signer + "signer-health-command = /bin/sh -c 'echo low on relays; exit 1'\n"
            let results = try await configs.probes(warning, then: warning + "signer-health-exit-codes = monitoring-plugins\n")
            #expect(results.before.isFailed, "plain: exit status 1 is a failure: \(results)")
            #expect(results.after == .degraded(output: "low on relays"), "\(results)")
        },
        Settings.signerHealthURL.key: .here { configs in
            let server = try TinyHTTPServer()
            defer { server.stop() }
            let results = try await configs.probes(
                signer + "signer-health-url = http://127.0.0.1:\(server.port)/missing\n",
                then: signer + "signer-health-url = http://127.0.0.1:\(server.port)/health\n")
            #expect(results.before.isFailed && results.after.isPassed, "\(results)")
        },
        Settings.signerHealthJSON.key: .here { configs in
            let server = try TinyHTTPServer()
            defer { server.stop() }
            let url = signer + "signer-health-url = http://127.0.0.1:\(server.port)/health\n"
            let results = try await configs.probes(
                url + "signer-health-json = /connected == true\n", then: url + "signer-health-json = /connected != true\n")
            #expect(results.before.isFailed && results.after.isPassed, "\(results)")
        },

        // MARK: The player's soundscapes
        Settings.soundscapeDirectories.key: .here { configs in
            let extra = configs.directory + "/extra"
            try FileManager.default.createDirectory(atPath: extra, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: PlayerHarness.builtinSoundscapes + "/rain.opus", toPath: extra + "/reloaded-rain.opus")
            let harness = try PlayerHarness()
            try await harness.start()
            let player = harness.player
            #expect(!(await player.soundscapes().entries.contains { $0.id.rawValue == "reloaded-rain" }))
            let reloaded = try configs.settings("soundscapes-dir = \(extra)\n")
            let problem = await player.reconfigure(locations: reloaded.soundscapes, signer: nil) { _ in
                throw HarnessError("no signer host is configured")
            }
            #expect(problem == nil)
            let entries = await player.soundscapes().entries
            #expect(entries.contains { $0.id.rawValue == "reloaded-rain" }, "\(entries.map(\.id))")
            await harness.shutdown()
        },

        // MARK: What the Reloader hands the output and the log handler
        Settings.interruptionRoles.key: .endToEnd(function: endToEndFunction),
        Settings.voipApplications.key: .endToEnd(function: endToEndFunction),
        Settings.cacheSize.key: .endToEnd(function: endToEndFunction),
        Settings.logLevel.key: .endToEnd(function: endToEndFunction),
    ]

    static let endToEndFunction = "callRulesCacheAndLogLevel"

    static let nowKeys = Settings.all.filter { $0.effect == .now }.map(\.key)

    @Test func everyNowSettingHasAProof() {
        for key in Self.nowKeys {
            #expect(Self.proofs[key] != nil, "\(key) takes effect now, but nothing here proves a reload changes what the daemon does")
        }
        for key in Self.proofs.keys {
            #expect(Self.nowKeys.contains(key), "\(key) has a proof here but is not an `effect: .now` setting")
        }
        #expect(Self.nowKeys.count >= 20, "the table's .now settings were not found: \(Self.nowKeys)")
    }

    @Test(arguments: nowKeys)
    func aReloadChangesWhatTheDaemonDoes(key: String) async throws {
        switch try #require(Self.proofs[key], "no proof for \(key)") {
        case .here(let proof):
            let configs = try Configs()
            defer { configs.remove() }
            try await proof(configs)
        case .endToEnd(let function):
            let source = try String(
                contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                    .appendingPathComponent("EndToEndTests/ReloadTests.swift"), encoding: .utf8)
            let body = try #require(
                source.components(separatedBy: "func \(function)()").dropFirst().first,
                "ReloadTests has no \(function)(), which should prove \(key)")
            #expect(body.components(separatedBy: "@Test").first?.contains(key) == true, "ReloadTests.\(function)() does not reload \(key)")
        }
    }
}

/// A config file, written and resolved under the same flags, as a reload reads it again.
struct Configs: Sendable {
    let directory: String
    let flags: SettingValues
    let environment: [String: String]

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reload-effect-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        environment = ["HOME": directory, "PATH": "/usr/bin:/bin"]
        flags = try CommandLineSettings.parse(
            ["--socket", directory + "/control.sock", "--state-dir", directory + "/state", "--config", directory + "/soundscaped.conf"],
            context: DaemonSettings.context(environment: environment))
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The file rewritten to `text`, and read again.
    func settings(_ text: String) throws -> DaemonSettings {
        try text.write(toFile: directory + "/soundscaped.conf", atomically: true, encoding: .utf8)
        return try DaemonSettings.resolve(flags: flags, environment: environment, executablePath: "/usr/bin/soundscaped")
    }

    func machine(_ text: String) throws -> MachineInVirtualTime {
        MachineInVirtualTime(try #require(try settings(text).signer, "no signer configured"))
    }

    /// A machine whose signer runs (pid 100) for a session.
    func runningMachine(_ text: String) throws -> MachineInVirtualTime {
        var machine = try machine(text)
        #expect(machine.send(.session(true)).contains(.spawn))
        machine.send(.spawned(instance: 100, pid: 100), after: .milliseconds(10))
        return machine
    }

    /// One health check under the file `before`, then, the host reconfigured as the
    /// supervisor does on a reload, one under `after`.
    func probes(_ before: String, then after: String) async throws -> (before: SignerProbeResult, after: SignerProbeResult) {
        let first = try #require(try settings(before).signer)
        var logger = Logger(label: "reload-effect")
        logger.logLevel = .critical
        let host = try SignerHost(
            configuration: first, baseEnvironment: environment, socketPath: directory + "/control.sock",
            hub: EventHub(initialStatus: nil), eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger,
            spawner: .unhardened)
        let resultBefore = await host.probe(timeout: .seconds(5), cancellation: SignerProbe.Cancellation())
        host.reconfigure(try #require(try settings(after).signer))
        let resultAfter = await host.probe(timeout: .seconds(5), cancellation: SignerProbe.Cancellation())
        return (resultBefore, resultAfter)
    }
}

/// A `SignerMachine` on made-up instants, reloaded the way `SignerSupervisor.reconfigure` does.
struct MachineInVirtualTime {
    var machine: SignerMachine
    private(set) var now = ContinuousClock.now
    let writeExecuteDenied: Bool

    init(_ configuration: SignerConfiguration) {
        machine = SignerMachine(configuration: configuration.machine)
        writeExecuteDenied = configuration.machine.writeExecuteDenied
    }

    @discardableResult
    mutating func send(_ input: SignerMachine.Input, after elapsed: Duration = .zero) -> [SignerMachine.Action] {
        now += elapsed
        return machine.handle(input, now: now)
    }

    /// A reload bringing `settings`: the machine gets its signer's `machine` configuration.
    @discardableResult
    mutating func reload(_ settings: DaemonSettings, after elapsed: Duration = .zero) throws -> [SignerMachine.Action] {
        now += elapsed
        let configuration = try #require(settings.signer, "the reloaded file configures no signer")
        return machine.reconfigure(configuration.machine, now: now)
    }
}

/// Answers every request on 127.0.0.1: `/health` with 200 and `{"connected": false}`,
/// anything else with 404; one connection at a time, each closed after its answer.
final class TinyHTTPServer: @unchecked Sendable {
    let port: UInt16
    private let fd: Int32
    private let thread: Thread

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            close(fd)
            throw HarnessError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        self.fd = fd
        thread = Thread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                Self.answer(connection)
                close(connection)
            }
        }
        thread.start()
    }

    private static func answer(_ connection: Int32) {
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer[0..<count]
        }
        let line = String(decoding: request, as: UTF8.self).prefix { $0 != "\r" }
        let (status, body) = line.hasPrefix("GET /health ") ? ("200 OK", #"{"connected": false}"#) : ("404 Not Found", "")
        let answer = Array(
            "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
                .utf8)
        answer.withUnsafeBytes { _ = write(connection, $0.baseAddress, $0.count) }
    }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}

extension SignerProbeResult {
    var isFailed: Bool { if case .failed = self { true } else { false } }
    var isPassed: Bool { if case .passed = self { true } else { false } }
}
