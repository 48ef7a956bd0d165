import SoundscapeCore
import Testing

/// A separator followed by a combining mark is one Swift `Character` with it, and not
/// the separator; the shell, systemd and the kernel see the separator's byte. Every
/// reader of the user's text must answer as they do.
@Suite struct SeparatedTextTests {
    let mark = "\u{306}"

    @Test func theSwiftBehaviourThisGuardsAgainst() {
        #expect("a=\(mark)b".firstIndex(of: "=") == nil)
        #expect(!"--\(mark)x".hasPrefix("--"))
        #expect("a:\(mark)b".split(separator: ":").count == 1)
    }

    @Test func aCutFindsTheByteAndKeepsEveryByte() throws {
        let (before, after) = try #require(SeparatedText.cut("a=\(mark)b=c", at: "="))
        #expect(before == "a")
        #expect(after.utf8.elementsEqual("\(mark)b=c".utf8))
        #expect(SeparatedText.cut("abc", at: "=") == nil)
        let (empty, rest) = try #require(SeparatedText.cut("=x", at: "="))
        #expect(empty.isEmpty && rest == "x")
    }

    @Test func piecesKeepTheEmptyOnes() {
        #expect(SeparatedText.pieces("a::b", at: ":") == ["a", "", "b"])
        #expect(SeparatedText.pieces("", at: ":") == [""])
        #expect(SeparatedText.pieces(":", at: ":") == ["", ""])
        #expect(SeparatedText.pieces("a:\(mark)b", at: ":").map { Array($0.utf8) } == [Array("a".utf8), Array("\(mark)b".utf8)])
    }

    @Test func prefixesAndMembershipAreBytes() {
        #expect(SeparatedText.hasPrefix("--\(mark)x", "--"))
        #expect(!SeparatedText.hasPrefix("-x", "--"))
        #expect(SeparatedText.contains("a=\(mark)", "="))
        #expect(!SeparatedText.contains("abc", "="))
    }

    // MARK: Where the user's text is read

    func signerEnvironment(_ line: String) throws -> [String: [UInt8]] {
        try ConfigFile(parsing: line).values[Settings.signerEnvironment].mapValues { Array($0.utf8) }
    }

    @Test func theConfigFileReadsKeyAndValueAcrossAMark() throws {
        #expect(throws: ConfigFile.ParseError(line: 1, message: "signer-env: '\(mark)A' is not a valid environment variable name")) {
            try ConfigFile(parsing: "signer-env =\(mark)A=x")
        }
        // The value keeps the mark and is judged for itself, naming the line; the line is
        // not refused as having no `key = value` at all.
        do {
            _ = try ConfigFile(parsing: "volume =\(mark)40")
            Issue.record("a volume of a combining mark and 40 was taken")
        } catch {
            #expect(error.line == 1)
            #expect(!error.message.contains("expected 'key = value'"), "\(error)")
        }
        #expect(try signerEnvironment("signer-env = A=\(mark)x") == ["A": Array("\(mark)x".utf8)])
    }

    @Test func aHashBeforeAMarkStillBeginsAComment() throws {
        #expect(try signerEnvironment("signer-env = A=b #\(mark) note") == ["A": Array("b".utf8)])
        #expect(try signerEnvironment("signer-env = A=b\\#\(mark)c") == ["A": Array("b#\(mark)c".utf8)])
        // A mark after the space makes the "#" part of the value, as in a shell.
        #expect(try signerEnvironment("signer-env = A=b \(mark)#c") == ["A": Array("b \(mark)#c".utf8)])
    }

    @Test func trimmingKeepsAMarkAfterASpace() throws {
        #expect(try signerEnvironment("signer-env = A=x \(mark)") == ["A": Array("x \(mark)".utf8)])
    }

    @Test func aFlagAndItsValueAcrossAMark() throws {
        let values = try CommandLineSettings.parse(["--signer-env=A=\(mark)x"], context: SettingContext())
        #expect(values[Settings.signerEnvironment]["A"].map { Array($0.utf8) } == Array("\(mark)x".utf8))
        #expect(throws: SettingError.self) { try CommandLineSettings.parse(["--\(mark)volume"], context: SettingContext()) }
    }

    @Test func anAssignmentsValueMayBeginWithAMark() throws {
        let assignment = try SettingParsers.assignment("NAME=\(mark)v", "--signer-env", SettingContext())
        #expect(assignment["NAME"].map { Array($0.utf8) } == Array("\(mark)v".utf8))
    }

    @Test func aCredentialsPathAfterAMarkedColon() throws {
        let parsed = try SignerCredential.parse("share:/\(mark)run/share").get()
        #expect(parsed.name == "share")
        #expect(parsed.source == .file("/\(mark)run/share"))
        let home = SettingContext(home: "/home/u")
        let expanded = try SettingParsers.credential("share:~/\(mark)s", "--signer-credential", home)
        #expect(expanded.first?.source == .file("/home/u/\(mark)s"))
        #expect(try SettingParsers.expandHome("~/\(mark)x", "x", home).utf8.elementsEqual("/home/u/\(mark)x".utf8))
    }

    @Test func aCommandsQuotesAndSpacesBeforeAMark() throws {
        #expect(try ShellWords.split("node '\(mark)x' y").map { Array($0.utf8) } == [Array("node".utf8), Array("\(mark)x".utf8), Array("y".utf8)])
        #expect(try ShellWords.split("a \(mark)b").map { Array($0.utf8) } == [Array("a".utf8), Array("\(mark)b".utf8)])
        #expect(try ShellWords.split("\"\(mark)q\"").map { Array($0.utf8) } == [Array("\(mark)q".utf8)])
        #expect(try ShellWords.split("a\\\r\nb") == ["ab"], "a backslash before CRLF continues the line")
        #expect(try ShellWords.split("a\\\rb").map { Array($0.utf8) } == [Array("a\rb".utf8)])
        let words = ["'\(mark)", "x'\(mark)y"]
        #expect(try ShellWords.split(ShellWords.quote(words)).map { Array($0.utf8) } == words.map { Array($0.utf8) })
    }
}
