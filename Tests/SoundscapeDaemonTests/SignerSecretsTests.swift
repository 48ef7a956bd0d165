import Foundation
import Glibc
import SoundscapeCore
import SoundscapeSystem
import Testing
@testable import SoundscapeDaemon

/// The signer's secrets as the daemon reads them: env files and credential files
/// checked when the configuration is read and again at every start, the daemon's own
/// credentials passed on, the credentials directory's modes and lifetime, and no
/// value in any message.
@Suite struct SignerSecretsTests {
    static let secret = "hunter2-correct-horse"
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("signer-secrets-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func file(_ name: String, mode: mode_t = 0o600, contents: String) -> String {
        let path = directory + "/" + name
        #expect(FileManager.default.createFile(atPath: path, contents: Data(contents.utf8)))
        chmod(path, mode)
        return path
    }

    /// What resolving these flags with this environment fails with (nil: it does not).
    func error(_ flags: [String], environment: [String: String] = [:]) -> String? {
        let environment = environment.merging(["HOME": directory]) { $1 }
        do {
            let parsed = try CommandLineSettings.parse(
                ["--socket", directory + "/control.sock", "--state-dir", directory + "/state"] + flags,
                context: DaemonSettings.context(environment: environment))
            _ = try DaemonSettings.resolve(flags: parsed, environment: environment, executablePath: "/usr/bin/soundscaped")
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Why a start with `signer` fails (nil: it does not).
    static func problem(starting signer: SignerConfiguration, in directory: String) -> String? {
        do {
            _ = try SignerSecrets.prepare(signer, directory: directory, daemonCredentials: nil)
            return nil
        } catch {
            return error.description
        }
    }

    func configuration(_ flags: [String]) throws -> SignerConfiguration {
        let parsed = try CommandLineSettings.parse(["--signer-command", "true"] + flags)
        return try #require(SignerConfiguration(SettingValues.merged(flags: parsed, file: SettingValues())))
    }

    @Test func filesAreCheckedWhenTheConfigurationIsRead() {
        let open = file("open.env", mode: 0o640, contents: "A=\(Self.secret)\n")
        #expect(error(["--signer-env-file", open]) == "--signer-env-file \(open): its group or others have access (mode 0640); chmod 600 it")
        #expect(
            error(["--signer-credential", "GROUP_CRED:\(open)"])
                == "--signer-credential GROUP_CRED:\(open): its group or others have access (mode 0640); chmod 600 it")
        #expect(
            error(["--signer-env-file", directory + "/missing"])
                == "--signer-env-file \(directory)/missing: cannot open it: No such file or directory")
        #expect(error(["--signer-env-file", file("ok.env", contents: "A=1\n")]) == nil)
    }

    @Test func theDaemonsOwnCredentialIsNeededToPassItOn() throws {
        let withoutAny = try #require(error(["--signer-credential", "pass"]))
        #expect(withoutAny.hasPrefix("--signer-credential pass: soundscaped was started without credentials ($CREDENTIALS_DIRECTORY is not set)"))
        #expect(withoutAny.contains("LoadCredential=pass:PATH"))
        let own = directory + "/own-credentials"
        try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true)
        let missing = try #require(error(["--signer-credential", "pass"], environment: ["CREDENTIALS_DIRECTORY": own]))
        #expect(
            missing.hasPrefix(
                "--signer-credential pass: soundscaped was given no credential 'pass' ($CREDENTIALS_DIRECTORY, \(own), does not have it"))
        #expect(FileManager.default.createFile(atPath: own + "/pass", contents: Data(Self.secret.utf8)))
        chmod(own + "/pass", 0o400)
        #expect(error(["--signer-credential", "pass"], environment: ["CREDENTIALS_DIRECTORY": own]) == nil)
    }

    @Test func everyStartReadsTheEnvFilesAsTheyAreThenLaterOnesWin() throws {
        let first = file("first.env", contents: "GROUP_CRED=old\nSHARE_CRED=\"\(Self.secret)\"\n")
        let second = file("second.env", contents: "# newer\nGROUP_CRED='bfgroup1 new'\n")
        let signer = try configuration(["--signer-env-file", first, "--signer-env-file", second])
        let prepared = try SignerSecrets.prepare(signer, directory: directory + "/creds", daemonCredentials: nil)
        #expect(prepared.environment == ["GROUP_CRED": "bfgroup1 new", "SHARE_CRED": Self.secret])
        #expect(prepared.credentialsDirectory == nil)
        #expect(!FileManager.default.fileExists(atPath: directory + "/creds"), "no credentials, no directory")
        // Changed after the configuration was read: the next start reads it as it is now.
        _ = file("second.env", contents: "GROUP_CRED=newest\n")
        #expect(try SignerSecrets.prepare(signer, directory: directory + "/creds", daemonCredentials: nil).environment["GROUP_CRED"] == "newest")
    }

    @Test func aBrokenEnvFileFailsTheStartNamingFileAndLineNeverTheValue() throws {
        let broken = file("broken.env", contents: "A=1\nexport SHARE_CRED=\(Self.secret)\n")
        let signer = try configuration(["--signer-env-file", broken])
        #expect(
            Self.problem(starting: signer, in: directory + "/creds")
                == "signer-env-file \(broken): line 2: 'export' is a shell's, not part of the EnvironmentFile= syntax: write NAME=VALUE")
        _ = file("broken.env", contents: "TOKEN=\"\(Self.secret)\n")
        #expect(Self.problem(starting: signer, in: directory + "/creds") == "signer-env-file \(broken): line 1: a quote opened here is never closed")
        // Opened up since the configuration was read: refused at the start.
        chmod(broken, 0o644)
        #expect(
            Self.problem(starting: signer, in: directory + "/creds")
                == "signer-env-file \(broken): its group or others have access (mode 0644); chmod 600 it")
        unlink(broken)
        #expect(Self.problem(starting: signer, in: directory + "/creds") == "signer-env-file \(broken): cannot open it: No such file or directory")
    }

    @Test func credentialsAreFilesOfTheirOwnReadOnlyInADirectoryOfTheirOwn() throws {
        let group = file("group", contents: Self.secret)
        let own = directory + "/own"
        try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: own + "/pass", contents: Data("from the unit\n".utf8)))
        chmod(own + "/pass", 0o400)
        let signer = try configuration(["--signer-credential", "GROUP_CRED:\(group)", "--signer-credential", "pass"])
        let target = directory + "/control.sock.signer-3.credentials"
        #expect(SignerSecrets.directory(socketPath: directory + "/control.sock", instance: 3) == target)
        let prepared = try SignerSecrets.prepare(signer, directory: target, daemonCredentials: own)
        #expect(prepared.credentialsDirectory == target)
        #expect(try String(contentsOfFile: target + "/GROUP_CRED", encoding: .utf8) == Self.secret)
        #expect(try String(contentsOfFile: target + "/pass", encoding: .utf8) == "from the unit\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).sorted() == ["GROUP_CRED", "pass"])
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o500, "the directory: r-x for its user only")
        #expect(stat(target + "/GROUP_CRED", &info) == 0 && info.st_mode & 0o777 == 0o400, "each credential: r-- for its user only")
        // A second start over a directory left behind gets a fresh one.
        _ = try SignerSecrets.prepare(signer, directory: target, daemonCredentials: own)
        SignerSecrets.remove(target)
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func aMissingCredentialLeavesNoDirectory() throws {
        let signer = try configuration(["--signer-credential", "a:\(file("a", contents: "x"))", "--signer-credential", "pass"])
        let target = directory + "/creds"
        #expect(Self.problem(starting: signer, in: target)?.hasPrefix("signer-credential pass: soundscaped was started without credentials") == true)
        #expect(!FileManager.default.fileExists(atPath: target))
        let big = file("big", contents: String(repeating: "x", count: SignerCredential.totalSizeLimit + 1))
        let tooBig = try configuration(["--signer-credential", "big:\(big)"])
        #expect(Self.problem(starting: tooBig, in: target) == "signer-credential big:\(big): it holds more than 1 MiB")
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func whatACrashedDaemonLeftIsRemovedAndNothingElse() throws {
        let socket = directory + "/control.sock"
        let signer = try configuration(["--signer-credential", "a:\(file("a", contents: "x"))"])
        for instance in [1, 7] {
            _ = try SignerSecrets.prepare(signer, directory: SignerSecrets.directory(socketPath: socket, instance: instance), daemonCredentials: nil)
        }
        let unrelated = directory + "/other.signer-1.credentials"
        try FileManager.default.createDirectory(atPath: unrelated, withIntermediateDirectories: true)
        SignerSecrets.removeStale(besideSocket: socket)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["a", "other.signer-1.credentials"])
    }
}
