#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Logging
import Synchronization

/// Writes log lines to stderr, one per record.
///
/// Under systemd (`JOURNAL_STREAM` set and matching stderr) each line starts
/// with a `<N>` syslog priority, which journald turns into the entry's level;
/// elsewhere lines carry a time and a readable level instead.
///
/// The level is the daemon's, one for every logger, and a reload changes it
/// (`DaemonLogHandler.level`); a logger can still be given its own.
public struct DaemonLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    private var ownLevel: Logger.Level?
    private let label: String
    private let journal: Bool

    /// The daemon's log level, for every logger without one of its own.
    private static let threshold = Atomic<Int>(Self.levels.firstIndex(of: .info)!)
    private static let levels = Logger.Level.allCases

    public static var level: Logger.Level {
        get { levels[threshold.load(ordering: .relaxed)] }
        set { threshold.store(levels.firstIndex(of: newValue)!, ordering: .relaxed) }
    }

    public var logLevel: Logger.Level {
        get { ownLevel ?? Self.level }
        set { ownLevel = newValue }
    }

    public init(label: String, journal: Bool) {
        self.label = label
        self.journal = journal
    }

    /// True when stderr is the journal stream systemd told us about.
    public static func stderrIsJournal(environment: [String: String]) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let level = event.level
        let message = event.message
        var fields = self.metadata
        if let explicit = event.metadata { fields.merge(explicit) { $1 } }
        if let error = event.error { fields["error"] = "\(error)" }
        let details = fields.isEmpty ? "" : " " + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let text: String
        if journal {
            text = "<\(Self.priority(level))>\(message)\(details)\n"
        } else {
            text = "\(Self.timestamp()) \(level.rawValue.uppercased()) \(label): \(message)\(details)\n"
        }
        text.utf8CString.withUnsafeBufferPointer { buffer in
            _ = Glibc.write(STDERR_FILENO, buffer.baseAddress, buffer.count - 1)
        }
    }

    /// syslog(3) priorities, as journald reads them.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    private static func timestamp() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var parts = tm()
        var seconds = spec.tv_sec
        localtime_r(&seconds, &parts)
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2)).\(pad(Int(spec.tv_nsec / 1_000_000), 3))"
    }
}
