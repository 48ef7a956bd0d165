import Foundation
import SoundscapeCore
import Testing

/// The version is written once, in `SoundscapedVersion`; the files a release
/// changes beside it must agree with it (docs/releasing.md). It is one of two kinds:
///
/// - a release, `MAJOR.MINOR.PATCH`: only the release's own commit carries it.
///   NEWS.md opens with its dated section, debian/changelog's newest entry is its
///   released entry, and packaging/releases does not list it yet (scripts/release's
///   second commit adds the line and opens the next version);
/// - a build of main between releases, `NEXT~dev`: the work toward NEXT. NEWS.md
///   opens with `## Unreleased (NEXT)`, debian/changelog's newest entry is
///   `NEXT~dev`, `UNRELEASED`, and every release in packaging/releases is older than
///   NEXT. dpkg sorts `NEXT~dev` below NEXT and above every release before it, so a
///   package built from main upgrades the latest release and the release upgrades it.
///
/// So a build never calls itself a release it is not (0.3.0 had 0.3.0 on main while
/// NEWS.md said "Unreleased (0.3.1)"). The binaries' `--version`, varlink `GetInfo`
/// and `GetStatus` take it from the same constant (ControlSocketTests checks that
/// they agree in a running daemon; scripts/check-package and scripts/check-upgrade,
/// in the installed package; scripts/package, that the .deb is debian/changelog's).
@Suite struct VersionAgreementTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// A version: `MAJOR.MINOR.PATCH`'s numbers, and whether it is `MAJOR.MINOR.PATCH~dev`.
    struct Version: Equatable {
        var numbers: [Int]
        var isDevelopment: Bool

        init?(_ string: some StringProtocol) {
            let release = string.hasSuffix("~dev") ? string.dropLast("~dev".count) : string[...]
            let parts = release.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else {
                return nil
            }
            numbers = parts.compactMap { Int($0) }
            isDevelopment = string.hasSuffix("~dev")
        }

        /// The release this is or works toward: `0.3.1` for `0.3.1` and `0.3.1~dev`.
        var release: String { numbers.map(String.init).joined(separator: ".") }

        func isOlder(than other: Version) -> Bool { numbers.lexicographicallyPrecedes(other.numbers) }
    }

    static var current: Version? { Version(SoundscapedVersion.string) }

    /// What is wrong when a tree carries `version` and NEWS.md's first `## ` line is
    /// `heading`, or nil when they agree.
    static func disagreement(version string: String, newsHeading heading: some StringProtocol) -> String? {
        let heading = String(heading)
        guard let version = Version(string) else { return "\(string) is neither MAJOR.MINOR.PATCH nor MAJOR.MINOR.PATCH~dev" }
        let unreleased = "## Unreleased (\(version.release))"
        if version.isDevelopment {
            return heading == unreleased
                ? nil : "NEWS.md opens with '\(heading)', not '\(unreleased)', the work a \(string) build carries"
        }
        if heading.hasPrefix("## Unreleased (") {
            let next = heading.dropFirst("## Unreleased (".count).prefix { $0 != ")" }
            return "NEWS.md opens with '\(heading)', work since \(string): a build of it is \(next)~dev, not \(string) "
                + "(scripts/release opens the next version after a release; docs/releasing.md)"
        }
        let dated = heading.wholeMatch(of: /## (\S+) \(\d{4}-\d{2}-\d{2}\)/)
        return dated.map { String($0.1) } == string ? nil : "NEWS.md opens with '\(heading)', not '## \(string) (YYYY-MM-DD)', this release's section"
    }

    @Test func theRuleTellsAReleaseFromABuildOfMain() {
        // Agree: a release's own commit, and main between releases.
        #expect(Self.disagreement(version: "0.3.0", newsHeading: "## 0.3.0 (2026-11-26)") == nil)
        #expect(Self.disagreement(version: "0.3.1~dev", newsHeading: "## Unreleased (0.3.1)") == nil)
        #expect(Self.disagreement(version: "1.0.0~dev", newsHeading: "## Unreleased (1.0.0)") == nil)
        // Disagree: 0.3.0's main, a release's number on the work after it.
        #expect(Self.disagreement(version: "0.3.0", newsHeading: "## Unreleased (0.3.1)")?.contains("0.3.1~dev, not 0.3.0") == true)
        // A build of main toward another version, or with no section of its own.
        #expect(Self.disagreement(version: "0.3.1~dev", newsHeading: "## Unreleased (0.4.0)") != nil)
        #expect(Self.disagreement(version: "0.3.1~dev", newsHeading: "## 0.3.0 (2026-11-26)") != nil)
        #expect(Self.disagreement(version: "0.3.1~dev", newsHeading: "## 0.3.1 (2026-12-01)") != nil)
        // A release whose section is another's, or undated.
        #expect(Self.disagreement(version: "0.3.1", newsHeading: "## 0.3.0 (2026-11-26)") != nil)
        #expect(Self.disagreement(version: "0.3.1", newsHeading: "## 0.3.1") != nil)
        // Neither kind.
        for version in ["0.3", "0.3.1~rc1", "0.3.1+git5.abc", "v0.3.1", "0.3.1-dev", "0.3.x"] {
            #expect(Self.disagreement(version: version, newsHeading: "## Unreleased (0.3.1)") != nil, "\(version)")
        }
    }

    @Test func theVersionIsAReleaseOrABuildOfMain() {
        #expect(Self.current != nil, "\(SoundscapedVersion.string) is neither MAJOR.MINOR.PATCH nor MAJOR.MINOR.PATCH~dev")
        #expect(
            PlayerStatus(
                state: .stopped, isPlaying: false, soundscape: SoundscapeID("rain")!, volume: Volume(clamping: 37), route: nil,
                wantsPlaying: false
            ).version == SoundscapedVersion.string, "a status names the version it was made by")
    }

    @Test func newsNamesIt() throws {
        let heading = try #require(
            try Self.read("NEWS.md").split(separator: "\n").first { $0.hasPrefix("## ") }, "NEWS.md has no '## ' section")
        let disagreement = Self.disagreement(version: SoundscapedVersion.string, newsHeading: heading)
        #expect(disagreement == nil, "\(disagreement ?? "")")
    }

    @Test func debianChangelogsNewestEntryNamesIt() throws {
        let first = try #require(try Self.read("debian/changelog").split(separator: "\n").first)
        let version = try #require(Self.current)
        #expect(
            first.hasPrefix("soundscaped (\(SoundscapedVersion.string)) "),
            "debian/changelog's newest entry is '\(first)'; the version is \(SoundscapedVersion.string) (scripts/release writes both)")
        // A build of main is not released: dpkg-buildpackage and lintian know UNRELEASED (lintian: info only).
        let distribution = first.split(separator: " ").dropFirst(2).first.map { $0.trimmingCharacters(in: [";"]) }
        #expect(
            (distribution == "UNRELEASED") == version.isDevelopment,
            "debian/changelog's newest entry is '\(first)': \(version.isDevelopment ? "a ~dev one is UNRELEASED" : "a release's is not")")
    }

    @Test func everyListedReleaseIsOlderThanIt() throws {
        let current = try #require(Self.current)
        var previous: Version?
        var count = 0
        for line in try Self.read("packaging/releases").split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ")
            let version = try #require(fields.first.flatMap { Version($0) }, "packaging/releases: '\(line)'")
            #expect(!version.isDevelopment, "packaging/releases: '\(line)' is not a release")
            #expect(fields.count == 2, "packaging/releases: '\(line)' is not VERSION COMMIT")
            #expect(fields.last.map { $0.count == 40 && $0.allSatisfy(\.isHexDigit) } == true, "'\(line)': a whole commit")
            if let previous { #expect(previous.isOlder(than: version), "packaging/releases: '\(line)' is not newer than the line before") }
            // A release's own commit does not list it yet; main after it works toward a newer one.
            let why =
                current.isDevelopment
                ? "\(version.release) is released, so main works toward a newer one"
                : "only the release's own commit carries a release's version; scripts/release's second commit lists it and opens the next ~dev"
            #expect(
                version.isOlder(than: current), "packaging/releases lists '\(line)', and the version is \(SoundscapedVersion.string): \(why)")
            previous = version
            count += 1
        }
        #expect(count > 0, "packaging/releases lists no release")
    }
}
