import Testing
import SoundscapeCore

/// `signer-env-file`: systemd's `EnvironmentFile=` syntax, read as systemd reads it.
/// The big file's expectations are what systemd 252's own `EnvironmentFile=` gave for
/// the same bytes (`systemd-run --user -p EnvironmentFile=…`, printing the variables),
/// so a file written for a unit means the same here.
@Suite struct EnvironmentFileTests {
    static func variables(_ text: String) throws -> [String: String] {
        EnvironmentFile.variables(try EnvironmentFile.parse(Array(text.utf8)))
    }

    static func problem(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> EnvironmentFile.Problem? {
        do {
            let parsed = try EnvironmentFile.parse(bytes)
            Issue.record("parsed into \(parsed) instead of failing", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    static func problem(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> EnvironmentFile.Problem? {
        problem(Array(text.utf8), sourceLocation: sourceLocation)
    }

    @Test func whatSystemdMakesOfItIsWhatWeMakeOfIt() throws {
        // One line each (trailing blanks matter, so no multi-line literal).
        let text = [
            "a=a",
            "b=b\\",
            "c",
            "d=d\\",
            "e\\",
            "f",
            "g=g\\ ",
            "h=h   ",
            "  i  =  spaced  value  ",
            "j=\"  quoted  \"  ",
            "k='single $HOME \\n \"x\"'",
            "l=\"dq \\\" \\\\ \\` \\$ \\n \\x\"",
            "m=\"multi",
            "line\"",
            "n=x\"y\"z",
            "o=\"a\" 'b' c",
            "p=#not a comment",
            "# q=comment",
            "; r=comment",
            "s=a;b # c",
            "t=\\\"raw",
            "u=C:\\\\path\\\\to",
            "v=",
            "w",
            "x=tab\tinside",
            "y=trailing\\\\",
            "dup=1",
            "dup=2",
            "z=end\\",
            "last=eof",
        ].joined(separator: "\n")
        #expect(
            try Self.variables(text) == [
                "a": "a", "b": "bc", "d": "def", "g": "g ", "h": "h", "i": "spaced  value", "j": "  quoted  ",
                "k": #"single $HOME \n "x""#, "l": #"dq " \ ` $ \n \x"#, "m": "multi\nline", "n": #"x"y"z"#, "o": "abc",
                "p": "#not a comment", "s": "a;b # c", "t": #""raw"#, "u": #"C:\path\to"#, "v": "", "x": "tab\tinside",
                "y": #"trailing\"#, "dup": "2", "z": "endlast=eof",
            ])
    }

    @Test func assignmentsKeepTheirOrderAndTheLineTheirNameIsOn() throws {
        let parsed = try EnvironmentFile.parse(Array("# igloo-server\n\nGROUP_CRED=bfgroup1\\\nmore\nSHARE_CRED='x\ny'\nGROUP_CRED=again\n".utf8))
        #expect(
            parsed == [
                .init(name: "GROUP_CRED", value: "bfgroup1more", line: 3), .init(name: "SHARE_CRED", value: "x\ny", line: 5),
                .init(name: "GROUP_CRED", value: "again", line: 7),
            ])
        #expect(EnvironmentFile.variables(parsed) == ["GROUP_CRED": "again", "SHARE_CRED": "x\ny"], "the later one wins")
    }

    @Test func aCommentEndingInABackslashDoesNotSwallowTheNextLine() throws {
        // systemd 254 and later (and a shell): the next line is an assignment. (252 took it
        // as part of the comment; a file relying on that is unlikely and would still parse.)
        #expect(try Self.variables("#SPAMD_ARGS=\"-d \\\n#--nouser-config \\\nnormal=line") == ["normal": "line"])
        #expect(try Self.variables("# a comment \\\nA=1\n") == ["A": "1"])
    }

    @Test func carriageReturnsEndLinesAndAreTrimmed() throws {
        #expect(try Self.variables("A=1\r\nB=two words \r\n\r\nC=\"q\"\r\n") == ["A": "1", "B": "two words", "C": "q"])
    }

    @Test func emptyFilesAndCommentsOnlySetNothing() throws {
        #expect(try Self.variables("").isEmpty)
        #expect(try Self.variables("\n\n  \t\n# nothing\n;\n").isEmpty)
        #expect(try Self.variables("NOEQUALS\nalso none").isEmpty, "lines without = are ignored, as systemd ignores them")
    }

    @Test func whatEndsTheFileMidAssignmentStillCounts() throws {
        #expect(try Self.variables("A=") == ["A": ""])
        #expect(try Self.variables("A=x\\") == ["A": "x"])
        #expect(try Self.variables("A=\\") == ["A": ""], "a backslash at the very end escapes nothing")
    }

    // MARK: Stricter than systemd (each a line systemd drops or misreads), never quoting the line

    @Test func anInvalidNameIsRefusedWithItsLine() throws {
        let problem = try #require(Self.problem("A=1\n\n9LIVES=hunter2\n"))
        #expect(problem.line == 3)
        #expect(problem.description.hasPrefix("line 3: the name before '=' is not a valid environment variable name"))
        #expect(!problem.description.contains("hunter2") && !problem.description.contains("9LIVES"))
        #expect(Self.problem("MY-VAR=x")?.line == 1)
        #expect(Self.problem("A B=x")?.line == 1)
    }

    @Test func exportIsNamedForWhatItIs() throws {
        let problem = try #require(Self.problem("# from a .env file\nexport GROUP_CRED=bfgroup1secret\n"))
        #expect(problem.line == 2)
        #expect(problem.reason == "'export' is a shell's, not part of the EnvironmentFile= syntax: write NAME=VALUE")
        #expect(!problem.description.contains("bfgroup1secret"))
    }

    @Test func aQuoteLeftOpenIsRefusedWhereItOpened() throws {
        let problem = try #require(Self.problem("A=1\nB=\"secret\nC=2\nD=3\n"))
        #expect(problem.description == "line 2: a quote opened here is never closed")
        #expect(Self.problem("A='x")?.line == 1)
        // Closed on a later line is a multi-line value, not a problem.
        #expect(try Self.variables("A='x\ny'") == ["A": "x\ny"])
    }

    @Test func aNulByteIsRefused() throws {
        let problem = try #require(Self.problem(Array("A=1\nB=se".utf8) + [0] + Array("cret\n".utf8)))
        #expect(problem.description == "line 2: it holds a NUL byte")
    }

    @Test func invalidUTF8IsRefusedWithoutTheValue() throws {
        let problem = try #require(Self.problem(Array("A=1\nTOKEN=ab".utf8) + [0xFF, 0xFE] + Array("cd\n".utf8)))
        #expect(problem.description == "line 2: the value of TOKEN is not valid UTF-8")
        #expect(Self.problem([0xC3] + Array("=x".utf8))?.reason == "its name is not valid UTF-8")
    }

    @Test func unicodeValuesAreKept() throws {
        #expect(try Self.variables("GREETING=grüße 🌊\n") == ["GREETING": "grüße 🌊"])
    }
}
