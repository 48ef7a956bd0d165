import CSoundscapeSystem
import Glibc
import SoundscapeCore
import SoundscapeSystem

/// The signer's secrets, as each instance gets them: the variables of its
/// `signer-env-file`s and its `signer-credential`s as files in a directory of its own,
/// `$CREDENTIALS_DIRECTORY`. Both are read at every start (never at config load), so
/// a file changed since is taken as it is now, and a problem then is a failed start
/// (restarted with backoff) whose message names the file, the line or the
/// credential, never a value.
///
/// Every file is checked as a `signer-stdin` file is (`StdinFile`: a regular file of
/// the user's, no group or other access), on the descriptor read.
///
/// The credentials directory is `CONTROL_SOCKET.signer-N.credentials`, beside the
/// control socket (whose lock this daemon holds, so no other daemon uses these
/// names), so normally on `$XDG_RUNTIME_DIR`'s tmpfs: mode 0500, each credential
/// 0400, as systemd leaves a unit's. It is removed once the instance has exited, and
/// one a crashed daemon left is removed at the next start (`removeStale`).
///
/// Everything here runs on a thread of its own, hardened like the daemon: never on
/// the event loop, and never on the spawner, which parses nothing.
enum SignerSecrets {
    /// The most an env file may hold (systemd reads more, but a secret file this large is a mistake).
    static let environmentFileLimit = 1 << 20
    static let directorySuffix = ".credentials"

    /// What an instance gets.
    struct Prepared: Sendable {
        /// The env files' variables (a later file's over an earlier's).
        var environment: [String: String] = [:]
        /// Its `$CREDENTIALS_DIRECTORY`, nil without credentials.
        var credentialsDirectory: String?
        /// Whether that directory is on a tmpfs or ramfs (not: its credentials are on a disk).
        var credentialsInMemory = true
    }

    /// Instance `instance`'s credentials directory.
    static func directory(socketPath: String, instance: Int) -> String {
        "\(socketPath).signer-\(instance)\(directorySuffix)"
    }

    /// Reads the env files and writes the credentials into `directory`; a failure leaves no directory.
    static func prepare(
        _ configuration: SignerConfiguration, directory: String, daemonCredentials: String?
    ) throws(SpawnError) -> Prepared {
        var prepared = Prepared()
        for path in configuration.environmentFiles {
            let key = Settings.signerEnvironmentFiles.key
            let bytes: [UInt8]
            do {
                bytes = try read(path, limit: environmentFileLimit)
            } catch {
                throw SpawnError("\(key) \(path): \(error)")
            }
            do {
                prepared.environment.merge(EnvironmentFile.variables(try EnvironmentFile.parse(bytes))) { $1 }
            } catch {
                throw SpawnError("\(key) \(path): \(error)")
            }
        }
        guard !configuration.credentials.isEmpty else { return prepared }
        var contents: [(name: String, bytes: [UInt8])] = []
        for credential in configuration.credentials {
            let path: String
            switch credential.source {
            case .file(let file): path = file
            case .inherited:
                if let problem = inheritedProblem(credential.name, daemonCredentials: daemonCredentials) {
                    throw SpawnError("\(Settings.signerCredentials.key) \(credential): \(problem)")
                }
                path = FilePaths.join(daemonCredentials ?? "", credential.name)
            }
            do {
                contents.append((credential.name, try read(path, limit: SignerCredential.totalSizeLimit)))
            } catch {
                throw SpawnError("\(Settings.signerCredentials.key) \(credential): \(error)")
            }
        }
        guard contents.reduce(0, { $0 + $1.bytes.count }) <= SignerCredential.totalSizeLimit else {
            throw SpawnError("the \(Settings.signerCredentials.key)s hold more than 1 MiB together (systemd's limit for a unit's)")
        }
        try write(contents, into: directory)
        prepared.credentialsDirectory = directory
        prepared.credentialsInMemory = isInMemory(directory)
        return prepared
    }

    /// Why the daemon's own credential `name` cannot be passed on (nil: it can): what a
    /// user unit's credentials need is in docs/signer.md.
    static func inheritedProblem(_ name: String, daemonCredentials: String?) -> String? {
        let hint =
            "give soundscaped.service LoadCredential=\(name):PATH (or LoadCredentialEncrypted=, SetCredential=), or name a file: \(name):PATH"
        guard let directory = daemonCredentials, !directory.isEmpty else {
            return "soundscaped was started without credentials ($CREDENTIALS_DIRECTORY is not set); \(hint)"
        }
        guard FileSystem.exists(FilePaths.join(directory, name)) else {
            return
                "soundscaped was given no credential '\(name)' ($CREDENTIALS_DIRECTORY, \(directory), does not have it: the user manager did not fill it in); \(hint)"
        }
        return nil
    }

    /// The whole file at `path`, checked as a secret (`StdinFile`), at most `limit` bytes.
    static func read(_ path: String, limit: Int) throws(SpawnError) -> [UInt8] {
        let descriptor = try StdinFile.open(path)
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SpawnError("cannot read it: \(String(cString: strerror(errno)))")
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > limit { throw SpawnError("it holds more than \(limit >> 20) MiB") }
        }
    }

    /// A fresh `directory` (0500) holding each credential (0400); none left on a failure.
    private static func write(_ contents: [(name: String, bytes: [UInt8])], into directory: String) throws(SpawnError) {
        if mkdir(directory, 0o700) != 0 {
            guard errno == EEXIST else { throw SpawnError("cannot make the credentials directory \(directory): \(String(cString: strerror(errno)))") }
            remove(directory)
            guard mkdir(directory, 0o700) == 0 else {
                throw SpawnError("cannot make the credentials directory \(directory): \(String(cString: strerror(errno)))")
            }
        }
        for (name, bytes) in contents {
            let path = FilePaths.join(directory, name)
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o400)
            var written = 0
            if descriptor >= 0 {
                while written < bytes.count {
                    let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { break }
                    written += count
                }
                close(descriptor)
            }
            guard descriptor >= 0, written == bytes.count else {
                let reason = String(cString: strerror(errno))
                remove(directory)
                throw SpawnError("cannot write the credential '\(name)' into \(directory): \(reason)")
            }
        }
        chmod(directory, 0o500)
    }

    /// Whether `path` is on a file system kept in memory (tmpfs, ramfs), as `$XDG_RUNTIME_DIR` is.
    static func isInMemory(_ path: String) -> Bool {
        // TMPFS_MAGIC, RAMFS_MAGIC (linux/magic.h).
        [0x0102_1994, 0x8584_58f6].contains(scs_statfs_type(path))
    }

    /// Removes a credentials directory and what it holds (made writable first: it is 0500).
    static func remove(_ directory: String) {
        chmod(directory, 0o700)
        for name in FileSystem.entries(of: directory) ?? [] {
            unlink(FilePaths.join(directory, name))
        }
        rmdir(directory)
    }

    /// Credentials directories a daemon that crashed left beside `socketPath`.
    static func removeStale(besideSocket socketPath: String) {
        let parent = FilePaths.parent(socketPath)
        let prefix = String(socketPath.dropFirst(parent.count).drop { $0 == "/" }) + ".signer-"
        for name in FileSystem.entries(of: parent) ?? [] where name.hasPrefix(prefix) && name.hasSuffix(directorySuffix) {
            remove(FilePaths.join(parent, name))
        }
    }

    /// `body` on a thread of its own (hardened like every thread but the spawner), awaited.
    static func offLoop<T: Sendable>(_ body: @escaping @Sendable () throws(SpawnError) -> T) async throws(SpawnError) -> T {
        let result: Result<T, SpawnError> = await withCheckedContinuation { continuation in
            BlockingThread.start(stackSize: 256 * 1024) {
                do throws(SpawnError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}
