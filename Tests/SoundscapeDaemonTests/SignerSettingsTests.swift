import Foundation
import Glibc
import SoundscapeCore
import SoundscapeSystem
import Testing
@testable import SoundscapeDaemon

/// The signer's settings as the daemon resolves them: flags over the file, every
/// mistake named by its flag or line, the stdin file checked, and what the machine
/// gets from them.
@Suite struct SignerSettingsTests {
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("signer-settings-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func resolve(_ build: (inout CommandLineOptions) -> Void, config: String? = nil) throws(ConfigurationError) -> DaemonSettings {
        var options = CommandLineOptions()
        options.socket = directory + "/control.sock"
        options.stateDirectory = directory + "/state"
        if let config {
            let path = directory + "/soundscaped.conf"
            #expect(FileManager.default.createFile(atPath: path, contents: Data(config.utf8)))
            options.config = path
        }
        build(&options)
        return try DaemonSettings.resolve(options, environment: ["HOME": directory], executablePath: "/usr/bin/soundscaped")
    }

    func error(_ build: (inout CommandLineOptions) -> Void, config: String? = nil) -> String? {
        do {
            _ = try resolve(build, config: config)
            return nil
        } catch {
            return error.description
        }
    }

    func file(_ name: String, mode: mode_t, contents: String = "secret\n") -> String {
        let path = directory + "/" + name
        #expect(FileManager.default.createFile(atPath: path, contents: Data(contents.utf8)))
        chmod(path, mode)
        return path
    }

    @Test func everyFlagIsTaken() throws {
        let passphrase = file("passphrase", mode: 0o600)
        let settings = try resolve { options in
            options.signerCommand = "/usr/bin/igloo-server --port 8002"
            options.signerStdin = "file:\(passphrase)"
            options.signerStopSignal = "INT"
            options.signerType = "notify"
            options.signerRestartMaxDelay = "120"
            options.signerCrashLimit = "0"
            options.signerHealthCommand = "sh -c 'curl -fsS http://127.0.0.1:8002/api/status | jq -e .health.isConnected'"
            options.signerHealthInterval = "15"
            options.signerHealthTimeout = "3"
            options.signerHealthRetries = "4"
            options.signerRestartOnUnhealthy = "false"
            options.signerStartGrace = "30"
        }
        let signer = try #require(settings.signer)
        #expect(signer.stdin == .file(passphrase))
        #expect(signer.stopSignal == .int)
        #expect(signer.type == .notify)
        #expect(signer.restartMaximumDelay == .seconds(120))
        #expect(signer.crashLoopLimit == 0)
        #expect(signer.startGrace == .seconds(30))
        let check = try #require(signer.healthCheck)
        #expect(check.command == ["sh", "-c", "curl -fsS http://127.0.0.1:8002/api/status | jq -e .health.isConnected"])
        #expect(check.interval == .seconds(15))
        #expect(check.timeout == .seconds(3))
        #expect(check.retries == 4)
        #expect(!check.restartOnUnhealthy)
    }

    @Test func theDefaults() throws {
        let signer = try #require(try resolve { $0.signerCommand = "my-signer" }.signer)
        #expect(signer.stdin == .null)
        #expect(signer.stopSignal == .term)
        #expect(signer.type == .simple)
        #expect(signer.restartMaximumDelay == .seconds(60))
        #expect(signer.crashLoopLimit == 5)
        #expect(signer.startGrace == .seconds(10))
        #expect(signer.healthCheck == nil)
    }

    @Test func flagsWinOverTheFileAndHealthTimingNeedsACommand() throws {
        let config = """
            signer-command = my-signer
            signer-stop-signal = SIGHUP
            signer-health-interval = 7
            signer-health-retries = 9
            """
        let withoutCommand = try #require(try resolve({ _ in }, config: config).signer)
        #expect(withoutCommand.stopSignal == .hup)
        #expect(withoutCommand.healthCheck == nil, "timing alone configures no check")
        let signer = try #require(
            try resolve(
                { options in
                    options.signerStopSignal = "SIGUSR1"
                    options.signerHealthCommand = "true"
                    options.signerHealthRetries = "2"
                }, config: config
            ).signer)
        #expect(signer.stopSignal == .usr1)
        #expect(signer.healthCheck?.interval == .seconds(7))
        #expect(signer.healthCheck?.retries == 2)
    }

    static func set(_ flag: String, to value: String, in options: inout CommandLineOptions) {
        switch flag {
        case "stop-signal": options.signerStopSignal = value
        case "stdin": options.signerStdin = value
        case "type": options.signerType = value
        case "crash-limit": options.signerCrashLimit = value
        case "health-retries": options.signerHealthRetries = value
        case "restart-on-unhealthy": options.signerRestartOnUnhealthy = value
        case "health-interval": options.signerHealthInterval = value
        case "health-timeout": options.signerHealthTimeout = value
        case "start-grace": options.signerStartGrace = value
        case "restart-max-delay": options.signerRestartMaxDelay = value
        case "health-command": options.signerHealthCommand = value
        default: Issue.record("no flag --signer-\(flag)")
        }
    }

    @Test(arguments: [
        ("stop-signal", "KILL", "--signer-stop-signal: unknown signal 'KILL'"),
        ("stdin", "pipe", "--signer-stdin expects events, null or file:PATH"),
        ("type", "oneshot", "--signer-type expects simple or notify, got 'oneshot'"),
        ("crash-limit", "-1", "--signer-crash-limit expects a whole number from 0 to 1000, got '-1'"),
        ("health-retries", "0", "--signer-health-retries expects a whole number from 1 to 100, got '0'"),
        ("restart-on-unhealthy", "maybe", "--signer-restart-on-unhealthy expects true or false, got 'maybe'"),
        ("health-interval", "10s", "--signer-health-interval expects a number of seconds"),
        ("health-timeout", "0", "--signer-health-timeout expects a number of seconds"),
        ("start-grace", "", "--signer-start-grace expects a number of seconds"),
        ("restart-max-delay", "x", "--signer-restart-max-delay expects a number of seconds"),
        ("health-command", "", "--signer-health-command is empty"),
    ])
    func badFlagsAreNamed(flag: String, value: String, message: String) throws {
        let problem = try #require(
            error { options in
                options.signerCommand = "my-signer"
                options.signerHealthCommand = "true"
                Self.set(flag, to: value, in: &options)
            })
        #expect(problem.hasPrefix(message), "\(problem)")
    }

    @Test func aStdinFileIsCheckedWithTheCheckThatFailedNamed() throws {
        let open = file("open", mode: 0o644)
        let flag = try #require(
            error {
                $0.signerCommand = "s"; $0.signerStdin = "file:\(open)"
            })
        #expect(flag == "--signer-stdin file:\(open): its group or others have access (mode 0644); chmod 600 it")
        let line = try #require(error({ _ in }, config: "signer-command = s\nsigner-stdin = file:\(open)\n"))
        #expect(
            line.hasSuffix("soundscaped.conf: line 2: signer-stdin file:\(open): its group or others have access (mode 0644); chmod 600 it"),
            "\(line)")
        #expect(
            error {
                $0.signerCommand = "s"; $0.signerStdin = "file:\(directory)"
            }
                == "--signer-stdin file:\(directory): it is not a regular file")
        #expect(
            error {
                $0.signerCommand = "s"; $0.signerStdin = "file:\(directory)/missing"
            }
                == "--signer-stdin file:\(directory)/missing: cannot open it: No such file or directory")
        // A FIFO is refused without waiting for a writer.
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(
            error {
                $0.signerCommand = "s"; $0.signerStdin = "file:\(fifo)"
            } == "--signer-stdin file:\(fifo): it is not a regular file")
        // Even without a signer-command, a stdin file in the config file is checked.
        #expect(error({ _ in }, config: "signer-stdin = file:\(open)\n") != nil)
    }

    @Test func theDescriptorGivenToTheSignerIsCheckedToo() throws {
        let path = file("passphrase", mode: 0o600)
        let descriptor = try StdinFile.open(path)
        defer { close(descriptor) }
        #expect(fcntl(descriptor, F_GETFL) & O_NONBLOCK == 0, "the signer reads it blocking")
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0, "only the spawn hands it on")
        chmod(path, 0o660)
        #expect(throws: SpawnError.self) { close(try StdinFile.open(path)) }
    }

    @Test func whatAReloadChangesIsNamed() throws {
        let old = try resolve { $0.signerCommand = "s" }
        let new = try resolve { options in
            options.signerCommand = "s"
            options.signerStdin = "events"
            options.signerStopSignal = "INT"
            options.signerHealthCommand = "true"
            options.signerStartGrace = "5"
        }
        let changes = old.changes(to: new)
        #expect(changes.contains("signer-stdin → events (the signer's next start)"))
        #expect(changes.contains("signer-stop-signal → SIGINT (now)"))
        #expect(changes.contains("signer-health-* (the next probe)"))
        #expect(changes.contains("signer-start-grace → 5.0 seconds (now)"))
    }

    @Test func theMachineGetsTheTimingAndThePolicy() throws {
        let signer = try #require(
            try resolve { options in
                options.signerCommand = "s"
                options.signerStopSignal = "QUIT"
                options.signerType = "notify"
                options.signerRestartDelay = "2"
                options.signerRestartMaxDelay = "1"
                options.signerCrashLimit = "0"
                options.signerHealthCommand = "true"
                options.signerHealthRetries = "7"
            }.signer)
        let machine = SignerSupervisor.machineConfiguration(for: signer)
        #expect(machine.stopSignal == .quit)
        #expect(machine.type == .notify)
        #expect(machine.backoffInitial == .seconds(2))
        #expect(machine.backoffMaximum == .seconds(2), "never below the first delay")
        #expect(machine.crashLoopLimit == 0)
        #expect(machine.health?.retries == 7)
        #expect(machine.health?.interval == .seconds(10))
    }

    @Test func theStopSignalsAreLinuxs() {
        #expect(SignerStopSignal.term.number == SIGTERM)
        #expect(SignerStopSignal.int.number == SIGINT)
        #expect(SignerStopSignal.hup.number == SIGHUP)
        #expect(SignerStopSignal.quit.number == SIGQUIT)
        #expect(SignerStopSignal.usr1.number == SIGUSR1)
        #expect(SignerStopSignal.usr2.number == SIGUSR2)
        #expect(SignerProcess.watcherScript.hasPrefix("trap '' TERM INT HUP QUIT USR1 USR2;"))
    }
}
