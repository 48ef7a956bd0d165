import Testing
import SoundscapeCore

@Suite struct ShellWordsTests {
    static func split(_ text: String) -> Result<[String], ShellWords.ParseError> {
        Result { () throws(ShellWords.ParseError) -> [String] in try ShellWords.split(text) }
    }

    @Test(arguments: [
        // Plain words and whitespace.
        ("a b c", ["a", "b", "c"]),
        ("  a \t\t b   c  ", ["a", "b", "c"]),
        ("\ta\t", ["a"]),
        ("", []),
        ("   \t ", []),
        (
            "/usr/bin/my-signer --relay \"wss://relay.example\" --verbose",
            ["/usr/bin/my-signer", "--relay", "wss://relay.example", "--verbose"]
        ),
        ("été 'ü x'", ["été", "ü x"]),
    ])
    func plainWords(text: String, words: [String]) throws {
        #expect(try ShellWords.split(text) == words)
    }

    @Test(arguments: [
        // Single quotes keep everything literally.
        ("'a b'", ["a b"]),
        ("'$HOME \\ x'", ["$HOME \\ x"]),
        ("'a\\'", ["a\\"]),
        ("'say \"hi\"'", ["say \"hi\""]),
        ("'  '", ["  "]),
        ("'a\tb'", ["a\tb"]),
        // Double quotes: only \" \\ \$ \` are escapes.
        ("\"a b\"", ["a b"]),
        ("\"a \\\" b\"", ["a \" b"]),
        ("\"\\\\\"", ["\\"]),
        ("\"\\$HOME\"", ["$HOME"]),
        ("\"\\`id\\`\"", ["`id`"]),
        ("\"a\\nb\"", ["a\\nb"]),
        ("\"C:\\dir\"", ["C:\\dir"]),
        ("\"it's\"", ["it's"]),
        ("\"$HOME\"", ["$HOME"]),
        // A backslash outside quotes escapes the next character.
        ("a\\ b", ["a b"]),
        ("\\'", ["'"]),
        ("\\\"x", ["\"x"]),
        ("\\\\", ["\\"]),
        ("\\$x", ["$x"]),
        ("a\\tb", ["atb"]),
        // Adjacent parts form one word.
        ("a'b c'\"d\"", ["ab cd"]),
        ("--name=\"my signer\"", ["--name=my signer"]),
        ("'a'\\ 'b'", ["a b"]),
        // Empty quotes give an empty word, but only where there is no other text.
        ("''", [""]),
        ("\"\"", [""]),
        ("a '' b", ["a", "", "b"]),
        ("x''", ["x"]),
        ("''x", ["x"]),
    ])
    func quotingAndEscapes(text: String, words: [String]) throws {
        #expect(try ShellWords.split(text) == words)
    }

    @Test(arguments: [
        ("$HOME a~ '~' \\~/x *.txt ${X} $(id) `id`", ["$HOME", "a~", "~", "~/x", "*.txt", "${X}", "$(id)", "`id`"]),
        ("a;b | c && d > e", ["a;b", "|", "c", "&&", "d", ">", "e"]),
        ("?[ab] {a,b}", ["?[ab]", "{a,b}"]),
    ])
    func nothingIsExpanded(text: String, words: [String]) throws {
        #expect(try ShellWords.split(text) == words)
    }

    /// But a word's leading, unquoted `~`: the home directory, as a shell and systemd's `%h` make it.
    @Test func aLeadingTildeIsTheHomeDirectory() throws {
        #expect(
            try ShellWords.split("~ ~/x a~/y ~/\"my dir\" '~/q'", home: "/home/me") == [
                "/home/me", "/home/me/x", "a~/y", "/home/me/my dir", "~/q",
            ])
        #expect(throws: ShellWords.ParseError(description: "a word starts with ~, but HOME is not set to expand it")) {
            try ShellWords.split("run ~/x")
        }
        #expect(throws: ShellWords.ParseError(description: "'~user' is not expanded: write the path, or quote it to keep the ~")) {
            try ShellWords.split("~bob/x", home: "/home/me")
        }
    }

    /// Exactly what docs/signer.md, docs/configuration.md and soundscaped.conf(5) say
    /// (SettingsDocumentationTests holds them to one sentence): an unquoted `~` that starts a
    /// word and is alone or followed by `/` is `$HOME`; `~user` is refused; nothing else is expanded.
    @Test func onlyAnUnquotedTildeStartingAWordIsExpanded() throws {
        let home = "/home/u"
        #expect(try ShellWords.split("~/bin/x ~/y $HOME", home: home) == ["/home/u/bin/x", "/home/u/y", "$HOME"])
        // Alone: before a blank or at the end.
        #expect(try ShellWords.split("~ ~\t~/a\n~", home: home) == ["/home/u", "/home/u", "/home/u/a", "/home/u"])
        // Quoted, escaped or later in a word: as written.
        #expect(
            try ShellWords.split("'~/x' \"~/x\" \\~/x a~/b --dir=~/x ''~/x", home: home) == [
                "~/x", "~/x", "~/x", "a~/b", "--dir=~/x", "~/x",
            ])
        #expect(try ShellWords.split("$VAR ${HOME} \"$HOME\" *.txt", home: home) == ["$VAR", "${HOME}", "$HOME", "*.txt"])
        // `~user` (a `~` followed by anything but `/` or a blank) would need the user database.
        for text in ["~user", "~user/x", "run ~root", "~\"x\"", "~~"] {
            #expect(throws: ShellWords.ParseError(description: "'~user' is not expanded: write the path, or quote it to keep the ~")) {
                try ShellWords.split(text, home: home)
            }
        }
        // A home that is not absolute (or none) is refused.
        #expect(throws: ShellWords.ParseError(description: "a word starts with ~, but HOME is not set to expand it")) {
            try ShellWords.split("~/x", home: "relative")
        }
    }

    /// The settings the docs name: both commands split as above, and a path's leading `~` or `~/`.
    @Test func theSettingsThatTakeATilde() throws {
        let context = SettingContext(home: "/home/u")
        for command in [Settings.signerCommand, Settings.signerHealthCommand] {
            #expect(try command.parse("~/bin/x ~/y $HOME", context: context) == ["/home/u/bin/x", "/home/u/y", "$HOME"])
        }
        for path in [Settings.signerDirectory, Settings.config, Settings.socket, Settings.stateDirectory, Settings.cacheDirectory] {
            #expect(try path.parse("~/d", context: context) == "/home/u/d", "\(path.key)")
            #expect(try path.parse("~", context: context) == "/home/u", "\(path.key)")
            #expect(throws: SettingError.self, "\(path.key)") { try path.parse("~u/d", context: context) }
        }
        #expect(try Settings.signerEnvironmentFiles.parse("~/e", context: context) == ["/home/u/e"])
        #expect(try Settings.soundscapeDirectories.parse("~/s", context: context) == ["/home/u/s"])
        #expect(try Settings.signerStdin.parse("file:~/p", context: context) == .file("/home/u/p"))
        #expect(try Settings.signerCredentials.parse("key:~/k", context: context) == [SignerCredential(name: "key", source: .file("/home/u/k"))])
        // Not a path: a variable's value is taken as written.
        #expect(try Settings.signerEnvironment.parse("A=~/x", context: context) == ["A": "~/x"])
    }

    @Test(arguments: [
        ("'abc", "unterminated single quote"),
        ("a 'b", "unterminated single quote"),
        ("'it\\'s'", "unterminated single quote"),
        ("\"abc", "unterminated double quote"),
        ("\"abc\\\"", "unterminated double quote"),
        ("\"abc\\", "unterminated double quote"),
        ("a \"b 'c' d", "unterminated double quote"),
        ("abc\\", "a backslash ends the line"),
        ("\\", "a backslash ends the line"),
    ])
    func malformedInputIsRefused(text: String, message: String) {
        switch Self.split(text) {
        case .success(let words): Issue.record("'\(text)' split into \(words) instead of failing")
        case .failure(let error): #expect(error.description == message)
        }
    }

    @Test
    func backslashNewlineIsALineContinuation() throws {
        // POSIX: `\<newline>` is removed entirely. Here, after a separator, it starts an empty word.
        #expect(try ShellWords.split("a \\\n b") == ["a", "b"])
    }

    @Test
    func crlfSeparatesWords() throws {
        #expect(try ShellWords.split("a\r\nb") == ["a", "b"])
    }

    /// Issue 37: a reload printed `sh -c curl -fsS … | jq …`; a command is shown as it must be written.
    @Test(arguments: [
        ["sh", "-c", "curl -fsS http://127.0.0.1:8002/api/status | jq -e .health.isConnected"],
        ["/usr/bin/signer", "--name=it's mine", "", "~/x", "$HOME", "a\\b", "tab\there", "\"q\""],
        ["plain", "--relay", "wss://relay.example/", "--n=3"],
    ])
    func quotedWordsSplitBackToThemselves(words: [String]) throws {
        let text = ShellWords.quote(words)
        #expect(try ShellWords.split(text, home: "/home/u") == words, "\(text)")
    }

    @Test func plainWordsAreNotQuoted() {
        #expect(ShellWords.quote(["/usr/bin/signer", "--relay", "wss://relay.example/"]) == "/usr/bin/signer --relay wss://relay.example/")
        #expect(ShellWords.quote(["sh", "-c", "a | b"]) == "sh -c 'a | b'")
        #expect(ShellWords.quote(["it's"]) == "'it'\\''s'")
    }

    /// What a reload prints is what a file line must say: read back through the config file.
    @Test func aFormattedCommandReadsBackFromTheFile() throws {
        let words = ["sh", "-c", "curl -fsS http://127.0.0.1/#main | jq .ok # not a comment"]
        let text = "signer-health-command = " + SettingParsers.formatCommand(words) + "  # a comment\n"
        let file = try ConfigFile(parsing: text)
        #expect(file.values[Settings.signerHealthCommand] == words, "\(text)")
    }
}
