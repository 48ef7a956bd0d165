import Glibc
import SoundscapeCore
import SoundscapeLibrary
import SoundscapeSystem

/// A refused import or removal: `message` names the file and the reason. `usage` when the
/// command line is at fault (an id that is not a plain name): exit status 64, else 1.
public struct ImportRefusal: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let usage: Bool

    public init(_ message: String, usage: Bool = false) {
        self.message = message
        self.usage = usage
    }

    public var description: String { message }
}

/// The trusted half of `soundscapectl import` and `soundscapectl remove`: it opens the
/// recording (never blocking on a FIFO, refusing what is not a regular file), makes the
/// temporary output in the user's folder, runs `ImportWorker` in a child process on those
/// descriptors, and puts the result in place (rename, then the manifest, atomically, under
/// a lock on the folder: `ImportFolder`). A crash leaves only `.import-PID-*.tmp`, which the
/// catalog never lists (not `*.opus`) and the next import, removal or daemon start removes.
public enum Importer {
    /// The longest id `import` takes (a file name, a word in `list`).
    public static let maximumIDLength = 64

    public struct Request: Sendable {
        public var path: String
        public var id: SoundscapeID
        public var title: String
        public var credit: String?
        public var replace: Bool
        public var folder: String
        /// Ids of the built-in soundscapes: never overridden, never removed.
        public var builtinIDs: Set<String>
        /// The worker's argv up to its options: `[soundscapectl, "import-worker"]`.
        public var worker: [String]

        public init(
            path: String, id: SoundscapeID, title: String, credit: String?, replace: Bool, folder: String,
            builtinIDs: Set<String>, worker: [String]
        ) {
            self.path = path
            self.id = id
            self.title = title
            self.credit = credit
            self.replace = replace
            self.folder = folder
            self.builtinIDs = builtinIDs
            self.worker = worker
        }
    }

    public struct Result: Sendable {
        public var id: SoundscapeID
        public var path: String
        public var replaced: Bool
        public var loopSeconds: Double
        public var trimmedHeadSeconds: Double
        public var usedSeconds: Double
        public var sourceSeconds: Double
        public var sourceLoudness: Double
        public var gain: Double
        public var loudness: Double
        /// dBTP of the file as it decodes; NaN when its samples stayed 3 dB under the ceiling (then `samplePeak` says).
        public var truePeak: Double
        public var samplePeak: Double
        public var limiter: Double
        public var sourceRate: Int
        public var sourceChannels: Int
    }

    /// The id a file's name gives: without its extension, lowercased, spaces as hyphens.
    public static func defaultID(for path: String) -> String {
        var name = FilePaths.lastComponent(path)
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = String(name[..<dot]) }
        return name.lowercased().replacingSpaces()
    }

    /// An id `import` takes: a soundscape id (`SoundscapeID`: no `/`, no control
    /// character, no leading `.` or `-`) of at most 64 bytes; why not, else.
    public static func checkID(_ text: String) -> Swift.Result<SoundscapeID, ImportRefusal> {
        guard text.utf8.count <= maximumIDLength else {
            return .failure(ImportRefusal("the id '\(text)' is longer than \(maximumIDLength) bytes", usage: true))
        }
        guard let id = SoundscapeID(text) else {
            return .failure(
                ImportRefusal(
                    "'\(text.escapingControls())' is not a plain name: an id is letters, digits and - _ . + ( ) , ' or spaces, not starting with . or -",
                    usage: true))
        }
        return .success(id)
    }

    public static func run(_ request: Request, progress: ((Double) -> Void)? = nil) throws(ImportRefusal) -> Result {
        let shown = request.path
        func refuse(_ why: String) -> ImportRefusal { ImportRefusal("\(shown): \(why)") }
        let id = request.id.rawValue
        if request.builtinIDs.contains(id) {
            throw ImportRefusal("'\(id)' is a built-in soundscape: choose another id with --id")
        }
        let input = try openRecording(request.path)
        defer { close(input) }

        let folder = request.folder
        guard FileSystemExtras.makeDirectories(folder) else {
            throw ImportRefusal("cannot make the soundscape folder \(folder): \(String(cString: strerror(errno)))")
        }
        let lock = try lockFolder(folder)
        defer { lock.release() }
        ImportFolder.removeLeftovers(in: folder)
        let target = FilePaths.join(folder, "\(id).opus")
        let manifestPath = FilePaths.join(folder, "manifest.json")
        let listed: String?
        do {
            listed = try UserManifest.file(of: id, in: FileSystem.contents(of: manifestPath))
        } catch {
            throw ImportRefusal("\(manifestPath): \(error)")
        }
        let exists = FileSystem.exists(target) || listed != nil
        if exists && !request.replace {
            throw ImportRefusal("a soundscape '\(id)' exists already in \(folder) (--replace replaces it)")
        }
        let temporary = FilePaths.join(folder, ImportFolder.temporaryName(tag: "\(id.utf8.reduce(UInt32(5381)) { $0 &* 33 &+ UInt32($1) })"))
        let output = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw ImportRefusal("cannot write in \(folder): \(String(cString: strerror(errno)))") }
        ImportFolder.hold(output)  // before the folder's lock goes: a clean-up sees a running import
        var keep = false
        defer {
            close(output)
            if !keep { unlink(temporary) }
        }
        lock.release()  // not held while decoding: another import may run beside this one

        let line = try runWorker(request, input: input, output: output, progress: progress, refuse: refuse)
        guard fsync(output) == 0 else { throw refuse("writing the soundscape failed: \(String(cString: strerror(errno)))") }

        let commit = try lockFolder(folder)
        defer { commit.release() }
        if !request.replace && FileSystem.exists(target) {
            throw ImportRefusal("a soundscape '\(id)' exists already in \(folder) (--replace replaces it)")
        }
        let manifest: [UInt8]
        do {
            manifest = try UserManifest.adding(
                id: id, title: request.title, file: "\(id).opus", source: FilePaths.lastComponent(request.path),
                credit: request.credit, to: FileSystem.contents(of: manifestPath))
        } catch {
            throw ImportRefusal("\(manifestPath): \(error)")
        }
        // Both written whole before either is put in place: a full disk fails here, changing nothing.
        let manifestTemporary = try writeTemporary(manifest, for: manifestPath, folder: folder)
        guard rename(temporary, target) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(manifestTemporary)
            throw ImportRefusal("cannot put \(target) in place: \(why)")
        }
        keep = true
        guard rename(manifestTemporary, manifestPath) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(manifestTemporary)
            throw ImportRefusal("cannot write \(manifestPath): \(why)")
        }
        if let listed, listed != "\(id).opus" { unlink(FilePaths.join(folder, listed)) }
        syncDirectory(folder)

        let values = parse(line)
        func number(_ key: String) -> Double { values[key].flatMap(Double.init) ?? .nan }
        let rate = 48000.0
        return Result(
            id: request.id, path: target, replaced: exists, loopSeconds: number("loop") / rate,
            trimmedHeadSeconds: number("start") / rate,
            usedSeconds: (number("loop") + number("crossfade")) / rate,
            sourceSeconds: number("frames") / number("rate"), sourceLoudness: number("source"), gain: number("gain"),
            loudness: number("loudness"), truePeak: number("truePeak"), samplePeak: number("samplePeak"), limiter: number("limiter"),
            sourceRate: Int(number("rate").isFinite ? number("rate") : 0),
            sourceChannels: Int(number("channels").isFinite ? number("channels") : 0))
    }

    /// Removes an imported soundscape: its manifest entry first, then its file.
    /// Returns the file removed.
    @discardableResult
    public static func remove(_ id: SoundscapeID, folder: String, builtinIDs: Set<String>) throws(ImportRefusal) -> String {
        let name = id.rawValue
        let manifestPath = FilePaths.join(folder, "manifest.json")
        let lock = try lockFolder(folder, missing: ImportRefusal("no imported soundscape '\(name)' (\(folder) does not exist)"))
        defer { lock.release() }
        ImportFolder.removeLeftovers(in: folder)
        let edited: (bytes: [UInt8], file: String?)
        do {
            edited = try UserManifest.removing(id: name, from: FileSystem.contents(of: manifestPath))
        } catch {
            throw ImportRefusal("\(manifestPath): \(error)")
        }
        let file = FilePaths.join(folder, edited.file ?? "\(name).opus")
        guard edited.file != nil || FileSystem.exists(file) else {
            if builtinIDs.contains(name) {
                throw ImportRefusal("'\(name)' is a built-in soundscape: only imported ones can be removed")
            }
            throw ImportRefusal("no imported soundscape '\(name)' in \(folder)")
        }
        if edited.file != nil { try writeAtomically(edited.bytes, to: manifestPath, folder: folder) }
        if unlink(file) != 0 && errno != ENOENT {
            throw ImportRefusal("cannot remove \(file): \(String(cString: strerror(errno)))")
        }
        syncDirectory(folder)
        return file
    }

    // MARK: The recording

    /// Opens `path` for the worker: without blocking (a FIFO with no writer would hang a
    /// plain open), and only a regular file that is not empty.
    static func openRecording(_ path: String) throws(ImportRefusal) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else {
            let why = errno == ENOENT ? "no such file" : String(cString: strerror(errno))
            throw ImportRefusal("\(path): \(why)")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            close(descriptor)
            throw ImportRefusal("\(path): \(String(cString: strerror(errno)))")
        }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG else {
            close(descriptor)
            let what =
                switch kind {
                case S_IFDIR: "a directory"
                case S_IFIFO: "a FIFO"
                case S_IFSOCK: "a socket"
                case S_IFCHR, S_IFBLK: "a device"
                default: "not a regular file"
                }
            throw ImportRefusal("\(path): is \(what), not a recording")
        }
        guard info.st_size > 0 else {
            close(descriptor)
            throw ImportRefusal("\(path): the file is empty")
        }
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK)
        return descriptor
    }

    // MARK: The worker

    static func runWorker(
        _ request: Request, input: Int32, output: Int32, progress: ((Double) -> Void)?, refuse: (String) -> ImportRefusal
    ) throws(ImportRefusal) -> String {
        let pipe: (read: Int32, write: Int32)
        do { pipe = try Spawn.pipe() } catch { throw ImportRefusal("cannot run the decoder: \(error)") }
        defer { close(pipe.read) }
        let serial = Int32(bitPattern: request.id.rawValue.utf8.reduce(UInt32(2_166_136_261)) { ($0 ^ UInt32($1)) &* 16_777_619 })
        let arguments = request.worker + ["--title=\(request.title)", "--serial=\(serial)"]
        let pid: pid_t
        do {
            pid = try Spawn.run(
                program: arguments[0], arguments: arguments, environment: ["LC_ALL": "C"], searchPath: false,
                stdio: [input, output, pipe.write])
        } catch {
            close(pipe.write)
            throw ImportRefusal("cannot run the decoder: \(error)")
        }
        close(pipe.write)
        var result: String?
        var failure: String?
        var other: [String] = []
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(pipe.read, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            pending += buffer[..<count]
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if line.hasPrefix("progress "), let value = Double(line.dropFirst("progress ".count)) {
                    progress?(value)
                } else if line.hasPrefix("result ") {
                    result = String(line.dropFirst("result ".count))
                } else if line.hasPrefix("error ") {
                    failure = String(line.dropFirst("error ".count))
                } else if other.count < 20 {
                    other.append(line)
                }
            }
        }
        let exit = Reaper.wait(for: pid)
        if let failure { throw refuse(failure) }
        guard exit == .exited(code: 0), let result else {
            let said = other.isEmpty ? "" : ": " + other.joined(separator: " | ")
            throw refuse("the decoder failed (\(exit))\(said)")
        }
        return result
    }

    static func parse(_ line: String) -> [String: String] {
        var values: [String: String] = [:]
        for word in SeparatedText.pieces(line, at: " ") where !word.isEmpty {
            guard let (key, value) = SeparatedText.cut(word, at: "=") else { continue }
            values[String(key)] = String(value)
        }
        return values
    }

    // MARK: The folder

    static func writeAtomically(_ bytes: [UInt8], to path: String, folder: String) throws(ImportRefusal) {
        let temporary = try writeTemporary(bytes, for: path, folder: folder)
        guard rename(temporary, path) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw ImportRefusal("cannot write \(path): \(why)")
        }
    }

    /// `bytes` in a temporary file of `folder`, written whole and synced: its path, to rename
    /// to `path` (named in the refusal when it cannot be written; nothing is left then).
    static func writeTemporary(_ bytes: [UInt8], for path: String, folder: String) throws(ImportRefusal) -> String {
        let temporary = FilePaths.join(folder, ImportFolder.temporaryName(tag: "manifest"))
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ImportRefusal("cannot write \(path): \(String(cString: strerror(errno)))") }
        let written = bytes.withUnsafeBytes { FileSystem.writeAll(descriptor, $0) }
        let failure = errno
        let synced = written && fsync(descriptor) == 0
        let why = String(cString: strerror(written ? errno : failure))
        close(descriptor)
        guard synced else {
            unlink(temporary)
            throw ImportRefusal("cannot write \(path): \(why)")
        }
        return temporary
    }

    static func syncDirectory(_ folder: String) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// The folder's lock (`ImportFolder.Lock`), or a refusal saying why not.
    static func lockFolder(_ folder: String, missing: ImportRefusal? = nil) throws(ImportRefusal) -> ImportFolder.Lock {
        do {
            return try ImportFolder.Lock(folder)
        } catch {
            if error.code == ENOENT, let missing { throw missing }
            throw ImportRefusal("cannot open \(folder): \(String(cString: strerror(error.code)))")
        }
    }
}

enum FileSystemExtras {
    /// `mkdir -p`.
    static func makeDirectories(_ path: String) -> Bool {
        if FileSystem.exists(path) { return true }
        let parent = FilePaths.parent(path)
        if parent != path, !makeDirectories(parent) { return false }
        return mkdir(path, 0o755) == 0 || errno == EEXIST
    }
}

extension String {
    fileprivate func replacingSpaces() -> String {
        String(map { $0 == " " ? "-" : $0 })
    }

    fileprivate func escapingControls() -> String {
        unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
    }
}
