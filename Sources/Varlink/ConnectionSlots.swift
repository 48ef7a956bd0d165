/// Counts open connections against ``VarlinkServer/Limits/maxConnections``.
///
/// Each connection is a file descriptor and a task; without a cap a misbehaving local client
/// could exhaust the daemon's descriptors and starve everyone else. It also notices when a
/// burst of connections has drained away (`onDrained`).
actor ConnectionSlots {
    private let limit: Int
    private var used = 0
    /// The most connections open since the last drain.
    private var peak = 0
    private let onDrained: @Sendable () -> Void

    /// A burst is this many connections at once; drained is an eighth of its peak, or fewer.
    static let burst = 64

    init(limit: Int, onDrained: @escaping @Sendable () -> Void = {}) {
        self.limit = limit
        self.onDrained = onDrained
    }

    func acquire() -> Bool {
        guard used < limit else { return false }
        used += 1
        peak = max(peak, used)
        return true
    }

    func release() {
        used -= 1
        guard peak >= Self.burst, used <= peak / 8, !drainPending else { return }
        // The rest of the burst is usually closing too: look once it is done.
        drainPending = true
        Task {
            try? await Task.sleep(for: Self.settleTime)
            drained()
        }
    }

    private var drainPending = false
    static let settleTime: Duration = .seconds(1)

    private func drained() {
        drainPending = false
        peak = used
        onDrained()
    }
}
