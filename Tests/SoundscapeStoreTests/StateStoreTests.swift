import Foundation
import Testing
@testable import SoundscapeStore

@Suite struct StateStoreTests {
    private func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "soundscaped-store-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func firstStartHasNoSavedState() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        #expect(try store.load() == nil)
        #expect(store.notices.isEmpty)
    }

    @Test func savedStateSurvivesReopening() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let saved = PersistedState(volume: 37, soundscape: "rain", wantsPlaying: true)
        do {
            let store = try StateStore(directory: directory)
            try store.save(PersistedState(volume: 80, soundscape: "wind", wantsPlaying: false))
            try store.save(saved)
        }
        let reopened = try StateStore(directory: directory)
        #expect(try reopened.load() == saved)
    }

    @Test func usesWriteAheadLogging() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        try store.save(PersistedState(volume: 50, soundscape: nil, wantsPlaying: false))
        #expect(FileManager.default.fileExists(atPath: store.path + "-wal"))
    }

    @Test func outOfRangeVolumeIsRefusedByTheSchema() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        #expect(throws: StoreError.self) {
            try store.save(PersistedState(volume: 101, soundscape: nil, wantsPlaying: false))
        }
        #expect(try store.load() == nil)
    }

    @Test func unreadableDatabaseIsMovedAsideNotFatal() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + StateStore.fileName
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))

        let store = try StateStore(directory: directory)
        #expect(try store.load() == nil)
        #expect(store.notices.count == 1)
        let moved = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".unreadable-") }
        #expect(moved.count == 1, "the damaged file is kept for inspection, not deleted")
        try store.save(PersistedState(volume: 10, soundscape: "rain", wantsPlaying: true))
        #expect(try store.load()?.volume == 10)
    }

    @Test func writableCheckPassesOnAHealthyStore() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        try store.checkWritable()
    }
}
