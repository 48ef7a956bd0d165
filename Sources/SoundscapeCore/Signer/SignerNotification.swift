/// What a signer told us on its `NOTIFY_SOCKET`, in the `sd_notify(3)` protocol:
/// one datagram of newline-separated `KEY=VALUE` fields.
///
/// The bytes come from outside (any process of the user could send them), so this is
/// pure, total and fuzzed (Fuzz/ `notify-message`). What it keeps:
/// - `READY=1`, `STOPPING=1`: in the order they came, so the last one wins;
/// - `STATUS=…`: the last one, if it is UTF-8 (systemd ignores one that is not);
/// - `WATCHDOG=1` (a liveness ping) and `WATCHDOG=trigger` (the service declares itself hung);
/// - `ERRNO=n`: the last one, a decimal that fits an errno.
/// Everything else (`MAINPID=`, `RELOADING=1`, `BARRIER=1`, `FDSTORE=1`, …) is ignored,
/// as are lines without `=`. A datagram with a NUL in it is refused whole, as systemd does.
///
/// Several notifications merge into one (`merge`) with the same meaning as handling
/// them one after the other: the daemon coalesces a flood into one fact.
public struct SignerNotification: Sendable, Equatable {
    /// The signer said it is ready (and said nothing about stopping since).
    public var ready = false
    /// The signer said it is stopping (and did not say ready since).
    public var stopping = false
    public var watchdog = false
    public var watchdogTrigger = false
    /// The raw text of the last `STATUS=`; `SignerStatus.line` makes it presentable.
    public var status: String?
    public var errno: Int32?

    /// systemd reads notifications into a buffer of this size and drops longer ones whole.
    public static let maximumBytes = 4096

    public init() {}

    /// Nil when the datagram is refused (a NUL, or over `maximumBytes`).
    public init?(parsing bytes: some Collection<UInt8>) {
        guard bytes.count <= Self.maximumBytes, !bytes.contains(0) else { return nil }
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = line[line.startIndex..<equals]
            let value = line[line.index(after: equals)...]
            switch String(decoding: key, as: UTF8.self) {
            case "READY":
                if value.elementsEqual("1".utf8) { (ready, stopping) = (true, false) }
            case "STOPPING":
                if value.elementsEqual("1".utf8) { (ready, stopping) = (false, true) }
            case "STATUS":
                if let text = String(validating: value, as: UTF8.self) { status = text }
            case "WATCHDOG":
                if value.elementsEqual("1".utf8) { watchdog = true }
                if value.elementsEqual("trigger".utf8) { watchdogTrigger = true }
            case "ERRNO":
                if let code = Self.decimal(value) { errno = code }
            default:
                break
            }
        }
    }

    /// Says nothing we act on.
    public var isEmpty: Bool { self == SignerNotification() }

    /// `later` as if it were handled right after this one.
    public mutating func merge(_ later: SignerNotification) {
        if later.ready || later.stopping { (ready, stopping) = (later.ready, later.stopping) }
        watchdog = watchdog || later.watchdog
        watchdogTrigger = watchdogTrigger || later.watchdogTrigger
        status = later.status ?? status
        errno = later.errno ?? errno
    }

    /// Digits only, as systemd's `safe_atoi` takes an errno; at most 4095 (the kernel's `MAX_ERRNO`).
    private static func decimal(_ bytes: some Collection<UInt8>) -> Int32? {
        guard !bytes.isEmpty, bytes.count <= 4, bytes.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let value = bytes.reduce(Int32(0)) { $0 * 10 + Int32($1 - 0x30) }
        return value <= 4095 ? value : nil
    }
}
