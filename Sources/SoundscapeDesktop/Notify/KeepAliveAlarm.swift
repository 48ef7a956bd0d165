import SoundscapeCore

/// Decides the desktop notifications about the keep-alive: one per incident,
/// updated in place, never more than one a minute.
///
/// It re-derives what is wrong from each status it is given (and on each tick),
/// never from an "ended" signal:
/// - the signer host is `failed` (it crashed too often and stays down), or
///   unhealthy (its health command keeps failing: it may not sign);
/// - audio should flow (the user wants sound and nothing interrupts it) but has
///   not for `silenceThreshold` — PipeWire gone, no usable sink, resume failing;
/// - the daemon cannot be reached, though the last status wanted a session;
/// - the daemon answers that it is not configured (its config file is broken): at
///   once, whatever the last status, since nothing plays until the file is mended.
/// And one that is not a break: the signer signs, degraded (its health check
/// warns, as a monitoring plugin's WARNING), raised as "Keep-alive degraded" at
/// normal urgency; a break outranks it.
/// An incident opens when one of these holds and closes with one "restored"
/// notification once none does. A problem that heals before it was ever shown
/// raises nothing. A message due less than `minimumInterval` after the last one
/// waits for it (the newest text wins), so a flapping output cannot spam.
public struct KeepAliveAlarm: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var silenceThreshold: Duration = .seconds(10)
        public var minimumInterval: Duration = .seconds(60)
        public init() {}
    }

    public struct Message: Sendable, Equatable {
        public var summary: String
        public var body: String
        /// Critical while the keep-alive is broken, normal once restored.
        public var critical: Bool
        /// Same number: the same incident (update the notification in place).
        public var incident: Int
    }

    public enum Action: Sendable, Equatable {
        case show(Message)
        /// Look again then (a threshold or the rate limit runs out).
        case scheduleTick(at: ContinuousClock.Instant)
    }

    private enum Incident: Equatable {
        case none
        /// Open; `shown` once a message about it went out.
        case open(number: Int, shown: Bool)
    }

    public let configuration: Configuration
    private var status: PlayerStatus?
    /// The last status seen while the daemon could be reached.
    private var lastKnown: PlayerStatus?
    private var silentSince: ContinuousClock.Instant?
    private var incident: Incident = .none
    private var incidentCount = 0
    private var lastSent: ContinuousClock.Instant?
    private var lastMessage: Message?
    private var enabled = true
    /// What the daemon said is wrong with its configuration, until it answers with a status.
    private var configurationProblem: String?

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// A new status from the daemon; nil when it cannot be reached.
    public mutating func update(_ status: PlayerStatus?, now: ContinuousClock.Instant) -> [Action] {
        self.status = status
        if let status {
            lastKnown = status
            configurationProblem = nil
        }
        let silent = Self.shouldSound(status, lastKnown: lastKnown) && !(status?.isPlaying ?? false)
        if silent {
            if silentSince == nil { silentSince = now }
        } else {
            silentSince = nil
        }
        return evaluate(now: now)
    }

    /// The daemon answered that it is not configured, with `reason` (the file, the line).
    public mutating func notConfigured(_ reason: String, now: ContinuousClock.Instant) -> [Action] {
        configurationProblem = reason
        return evaluate(now: now)
    }

    public mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        evaluate(now: now)
    }

    /// The `notifications` preference; off drops what was waiting.
    public mutating func setEnabled(_ enabled: Bool) {
        self.enabled = enabled
    }

    /// Sound should reach a speaker: wanted and not paused or interrupted. An
    /// unreachable daemon counts when the last status wanted sound.
    static func shouldSound(_ status: PlayerStatus?, lastKnown: PlayerStatus?) -> Bool {
        guard let status else {
            guard let lastKnown else { return false }
            return lastKnown.wantsPlaying && lastKnown.state != .paused
        }
        return status.wantsPlaying && [.playing, .recovering, .resuming].contains(status.state)
    }

    /// What is wrong now, in words (empty: nothing).
    private func problems(now: ContinuousClock.Instant) -> [String] {
        if let configurationProblem {
            // Nothing else is known, nor can play, until the file is mended.
            return ["soundscaped is not configured: \(configurationProblem). Mend the file; it starts with it."]
        }
        var problems: [String] = []
        if let signer = status?.signer, signer.state == .failed {
            let name = signer.name ?? "the signer host"
            problems.append(
                "\(name) keeps crashing and was stopped at its \(Settings.signerCrashLimit.key)"
                    + (signer.lastExit.map { " (last \($0))" } ?? "")
                    + "; press play (or run `soundscapectl play`) to try again.")
        } else if let signer = status?.signer, signer.health == .unhealthy {
            let name = signer.name ?? "the signer host"
            problems.append("\(name) fails its health check: it may not be signing.")
        }
        if let since = silentSince, now - since >= configuration.silenceThreshold {
            // The threshold, not the running time: the text must not change while the outage lasts.
            let seconds = configuration.silenceThreshold.components.seconds
            if let status {
                let why = status.route == nil ? "no usable sound output" : "the stream does not flow"
                problems.append("No sound for over \(seconds) s: \(why) (\(status.state.rawValue)).")
            } else {
                problems.append("soundscaped has not answered for over \(seconds) s.")
            }
        }
        return problems
    }

    /// What is not well though nothing is broken: the signer signs, degraded.
    private var warnings: [String] {
        guard let signer = status?.signer, signer.state == .running, signer.health == .degraded else { return [] }
        let name = signer.name ?? "the signer host"
        return ["\(name) signs, but its health check warns" + (signer.status.map { ": \($0)" } ?? ".")]
    }

    private mutating func evaluate(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        let problems = problems(now: now)
        let warnings = problems.isEmpty ? warnings : []
        let troubled = !problems.isEmpty || !warnings.isEmpty
        var due: Message?
        // The message due closes the incident (it is the "restored" one).
        var closing = false
        switch (incident, troubled) {
        case (.none, true):
            incidentCount += 1
            incident = .open(number: incidentCount, shown: false)
            due = Self.message(problems: problems, warnings: warnings, incident: incidentCount)
        case (.open(let number, _), true):
            due = Self.message(problems: problems, warnings: warnings, incident: number)
        case (.open(let number, let shown), false):
            if shown {
                closing = true
                due = Message(
                    summary: "Keep-alive restored", body: "The soundscape plays and the signer host runs again.",
                    critical: false, incident: number)
            } else {
                incident = .none
            }
        case (.none, false):
            break
        }
        if let due, due != lastMessage {
            if !enabled {
                // Off: nothing is shown, and a healed incident closes quietly.
                if closing { incident = .none }
            } else if let lastSent, now - lastSent < configuration.minimumInterval {
                actions.append(.scheduleTick(at: lastSent + configuration.minimumInterval))
            } else {
                actions.append(.show(due))
                lastSent = now
                lastMessage = due
                if case .open(let number, _) = incident {
                    incident = closing ? .none : .open(number: number, shown: true)
                }
            }
        }
        if let since = silentSince, now - since < configuration.silenceThreshold {
            actions.append(.scheduleTick(at: since + configuration.silenceThreshold))
        }
        return actions
    }

    /// Breaks, critical; else warnings, at normal urgency.
    private static func message(problems: [String], warnings: [String], incident: Int) -> Message {
        guard problems.isEmpty else {
            return Message(summary: "Keep-alive broken", body: problems.joined(separator: "\n"), critical: true, incident: incident)
        }
        return Message(summary: "Keep-alive degraded", body: warnings.joined(separator: "\n"), critical: false, incident: incident)
    }
}
