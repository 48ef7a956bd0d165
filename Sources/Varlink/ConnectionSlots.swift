/// Counts open connections against ``VarlinkServer/Limits/maxConnections``.
///
/// Each connection is a file descriptor and a task; without a cap a misbehaving local client
/// could exhaust the daemon's descriptors and starve everyone else.
actor ConnectionSlots {
    private let limit: Int
    private var used = 0

    init(limit: Int) {
        self.limit = limit
    }

    func acquire() -> Bool {
        guard used < limit else { return false }
        used += 1
        return true
    }

    func release() {
        used -= 1
    }
}
