import CSQLite
import Glibc

/// An SQLite error in words, with SQLite's own message.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public let message: String

    public var description: String { "SQLite error \(code): \(message)" }

    /// SQLite proved the file damaged, or not a database at all. Nothing else is
    /// proof: busy, read-only, cannot open, disk full and I/O errors say nothing
    /// about the data.
    var provesDamage: Bool { code == SQLITE_NOTADB || code == SQLITE_CORRUPT }
}

/// One SQLite connection and the few operations the state store needs:
/// statements with bound values, rows read by column, and a transaction.
///
/// A thin wrapper rather than GRDB: GRDB needs the whole of Foundation, which
/// costs this daemon more resident memory (about 15 MB, measured) than
/// everything else together; see docs/performance.md. Not thread-safe: the
/// store serialises access.
final class SQLiteConnection {
    private let handle: OpaquePointer
    /// Statements compiled once and kept (`prepare(kept:)`), by their SQL.
    private var kept: [String: OpaquePointer] = [:]

    /// A few rows, written now and then, in a process that runs for days: what
    /// SQLite sets aside per connection to be fast under load (a lookaside
    /// allocator and a bulk page cache, about 0.2 MB, all touched at open) would
    /// stay resident for nothing. Set once, before the first open.
    private static let lean: Void = { _ = scs_sqlite3_config_no_initial_page_cache() }()

    /// `path` may be a `file:` URI (for `immutable=1`).
    init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        _ = Self.lean
        var handle: OpaquePointer?
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            sqlite3_close(handle)
            throw SQLiteError(code: result, message: message)
        }
        self.handle = handle
        _ = scs_sqlite3_disable_lookaside(handle)
        sqlite3_busy_timeout(handle, 2000)
    }

    deinit {
        for statement in kept.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Compiles `sql` now and keeps it, so that later `execute(sql)` calls only
    /// bind and step it. The daemon writes now and then for days: compiling
    /// each time would run SQLite's parser and code generator, about half of
    /// its code, and keep those pages resident (see StartupPages). SQLite
    /// recompiles a kept statement by itself if the schema changes.
    func prepare(kept sql: String) throws(SQLiteError) {
        guard kept[sql] == nil else { return }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
            let statement
        else {
            throw error()
        }
        kept[sql] = statement
    }

    /// A value bound to a `?` placeholder.
    enum Value {
        case integer(Int64)
        case real(Double)
        case text(String)
        case null
    }

    /// Runs one statement and returns its rows (each a column-name → value map of what was asked for).
    @discardableResult
    func execute(_ sql: String, _ arguments: [Value] = []) throws(SQLiteError) -> [[String: Value]] {
        var compiled = kept[sql]
        let isKept = compiled != nil
        if !isKept {
            guard sqlite3_prepare_v2(handle, sql, -1, &compiled, nil) == SQLITE_OK else { throw error() }
        }
        guard let statement = compiled else { throw error() }
        defer {
            if isKept {
                // Ready for the next call, holding no values and no read lock.
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            } else {
                sqlite3_finalize(statement)
            }
        }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let result: Int32
            switch argument {
            case .integer(let value): result = sqlite3_bind_int64(statement, position, value)
            case .real(let value): result = sqlite3_bind_double(statement, position, value)
            case .null: result = sqlite3_bind_null(statement, position)
            case .text(let value):
                // SQLITE_TRANSIENT: SQLite copies the text, so Swift's buffer may go away.
                result = sqlite3_bind_text(statement, position, value, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
            guard result == SQLITE_OK else { throw error() }
        }
        var rows: [[String: Value]] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { return rows }
            guard step == SQLITE_ROW else { throw error() }
            var row: [String: Value] = [:]
            for column in 0..<sqlite3_column_count(statement) {
                let name = String(cString: sqlite3_column_name(statement, column))
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row[name] = .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: row[name] = .real(sqlite3_column_double(statement, column))
                case SQLITE_TEXT: row[name] = .text(String(cString: sqlite3_column_text(statement, column)))
                default: row[name] = .null
                }
            }
            rows.append(row)
        }
    }

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws.
    func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    private func error() -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle) & 0xff, message: String(cString: sqlite3_errmsg(handle)))
    }
}

extension SQLiteConnection.Value {
    var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
    var text: String? { if case .text(let value) = self { value } else { nil } }
}
