/// What the signer host's processes (the signer, its lifeline watcher, its health
/// command) may do, applied to them alone: the daemon's own hardening never reaches
/// them (`SignerSpawner`). By default nothing beyond what soundscaped.service's unit
/// imposes on every process it starts; a signer that needs less may ask for less.
public struct SignerSandbox: Sendable, Equatable {
    /// Refuse writable-and-executable memory (systemd's `MemoryDenyWriteExecute=`):
    /// for a signer compiled ahead of time (Rust, Go, C). A JIT runtime (Node.js,
    /// Bun, Deno, a JVM) dies under it, so it is off by default.
    public var memoryDenyWriteExecute: Bool
    /// The only address families it may open sockets of (systemd's
    /// `RestrictAddressFamilies=`); nil: whatever the unit allows.
    public var addressFamilies: Set<AddressFamily>?

    public init(memoryDenyWriteExecute: Bool = false, addressFamilies: Set<AddressFamily>? = nil) {
        self.memoryDenyWriteExecute = memoryDenyWriteExecute
        self.addressFamilies = addressFamilies
    }

    /// Nothing to apply: the processes start as the daemon's spawner thread is.
    public var isEmpty: Bool { !memoryDenyWriteExecute && addressFamilies == nil }
}

/// A socket address family, by the name systemd and the C headers give it (Linux's numbers).
public enum AddressFamily: String, Sendable, Equatable, CaseIterable {
    case unix = "AF_UNIX"
    case inet = "AF_INET"
    case inet6 = "AF_INET6"
    case netlink = "AF_NETLINK"
    case packet = "AF_PACKET"
    case bluetooth = "AF_BLUETOOTH"
    case vsock = "AF_VSOCK"

    public var number: Int32 {
        switch self {
        case .unix: 1
        case .inet: 2
        case .inet6: 10
        case .netlink: 16
        case .packet: 17
        case .bluetooth: 31
        case .vsock: 40
        }
    }

    /// `AF_INET6`, `af_inet6` or `inet6`.
    public init?(parsing text: some StringProtocol) {
        let upper = text.uppercased()
        guard let family = Self(rawValue: upper.hasPrefix("AF_") ? upper : "AF_" + upper) else { return nil }
        self = family
    }
}

/// Why a signer died, in words that say what to change, when the cause is known: a
/// signal right after it started is most often the sandbox, not the signer.
public enum SignerCrash {
    /// A death this soon after the start counts as "at start".
    public static let startWindow: Duration = .seconds(10)

    /// What to change, for a death by `reason` `uptime` after the start (nil: no advice).
    /// `writeExecuteDenied`: whether the signer ran without writable-and-executable memory.
    public static func advice(for reason: ExitReason, uptime: Duration, writeExecuteDenied: Bool) -> String? {
        guard case .signaled(let signal) = reason, uptime < startWindow else { return nil }
        switch signal {
        case 31:
            return "it made a system call its sandbox forbids (SIGSYS): see the SystemCallFilter= of soundscaped.service "
                + "and docs/systemd.md"
        case 5, 11, 4, 7:
            // SIGTRAP: V8's "Check failed: 12 == errno" in SetPermissions; SIGSEGV, SIGILL, SIGBUS: other JITs.
            guard writeExecuteDenied else { return nil }
            return "a JIT runtime (Node.js, Bun, Deno, a JVM) dies like this without writable-and-executable memory: "
                + "set \(Settings.signerMemoryDenyWriteExecute.key) = no (and have no MemoryDenyWriteExecute=yes "
                + "in a drop-in of soundscaped.service)"
        default:
            return nil
        }
    }
}
