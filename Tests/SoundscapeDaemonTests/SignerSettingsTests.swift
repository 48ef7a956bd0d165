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

    /// The settings from these flags and, if given, this config file.
    func resolve(_ flags: [String], config: String? = nil) throws -> DaemonSettings {
        var arguments = ["--socket", directory + "/control.sock", "--state-dir", directory + "/state"] + flags
        if let config {
            let path = directory + "/soundscaped.conf"
            #expect(FileManager.default.createFile(atPath: path, contents: Data(config.utf8)))
            arguments += ["--config", path]
        }
        let environment = ["HOME": directory]
        let parsed = try CommandLineSettings.parse(arguments, context: DaemonSettings.context(environment: environment))
        return try DaemonSettings.resolve(flags: parsed, environment: environment, executablePath: "/usr/bin/soundscaped")
    }

    /// What resolving fails with (nil: it did not fail).
    func error(_ flags: [String], config: String? = nil) -> String? {
        do {
            _ = try resolve(flags, config: config)
            return nil
        } catch {
            return "\(error)"
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
        let settings = try resolve([
            "--signer-command", "true --port 8002", "--signer-stdin", "file:\(passphrase)", "--signer-stop-signal", "INT",
            "--signer-type", "notify", "--signer-restart-max-delay", "120", "--signer-crash-limit", "0",
            "--signer-health-command", "sh -c 'curl -fsS http://127.0.0.1:8002/api/status | jq -e .health.isConnected'",
            "--signer-health-interval", "15", "--signer-health-timeout", "3", "--signer-health-retries", "4",
            "--signer-restart-on-unhealthy", "false", "--signer-start-grace", "30",
        ])
        let signer = try #require(settings.signer)
        #expect(signer.command == ["true", "--port", "8002"])
        #expect(signer.stdin == .file(passphrase))
        #expect(signer.machine.stopSignal == .int)
        #expect(signer.machine.type == .notify)
        #expect(signer.machine.backoffMaximum == .seconds(120))
        #expect(signer.machine.crashLoopLimit == 0)
        #expect(signer.machine.startGrace == .seconds(30))
        #expect(signer.healthCommand == ["sh", "-c", "curl -fsS http://127.0.0.1:8002/api/status | jq -e .health.isConnected"])
        let health = try #require(signer.machine.health)
        #expect(health.interval == .seconds(15))
        #expect(health.timeout == .seconds(3))
        #expect(health.retries == 4)
        #expect(!health.restartOnUnhealthy)
    }

    @Test func theDefaultsAreTheTables() throws {
        let signer = try #require(try resolve(["--signer-command", "true"]).signer)
        #expect(signer.stdin == .null)
        #expect(signer.machine == SignerMachine.Configuration())
        #expect(signer.machine.stopSignal == Settings.signerStopSignal.defaultValue)
        #expect(signer.machine.backoffMaximum == Settings.signerRestartMaxDelay.defaultValue)
        #expect(signer.machine.crashLoopLimit == Settings.signerCrashLimit.defaultValue)
        #expect(signer.machine.startGrace == Settings.signerStartGrace.defaultValue)
        #expect(signer.healthCommand == nil)
        #expect(signer.machine.health == nil)
    }

    @Test func flagsWinOverTheFileAndHealthTimingNeedsACommand() throws {
        let config = """
            signer-command = true
            signer-stop-signal = SIGHUP
            signer-health-interval = 7
            signer-health-retries = 9
            signer-env = A=file
            signer-env = B=file
            soundscapes-dir = /from/the/file
            """
        let withoutCommand = try #require(try resolve([], config: config).signer)
        #expect(withoutCommand.machine.stopSignal == .hup)
        #expect(withoutCommand.machine.health == nil, "timing alone configures no check")
        let settings = try resolve(
            [
                "--signer-stop-signal", "SIGUSR1", "--signer-health-command", "true", "--signer-health-retries=2",
                "--signer-env", "B=flag", "--soundscapes-dir", "/from/a/flag",
            ], config: config)
        let signer = try #require(settings.signer)
        #expect(signer.machine.stopSignal == .usr1)
        #expect(signer.machine.health?.interval == .seconds(7))
        #expect(signer.machine.health?.retries == 2)
        #expect(signer.environment == ["A": "file", "B": "flag"], "repeatable: the file's, then the flags'")
        #expect(settings.soundscapes.extra == ["/from/the/file", "/from/a/flag"])
    }

    @Test(arguments: [
        ("--signer-stop-signal", "KILL", "--signer-stop-signal: unknown signal 'KILL'"),
        ("--signer-stdin", "pipe", "--signer-stdin expects events, null or file:PATH"),
        ("--signer-type", "oneshot", "--signer-type expects simple or notify, got 'oneshot'"),
        ("--signer-crash-limit", "-1", "--signer-crash-limit expects a whole number from 0 to 1000, got '-1'"),
        ("--signer-health-retries", "0", "--signer-health-retries expects a whole number from 1 to 100, got '0'"),
        ("--signer-restart-on-unhealthy", "maybe", "--signer-restart-on-unhealthy expects true or false, got 'maybe'"),
        ("--signer-health-interval", "10s", "--signer-health-interval expects a number of seconds"),
        ("--signer-health-timeout", "0", "--signer-health-timeout expects a number of seconds"),
        ("--signer-start-grace", "", "--signer-start-grace expects a number of seconds"),
        ("--signer-restart-max-delay", "x", "--signer-restart-max-delay expects a number of seconds"),
        ("--signer-health-command", "", "--signer-health-command is empty"),
        ("--cache-size", "-5", "--cache-size expects a whole number from 0 to 1048576"),
        ("--latency-frames", "16", "--latency-frames expects a whole number from 64 to 8192"),
        ("--log-level", "loud", "--log-level expects trace, debug, info, notice, warning, error or critical, got 'loud'"),
    ])
    func badFlagsAreNamed(flag: String, value: String, message: String) throws {
        let health = flag == "--signer-health-command" ? [] : ["--signer-health-command", "true"]
        let problem = try #require(error(["--signer-command", "true"] + health + [flag, value]))
        #expect(problem.hasPrefix(message), "\(problem)")
    }

    /// A mistake is refused where it is made, signer or no signer (issue: a bad stop signal
    /// flag was taken while no signer was configured, and blamed on a later good file).
    @Test func everyFlagIsCheckedWithoutASignerToo() {
        #expect(error(["--signer-stop-signal", "KILL"])?.hasPrefix("--signer-stop-signal: unknown signal 'KILL'") == true)
        #expect(error(["--signer-health-interval", "10s"])?.hasPrefix("--signer-health-interval expects") == true)
        #expect(error(["--signer-comand", "true"]) == "unknown option '--signer-comand' (did you mean '--signer-command'?)")
        #expect(error(["--signer-command"]) == "--signer-command expects a value (\"PROGRAM ARG …\")")
        #expect(error(["--cache-size", "1", "--cache-size", "2"]) == "--cache-size is given twice")
        #expect(error(["stray"]) == "unexpected argument 'stray'")
        #expect(error(["--signer-keep-running=yes"]) == "--signer-keep-running takes no value")
    }

    @Test func aProgramThatCannotRunIsRefusedWhereItIsNamed() throws {
        let script = file("signer.sh", mode: 0o600, contents: "#!/bin/sh\n")
        #expect(
            error(["--signer-command", "/usr/local/bin/igloo-server-missing"])
                == "--signer-command: cannot run '/usr/local/bin/igloo-server-missing': no such file or directory")
        #expect(error(["--signer-command", script]) == "--signer-command: cannot run '\(script)': it is not executable (chmod +x it)")
        #expect(
            error(["--signer-command", "no-such-signer-anywhere"])?.hasPrefix(
                "--signer-command: cannot run 'no-such-signer-anywhere': not found in PATH") == true)
        let line = try #require(error([], config: "# a signer\nsigner-command = true\nsigner-health-command = /nope/check\n"))
        #expect(line.hasSuffix("soundscaped.conf: line 3: signer-health-command: cannot run '/nope/check': no such file or directory"), "\(line)")
        // Relative to the signer's working directory, as the spawn will run it.
        chmod(script, 0o700)
        #expect(error(["--signer-command", "./signer.sh", "--signer-directory", directory]) == nil)
        #expect(error(["--signer-command", "./signer.sh"]) != nil)
    }

    @Test func aLeadingTildeIsTheHomeDirectory() throws {
        let script = file("my signer.sh", mode: 0o700, contents: "#!/bin/sh\n")
        let settings = try resolve([], config: "signer-command = ~/\"my signer.sh\" ~/a '~/b' ~\nsigner-directory = ~/\n")
        // Quoted, a ~ stays as written, as in a shell.
        #expect(settings.signer?.command == [script, directory + "/a", "~/b", directory])
        #expect(settings.signer?.workingDirectory == directory + "/")
        #expect(
            error([], config: "signer-command = ~bob/signer\n")?.hasSuffix("'~user' is not expanded: write the path, or quote it to keep the ~")
                == true)
    }

    @Test func aStdinFileIsCheckedWithTheCheckThatFailedNamed() throws {
        let open = file("open", mode: 0o644)
        #expect(
            error(["--signer-command", "true", "--signer-stdin", "file:\(open)"])
                == "--signer-stdin file:\(open): its group or others have access (mode 0644); chmod 600 it")
        let line = try #require(error([], config: "signer-command = true\nsigner-stdin = file:\(open)\n"))
        #expect(
            line.hasSuffix("soundscaped.conf: line 2: signer-stdin file:\(open): its group or others have access (mode 0644); chmod 600 it"),
            "\(line)")
        #expect(error(["--signer-stdin", "file:\(directory)"]) == "--signer-stdin file:\(directory): it is not a regular file")
        #expect(
            error(["--signer-stdin", "file:\(directory)/missing"])
                == "--signer-stdin file:\(directory)/missing: cannot open it: No such file or directory")
        // A FIFO is refused without waiting for a writer.
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(error(["--signer-stdin", "file:\(fifo)"]) == "--signer-stdin file:\(fifo): it is not a regular file")
        // Even without a signer-command, a stdin file in the config file is checked.
        #expect(error([], config: "signer-stdin = file:\(open)\n") != nil)
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
        let old = try resolve(["--signer-command", "true"])
        let new = try resolve([
            "--signer-command", "true", "--signer-stdin", "events", "--signer-stop-signal", "INT",
            "--signer-health-command", "true", "--signer-start-grace", "5.5", "--signer-env", "SECRET=hunter2",
        ])
        let changes = old.changes(to: new)
        #expect(changes.contains("signer-stdin → events (the signer's next start)"))
        #expect(changes.contains("signer-stop-signal → SIGINT (now)"))
        #expect(changes.contains("signer-health-command → true (now)"))
        #expect(changes.contains("signer-start-grace → 5.5 (now)"))
        #expect(changes.contains("signer-env → SECRET (the signer's next start)"), "names, never values")
        #expect(!changes.joined().contains("hunter2"))
        #expect(old.changes(to: old).isEmpty)
        // Issue 37: a command is shown quoted, as it must be written, not as its words run together.
        let quoted = try resolve(["--signer-command", "true", "--signer-health-command", "sh -c 'curl -fsS http://127.0.0.1/#x | jq .ok'"])
        #expect(old.changes(to: quoted) == ["signer-health-command → sh -c 'curl -fsS http://127.0.0.1/\\#x | jq .ok' (now)"])
        let none = try resolve([])
        #expect(none.changes(to: old) == ["a signer host is configured (it starts with the next session, or now if one runs)"])
        #expect(old.changes(to: none) == ["the signer host is no longer configured (it stops now)"])
    }

    @Test func theMachineGetsTheTimingAndThePolicy() throws {
        let signer = try #require(
            try resolve([
                "--signer-command", "true", "--signer-stop-signal", "QUIT", "--signer-type", "notify",
                "--signer-restart-delay", "2", "--signer-restart-max-delay", "1", "--signer-crash-limit", "0",
                "--signer-health-command", "true", "--signer-health-retries", "7",
            ]).signer)
        let machine = signer.machine
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
