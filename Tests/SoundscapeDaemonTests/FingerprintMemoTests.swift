import Foundation
import Glibc
import SoundscapeAudio
import SoundscapeCore
import SoundscapeLibrary
import Testing
import TestSupport
@testable import SoundscapeDaemon
@testable import SoundscapeSystem

/// The memo of soundscape fingerprints: a file opened before and unchanged
/// since is not hashed again, and anything that could be a different file is.
@Suite("FingerprintMemo")
struct FingerprintMemoTests {
    /// A built-in soundscape: a file that has not changed for a long time.
    static let rain = PlayerHarness.builtinSoundscapes + "/rain.opus"

    static func info(_ path: String) throws -> stat {
        var info = stat()
        guard stat(path, &info) == 0 else { throw HarnessError("cannot stat \(path)") }
        return info
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("memo-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aSettledFileIsRememberedAcrossRestarts() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let info = try Self.info(Self.rain)
        FingerprintMemo(directory: directory.path).remember(0x1234, of: Self.rain, info)
        // A new daemon reads the memo from disk.
        let memo = FingerprintMemo(directory: directory.path)
        #expect(memo.fingerprint(of: Self.rain, info) == 0x1234)
        #expect(memo.fingerprint(of: Self.rain + ".other", info) == nil, "another path is another file")
    }

    @Test func anyChangeToTheFileMeansHashingAgain() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let memo = FingerprintMemo(directory: directory.path)
        let info = try Self.info(Self.rain)
        memo.remember(0x1234, of: Self.rain, info)
        var changed = info
        changed.st_size += 1
        #expect(memo.fingerprint(of: Self.rain, changed) == nil, "another size")
        changed = info
        changed.st_ino += 1
        #expect(memo.fingerprint(of: Self.rain, changed) == nil, "another inode (a file renamed over it)")
        changed = info
        changed.st_dev += 1
        #expect(memo.fingerprint(of: Self.rain, changed) == nil, "another file system")
        var edited = info
        edited.st_mtim.tv_nsec += 1
        #expect(memo.fingerprint(of: Self.rain, edited) == nil, "a new modification time")
        edited = info
        edited.st_ctim.tv_sec += 1
        #expect(memo.fingerprint(of: Self.rain, edited) == nil, "a new status-change time (no program can set it back)")
    }

    @Test func aFileChangedJustBeforeItWasHashedIsHashedAgain() throws {
        // On a file system with coarse timestamps, an edit right after the hash could leave every
        // field the same: like git's index, an entry counts only for a file that had settled.
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fresh = directory.appendingPathComponent("fresh.opus").path
        try Data(contentsOf: URL(fileURLWithPath: Self.rain)).write(to: URL(fileURLWithPath: fresh))
        let memo = FingerprintMemo(directory: directory.path)
        let info = try Self.info(fresh)
        memo.remember(0x1234, of: fresh, info)
        #expect(memo.fingerprint(of: fresh, info) == nil)
    }

    @Test func aDamagedMemoIsIgnoredAndRewritten() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("fingerprints")
        try Data("garbage\n1 2 3\n\u{0}\u{1}\n".utf8).write(to: file)
        let memo = FingerprintMemo(directory: directory.path)
        let info = try Self.info(Self.rain)
        #expect(memo.fingerprint(of: Self.rain, info) == nil)
        memo.remember(0xabc, of: Self.rain, info)
        #expect(FingerprintMemo(directory: directory.path).fingerprint(of: Self.rain, info) == 0xabc)
        #expect(try String(contentsOf: file, encoding: .utf8).split(separator: "\n").count == 1)
    }

    @Test func theMemoNamesWhatAHashWouldName() throws {
        let cache = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let memo = FingerprintMemo(directory: cache.path)
        let catalog = SoundscapeCatalog.scan(.init(builtin: PlayerHarness.builtinSoundscapes, extra: [], user: nil))
        let id = SoundscapeID("rain")!
        let first = try SoundscapeLoader.open(id, in: catalog, fingerprints: memo).get()
        // The second open takes the memo's fingerprint (the file is settled): the same name in the cache.
        let info = try Self.info(Self.rain)
        #expect(memo.fingerprint(of: Self.rain, info) == first.fingerprint)
        let second = try SoundscapeLoader.open(id, in: catalog, fingerprints: memo).get()
        #expect(second.fingerprint == first.fingerprint)
        #expect(second.fingerprint == (try SoundscapeData(id: id, gain: 1, path: Self.rain)).fingerprint)
    }

    @Test func aFileThisRunValidatedIsNotValidatedAgain() throws {
        let cache = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let memo = FingerprintMemo(directory: cache.path)
        let catalog = SoundscapeCatalog.scan(.init(builtin: PlayerHarness.builtinSoundscapes, extra: [], user: nil))
        let first = try SoundscapeLoader.open(SoundscapeID("rain")!, in: catalog, fingerprints: memo).get()
        let info = try Self.info(Self.rain)
        #expect(memo.known(of: Self.rain, info) == SoundscapeData.Known(fingerprint: first.fingerprint, frames: first.frames))
        // Kept in memory only: a new daemon validates each file once again.
        #expect(FingerprintMemo(directory: cache.path).known(of: Self.rain, info)?.frames == nil)
        var edited = info
        edited.st_ctim.tv_nsec += 1
        #expect(memo.known(of: Self.rain, edited) == nil, "a changed file is validated (and hashed) again")
        // What the memo knows stands in for the walk over the pages and the Opus headers.
        let trusted = try SoundscapeData(id: first.id, gain: 1, path: Self.rain) { _ in .init(fingerprint: 7, frames: 42) }
        #expect((trusted.fingerprint, trusted.frames) == (7, 42))
    }
}
