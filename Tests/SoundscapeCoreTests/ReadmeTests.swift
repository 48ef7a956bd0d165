import Foundation
import SoundscapeCore
import Testing

/// The README, which the package installs, says what is true for its reader (issue 37:
/// `cuePlaying` was documented only in NEWS.md, the installed README sent its reader to
/// `scripts/`, which is not installed, and its varlink example needed a package it did
/// not name).
@Suite struct ReadmeTests {
    static let readme: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
    }()

    /// The README's `## ` sections: heading → body.
    static var sections: [(heading: String, body: String)] {
        readme.components(separatedBy: "\n## ").dropFirst().map { chunk in
            let heading = String(chunk.prefix { $0 != "\n" })
            return (heading, String(chunk.dropFirst(heading.count)))
        }
    }

    @Test func everyStatusFieldIsDocumented() throws {
        let status = PlayerStatus(
            state: .playing, isPlaying: true, soundscape: SoundscapeID("rain")!, volume: Volume(clamping: 40), route: nil,
            wantsPlaying: true)
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(status)) as? [String: Any])
        let section = try #require(Self.readme.components(separatedBy: "### Status and events").dropFirst().first)
        let documented = section.components(separatedBy: "\n### ").first ?? ""
        for key in object.keys.sorted() {
            #expect(documented.contains("`\(key)`"), "README.md's \"Status and events\" does not name `\(key)`")
        }
    }

    @Test func aSectionThatRunsScriptsSaysItIsForACheckout() {
        let sections = Self.sections.filter { $0.body.contains("scripts/") }
        #expect(!sections.isEmpty)
        for section in sections {
            // scripts/ is not installed: a reader of /usr/share/doc/soundscaped/README.md must be told.
            #expect(section.body.contains("checkout"), "README.md's \"\(section.heading)\" names scripts/ but not a checkout")
        }
    }

    @Test func theVarlinkExampleNamesItsPackage() {
        #expect(Self.readme.contains("varlink.cli"))
        #expect(Self.readme.contains("python3-varlink"), "the varlink example needs Debian's python3-varlink; say so")
    }
}
