import SoundscapeCore

/// The IDL of `io.soundscaped.Player`, served verbatim by
/// `org.varlink.service.GetInterfaceDescription` so generic varlink tools can
/// call us. Enum members are generated from the Swift enums so the two cannot drift.
enum PlayerInterfaceDefinition {
    static let name = "io.soundscaped.Player"

    private static func members<E: CaseIterable & RawRepresentable>(_: E.Type) -> String where E.RawValue == String {
        "(" + E.allCases.map(\.rawValue).joined(separator: ", ") + ")"
    }

    /// The interruption causes, as `interruptions` and an `interrupted` event's `cause` name them.
    private static let causes = InterruptionCause.allCases.map(\.rawValue).joined(separator: ", ")

    static let idl = """
        # Control and events of soundscaped, the keep-alive soundscape service.
        # Volumes are percentages (0-100); gain follows a cubic curve.
        interface io.soundscaped.Player

        type Status (
          state: \(members(PlayerState.self)),
          # True only while audio really flows to a sink.
          isPlaying: bool,
          soundscape: string,
          volume: int,
          # node.name of the sink we play to, null while not linked.
          route: ?string,
          # What the user asked for; survives interruptions and restarts.
          wantsPlaying: bool,
          # The signer host, null when none is configured.
          signer: ?Signer,
          # What interrupts playback now: \(causes).
          interruptions: []string,
          # The volume is lowered for a call (interruption mode duck).
          ducked: bool,
          # The sleep inhibitor; null while the keep-awake preference is off.
          keepAwake: ?KeepAwake
        )

        type KeepAwake (
          state: \(members(KeepAwakeStatus.State.self)),
          # Why it could not be taken (state unavailable).
          detail: ?string
        )

        type Preferences (
          interruptionMode: \(members(Preferences.InterruptionMode.self)),
          # Percent of the user's volume while ducked.
          duckLevel: int,
          autoResume: bool,
          # Play to this sink whenever it exists; null follows the default.
          pinnedSink: ?string,
          # Hold a logind sleep:idle inhibitor while a keep-alive session runs.
          keepAwake: bool,
          # Desktop notifications (raised by soundscaped-desktop) when the keep-alive breaks.
          notifications: bool
        )

        type Signer (
          state: \(members(SignerStatus.State.self)),
          pid: ?int,
          # Restarts since the session began.
          restarts: int,
          # How the last instance ended, in words.
          lastExit: ?string,
          # Its program's name, for messages.
          name: ?string
        )

        type Event (
          # Grows by one per event; a subscriber can prove it missed none.
          seq: int,
          # RFC 3339, UTC.
          time: string,
          # The subsystem the event is about: \(EventType.allCases.map(\.rawValue).joined(separator: ", ")).
          type: string,
          reason: \(members(EventReason.self)),
          message: ?string,
          # For interrupted: \(causes).
          # For routeChanged: newDefault, deviceUnavailable, pinnedDeviceReturned.
          cause: ?string,
          state: \(members(PlayerState.self)),
          isPlaying: bool,
          soundscape: string,
          volume: int,
          route: ?string,
          wantsPlaying: bool,
          signer: ?Signer,
          interruptions: []string,
          ducked: bool,
          keepAwake: ?KeepAwake
        )

        type Soundscape (
          id: string,
          title: string,
          origin: (builtin, extra, user),
          path: string,
          gain: float,
          isDefault: bool
        )

        # Plays the soundscape (default: the current one), switching with a
        # crossfade if another plays. Replies once the graph runs the stream
        # or the start has visibly failed (state recovering).
        method Play(soundscape: ?string) -> (status: Status)

        # Fades out and keeps the session: the stream goes inactive (the sink
        # can suspend) and the signer host keeps running. Play resumes.
        # Does nothing when stopped.
        method Pause() -> (status: Status)

        # Fades out and ends the session; the signer host stops too (unless
        # configured to keep running).
        method Stop() -> (status: Status)

        method SetVolume(volume: int) -> (status: Status)

        method GetStatus() -> (status: Status)

        type HealthCheck (
          # daemonLoopResponsive, pipewireConnected, audioFlowing, signerAlive, stateStoreWritable
          name: string,
          ok: bool,
          detail: ?string
        )

        # healthy is true when every check passes.
        method GetHealth() -> (healthy: bool, checks: []HealthCheck)

        method GetPreferences() -> (preferences: Preferences)

        # name: interruption-mode (pause|duck|ignore), duck-level (0-100),
        # auto-resume (on|off), pinned-sink (a node.name, or none),
        # keep-awake (on|off), notifications (on|off).
        method SetPreference(name: string, value: string) -> (preferences: Preferences)

        method ListSoundscapes() -> (soundscapes: []Soundscape, default: string)

        # Reads the config file again, as SIGHUP does, and applies what changed;
        # each change says when it takes effect. A file that does not parse is
        # refused (InvalidConfiguration names the line) and nothing changes.
        method Reload() -> (changes: []string)

        # Call with "more". The first reply is a snapshot (reason "snapshot")
        # carrying the seq of the latest event; then one reply per event.
        method Subscribe() -> (event: Event)

        error NoSuchSoundscape (soundscape: string)

        error DecodeFailed (soundscape: string, reason: string)

        # The subscriber fell more than `limit` events behind and was dropped.
        error InvalidPreference (name: string, reason: string)

        error SubscriberTooSlow (limit: int)

        error InvalidConfiguration (reason: string)
        """
}
