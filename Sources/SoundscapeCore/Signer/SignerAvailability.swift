/// Whether signing is up: the one fact of the signer that the sound follows, under one
/// name from `SignerMachine`'s verdict (`SignerDownVerdict`) to `PlayerMachine`, which
/// decides what the sink carries meanwhile (the cue, silence, or the soundscape).
public enum SignerAvailability: Sendable, Equatable {
    case up
    /// Failed, hung, unhealthy, or not running and ready for `signer-start-grace`; `reason` says which.
    case down(reason: String)
}
