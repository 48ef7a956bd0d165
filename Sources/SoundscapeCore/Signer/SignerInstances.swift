/// The signer's instances, numbered, and the one rule for facts about them: a fact
/// (a heartbeat, a notification, an exit, a health probe's result) counts only while
/// the instance it is about is the current one. A fact of an instance that has ended,
/// or been replaced, is stale: it arrived late, and says nothing about the one now.
///
/// `SignerSupervisor` keeps the one count: it numbers each instance as it spawns it,
/// every fact (a heartbeat, a notification, an exit, a probe's result) carries the
/// number, and `SignerMachine` (its `SignerHealth` included) is told it with `.spawned`,
/// so both judge a fact by the same number.
public struct SignerInstances: Sendable, Equatable {
    private var last = 0
    /// The instance now running (or being stopped), nil between instances.
    public private(set) var current: Int?

    public init() {}

    /// A new instance begins: its number, which its facts carry.
    public mutating func begin() -> Int {
        last += 1
        current = last
        return last
    }

    /// The current instance is over; facts about it are stale from now on.
    public mutating func end() {
        current = nil
    }

    /// Whether a fact about `instance` still counts.
    public func isCurrent(_ instance: Int?) -> Bool {
        instance != nil && instance == current
    }
}
