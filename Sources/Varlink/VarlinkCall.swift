/// One incoming call, as a ``VarlinkInterface`` handler sees it.
public struct VarlinkCall: Sendable {
    /// Fully qualified, e.g. `org.example.ping.Ping`.
    public let method: String
    public let parameters: VarlinkParameters
    /// The client asked for a stream of replies (`"more": true`).
    public let wantsMore: Bool
    /// The client wants no reply at all; replying is allowed and does nothing. Never set
    /// together with ``wantsMore``: the server refuses that contradiction.
    public let isOneway: Bool
    private let sink: ReplySink

    init(_ request: VarlinkRequest, sink: ReplySink) {
        method = request.method
        parameters = VarlinkParameters(request.parameters)
        wantsMore = request.more
        isOneway = request.oneway
        self.sink = sink
    }

    /// The method name without its interface (`Ping`), for switching on in a handler.
    public var unqualifiedMethod: String {
        MethodName(method)?.method ?? method
    }

    /// The error for a method this interface does not have: `default: throw call.methodNotFound`.
    public var methodNotFound: VarlinkError {
        .methodNotFound(method: method)
    }

    /// Sends a reply. A reply with `continues: false` is the final one.
    ///
    /// Suspends while the client is not reading (backpressure). Throws
    /// ``VarlinkReplyError`` if the client is gone or the call was already answered, and
    /// `org.varlink.service.ExpectedMore` for `continues: true` on a call without `more`,
    /// so a streaming handler called without `more` answers with the standard error.
    public func reply(_ parameters: some Encodable & Sendable, continues: Bool = false) async throws {
        try checkContinues(continues)
        guard !isOneway else { return }
        try await reply(preEncoded: VarlinkEncodedParameters(parameters), continues: continues)
    }

    /// Like ``reply(_:continues:)`` with parameters encoded beforehand, to send one event
    /// to many calls while encoding it once.
    public func reply(preEncoded parameters: VarlinkEncodedParameters, continues: Bool = false) async throws {
        try checkContinues(continues)
        guard !isOneway else { return }
        try await sink.send(ReplyEncoding.reply(parameters, continues: continues), final: !continues)
    }

    /// Checked even for oneway calls, whose replies go nowhere: it is what stops a streaming
    /// handler that was not asked to stream.
    private func checkContinues(_ continues: Bool) throws(VarlinkError) {
        if continues && !wantsMore { throw .expectedMore() }
    }
}
