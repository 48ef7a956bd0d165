/// How one health check ended (the command's run, or the HTTP check's request).
public enum SignerProbeResult: Sendable, Equatable {
    /// Healthy; `output` is the status line it gave (the command's first stdout line), if any.
    case passed(output: String?)
    /// It signs, but not all is well (a monitoring plugin's WARNING, exit status 1, with
    /// `signer-health-exit-codes = monitoring-plugins`); `output` says what.
    case degraded(output: String?)
    /// Anything else: a non-zero status, a signal, the timeout, or it could not start (in words).
    case failed(String)
}
