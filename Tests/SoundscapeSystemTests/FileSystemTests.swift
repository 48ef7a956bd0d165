import Foundation
import Testing
import SoundscapeSystem

@Suite struct FileSystemTests {
    @Test func relativePathsBecomeAbsoluteLikeURLsDid() {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(FileSystem.absolute("/x/y") == "/x/y")
        #expect(FileSystem.absolute("rel/dir") == cwd + "/rel/dir")
        #expect(FileSystem.absolute("rel/dir") == URL(fileURLWithPath: "rel/dir").path)
    }

    @Test func readsListsAndResolves() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fs-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("a.txt")
        let big = String(repeating: "soundscape ", count: 5_000)  // larger than one read
        try big.write(to: file, atomically: false, encoding: .utf8)
        try Data([0xFF, 0xFE]).write(to: directory.appendingPathComponent("latin.txt"))
        try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent("link"), withDestinationURL: file)

        #expect(FileSystem.contents(of: file.path) == Array(big.utf8))
        #expect(FileSystem.text(of: file.path) == big)
        #expect(FileSystem.text(of: directory.appendingPathComponent("latin.txt").path) == nil, "not UTF-8")
        #expect(FileSystem.contents(of: directory.path) == nil, "a directory is not a file")
        #expect(FileSystem.contents(of: directory.appendingPathComponent("missing").path) == nil)
        #expect(FileSystem.entries(of: directory.path)?.sorted() == ["a.txt", "latin.txt", "link"])
        #expect(FileSystem.entries(of: file.path) == nil)
        #expect(FileSystem.exists(file.path) && !FileSystem.exists(directory.appendingPathComponent("missing").path))
        #expect(FileSystem.linkTarget(directory.appendingPathComponent("link").path) == file.path)
        #expect(FileSystem.linkTarget(file.path) == nil)
        #expect(FileSystem.resolved(directory.appendingPathComponent("link").path) == FileSystem.resolved(file.path))
        #expect(FileSystem.resolved("/no/such/path") == "/no/such/path")
    }

    @Test func environmentIsTheProcesssOwn() {
        #expect(FileSystem.environment() == ProcessInfo.processInfo.environment)
    }

    /// `NAME=VALUE` is cut at the "=" byte: a value may begin with a combining mark.
    @Test func aValueMayBeginWithACombiningMark() {
        let name = "SOUNDSCAPED_TEST_MARKED_VALUE"
        setenv(name, "\u{306}x", 1)
        defer { unsetenv(name) }
        #expect(FileSystem.environment()[name].map { Array($0.utf8) } == Array("\u{306}x".utf8))
    }

    /// `PATH` is cut at the ":" byte: an entry may begin with a combining mark, and the
    /// one before it is searched as itself.
    @Test func aPathEntryBeforeAMarkedColonIsSearched() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("soundscape-path-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let program = directory + "/prog"
        #expect(FileManager.default.createFile(atPath: program, contents: Data("#!/bin/sh\n".utf8)))
        #expect(chmod(program, 0o755) == 0)
        #expect(ProgramLookup.problem("prog", workingDirectory: nil, path: "\(directory):\u{306}x") == nil)
    }
}
