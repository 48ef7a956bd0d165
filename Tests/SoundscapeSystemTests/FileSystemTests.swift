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
}
