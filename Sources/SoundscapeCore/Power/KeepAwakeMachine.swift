/// Decides when soundscaped holds a logind sleep inhibitor (the `keep-awake`
/// preference): while the preference is on and a keep-alive session runs
/// (playing, paused or interrupted — whenever the signer host should be up).
///
/// Each attempt has a number; a report about an attempt that was already given
/// up (released, or replaced) is stale and ignored, so a late "held" from a
/// released inhibitor can never resurrect it. An attempt that fails (no logind,
/// no `systemd-inhibit`, refused by polkit) leaves the machine `unavailable`
/// until what is wanted changes again: a new session, or the preference toggled.
/// No timer retries it, so an absent logind costs nothing while idle.
public struct KeepAwakeMachine: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        /// Not wanted, nothing held.
        case idle
        /// The inhibitor is being taken (attempt number).
        case taking(attempt: Int)
        /// logind holds our inhibitor.
        case held(attempt: Int)
        /// Wanted, but it could not be taken; why, in words.
        case unavailable(reason: String)
    }

    public enum Input: Sendable, Equatable {
        /// The preference and the session, as they are now.
        case wanted(Bool)
        /// The attempt's inhibitor is held.
        case held(attempt: Int)
        /// The attempt ended (it failed, or its holder went away); why, in words.
        case ended(attempt: Int, reason: String)
    }

    public enum Action: Sendable, Equatable {
        /// Ask logind for the inhibitor.
        case take(attempt: Int)
        /// Let the attempt's inhibitor go (close its descriptor).
        case release(attempt: Int)
    }

    public private(set) var state: State = .idle
    private var lastAttempt = 0

    public init() {}

    public var isWanted: Bool {
        if case .idle = state { return false }
        return true
    }

    public mutating func handle(_ input: Input) -> [Action] {
        switch (input, state) {
        case (.wanted(true), .idle):
            lastAttempt += 1
            state = .taking(attempt: lastAttempt)
            return [.take(attempt: lastAttempt)]
        case (.wanted(false), .taking(let attempt)), (.wanted(false), .held(let attempt)):
            state = .idle
            return [.release(attempt: attempt)]
        case (.wanted(false), .unavailable):
            state = .idle
            return []
        case (.wanted, _):
            return []
        case (.held(let attempt), .taking(let current)) where attempt == current:
            state = .held(attempt: attempt)
            return []
        case (.ended(let attempt, let reason), .taking(let current)) where attempt == current,
            (.ended(let attempt, let reason), .held(let current)) where attempt == current:
            state = .unavailable(reason: reason)
            return [.release(attempt: attempt)]
        case (.held, _), (.ended, _):
            return []
        }
    }

    /// What `status` shows; nil while the preference is off.
    public func status(preferenceOn: Bool) -> KeepAwakeStatus? {
        guard preferenceOn else { return nil }
        switch state {
        case .idle: return KeepAwakeStatus(state: .idle, detail: nil)
        case .taking: return KeepAwakeStatus(state: .taking, detail: nil)
        case .held: return KeepAwakeStatus(state: .held, detail: nil)
        case .unavailable(let reason): return KeepAwakeStatus(state: .unavailable, detail: reason)
        }
    }
}

/// The sleep inhibitor as `status` shows it (present while `keep-awake` is on).
public struct KeepAwakeStatus: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Codable, CaseIterable {
        /// No keep-alive session runs, so nothing is held.
        case idle
        /// Asking logind.
        case taking
        /// logind holds our `sleep:idle` block inhibitor.
        case held
        /// It could not be taken (logind absent, refused); `detail` says why.
        case unavailable
    }

    public var state: State
    public var detail: String?

    public init(state: State, detail: String?) {
        self.state = state
        self.detail = detail
    }
}
