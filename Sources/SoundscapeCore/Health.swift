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
