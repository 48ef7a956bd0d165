import Glibc
import SoundscapeCore
import SoundscapeSystem

/// `signer-stdin = file:PATH`: a file (a passphrase) that becomes the signer's stdin.
///
/// It is checked when the configuration is read (so a bad one stops the start or is
/// refused by a reload, with its line named) and again when each instance starts, on
/// the descriptor the signer gets, so a file swapped in between cannot slip past.
/// The rules (`SignerStdin.fileProblem`): a regular file, owned by the user running
/// the daemon, with no group or other access.
enum StdinFile {
    /// What is wrong with the file (nil: nothing): the check that failed, in words.
    static func problem(_ path: String) -> String? {
        do {
            close(try open(path))
            return nil
        } catch {
            return error.description
        }
    }

    /// The file opened read-only (close-on-exec: only `Spawn` hands it on, as stdin).
    static func open(_ path: String) throws(SpawnError) -> Int32 {
        // Non-blocking: opening a FIFO put there instead must not hang the caller (it is refused below).
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else { throw SpawnError("cannot open it: \(String(cString: strerror(errno)))") }
        guard let info = FileSystem.ownership(of: descriptor) else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw SpawnError("cannot stat it: \(reason)")
        }
        if let problem = SignerStdin.fileProblem(
            isRegular: info.isRegular, owner: info.owner, mode: info.mode,
            user: UInt32(getuid()))
        {
            close(descriptor)
            throw SpawnError(problem)
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        return descriptor
    }
}
