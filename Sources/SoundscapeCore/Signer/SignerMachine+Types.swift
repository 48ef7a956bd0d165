/// What `SignerMachine` is configured with, what it is told and what it decides.
extension SignerMachine {
    public struct Configuration: Sendable, Equatable {
        public var backoffInitial: Duration = .seconds(1)
        public var backoffMaximum: Duration = .seconds(60)
        /// An instance that stayed up this long resets the backoff and the crash-loop count.
        public var stableAfter: Duration = .seconds(30)
        /// Failures in a row (each quicker than `stableAfter`) before giving up until the
        /// next `play`; 0 never gives up.
        public var crashLoopLimit = 5
        public var stopSignal: SignerStopSignal = .term
        public var stopTimeout: Duration = .seconds(5)
        /// Heartbeat lines and `WATCHDOG=1` must come at least this often.
        public var livenessTimeout: Duration?
        public var type: SignerType = .simple
        public var health: HealthConfiguration?
        /// Not running and ready for this long while wanted: down.
        public var startGrace: Duration = .seconds(10)
        /// At most one `signerStatus` event per this long.
        public var statusEventInterval: Duration = .seconds(1)

        public init() {}
    }

    /// The health command's timing (the command itself is the daemon's business).
    public struct HealthConfiguration: Sendable, Equatable {
        public var interval: Duration = .seconds(10)
        public var timeout: Duration = .seconds(5)
        public var retries = 3
        public var restartOnUnhealthy = true

        public init() {}
    }

    public enum Input: Sendable, Equatable {
        case setWanted(Bool)
        /// The user pressed play: a failed signer gets a fresh start.
        case resetFailure
        case spawned(pid: Int32)
        case spawnFailed(String)
        case exited(ExitReason)
        /// A `heartbeat` line on the signer's stdout.
        case heartbeat
        /// What the running instance's process group sent on its notify socket.
        case notify(SignerNotification)
        /// The health command ended.
        case probeFinished(SignerProbeResult)
        /// The machine was suspended this long (see `SleepDetector`).
        case resumed(slept: Duration)
        case tick
    }

    public enum Action: Sendable, Equatable {
        case spawn
        /// This signal to the instance's whole process group.
        case terminate(SignerStopSignal)
        /// SIGKILL to the instance's whole process group.
        case kill
        case scheduleTick(at: ContinuousClock.Instant)
        case emit(EventReason, message: String?)
        /// Run the health command once, killing its process group after `timeout`.
        case probe(timeout: Duration)
        /// The down verdict changed (see `SignerDownVerdict`): what the sound follows.
        case availability(down: Bool, reason: String?)
    }
}
