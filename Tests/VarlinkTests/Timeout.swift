/// An awaited event can no longer come: its stream ended (was cancelled) first.
struct StreamEnded: Error, CustomStringConvertible {
    let waitingFor: String
    var description: String { "stream ended before \"\(waitingFor)\"" }
}
