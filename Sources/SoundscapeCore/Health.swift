/// The answer to `GetHealth` and `soundscapectl health`: named checks, each
/// passing or failing with a reason, so a failure says what to look at.
public struct HealthReport: Sendable, Equatable, Codable {
    public struct Check: Sendable, Equatable, Codable {
        public var name: String
        public var ok: Bool
        public var detail: String?

        public init(name: String, ok: Bool, detail: String? = nil) {
            self.name = name
            self.ok = ok
            self.detail = detail
        }
    }

    public var healthy: Bool
    public var checks: [Check]

    public init(checks: [Check]) {
        self.checks = checks
        healthy = checks.allSatisfy(\.ok)
    }

    /// The names checks go by (stable, for scripts).
    public enum Name {
        public static let loop = "daemonLoopResponsive"
        public static let pipewire = "pipewireConnected"
        public static let audio = "audioFlowing"
        public static let signer = "signerAlive"
        public static let store = "stateStoreWritable"
    }
}

extension HealthReport.Check {
    /// `signerAlive`: whether the signer host does its job, for a keep-alive
    /// session that wants it. It fails while signing is down (the verdict the
    /// sound follows: failed, hung, unhealthy, or not up for the start grace),
    /// naming why, and while its process is not running or starting (a restart
    /// under way); a process that exists but no longer signs is no alive signer.
    /// Passes, "not wanted", while nobody wants it; passes, saying so, while degraded.
    public static func signer(_ signer: SignerStatus, wanted: Bool, downReason: String?) -> Self {
        guard wanted else { return .init(name: HealthReport.Name.signer, ok: true, detail: "not wanted") }
        var host = "signer host \(signer.state.rawValue)"
        if signer.health == .unhealthy { host += ", its health check fails" }
        if let lastExit = signer.lastExit { host += " (last \(lastExit))" }
        if let downReason {
            return .init(name: HealthReport.Name.signer, ok: false, detail: "signing is down (\(downReason)): \(host)")
        }
        let ok = signer.state == .running || signer.state == .starting
        // Degraded is not down: it passes, saying so.
        let degraded = signer.health == .degraded ? "degraded: it signs, but its health check warns" : nil
        return .init(name: HealthReport.Name.signer, ok: ok, detail: ok ? degraded : host)
    }
}
