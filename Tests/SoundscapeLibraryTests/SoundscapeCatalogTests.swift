import Foundation
import Testing
import SoundscapeCore
@testable import SoundscapeLibrary

/// A scratch directory tree, removed when the value goes away.
final class TemporaryTree {
    let root: String

    init() throws {
        root = NSTemporaryDirectory() + "soundscape-catalog-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Creates `directory` under the root with the given files (name → contents) and returns its path.
    /// A `.opus` file's contents follow an Ogg Opus stream's first page (`opusStart`), so the
    /// scan takes it as playable; `raw` files are written exactly as given.
    @discardableResult
    func directory(_ name: String, files: [String: String] = [:], raw: [String: [UInt8]] = [:]) throws -> String {
        let path = root + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (file, contents) in files {
            let bytes = (file.hasSuffix(".opus") ? Self.opusStart : []) + Array(contents.utf8)
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + file))
        }
        for (file, bytes) in raw {
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + file))
        }
        return path
    }

    /// An Ogg page (one segment of 19 bytes) holding an OpusHead packet, version 1, stereo.
    static let opusStart: [UInt8] =
        Array("OggS".utf8) + [0, 2] + [UInt8](repeating: 0, count: 8) + [1, 0, 0, 0] + [0, 0, 0, 0] + [0, 0, 0, 0] + [1, 19]
        + Array("OpusHead".utf8) + [1, 2, 0x38, 0x01, 0x80, 0xBB, 0, 0, 0, 0, 0]
}

func id(_ text: String) -> SoundscapeID { SoundscapeID(text)! }

let builtinManifest = """
    {
      "default": "rain",
      "soundscapes": [
        { "id": "ocean-waves", "title": "Ocean waves", "file": "ocean-waves.opus", "gain": 1.0 },
        { "id": "rain", "title": "Rain", "file": "rain.opus", "gain": 0.78 },
        { "id": "brown-noise", "file": "brown.opus" }
      ]
    }
    """

let builtinFiles = [
    "manifest.json": builtinManifest, "ocean-waves.opus": "o", "rain.opus": "r", "brown.opus": "b",
]

@Suite struct SoundscapeCatalogTests {
    /// The stamp says when a scan could find something new: a file added,
    /// removed or renamed, a manifest edited; not a file's contents.
    @Test func theStampChangesExactlyWhenAScanCouldFindSomethingNew() throws {
        let tree = try TemporaryTree()
        let user = try tree.directory("user", files: ["a.opus": "x"])
        let builtin = try tree.directory("builtin", files: ["manifest.json": #"{"soundscapes": []}"#])
        let locations = SoundscapeCatalog.Locations(builtin: builtin, extra: [], user: user)
        let first = SoundscapeCatalog.stamp(locations)
        #expect(SoundscapeCatalog.stamp(locations) == first)
        try Data("edited".utf8).write(to: URL(fileURLWithPath: user + "/a.opus"))
        #expect(SoundscapeCatalog.stamp(locations) == first, "a file's contents are not the catalog's business")
        try Data("y".utf8).write(to: URL(fileURLWithPath: user + "/b.opus"))
        let added = SoundscapeCatalog.stamp(locations)
        #expect(added != first)
        try FileManager.default.moveItem(atPath: user + "/b.opus", toPath: user + "/c.opus")
        let renamed = SoundscapeCatalog.stamp(locations)
        #expect(renamed != added)
        try Data(#"{"soundscapes": [], "default": "a"}"#.utf8).write(to: URL(fileURLWithPath: builtin + "/manifest.json"))
        #expect(SoundscapeCatalog.stamp(locations) != renamed, "a manifest edited in place")
    }

    @Test func builtinManifestKeepsOrderTitlesGainsAndDefault() throws {
        let tree = try TemporaryTree()
        let builtin = try tree.directory("builtin", files: builtinFiles)
        let catalog = SoundscapeCatalog.scan(.init(builtin: builtin, extra: [], user: nil))
        #expect(catalog.problems.isEmpty)
        #expect(catalog.defaultID == id("rain"))
        #expect(
            catalog.entries == [
                SoundscapeEntry(
                    id: id("ocean-waves"), title: "Ocean waves", path: builtin + "/ocean-waves.opus",
                    gain: 1, origin: .builtin),
                SoundscapeEntry(id: id("rain"), title: "Rain", path: builtin + "/rain.opus", gain: 0.78, origin: .builtin),
                // No title: the id; no gain: 1; a file named differently from the id is not listed twice.
                SoundscapeEntry(
                    id: id("brown-noise"), title: "brown-noise", path: builtin + "/brown.opus",
                    gain: 1, origin: .builtin),
            ])
        #expect(catalog.entry(id("rain"))?.gain == 0.78)
        #expect(catalog.entry(id("brown")) == nil)
    }

    @Test func theShippedManifestScansCleanly() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("soundscapes").path
        let catalog = SoundscapeCatalog.scan(.init(builtin: directory, extra: [], user: nil))
        #expect(catalog.problems.isEmpty)
        #expect(catalog.defaultID == id("ocean-waves"))
        #expect(catalog.entries.map(\.id) == ["ocean-waves", "rain", "brown-noise", "wind"].map(id))
        #expect(catalog.entries.allSatisfy { FileManager.default.fileExists(atPath: $0.path) })
        for entry in catalog.entries { #expect(entry.unplayable == nil, "\(entry.path): \(entry.unplayable ?? "")") }
    }

    @Test func invalidManifestEntriesAreReportedAndSkipped() throws {
        let tree = try TemporaryTree()
        let manifest = """
            {
              "soundscapes": [
                { "id": "../evil", "file": "evil.opus" },
                { "id": "sneaky", "file": "../outside.opus" },
                { "id": "nested", "file": "sub/nested.opus" },
                { "id": "mute", "file": "mute.opus", "gain": 0 },
                { "id": "loud", "file": "loud.opus", "gain": 2 },
                { "id": "negative", "file": "negative.opus", "gain": -0.5 },
                { "id": "fine", "file": "fine.opus", "gain": 0.5 }
              ]
            }
            """
        let builtin = try tree.directory("builtin", files: ["manifest.json": manifest, "fine.opus": "f"])
        let catalog = SoundscapeCatalog.scan(.init(builtin: builtin, extra: [], user: nil))
        #expect(catalog.entries.map(\.id) == [id("fine")])
        #expect(catalog.entries.first?.gain == 0.5)
        #expect(catalog.problems.count == 6)
        #expect(catalog.problems.allSatisfy { $0.hasPrefix(builtin + "/manifest.json: ") })
        let text = catalog.problems.joined(separator: "\n")
        #expect(text.contains("invalid soundscape id '../evil'"))
        #expect(text.contains("'sneaky' names a file outside its directory"))
        #expect(text.contains("'nested' names a file outside its directory"))
        #expect(text.contains("'mute' has gain 0"))
        #expect(text.contains("'loud' has gain 2"))
        #expect(text.contains("'negative' has gain -0.5"))
        // Without a valid "default", the fallback stays.
        #expect(catalog.defaultID == SoundscapeCatalog.fallbackDefault)
    }

    /// The manifest fuzzer's finding: a slash before a combining mark is one Swift
    /// `Character` and no slash, yet the kernel's slash all the same.
    @Test func aSlashBeforeACombiningMarkStillLeavesTheDirectory() {
        let bytes = Array(
            #"{"soundscapes": [{"id": "sneaky", "file": "../\u0306outside.opus"}, {"id": "mark", "file": "\u0306.opus"}]}"#.utf8)
        let read = Manifest.read(bytes, directory: "/s", origin: .builtin)
        #expect(read.problems == ["'sneaky' names a file outside its directory"])
        #expect(read.entries.map { Array($0.path.utf8) } == [Array("/s/\u{306}.opus".utf8)])
    }

    @Test func brokenManifestIsReportedButNotFatal() throws {
        let tree = try TemporaryTree()
        let builtin = try tree.directory(
            "builtin",
            files: [
                "manifest.json": "{ \"soundscapes\": [ { \"id\": ", "rain.opus": "r",
            ])
        let catalog = SoundscapeCatalog.scan(.init(builtin: builtin, extra: [], user: nil))
        #expect(catalog.problems.count == 1)
        #expect(catalog.problems.first?.hasPrefix(builtin + "/manifest.json: ") == true)
        // The files are still found, as bare files.
        #expect(catalog.entries.map(\.id) == [id("rain")])
        #expect(catalog.entries.first?.title == "rain")
        #expect(catalog.defaultID == id("ocean-waves"))
    }

    @Test func manifestWithAWrongShapeIsReported() throws {
        let tree = try TemporaryTree()
        let builtin = try tree.directory("builtin", files: ["manifest.json": #"{"soundscapes": [{"id": "x"}]}"#])
        let catalog = SoundscapeCatalog.scan(.init(builtin: builtin, extra: [], user: nil))
        #expect(catalog.problems.count == 1)
        #expect(catalog.entries.isEmpty)
    }

    @Test func extraDirectoryOfBareFilesUsesFileNamesAsIDsAndTitles() throws {
        let tree = try TemporaryTree()
        let extra = try tree.directory(
            "extra",
            files: [
                "forest-stream.opus": "f", "My Loop 2.opus": "m", "été.opus": "e",
            ])
        let catalog = SoundscapeCatalog.scan(.init(builtin: nil, extra: [extra], user: nil))
        #expect(catalog.problems.isEmpty)
        #expect(Set(catalog.entries.map(\.id)) == Set(["forest-stream", "My Loop 2", "été"].map(id)))
        for entry in catalog.entries {
            #expect(entry.title == entry.id.rawValue)
            #expect(entry.path == extra + "/" + entry.id.rawValue + ".opus")
            #expect(entry.gain == 1)
            #expect(entry.origin == .extra)
        }
        #expect(catalog.defaultID == SoundscapeCatalog.fallbackDefault)
    }

    @Test func nonOpusFilesAreIgnored() throws {
        let tree = try TemporaryTree()
        let extra = try tree.directory(
            "extra",
            files: [
                "notes.txt": "n", "cover.jpg": "c", "song.opus.bak": "s", "LOUD.OPUS": "l", "opus": "o", "wave.ogg": "w",
                "keep.opus": "k",
            ])
        let catalog = SoundscapeCatalog.scan(.init(builtin: nil, extra: [extra], user: nil))
        #expect(catalog.entries.map(\.id) == [id("keep")])
        #expect(catalog.problems.isEmpty)
    }

    @Test func unusableFileNamesAreReported() throws {
        let tree = try TemporaryTree()
        let extra = try tree.directory(
            "extra",
            files: [
                ".hidden.opus": "h", "-dash.opus": "d", "colon:name.opus": "c", ".opus": "e", "ok.opus": "o",
            ])
        let catalog = SoundscapeCatalog.scan(.init(builtin: nil, extra: [extra], user: nil))
        #expect(catalog.entries.map(\.id) == [id("ok")])
        #expect(catalog.problems.count == 4)
        for name in [".hidden.opus", "-dash.opus", "colon:name.opus", ".opus"] {
            #expect(catalog.problems.contains("\(extra)/\(name): the name is not usable as a soundscape id"))
        }
    }

    @Test func userDirectoryOverridesABuiltinInPlace() throws {
        let tree = try TemporaryTree()
        let builtin = try tree.directory("builtin", files: builtinFiles)
        let user = try tree.directory("user", files: ["rain.opus": "my rain", "forest.opus": "f"])
        let catalog = SoundscapeCatalog.scan(.init(builtin: builtin, extra: [], user: user))
        #expect(catalog.entries.map(\.id) == ["ocean-waves", "rain", "brown-noise", "forest"].map(id))
        let rain = try #require(catalog.entry(id("rain")))
        #expect(rain.origin == .user)
        #expect(rain.path == user + "/rain.opus")
        #expect(rain.title == "rain")
        #expect(rain.gain == 1)
        #expect(catalog.entry(id("ocean-waves"))?.origin == .builtin)
        #expect(catalog.problems.isEmpty)
    }

    @Test func laterSourcesWinExtraOverBuiltinAndUserOverExtra() throws {
        let tree = try TemporaryTree()
        let builtin = try tree.directory("builtin", files: builtinFiles)
        let extra = try tree.directory("extra", files: ["rain.opus": "x", "wind.opus": "w"])
        let user = try tree.directory("user", files: ["wind.opus": "u"])
        let catalog = SoundscapeCatalog.scan(.init(builtin: builtin, extra: [extra], user: user))
        #expect(catalog.entry(id("rain"))?.origin == .extra)
        #expect(catalog.entry(id("rain"))?.path == extra + "/rain.opus")
        #expect(catalog.entry(id("wind"))?.origin == .user)
        #expect(catalog.entries.count == 4)
    }

    @Test func onlyTheBuiltinManifestChoosesTheDefault() throws {
        let tree = try TemporaryTree()
        let extraManifest = #"{"default": "calm", "soundscapes": [{"id": "calm", "title": "Calm", "file": "c.opus", "gain": 0.5}]}"#
        let extra = try tree.directory("extra", files: ["manifest.json": extraManifest, "c.opus": "c"])
        let catalog = SoundscapeCatalog.scan(.init(builtin: nil, extra: [extra], user: nil))
        #expect(catalog.defaultID == SoundscapeCatalog.fallbackDefault)
        // A manifest elsewhere still names its entries.
        #expect(
            catalog.entries == [
                SoundscapeEntry(
                    id: id("calm"), title: "Calm", path: extra + "/c.opus",
                    gain: 0.5, origin: .extra)
            ])
    }

    @Test func invalidDefaultInTheBuiltinManifestKeepsTheFallback() throws {
        let tree = try TemporaryTree()
        let builtin = try tree.directory(
            "builtin",
            files: [
                "manifest.json": #"{"default": "../x", "soundscapes": []}"#
            ])
        let catalog = SoundscapeCatalog.scan(.init(builtin: builtin, extra: [], user: nil))
        #expect(catalog.defaultID == id("ocean-waves"))
    }

    @Test func missingDirectoriesYieldAnEmptyCatalog() throws {
        let tree = try TemporaryTree()
        let catalog = SoundscapeCatalog.scan(
            .init(
                builtin: tree.root + "/nope", extra: [tree.root + "/nada"],
                user: tree.root + "/none"))
        #expect(catalog.entries.isEmpty)
        #expect(catalog.defaultID == SoundscapeCatalog.fallbackDefault)
    }

    @Test
    func filesOutsideTheManifestAreListedDirectoryByDirectoryInFileNameOrder() throws {
        let tree = try TemporaryTree()
        let first = try tree.directory("first", files: ["zeta.opus": "z", "rain-heavy.opus": "h", "rain.opus": "r"])
        let second = try tree.directory("second", files: ["alpha.opus": "a"])
        let catalog = SoundscapeCatalog.scan(.init(builtin: nil, extra: [first, second], user: nil))
        // '-' sorts before '.', so rain-heavy.opus comes before rain.opus.
        #expect(catalog.entries.map(\.id) == ["rain-heavy", "rain", "zeta", "alpha"].map(id))
    }
}

@Suite struct LocationsTests {
    typealias Locations = SoundscapeCatalog.Locations

    @Test func userDirectoryHonoursAnAbsoluteXDGDataHome() {
        #expect(
            Locations.userDirectory(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"])
                == "/data/soundscaped/soundscapes")
    }

    @Test func userDirectoryIgnoresARelativeOrEmptyXDGDataHome() {
        #expect(
            Locations.userDirectory(environment: ["XDG_DATA_HOME": "data", "HOME": "/home/u"])
                == "/home/u/.local/share/soundscaped/soundscapes")
        #expect(
            Locations.userDirectory(environment: ["XDG_DATA_HOME": "", "HOME": "/home/u"])
                == "/home/u/.local/share/soundscaped/soundscapes")
        #expect(
            Locations.userDirectory(environment: ["HOME": "/home/u"])
                == "/home/u/.local/share/soundscaped/soundscapes")
    }

    @Test func userDirectoryIsNilWithoutAnyHome() {
        #expect(Locations.userDirectory(environment: [:]) == nil)
        #expect(Locations.userDirectory(environment: ["HOME": ""]) == nil)
        #expect(Locations.userDirectory(environment: ["XDG_DATA_HOME": "relative"]) == nil)
    }

    @Test func builtinDirectoryIsFoundByWalkingUpFromTheExecutable() throws {
        let tree = try TemporaryTree()
        try tree.directory("checkout/soundscapes", files: ["manifest.json": "{}"])
        try tree.directory("checkout/.build/x86_64/debug", files: ["soundscaped": ""])
        let found = Locations.builtinDirectory(executablePath: tree.root + "/checkout/.build/x86_64/debug/soundscaped")
        #expect(
            found.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
                == URL(fileURLWithPath: tree.root + "/checkout/soundscapes").resolvingSymlinksInPath().path)
    }

    @Test func builtinDirectoryWithoutAManifestIsNotTaken() throws {
        let tree = try TemporaryTree()
        try tree.directory("checkout/soundscapes", files: ["rain.opus": "r"])
        try tree.directory("checkout/bin", files: ["soundscaped": ""])
        let found = Locations.builtinDirectory(executablePath: tree.root + "/checkout/bin/soundscaped")
        #expect(found != URL(fileURLWithPath: tree.root + "/checkout/soundscapes").path)
        #expect(found?.hasPrefix(tree.root) != true)
    }

    @Test func standardCombinesBuiltinExtraAndUser() throws {
        let tree = try TemporaryTree()
        // An installed layout: <prefix>/bin/soundscaped and <prefix>/share/soundscaped/soundscapes.
        try tree.directory("prefix/share/soundscaped/soundscapes", files: ["manifest.json": "{}"])
        try tree.directory("prefix/bin", files: ["soundscaped": ""])
        let locations = Locations.standard(
            extra: ["/x"], environment: ["HOME": "/home/u"],
            executablePath: tree.root + "/prefix/bin/soundscaped")
        #expect(locations.builtin?.hasSuffix("/prefix/share/soundscaped/soundscapes") == true)
        #expect(locations.extra == ["/x"])
        #expect(locations.user == "/home/u/.local/share/soundscaped/soundscapes")
    }

    /// Issue 37: a text file named `.opus` was listed as a soundscape; only `play` refused it.
    @Test func aFileThatIsNotOggOpusIsListedAsUnplayableWithWhy() throws {
        let tree = try TemporaryTree()
        let vorbis =
            Array("OggS".utf8) + [0, 2] + [UInt8](repeating: 0, count: 20) + [1, 30] + [1] + Array("vorbis".utf8)
            + [UInt8](repeating: 0, count: 23)
        let user = try tree.directory(
            "user", files: ["fine.opus": "x"],
            raw: [
                "broken.opus": Array("just text\n".utf8), "vorbis.opus": vorbis, "empty.opus": [],
                "short.opus": Array(TemporaryTree.opusStart.prefix(30)),
            ])
        let catalog = SoundscapeCatalog.scan(.init(builtin: nil, extra: [], user: user))
        let why = Dictionary(uniqueKeysWithValues: catalog.entries.map { ($0.id.rawValue, $0.unplayable) })
        #expect(why["fine"] == .some(nil))
        #expect(why["broken"] == "not an Ogg Opus file (it does not start with an Ogg page)")
        #expect(why["vorbis"] == "an Ogg Vorbis file, not Opus (convert it with opusenc)")
        #expect(why["empty"] == "the file is empty")
        #expect(why["short"] == "its first Ogg page is cut short")
    }
}
