import Testing
import SoundscapeCore
import Synchronization

/// `signer-credential` and `signer-env-file` as the config file takes them: the
/// syntax, systemd's rules for a credential's name, the checks asked of the daemon,
/// and what a reload says of them (names and paths, never what the files hold).
@Suite struct SignerCredentialTests {
    static func error(parsing text: String, context: SettingContext = SettingContext()) -> ConfigFile.ParseError? {
        do {
            _ = try ConfigFile(parsing: text, context: context)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("GROUP_CRED:/home/me/.config/igloo/group", SignerCredential(name: "GROUP_CRED", source: .file("/home/me/.config/igloo/group"))),
        ("pass", SignerCredential(name: "pass", source: .inherited)),
        ("my key.v2:/a:b", SignerCredential(name: "my key.v2", source: .file("/a:b"))),
    ])
    func parses(text: String, expected: SignerCredential) throws {
        #expect(try SignerCredential.parse(text).get() == expected)
        #expect(expected.description == text)
    }

    @Test(arguments: [
        ("", "expects NAME:PATH (an absolute path) or NAME (a credential soundscaped.service was given), got no name"),
        (":/a", "expects NAME:PATH (an absolute path) or NAME (a credential soundscaped.service was given), got no name"),
        (
            "pass:",
            "expects NAME:PATH (an absolute path) or NAME (a credential soundscaped.service was given), got a path that is not absolute after 'pass:'"
        ),
        (
            "pass:relative",
            "expects NAME:PATH (an absolute path) or NAME (a credential soundscaped.service was given), got a path that is not absolute after 'pass:'"
        ),
        ("..", "'..' is not a credential name"),
        ("a/b", "a credential name is printable ASCII without '/' or ':', got 'a/b'"),
        ("grüße", "a credential name is printable ASCII without '/' or ':', got 'gr??e'"),
        ("tab\there", "a credential name is printable ASCII without '/' or ':', got 'tab?here'"),
    ])
    func refuses(text: String, message: String) {
        #expect(throws: SettingError(message)) { try SignerCredential.parse(text).get() }
    }

    @Test func aNameIsAtMost255Characters() throws {
        #expect(try SignerCredential.parse(String(repeating: "n", count: 255)).get().name.count == 255)
        #expect(throws: SettingError.self) { try SignerCredential.parse(String(repeating: "n", count: 256)).get() }
    }

    @Test func theConfigFileTakesBothRepeatedAndALaterNameWins() throws {
        let config = try ConfigFile(
            parsing: """
                signer-env-file = /home/me/.config/igloo/env
                signer-env-file = ~/second.env
                signer-credential = GROUP_CRED:/home/me/group
                signer-credential = pass
                signer-credential = GROUP_CRED:~/group-v2
                """, context: SettingContext(home: "/home/me"))
        #expect(config.values[Settings.signerEnvironmentFiles] == ["/home/me/.config/igloo/env", "/home/me/second.env"])
        #expect(
            config.values[Settings.signerCredentials] == [
                SignerCredential(name: "GROUP_CRED", source: .file("/home/me/group-v2")), SignerCredential(name: "pass", source: .inherited),
            ])
        let signer = try #require(SignerConfiguration(config.values.with(Settings.signerCommand, ["x"])))
        #expect(signer.environmentFiles == ["/home/me/.config/igloo/env", "/home/me/second.env"])
        #expect(signer.credentials.map(\.name) == ["GROUP_CRED", "pass"])
    }

    @Test func filesAreCheckedAsSecretsAndTheDaemonsCredentialsAsItsOwn() throws {
        let checkedFiles = Mutex<[String]>([])
        let checkedNames = Mutex<[String]>([])
        let context = SettingContext(
            checkSecretFile: { path in
                checkedFiles.withLock { $0.append(path) }
                return path.hasSuffix("open") ? "its group or others have access (mode 0644); chmod 600 it" : nil
            },
            checkInheritedCredential: { name in
                checkedNames.withLock { $0.append(name) }
                return name == "missing" ? "soundscaped was started without credentials" : nil
            })
        _ = try ConfigFile(parsing: "signer-env-file = /s/env\nsigner-credential = a:/s/a\nsigner-credential = pass\n", context: context)
        #expect(checkedFiles.withLock { $0 } == ["/s/env", "/s/a"])
        #expect(checkedNames.withLock { $0 } == ["pass"])
        let env = try #require(Self.error(parsing: "\nsigner-env-file = /s/open", context: context))
        #expect(env.description == "line 2: signer-env-file /s/open: its group or others have access (mode 0644); chmod 600 it")
        let file = try #require(Self.error(parsing: "signer-credential = k:/s/open", context: context))
        #expect(file.description == "line 1: signer-credential k:/s/open: its group or others have access (mode 0644); chmod 600 it")
        let inherited = try #require(Self.error(parsing: "signer-credential = missing", context: context))
        #expect(inherited.description == "line 1: signer-credential missing: soundscaped was started without credentials")
        #expect(
            Self.error(parsing: "signer-env-file = relative/env")?.description
                == "line 1: signer-env-file must be an absolute path, got 'relative/env'")
        #expect(
            Self.error(parsing: "signer-credential = a/b:/x")?.description
                == "line 1: signer-credential: a credential name is printable ASCII without '/' or ':', got 'a/b'")
    }

    @Test func aReloadNamesFilesAndCredentialsNeverWhatTheyHold() throws {
        let old = try ConfigFile(parsing: "signer-command = x").values
        let new = try ConfigFile(
            parsing: "signer-command = x\nsigner-env-file = /s/igloo.env\nsigner-credential = GROUP_CRED:/s/group\nsigner-credential = pass\n"
        ).values
        let changes = old.changes(to: new)
        #expect(changes.contains("signer-env-file → /s/igloo.env (the signer's next start)"))
        #expect(changes.contains("signer-credential → GROUP_CRED:/s/group, pass (the signer's next start)"))
        #expect(new.changes(to: old).contains("signer-credential → none (the signer's next start)"))
    }
}

extension SettingValues {
    /// These values with `setting` set to `value`.
    func with<Value>(_ setting: Setting<Value>, _ value: Value) -> SettingValues {
        var values = self
        values.set(setting, value)
        return values
    }
}
