/// Whether signing is down, the verdict the sound follows: a part of
/// `SignerMachine`, pure like the machine.
///
/// While a keep-alive session wants the signer, it is **down** when it is failed,
/// hung, unhealthy, or has not been running and ready for `grace` (a slow start, a
/// crash and its restarts: one back within the grace does not flap the verdict).
///
/// Once down, it needs proof to be up again: with a health command, a probe that
/// passed for the instance running now (a restart alone proves nothing); without
/// one, running and ready for `grace`. So a crash loop whose instances live a moment
/// each stays down, and the verdict changes at most once per grace either way.
/// While nobody wants the signer there is no verdict: it is quietly up (no event:
/// nothing was restored).
///
/// `.availability` goes out before its event, so the player can act on it first and
/// the `signerDown` / `signerRestored` event carries the status that follows from it.
struct SignerDownVerdict: Sendable {
    /// What the machine knows now.
    struct Facts: Sendable, Equatable {
        var wanted: Bool
        var failed: Bool
        /// Running and ready.
        var up: Bool
        var unhealthy: Bool
        var healthChecked: Bool
    }

    var grace: Duration
    private(set) var down = false
    private(set) var reason: String?
    private var notUpSince: ContinuousClock.Instant?
    private var upSince: ContinuousClock.Instant?
    /// A hang was detected; cleared once an instance is up again.
    private var hung = false
    /// Down with a health command: waits for a passing probe.
    private var needsProof = false

    init(grace: Duration) {
        self.grace = grace
    }

    mutating func hangDetected() {
        hung = true
    }

    /// A health probe passed.
    mutating func proven() {
        needsProof = false
    }

    mutating func evaluate(_ facts: Facts, now: ContinuousClock.Instant) -> [SignerMachine.Action] {
        guard facts.wanted else {
            notUpSince = nil
            upSince = nil
            hung = false
            needsProof = false
            guard down else { return [] }
            down = false
            reason = nil
            return [.availability(.up)]
        }
        if facts.up {
            notUpSince = nil
            if upSince == nil { upSince = now }
            hung = false
        } else {
            upSince = nil
            if notUpSince == nil { notUpSince = now }
            // Proof is about the instance that runs: one that ended took its pass with it.
            if down { needsProof = facts.healthChecked }
        }
        let cause: String? =
            if facts.failed {
                "failed"
            } else if hung {
                "hung"
            } else if facts.unhealthy {
                "unhealthy"
            } else if let since = notUpSince, now - since >= grace {
                "not running and ready for \(SignerMachine.seconds(grace)) s"
            } else {
                nil
            }
        var actions: [SignerMachine.Action] = []
        if let cause {
            if !down {
                down = true
                needsProof = facts.healthChecked
                actions += [.availability(.down(reason: cause)), .emit(.signerDown, message: cause)]
            }
            reason = cause
        } else if down {
            let proven =
                facts.healthChecked
                ? facts.up && !needsProof
                : upSince.map { now - $0 >= grace } ?? false
            if proven {
                down = false
                reason = nil
                actions += [.availability(.up), .emit(.signerRestored, message: nil)]
            } else if !facts.healthChecked, let upSince {
                actions.append(.scheduleTick(at: upSince + grace))
            }
        }
        if !down, let since = notUpSince, now < since + grace {
            actions.append(.scheduleTick(at: since + grace))
        }
        return actions
    }
}
