/// What `SignerMachine` is configured with, what it is told and what it decides.
extension SignerMachine {
    /// What the machine decides with: the signer settings' values (`Settings`, which
    /// hold the defaults), and two constants of the machine's own.
    public struct Configuration: Sendable, Equatable {
        /// The first restart delay after a quick failure; it doubles per further one.
        public var backoffInitial: Duration
        public var backoffMaximum: Duration
        /// An instance that stayed up this long resets the backoff and the crash-loop count.
        public var stableAfter: Duration = .seconds(30)
        /// Failures in a row (each quicker than `stableAfter`) before giving up until the
        /// next `play`; 0 never gives up.
        public var crashLoopLimit: Int
        public var stopSignal: SignerStopSignal
        public var stopTimeout: Duration
        /// Heartbeat lines and `WATCHDOG=1` must come at least this often.
        public var livenessTimeout: Duration?
        public var type: SignerType
        /// The health check's rhythm; nil without a health check.
        public var health: HealthConfiguration?
        /// Not running and ready for this long while wanted: down.
        public var startGrace: Duration
        /// At most one `signerStatus` event per this long.
        public var statusEventInterval: Duration = .seconds(1)
        /// `signer-keep-running`: once a session has begun, the signer stays wanted after a stop.
        public var keepRunning: Bool
        /// The signer runs without writable-and-executable memory (its own setting, or a
        /// unit that imposes it on every process): a crash at start is then named as such.
        public var writeExecuteDenied: Bool

        /// From `values` (by default, every default); `healthChecked`: whether a health check is set.
        public init(_ values: SettingValues = SettingValues(), healthChecked: Bool = false) {
            backoffInitial = values[Settings.signerRestartDelay]
            backoffMaximum = max(values[Settings.signerRestartMaxDelay], backoffInitial)
            crashLoopLimit = values[Settings.signerCrashLimit]
            keepRunning = values[Settings.signerKeepRunning]
            stopSignal = values[Settings.signerStopSignal]
            stopTimeout = values[Settings.signerStopTimeout]
            livenessTimeout = values[Settings.signerLivenessTimeout]
            type = values[Settings.signerType]
            health = healthChecked ? HealthConfiguration(values) : nil
            startGrace = values[Settings.signerStartGrace]
            writeExecuteDenied = values[Settings.signerMemoryDenyWriteExecute]
        }
    }

    /// The health check's timing (the check itself is the daemon's business).
    public struct HealthConfiguration: Sendable, Equatable {
        /// From the start of one check to the start of the next.
        public var interval: Duration
        public var timeout: Duration
        public var retries: Int
        public var restartOnUnhealthy: Bool

        public init(_ values: SettingValues = SettingValues()) {
            interval = values[Settings.signerHealthInterval]
            timeout = values[Settings.signerHealthTimeout]
            retries = values[Settings.signerHealthRetries]
            restartOnUnhealthy = values[Settings.signerRestartOnUnhealthy]
        }
    }

    public enum Input: Sendable, Equatable {
        /// Whether the user wants the keep-alive session (playing or paused: yes; stopped:
        /// no). The signer is wanted while it does, and with `keepRunning` from the first
        /// session on (`SignerMachine.wanted`).
        case session(Bool)
        /// The daemon shuts down: the signer is stopped and never wanted again.
        case shutdown
        /// A reload removed the signer host: it is stopped and never wanted again.
        case retire
        /// The user pressed play: a failed signer gets a fresh start.
        case resetFailure
        /// Instance number `instance` (`SignerInstances`, counted by the daemon) runs as `pid`.
        case spawned(instance: Int, pid: Int32)
        case spawnFailed(String)
        case exited(ExitReason)
        /// A `heartbeat` line on the signer's stdout.
        case heartbeat
        /// What the running instance's process group sent on its notify socket.
        case notify(SignerNotification)
        /// The health command ended.
        case probeFinished(instance: Int, SignerProbeResult)
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
        /// Run the health check once, giving up (and killing its process group) after `timeout`.
        case probe(instance: Int, timeout: Duration)
        /// The probe running is for an instance that is over (or a check no longer
        /// configured): stop it; its result, if any comes, is stale.
        case cancelProbe
        /// The down verdict changed (see `SignerDownVerdict`): what the sound follows. Also
        /// `.up` (with no event) when nobody wants the signer any more. It comes right
        /// before its `signerDown` / `signerRestored` emit, so that event can carry what it caused.
        case availability(SignerAvailability)
    }
}
