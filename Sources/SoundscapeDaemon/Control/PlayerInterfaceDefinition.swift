import SoundscapeCore

/// The IDL of `io.soundscaped.Player`, served verbatim by
/// `org.varlink.service.GetInterfaceDescription` so generic varlink tools can
/// call us. Enum members are generated from the Swift enums so the two cannot drift.
///
/// Comments stand only between symbols (before `interface`, `type`, `method`,
/// `error`), never inside a symbol's parentheses: the IDL parser of systemd 255
/// and 256 (Ubuntu 24.04's `varlinkctl`) refuses the whole interface for a `#`
/// there; 257 accepts it. So a field is described in its type's comment.
/// PlayerInterfaceDefinitionTests holds that rule.
enum PlayerInterfaceDefinition {
    static let name = "io.soundscaped.Player"

    private static func members<E: CaseIterable & RawRepresentable>(_: E.Type) -> String where E.RawValue == String {
        "(" + E.allCases.map(\.rawValue).joined(separator: ", ") + ")"
    }

    /// The interruption causes, as `interruptions` and an `interrupted` event's `cause` name them.
    private static let causes = InterruptionCause.allCases.map(\.rawValue).joined(separator: ", ")

    /// The fields of `Status`, in the order `PlayerStatus` encodes them. An `Event` carries
    /// them too, flat after its own (`PlayerEvent` encodes its status beside `seq`), so
    /// both types are written from this one list: a field added here is in both.
    static let statusFields = [
        "state: \(members(PlayerState.self))",
        "isPlaying: bool",
        "soundscape: string",
        "layers: []Layer",
        "mix: ?string",
        "volume: int",
        "route: ?string",
        "noSink: ?bool",
        "wantsPlaying: bool",
        "signer: ?Signer",
        "interruptions: []string",
        "ducked: bool",
        "cuePlaying: ?bool",
        "keepAwake: ?KeepAwake",
        "sleep: ?SleepTimer",
        "version: ?string",
    ]

    /// What an `Event` has before the status it carries.
    static let eventFields = [
        "seq: int",
        "time: string",
        "type: string",
        "reason: \(members(EventReason.self))",
        "message: ?string",
        "cause: ?string",
    ]

    /// Field lines as they stand inside a type's parentheses, one a line.
    private static func fields(_ lines: [String]) -> String {
        lines.joined(separator: ",\n  ")
    }

    static let idl = """
        # Control and events of soundscaped, the keep-alive soundscape service.
        # Volumes are percentages (0-100); gain follows a cubic curve.
        interface io.soundscaped.Player

        # What the daemon does now.
        #   state: resuming while a start settles (a play, a return, the saved session at start).
        #   isPlaying: true only while the soundscape really flows to a sink.
        #   soundscape: what plays (or would play on Play): a mix's first layer.
        #   layers: what plays, each soundscape at its level (0-100); one at 100 for a
        #     single soundscape; absent from older daemons.
        #   mix: the saved mix that plays, unchanged since it was played or saved; null for any other.
        #   route: node.name of the sink we play to, null while not linked.
        #   noSink: the graph has no sink to play to (no sound device); null from older daemons.
        #   wantsPlaying: what the user asked for; survives interruptions and restarts.
        #   signer: the signer host, null when none is configured.
        #   interruptions: what interrupts playback now.
        #   ducked: the volume is lowered for a call (interruption mode duck).
        #   cuePlaying: the sink carries the signer-down cue (signing is down); null from older daemons.
        #   keepAwake: the sleep inhibitor; null while the keep-awake preference is off.
        #   sleep: the sleep timer, while one is set (and asleep, once it ran out, until Play).
        #   version: the daemon's version, as soundscaped --version prints it; null from older daemons.
        type Status (
          \(fields(statusFields))
        )

        # One layer of a mix: a soundscape at its level (0-100, on the volume curve,
        # under the master volume; 100 is the soundscape at its own loudness).
        type Layer (
          id: string,
          level: int
        )

        # The sleep timer: counting down; fading (the sound fades away until ends);
        # asleep (the time is up: silent, the keep-alive goes on, until Play).
        #   ends: when the time is up, RFC 3339 UTC; remaining: seconds until then;
        #     both null once asleep.
        type SleepTimer (
          state: \(members(SleepStatus.State.self)),
          ends: ?string,
          remaining: ?int
        )

        # The sleep inhibitor.
        #   detail: why it could not be taken (state unavailable).
        type KeepAwake (
          state: \(members(KeepAwakeStatus.State.self)),
          detail: ?string
        )

        # The user's preferences.
        #   duckLevel: percent of the user's volume while ducked.
        #   pinnedSink: play to this sink whenever it exists; null follows the default.
        #   keepAwake: hold a logind sleep:idle inhibitor while a keep-alive session runs.
        #   notifications: desktop notifications (raised by soundscaped-desktop) when the keep-alive breaks.
        #   signerDownSound: what plays while the signer is down (null from older daemons: cue).
        type Preferences (
          interruptionMode: \(members(Preferences.InterruptionMode.self)),
          duckLevel: int,
          autoResume: bool,
          pinnedSink: ?string,
          keepAwake: bool,
          notifications: bool,
          signerDownSound: ?\(members(Preferences.SignerDownSound.self))
        )

        # The signer host the daemon keeps alive.
        #   restarts: restarts since the session began.
        #   lastExit: how the last instance ended, in words (what to change, when the cause
        #     of a death at start is known).
        #   lastExitSignal: the signal it died of, by name (SIGTRAP), if it died of one.
        #   name: its program's name, for messages.
        #   health: what its health check last said (unknown without one); degraded: it
        #     signs, but its check warns (a monitoring plugin's WARNING), which is not down.
        #   ready: running, and for \(Settings.signerType.key) notify it sent READY=1.
        #   status: its own words, the last STATUS= it sent or what a passing health
        #     check said (one line, at most 200 characters).
        #   health, ready and status are optional: a client must not rely on a daemon sending them,
        #     and should read a health it does not know (a later daemon's) as unknown.
        type Signer (
          state: \(members(SignerStatus.State.self)),
          pid: ?int,
          restarts: int,
          lastExit: ?string,
          lastExitSignal: ?string,
          name: ?string,
          health: ?\(members(SignerStatus.Health.self)),
          ready: ?bool,
          status: ?string
        )

        # One change, with the whole status after it (the fields from state on are Status's).
        #   seq: grows by one per event; a subscriber can prove it missed none.
        #   time: RFC 3339, UTC.
        #   type: the subsystem the event is about: \(EventType.allCases.map(\.rawValue).joined(separator: ", ")).
        #   cause: for interrupted: \(causes);
        #     for routeChanged: newDefault, deviceUnavailable, pinnedDeviceReturned.
        type Event (
          \(fields(eventFields + statusFields))
        )

        # unplayable: why the file cannot play (not an Ogg Opus stream); absent when it can.
        # credit: who made it, under which licence (an import's --credit); absent when not given.
        type Soundscape (
          id: string,
          title: string,
          origin: (builtin, extra, user),
          path: string,
          gain: float,
          isDefault: bool,
          unplayable: ?string,
          credit: ?string
        )

        # Plays the soundscape alone, or the layers together (at most \(Mix.maximumLayers)),
        # or the saved mix, or none of them: what played last. A soundscape that is
        # no soundscape's id but a saved mix's name plays the mix (an id wins).
        # Switching from what plays cross-fades, layer by layer: a layer in both
        # changes level only. Replies once the graph runs the stream or the start
        # has visibly failed (state recovering).
        method Play(soundscape: ?string, layers: ?[]Layer, mix: ?string) -> (status: Status)

        # Layers saved under a name, to be played again (Play with mix).
        type SavedMix (
          name: string,
          layers: []Layer
        )

        # Saves what plays (or would play on Play), each layer at its level, as name,
        # replacing a saved mix of that name; what plays is then that mix (Status's mix).
        # Refused: a name a soundscape id could not be (letters, digits, spaces
        # and - _ . + ( ) , ' only, not beginning with . or -), or a soundscape's id.
        method SaveMix(name: string) -> (mix: SavedMix)

        # Deletes the saved mix; what plays goes on.
        method DeleteMix(name: string) -> ()

        # The saved mixes, sorted by name.
        method ListMixes() -> (mixes: []SavedMix)

        # Sets one layer's level (adding it, last, with a short fade-in), or with
        # level null fades it out and takes it out. Changes what plays, or would
        # play on Play; starts nothing. Refused: a seventh layer, the last one out.
        method SetLayer(soundscape: string, level: ?int) -> (status: Status)

        # Sets the sleep timer to end in this many seconds (1-86400): the sound
        # fades away over the last third (at most 60 s), then the keep-alive goes
        # on silently, as at volume off, until Play. Null cancels the timer.
        # Refused while nothing plays.
        method Sleep(seconds: ?int) -> (status: Status)

        # Fades out and keeps the session: the stream goes inactive (the sink
        # can suspend) and the signer host keeps running. Play resumes.
        # Does nothing when stopped.
        method Pause() -> (status: Status)

        # Fades out and ends the session; the signer host stops too (unless
        # configured to keep running).
        method Stop() -> (status: Status)

        method SetVolume(volume: int) -> (status: Status)

        method GetStatus() -> (status: Status)

        # One health check.
        #   name: daemonLoopResponsive, pipewireConnected, audioFlowing, signerAlive, stateStoreWritable.
        type HealthCheck (
          name: string,
          ok: bool,
          detail: ?string
        )

        # healthy is true when every check passes.
        method GetHealth() -> (healthy: bool, checks: []HealthCheck)

        method GetPreferences() -> (preferences: Preferences)

        # name: interruption-mode (pause|duck|ignore), duck-level (0-100),
        # auto-resume (on|off), pinned-sink (a node.name, or none),
        # keep-awake (on|off), notifications (on|off), signer-down-sound
        # (cue|silence|keep: what plays while the signer is down).
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

        error NoSuchMix (name: string)

        error DecodeFailed (soundscape: string, reason: string)

        error InvalidPreference (name: string, reason: string)

        # A request that cannot be carried out as asked (reason says why, for the user):
        # a mix of more than \(Mix.maximumLayers) layers, a soundscape twice, the last layer out,
        # a sleep timer while nothing plays.
        error Refused (reason: string)

        # The subscriber fell more than `limit` events behind and was dropped.
        error SubscriberTooSlow (limit: int)

        # A reload refused the config file (reason: the file, the line, what is wrong);
        # the daemon keeps the settings it has.
        error InvalidConfiguration (reason: string)

        # The daemon cannot use its configuration and runs not configured: every call is
        # answered with this (reason: the file, the line, what is wrong) until it is mended.
        error NotConfigured (reason: string)

        # The configuration was mended: the daemon is starting again with it. Ask again.
        error Restarting ()
        """
}
