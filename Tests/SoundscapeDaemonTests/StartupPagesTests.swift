import SoundscapeCore
import SoundscapeSystem
import Testing
import TestSupport
@testable import SoundscapeDaemon

/// Relocated data, read back after the release: a global array of closures
/// and class metadata with its vtable both hold pointers the loader wrote.
private let relocatedClosures: [@Sendable () -> Int] = [{ 1 }, { 2 }, { 3 }]
private class Shape { func sides() -> Int { 0 } }
private final class Triangle: Shape { override func sides() -> Int { 3 } }
private enum Season: CaseIterable { case spring, summer }

@Suite struct StartupPagesTests {
    @Test func releasesTheReadOnlyPagesOfLoadedObjectsButNoWrittenPage() throws {
        let executable = try #require(FileSystem.linkTarget("/proc/self/exe"))
        // Make sure something of ours is resident and relocated data is in use.
        #expect(relocatedClosures.map { $0() } == [1, 2, 3])
        let before = ProcFS.mappings(of: executable)
        try #require(!before.isEmpty, "no mapping of \(executable) in /proc/self/smaps")

        let released = StartupPages.release()

        let after = ProcFS.mappings(of: executable)
        let readOnly = { (mappings: [ProcFS.FileMapping]) in
            mappings.filter { !$0.isWritable && $0.anonymousKB == 0 }.reduce(0) { $0 + $1.residentKB }
        }
        let written = { (mappings: [ProcFS.FileMapping]) in mappings.reduce(0) { $0 + $1.anonymousKB } }
        #expect(released > 0)
        // What runs between the release and the second reading faults back in,
        // but only a little of what the test binary had resident.
        #expect(
            readOnly(after) < readOnly(before) / 2,
            "read-only pages resident: \(readOnly(before)) KB before, \(readOnly(after)) KB after")
        // Relocations and other written pages are private copies: dropping one
        // would bring back the file's bytes. None may go.
        #expect(
            written(after) >= written(before),
            "written pages: \(written(before)) KB before, \(written(after)) KB after")
        // And what the loader wrote still reads right.
        let shape: Shape = Triangle()
        #expect(shape.sides() == 3)
        #expect(relocatedClosures.map { $0() } == [1, 2, 3])
        #expect(Season.allCases.map { "\($0)" } == ["spring", "summer"])
    }
}
