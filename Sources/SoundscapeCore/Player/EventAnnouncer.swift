/// Decides which event a change is worth, so clients hear each state once and
/// in words that say why.
///
/// At most one event per input: the state transition if there is one (it
/// carries the full status, so other changes ride along), otherwise the
/// input's own news. A part of `PlayerMachine`; pure, like the machine.
struct EventAnnouncer: Sendable {
    /// Whether the current play session has been audible yet: its first audible
    /// moment is `started`, any later return to playing `resumed`.
    enum Session: Sendable, Equatable {
        case silent
        case audible
    }

    /// What an earlier event promised to follow up.
    enum Pending: Sendable, Equatable {
        case none
        /// `stalled` went out: the return to playing is `recovered`.
        case recovery
        /// `serverLost` went out: the server's return is news (`serverRestored`).
        case serverReturn
    }

    /// What the machine knows when a state is published, for the event's reason and words.
    struct Situation {
        var stalled: Bool
        /// The stall is the server's: it does not answer.
        var serverUnresponsive = false
        var noUsableSink: Bool
        var serverUnavailable: Bool
        var disconnectReason: String?
        /// For `interrupted`: the cause to name, and its description.
        var interruption: (cause: InterruptionCause, description: String)?
    }

    /// The state last announced. The current state may lag behind the output
    /// for the short moment a start takes, so a transient the user never hears
    /// is not announced.
    private(set) var published: PlayerState = .stopped
    private(set) var session: Session = .silent
    private(set) var pending: Pending = .none

    /// A new play session begins (from stopped).
    mutating func sessionBegins() {
        session = .silent
    }

    /// Playback was stopped: a stall worked on no longer needs a `recovered`.
    mutating func stopped() {
        if pending == .recovery { pending = .none }
    }

    /// The output connected again: `serverRestored` if `serverLost` went out.
    mutating func serverConnected() -> PlayerMachine.Announcement? {
        guard pending == .serverReturn else { return nil }
        pending = .none
        return PlayerMachine.Announcement(.serverRestored)
    }

    /// The event for `state` (nil while a start settles), or the input's own news.
    /// `situation` is needed (and read) only when `state` differs from the one published.
    mutating func publish(
        _ state: PlayerState?, situation: Situation?,
        news: PlayerMachine.Announcement?
    ) -> [PlayerMachine.Action] {
        // `resuming` is a settling start as status shows it: its outcome is the news, not it.
        guard let state, state != .resuming, state != published, let situation else {
            return news.map { [.emit($0.reason, message: $0.message, cause: $0.cause)] } ?? []
        }
        let previous = published
        published = state
        let reason: EventReason
        var message: String?
        var cause: String?
        switch state {
        case .stopped:
            reason = news?.reason == .decodeError ? .decodeError : .stopped
        case .paused:
            reason = .paused
        case .playing:
            reason = pending == .recovery ? .recovered : (session == .audible || previous == .interrupted) ? .resumed : .started
            session = .audible
            if pending == .recovery { pending = .none }
        case .recovering:
            if situation.stalled {
                reason = .stalled
                pending = .recovery
                if situation.serverUnresponsive { message = "PipeWire does not answer; waiting for it" }
            } else if situation.noUsableSink {
                reason = .routeChangeFailed
                message = "no sink to play to; waiting for one"
            } else if situation.serverUnavailable {
                reason = .serverLost
                pending = .serverReturn
                message = situation.disconnectReason.map { "PipeWire is not available: \($0)" }
            } else {
                reason = .resumeFailed
            }
        case .resuming:
            return []
        case .interrupted:
            reason = .interrupted
            cause = situation.interruption?.cause.rawValue
            message = situation.interruption?.description
        }
        // An input's own words go with the event only when they explain it.
        if let news, news.reason == reason, news.message != nil {
            message = news.message
            cause = news.cause ?? cause
        }
        return [.emit(reason, message: message, cause: cause)]
    }
}
