import CSoundscapeSandbox
import Glibc

/// The protections the daemon applies to itself rather than take from its unit: a
/// unit's `MemoryDenyWriteExecute=yes` would reach every process the daemon starts,
/// and a signer on a JIT (Node.js, Bun, Deno, a JVM) dies under it. So the daemon
/// denies itself writable-and-executable memory from its main thread, before any
/// other thread exists but one, `SignerSpawner`'s, which every process for the
/// signer is started from (docs/systemd.md, "Hardening").
public enum Hardening {
    /// Denies the calling thread, and every thread and process it makes from now on,
    /// writable-and-executable memory (systemd's `MemoryDenyWriteExecute=`, as a
    /// seccomp filter). Nil when done, else why it could not be.
    public static func denyWriteExecute() -> String? {
        let result = scs_seccomp_deny_write_execute()
        return result == 0 ? nil : "cannot deny writable-and-executable memory: \(String(cString: strerror(-result)))"
    }

    /// Whether the calling thread is denied writable-and-executable memory (an
    /// anonymous page asked for with PROT_WRITE|PROT_EXEC is refused).
    public static func writeExecuteDenied() -> Bool {
        let size = Int(sysconf(Int32(_SC_PAGESIZE)))
        let page = mmap(nil, size, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard page != MAP_FAILED else { return errno == EPERM || errno == EACCES }
        munmap(page, size)
        return false
    }
}
