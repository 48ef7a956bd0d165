/// The player's state as clients see it.
public enum PlayerState: String, Sendable, Codable, CaseIterable {
    /// The user does not want playback.
    case stopped
    /// The user wants playback and the soundscape is (being) played.
    case playing
    /// The user wants playback, but something outranks us (a call, the server pausing us).
    case interrupted
    /// The user wants playback and we are working to get it back (no server, no sink, a stall).
    case recovering
    /// The user paused: no sound, but the keep-alive session (and its signer host) goes on.
    case paused
    /// The user wants playback and it is starting: a play, a return after an interruption,
    /// or the daemon resuming its saved session; sound follows in a moment (or `resumeFailed`).
    case resuming
}

/// Why an event was sent. The first words are the phone app's, so a signer
/// written against it feels at home; the rest are Linux additions.
public enum EventReason: String, Sendable, Codable, CaseIterable {
    case started
    case stopped
    /// The user paused (or an interruption ended with auto-resume off): silent, the session goes on.
    case paused
    case interrupted
    case resumed
    case resumeFailed
    case routeChanged
    case routeChangeFailed
    case decodeError
    case volumeChanged
    case soundscapeChanged
    /// A layer of the mix came in, changed level or went out (message: the mix now).
    case layersChanged
    /// The sleep timer was set or cancelled (message: when it ends, or that it is off).
    case sleepChanged
    /// Audio should flow but has stopped (the watchdog is working on it).
    case stalled
    /// Audio flows again after `stalled`.
    case recovered
    /// The PipeWire server went away (or is not there) while we want to play.
    case serverLost
    /// The PipeWire server is back; `resumed` follows once audio flows.
    case serverRestored
    /// The state database was damaged and moved aside, or cannot be written
    /// (changes are kept in memory meanwhile); the message says which.
    case storeProblem
    /// The signer host started (message: its pid).
    case signerStarted
    /// The signer host ended on its own (message: exit status or signal).
    case signerExited
    /// The signer host will be started again (message: the delay).
    case signerRestarting
    /// The signer host crashed too often in a row; it stays down until the next play.
    case signerFailed
    /// The signer host was stopped on purpose.
    case signerStopped
    /// The signer host stopped sending heartbeats (or `WATCHDOG=1`) and is being restarted.
    case signerHung
    /// A `signer-type = notify` signer sent `READY=1`: it is running.
    case signerReady
    /// The signer's status line changed (message: the line); at most one a second.
    case signerStatus
    /// The signer sent `STOPPING=1`: it is shutting down by itself.
    case signerStopping
    /// The health command failed `signer-health-retries` times in a row (message: why).
    case signerUnhealthy
    /// The health check passed again after `signerUnhealthy` or `signerDegraded`.
    case signerHealthy
    /// The health check says the signer signs, degraded (a monitoring plugin's WARNING;
    /// message: what it printed). Not down: the soundscape plays on.
    case signerDegraded
    /// Signing is down while the keep-alive wants it: failed, hung, unhealthy, or not
    /// running and ready for longer than `signer-start-grace` (message: why).
    case signerDown
    /// The signer is up again after `signerDown`.
    case signerRestored
    /// A preference was set (message: which; GetPreferences has their values).
    case preferencesChanged
    /// A mix was saved or deleted (message: which; ListMixes has them all).
    case mixesChanged
    /// Not a change: the first message of a subscription, carrying the current
    /// state and the `seq` of the latest event, so the next event is `seq + 1`.
    case snapshot
}

/// Which subsystem an event is about; lets a subscriber filter without knowing every reason.
public enum EventType: String, Sendable, Codable, CaseIterable {
    case player
    case signer
}
