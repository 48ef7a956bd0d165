import SoundscapeCore
import SoundscapeSystem

/// What a running signer instance (or its health command, or the clock) tells the player.
/// `Spawned`: what the host's spawn gives (`SpawnedSigner` for the real `SignerHost`).
enum SignerFact<Spawned: Sendable>: Sendable {
    /// A spawn asked for (`SignerHosting.spawn`) is done.
    case spawned(instance: Int, Result<Spawned, SpawnError>)
    case heartbeat(instance: Int)
    case exited(instance: Int, ExitReason)
    /// What its process group said on its notify socket (merged, see `SignerNotifySocket`).
    case notify(instance: Int, SignerNotification)
    /// The health check of that instance ended.
    case probed(instance: Int, SignerProbeResult)
    /// The wall clock was set, or the machine resumed: both clocks, read then.
    case clock(SleepDetector.Reading)
}
