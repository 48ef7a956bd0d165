/// An instance just spawned, not yet watched (`SignerHost.attach`).
struct SpawnedSigner: Sendable {
    let process: SignerProcess
    let notify: SignerNotifySocket?
    /// Its `$CREDENTIALS_DIRECTORY`, removed once it has exited.
    let credentials: String?
}
