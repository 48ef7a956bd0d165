#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix

/// The file-system side of listening on a Unix socket path.
enum SocketFile {
    /// Identifies the socket file this server created, so that on shutdown it removes its
    /// own file and never one a successor has put in its place.
    struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    /// Makes `path` ready to bind: creates a missing parent directory (mode 0700, as the
    /// socket is meant for its owner), refuses if a server answers there, and removes a stale
    /// socket nobody listens on, which a crashed predecessor leaves behind.
    ///
    /// Between this check and the bind another server could appear; two instances racing to
    /// start is not a case worth locking for.
    static func prepare(_ path: String, eventLoopGroup: any EventLoopGroup) async throws {
        try createParentDirectory(of: path)
        guard let status = try fileStatus(path) else { return }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw VarlinkServerError.pathIsNotASocket(path: path)
        }
        if try await isServed(path, eventLoopGroup: eventLoopGroup) {
            throw VarlinkServerError.alreadyServed(path: path)
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw VarlinkServerError.fileSystem(path: path, operation: "unlink", errno: errno)
        }
    }

    /// Only the owner may connect: whoever can connect can control the service.
    static func restrictToOwner(_ path: String) throws {
        guard chmod(path, 0o600) == 0 else {
            throw VarlinkServerError.fileSystem(path: path, operation: "chmod", errno: errno)
        }
    }

    /// `nil` if there is nothing at `path`, or it cannot be examined.
    static func identity(of path: String) -> Identity? {
        (try? fileStatus(path)).map { Identity(device: UInt64($0.st_dev), inode: UInt64($0.st_ino)) }
    }

    static func remove(_ path: String, ifStill identity: Identity?) {
        guard let identity, Self.identity(of: path) == identity else { return }
        unlink(path)
    }

    private static func createParentDirectory(of path: String) throws {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let parent = String(path[..<slash])
        // An existing directory is left as it is, whoever owns it.
        guard mkdir(parent, 0o700) == 0 || errno == EEXIST else {
            throw VarlinkServerError.fileSystem(path: parent, operation: "mkdir", errno: errno)
        }
    }

    private static func fileStatus(_ path: String) throws -> stat? {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT { return nil }
            throw VarlinkServerError.fileSystem(path: path, operation: "lstat", errno: errno)
        }
        return status
    }

    /// Whether something accepts connections at `path`. Only "connection refused" (or the
    /// file vanishing meanwhile) proves it stale; other failures are passed on, not guessed at.
    private static func isServed(_ path: String, eventLoopGroup: any EventLoopGroup) async throws -> Bool {
        do {
            let channel = try await ClientBootstrap(group: eventLoopGroup)
                .connectTimeout(.seconds(1))
                .connect(unixDomainSocketPath: path)
                .get()
            try? await channel.close()
            return true
        } catch let error as IOError where error.errnoCode == ECONNREFUSED || error.errnoCode == ENOENT {
            return false
        }
    }
}
