import Testing

@testable import SoundscapeImport

/// The worker's closing line, `key=value` words, is cut at its bytes as every
/// separator the user's text holds is (`SeparatedText`).
@Suite struct ImporterLineTests {
    @Test func wordsAreCutAtTheirEqualsSigns() {
        let values = Importer.parse("loop=96000  gain=-3.5 odd rate=\u{306}48000")
        #expect(values["loop"] == "96000")
        #expect(values["gain"] == "-3.5")
        #expect(values["odd"] == nil)
        #expect(values["rate"].map { Array($0.utf8) } == Array("\u{306}48000".utf8))
    }
}
