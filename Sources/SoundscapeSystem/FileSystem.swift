import Glibc
import SoundscapeCore

/// The daemon's file-system calls, straight on POSIX: at startup, on every
/// catalog scan, and for the soundscape and PCM cache files (on the decoder
/// and cache threads, never the RT thread). FoundationEssentials' URL,
/// FileManager and String-from-file would do, but each lives in a large
/// object file that becomes resident for good once touched (see
/// docs/performance.md).
public enum FileSystem {
    /// The whole file, or nil if it cannot be opened or read.
    public static func contents(of path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if got > 0 {
                bytes.append(contentsOf: chunk[..<got])
            } else if got == 0 {
                return bytes
            } else if errno != EINTR {
                return nil
            }
        }
    }

    /// The file's first `count` bytes (fewer if it is shorter), or nil if it cannot be
    /// opened as a regular file or read.
    public static func prefix(of path: String, count: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { read(descriptor, into: $0, at: 0) }
        guard got >= 0 else { return nil }
        return Array(bytes.prefix(got))
    }

    /// The file as UTF-8 text, or nil if it cannot be read or is not UTF-8.
    public static func text(of path: String) -> String? {
        contents(of: path).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// The names in a directory (no "." or ".."), or nil if it cannot be listed.
    public static func entries(of directory: String) -> [String]? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Reads at `offset` until `buffer` is full or the file ends; the bytes read, or -1 on an error.
    public static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
        var done = 0
        while done < buffer.count {
            let got = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if got > 0 {
                done += got
            } else if got == 0 {
                break
            } else if errno != EINTR {
                return -1
            }
        }
        return done
    }

    /// Writes all of `bytes` (retrying short writes and EINTR); false on an error.
    public static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// When and how a file or directory last changed: enough to tell that it did.
    public struct Change: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var seconds: Int
        var nanoseconds: Int
    }

    /// `stat`'s identity and modification time of `path`, or nil if it is not there.
    public static func change(of path: String) -> Change? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Change(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec)
    }

    /// Who owns an open file and who may use it (`fstat`), or nil (errno says why).
    public static func ownership(of descriptor: Int32) -> (isRegular: Bool, owner: UInt32, mode: UInt32)? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return (info.st_mode & S_IFMT == S_IFREG, UInt32(info.st_uid), UInt32(info.st_mode))
    }

    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// `path` with symbolic links resolved (`realpath`), or as given if it cannot be.
    public static func resolved(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Where a symbolic link points (`readlink`), or nil.
    public static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length >= 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path` made absolute against the working directory, as `URL(fileURLWithPath:)` did.
    public static func absolute(_ path: String) -> String {
        guard !FilePaths.isAbsolute(path) else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let directory = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.isEmpty || path == "." ? directory : FilePaths.join(directory, path)
    }

    /// The process's environment, as `ProcessInfo.processInfo.environment` gives it.
    public static func environment() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let pair = String(cString: pointer)
            if let (before, after) = SeparatedText.cut(pair, at: "=") {
                let name = String(before)
                if result[name] == nil { result[name] = String(after) }
            }
            entry += 1
        }
        return result
    }
}
