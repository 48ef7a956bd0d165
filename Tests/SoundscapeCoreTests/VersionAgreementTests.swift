import Foundation
import SoundscapeCore
import Testing

/// The version is written once, in `SoundscapedVersion`; the files a release
/// changes beside it must agree with it (docs/releasing.md): debian/changelog's
/// newest entry names it (so the .deb is that version; scripts/package checks it
/// again), packaging/releases lists no release newer than it, and NEWS.md opens
/// with it or with the next one. The binaries' `--version`, varlink `GetInfo` and
/// `GetStatus` take it from the same constant (ControlSocketTests checks that
/// they agree in a running daemon; scripts/check-upgrade, in the installed package).
@Suite struct VersionAgreementTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// A version's numbers, or nil if it is not `MAJOR.MINOR.PATCH`.
    static func numbers(_ version: some StringProtocol) -> [Int]? {
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else {
            return nil
        }
        return parts.compactMap { Int($0) }
    }

    static func isOlder(_ a: [Int], than b: [Int]) -> Bool { a.lexicographicallyPrecedes(b) }

    static var current: [Int] { numbers(SoundscapedVersion.string) ?? [] }

    @Test func theVersionIsThreeNumbers() {
        #expect(Self.numbers(SoundscapedVersion.string) != nil, "\(SoundscapedVersion.string) is not MAJOR.MINOR.PATCH")
        #expect(
            PlayerStatus(
                state: .stopped, isPlaying: false, soundscape: SoundscapeID("rain")!, volume: Volume(clamping: 37), route: nil,
                wantsPlaying: false
            ).version == SoundscapedVersion.string, "a status names the version it was made by")
    }

    @Test func debianChangelogsNewestEntryNamesIt() throws {
        let first = try #require(try Self.read("debian/changelog").split(separator: "\n").first)
        #expect(
            first.hasPrefix("soundscaped (\(SoundscapedVersion.string)) "),
            "debian/changelog's newest entry is '\(first)'; the version is \(SoundscapedVersion.string) (scripts/release writes both)")
    }

    @Test func releasesAreInOrderAndNoneIsNewerThanIt() throws {
        var previous: [Int]?
        var count = 0
        for line in try Self.read("packaging/releases").split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ")
            let version = try #require(fields.first.flatMap { Self.numbers($0) }, "packaging/releases: '\(line)'")
            #expect(fields.count == 2, "packaging/releases: '\(line)' is not VERSION COMMIT")
            #expect(fields.last.map { $0.count == 40 && $0.allSatisfy(\.isHexDigit) } == true, "'\(line)': a whole commit")
            if let previous { #expect(Self.isOlder(previous, than: version), "packaging/releases: '\(line)' is not newer than the line before") }
            #expect(!Self.isOlder(Self.current, than: version), "packaging/releases: '\(line)' is newer than \(SoundscapedVersion.string)")
            previous = version
            count += 1
        }
        #expect(count > 0, "packaging/releases lists no release")
    }

    @Test func newsOpensWithItOrTheNextOne() throws {
        let heading = try #require(
            try Self.read("NEWS.md").split(separator: "\n").first { $0.hasPrefix("## ") }, "NEWS.md has no '## ' section")
        if heading.hasPrefix("## Unreleased (") {
            // Work since the latest release, for the version the next release will have.
            let next = try #require(Self.numbers(heading.dropFirst("## Unreleased (".count).prefix { $0 != ")" }), "\(heading)")
            #expect(Self.isOlder(Self.current, than: next), "NEWS.md's '\(heading)' is not newer than \(SoundscapedVersion.string)")
        } else {
            #expect(
                heading.hasPrefix("## \(SoundscapedVersion.string) "),
                "NEWS.md opens with '\(heading)': neither '## Unreleased (NEXT)' nor this version's section")
        }
    }
}
