import Foundation
import GRDB

/// What survives a restart: the user's volume and soundscape, and whether
/// they wanted it playing (so a crash or reboot resumes the keep-alive).
public struct PersistedState: Sendable, Equatable {
    public var volume: Int
    public var soundscape: String?
    public var wantsPlaying: Bool

    public init(volume: Int, soundscape: String?, wantsPlaying: Bool) {
        self.volume = volume
        self.soundscape = soundscape
        self.wantsPlaying = wantsPlaying
    }
}

/// The preferences row as stored; the daemon validates it into `Preferences`.
public struct PersistedPreferences: Sendable, Equatable {
    public var interruptionMode: String
    public var duckLevel: Int
    public var autoResume: Bool
    public var pinnedSink: String?

    public init(interruptionMode: String, duckLevel: Int, autoResume: Bool, pinnedSink: String?) {
        self.interruptionMode = interruptionMode
        self.duckLevel = duckLevel
        self.autoResume = autoResume
        self.pinnedSink = pinnedSink
    }
}

public struct StoreError: Error, Sendable, CustomStringConvertible {
    public let description: String
}

/// The daemon's SQLite database (WAL, migrations) in `$XDG_STATE_HOME/soundscaped`.
///
/// A database that cannot be read is moved aside and replaced rather than
/// stopping the daemon: losing a volume preference is better than losing the
/// keep-alive. Writes that fail (disk full, read-only) throw; the caller keeps
/// running on its in-memory state and reports the store as unhealthy.
public final class StateStore: Sendable {
    public static let fileName = "state.sqlite"

    public let path: String
    /// Things worth telling the user once, such as a corrupt file moved aside.
    public let notices: [String]
    private let pool: DatabasePool

    public init(directory: String) throws(StoreError) {
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError(description: "cannot create the state directory \(directory): \(error.localizedDescription)")
        }
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        var notices: [String] = []
        do {
            pool = try Self.open(path: path)
        } catch {
            let aside = path + ".unreadable-\(Int(Date().timeIntervalSince1970))"
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.moveItem(atPath: path + suffix, toPath: aside + suffix)
            }
            notices.append("the state database could not be opened (\(error)); moved it to \(aside) and started afresh")
            do {
                pool = try Self.open(path: path)
            } catch {
                throw StoreError(description: "cannot open the state database \(path): \(error)")
            }
        }
        self.path = path
        self.notices = notices
    }

    private static func open(path: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(2)
        configuration.label = "soundscaped.state"
        let pool = try DatabasePool(path: path, configuration: configuration)
        try migrator.migrate(pool)
        return pool
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: player state") { db in
            try db.create(table: "player_state") { table in
                table.primaryKey("id", .integer).check { $0 == 1 }
                table.column("volume", .integer).notNull().check { $0 >= 0 && $0 <= 100 }
                table.column("soundscape", .text)
                table.column("wants_playing", .boolean).notNull()
                table.column("updated_at", .datetime).notNull()
            }
            // A row the health probe rewrites, so "writable" is proven by a real write.
            try db.create(table: "health_probe") { table in
                table.primaryKey("id", .integer).check { $0 == 1 }
                table.column("checked_at", .datetime).notNull()
            }
        }
        migrator.registerMigration("v2: preferences") { db in
            try db.create(table: "preferences") { table in
                table.primaryKey("id", .integer).check { $0 == 1 }
                table.column("interruption_mode", .text).notNull()
                table.column("duck_level", .integer).notNull().check { $0 >= 0 && $0 <= 100 }
                table.column("auto_resume", .boolean).notNull()
                table.column("pinned_sink", .text)
                table.column("updated_at", .datetime).notNull()
            }
        }
        return migrator
    }

    /// Saved preferences, or nil when none were ever set.
    public func loadPreferences() throws(StoreError) -> PersistedPreferences? {
        do {
            return try pool.read { db in
                try Row.fetchOne(db, sql: "SELECT interruption_mode, duck_level, auto_resume, pinned_sink FROM preferences WHERE id = 1")
                    .map {
                        PersistedPreferences(interruptionMode: $0["interruption_mode"], duckLevel: $0["duck_level"],
                                             autoResume: $0["auto_resume"], pinnedSink: $0["pinned_sink"])
                    }
            }
        } catch {
            throw StoreError(description: "cannot read the saved preferences: \(error)")
        }
    }

    public func save(_ preferences: PersistedPreferences) throws(StoreError) {
        do {
            try pool.write { db in
                try db.execute(sql: """
                    INSERT INTO preferences (id, interruption_mode, duck_level, auto_resume, pinned_sink, updated_at)
                    VALUES (1, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET interruption_mode = excluded.interruption_mode,
                        duck_level = excluded.duck_level, auto_resume = excluded.auto_resume,
                        pinned_sink = excluded.pinned_sink, updated_at = excluded.updated_at
                    """, arguments: [preferences.interruptionMode, preferences.duckLevel, preferences.autoResume,
                                    preferences.pinnedSink, Date()])
            }
        } catch {
            throw StoreError(description: "cannot save the preferences: \(error)")
        }
    }

    /// The saved state, or nil on a first start.
    public func load() throws(StoreError) -> PersistedState? {
        do {
            return try pool.read { db in
                try Row.fetchOne(db, sql: "SELECT volume, soundscape, wants_playing FROM player_state WHERE id = 1")
                    .map { PersistedState(volume: $0["volume"], soundscape: $0["soundscape"], wantsPlaying: $0["wants_playing"]) }
            }
        } catch {
            throw StoreError(description: "cannot read the saved state: \(error)")
        }
    }

    public func save(_ state: PersistedState) throws(StoreError) {
        do {
            try pool.write { db in
                try db.execute(sql: """
                    INSERT INTO player_state (id, volume, soundscape, wants_playing, updated_at)
                    VALUES (1, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET volume = excluded.volume, soundscape = excluded.soundscape,
                        wants_playing = excluded.wants_playing, updated_at = excluded.updated_at
                    """, arguments: [state.volume, state.soundscape, state.wantsPlaying, Date()])
            }
        } catch {
            throw StoreError(description: "cannot save the state: \(error)")
        }
    }

    /// Proves a write goes through (for the health probe) without changing data.
    public func checkWritable() throws(StoreError) {
        do {
            try pool.write { db in
                try db.execute(sql: "INSERT OR REPLACE INTO health_probe (id, checked_at) VALUES (1, ?)", arguments: [Date()])
            }
        } catch {
            throw StoreError(description: "the state database is not writable: \(error)")
        }
    }
}
