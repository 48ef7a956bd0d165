#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import SoundscapeCore
import SoundscapeSystem

/// Every soundscape the daemon can play, found on disk.
///
/// Scanned again whenever a client asks (a directory listing is cheap), so a
/// file dropped into the user's folder is playable without a restart. Later
/// sources override earlier ones with the same id: built-in, then
/// `--soundscapes-dir` directories, then the user's folder.
public struct SoundscapeCatalog: Sendable {
    public static let fallbackDefault = SoundscapeID("ocean-waves")!

    /// In listing order: directory by directory (built-in, extra, user), each
    /// directory's manifest order first, then its other files by file name; an
    /// override keeps the place of the entry it replaces.
    public private(set) var entries: [SoundscapeEntry] = []
    public private(set) var defaultID: SoundscapeID = Self.fallbackDefault
    /// Problems found while scanning (a bad manifest line, an unusable file name).
    public private(set) var problems: [String] = []

    public init(entries: [SoundscapeEntry], defaultID: SoundscapeID) {
        self.entries = entries
        self.defaultID = defaultID
    }

    public func entry(_ id: SoundscapeID) -> SoundscapeEntry? {
        entries.first { $0.id == id }
    }

    /// Where the loops are, in the order they are consulted.
    public struct Locations: Sendable, Equatable {
        public var builtin: String?
        public var extra: [String]
        public var user: String?

        public init(builtin: String?, extra: [String], user: String?) {
            self.builtin = builtin
            self.extra = extra
            self.user = user
        }
    }

    /// What a scan depends on: each location's directory (its entries) and
    /// manifest, as the file system last changed them. Equal stamps mean a
    /// scan would find the same catalog, so it need not read the directories.
    public struct Stamp: Sendable, Equatable {
        fileprivate var parts: [FileSystem.Change?]
    }

    public static func stamp(_ locations: Locations) -> Stamp {
        let directories = [locations.builtin].compactMap { $0 } + locations.extra + [locations.user].compactMap { $0 }
        return Stamp(parts: directories.flatMap { [FileSystem.change(of: $0), FileSystem.change(of: FilePaths.join($0, "manifest.json"))] })
    }

    public static func scan(_ locations: Locations) -> SoundscapeCatalog {
        var catalog = SoundscapeCatalog(entries: [], defaultID: fallbackDefault)
        if let builtin = locations.builtin {
            catalog.add(directory: builtin, origin: .builtin, takeDefault: true)
        }
        for directory in locations.extra {
            catalog.add(directory: directory, origin: .extra, takeDefault: false)
        }
        if let user = locations.user {
            catalog.add(directory: user, origin: .user, takeDefault: false)
        }
        return catalog
    }

    private mutating func add(directory: String, origin: SoundscapeEntry.Origin, takeDefault: Bool) {
        let base = FileSystem.absolute(directory)
        let manifestPath = FilePaths.join(base, "manifest.json")
        var listed = Set<String>()
        if let bytes = FileSystem.contents(of: manifestPath) {
            let read = Manifest.read(bytes, directory: base, origin: origin)
            listed = read.listedFiles
            problems += read.problems.map { "\(manifestPath): \($0)" }
            for entry in read.entries { insert(entry) }
            if takeDefault, let id = read.defaultID { defaultID = id }
        }
        let files = FileSystem.entries(of: directory) ?? []
        for file in files.sorted() where file.hasSuffix(".opus") && !listed.contains(file) {
            let name = String(file.dropLast(".opus".count))
            guard let id = SoundscapeID(name) else {
                problems.append("\(directory)/\(file): the name is not usable as a soundscape id")
                continue
            }
            insert(
                SoundscapeEntry(
                    id: id, title: name, path: FilePaths.join(base, file),
                    gain: 1, origin: origin))
        }
    }

    private mutating func insert(_ entry: SoundscapeEntry) {
        var entry = entry
        let start = FileSystem.prefix(of: entry.path, count: OpusHeader.prefixLength)
        entry.unplayable = start.map(OpusHeader.problem) ?? (FileSystem.exists(entry.path) ? "it cannot be read" : "the file is missing")
        if let why = entry.unplayable { problems.append("\(entry.path): cannot play: \(why)") }
        if let index = entries.firstIndex(where: { $0.id == entry.id }) {
            entries[index] = entry
        } else {
            entries.append(entry)
        }
    }
}
