/// One varlink interface served by a ``VarlinkServer``.
public protocol VarlinkInterface: Sendable {
    /// Reverse-domain interface name, e.g. `org.example.ping`.
    var name: String { get }

    /// The interface definition (IDL), returned verbatim by
    /// `org.varlink.service.GetInterfaceDescription` so generic tools can introspect it.
    var description: String { get }

    /// Answers one call to a method of this interface.
    ///
    /// Reply with ``VarlinkCall/reply(_:continues:)``; returning without a final reply
    /// sends an empty one. Throw a ``VarlinkError`` to answer with that error (for an
    /// unknown method, `throw call.methodNotFound`); any other error is logged and answered
    /// with ``VarlinkError/internalError()``.
    ///
    /// Calls on one connection are handled one after another, so a `more` call holds its
    /// connection until the handler ends it. When the client disconnects, the handler's task
    /// is cancelled.
    func handle(_ call: VarlinkCall) async throws
}
