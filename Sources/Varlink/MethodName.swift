/// A fully qualified method name split at its last dot: `org.example.ping.Ping` is method
/// `Ping` of interface `org.example.ping`.
struct MethodName: Hashable, Sendable {
    let interface: String
    let method: String

    /// `nil` unless both halves are non-empty: a name without an interface cannot be routed.
    init?(_ qualified: String) {
        guard let dot = qualified.lastIndex(of: ".") else { return nil }
        let interface = qualified[..<dot]
        let method = qualified[qualified.index(after: dot)...]
        guard !interface.isEmpty, !method.isEmpty else { return nil }
        self.interface = String(interface)
        self.method = String(method)
    }
}
