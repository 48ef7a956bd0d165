import SoundscapeCore
import SoundscapeSystem

/// What `SignerSupervisor` needs of the signer's processes: start an instance, watch
/// it, throw away one nobody waits for, and run the health check. `SignerHost` is the
/// real one; a test gives the supervisor a host of its own, with no process at all.
protocol SignerHosting: AnyObject, Sendable {
    /// An instance just spawned, not yet watched (`SpawnedSigner` for the real host).
    associatedtype Spawned: Sendable

    /// What the next instance starts with.
    var configuration: SignerConfiguration { get }
    /// Writable-and-executable memory is denied to the signer from outside (a unit that
    /// imposes it on every process), so a crash at start is named as such.
    var writeExecuteDeniedFromOutside: Bool { get }
    /// A reload: the process settings apply at the next start.
    func reconfigure(_ configuration: SignerConfiguration)
    /// Starts instance number `instance`.
    func spawn(instance: Int) async throws(SpawnError) -> Spawned
    /// Watches a spawned instance: its facts arrive through `report` until it has exited.
    func attach(_ spawned: Spawned, instance: Int, report: @escaping @Sendable (SignerFact<Spawned>) async -> Void)
        -> RunningSigner
    /// An instance spawned for nobody (replaced while it started): killed.
    func discard(_ spawned: Spawned)
    /// Runs the health check once.
    func probe(timeout: Duration, cancellation: SignerProbe.Cancellation) async -> SignerProbeResult
}
