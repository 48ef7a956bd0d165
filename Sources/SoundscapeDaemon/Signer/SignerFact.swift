import SoundscapeCore
import SoundscapeSystem

/// What a running signer instance (or its health command, or the clock) tells the player.
enum SignerFact: Sendable {
    /// A spawn asked for (`SignerHost.spawn`) is done.
    case spawned(instance: Int, Result<SpawnedSigner, SpawnError>)
    case heartbeat(instance: Int)
    case exited(instance: Int, ExitReason)
    /// What its process group said on its notify socket (merged, see `SignerNotifySocket`).
    case notify(instance: Int, SignerNotification)
    /// The health command ended.
    case probed(SignerProbeResult)
    /// The wall clock was set, or the machine resumed: both clocks, read then.
    case clock(SleepDetector.Reading)
}
