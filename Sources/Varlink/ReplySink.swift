import NIOCore

/// Where one call's replies go: the connection's writer, shared by all calls on it in turn.
///
/// It is an actor because a handler may reply from tasks of its own; it keeps the rule that
/// nothing follows the final reply, which a stray late reply would otherwise break by
/// answering the connection's next call.
actor ReplySink {
    /// `nil` for a oneway call: whatever its handler replies is dropped.
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>?
    private var answered = false
    /// Called once, after the first reply that goes on is written.
    private var onContinuing: (@Sendable () -> Void)?

    init(outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>?, onContinuing: (@Sendable () -> Void)? = nil) {
        self.outbound = outbound
        self.onContinuing = onContinuing
    }

    /// Suspends while the connection is not writable, which is what holds a handler back
    /// when its client does not read.
    func send(_ message: [ByteBuffer], final: Bool) async throws {
        guard !answered else { throw VarlinkReplyError.callAlreadyAnswered }
        // Claimed before suspending, so a reply racing in from another task sees it.
        answered = final
        guard let outbound else { return }
        do {
            try await outbound.write(contentsOf: message)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw VarlinkReplyError.connectionClosed
        }
        if !final, let continuing = onContinuing {
            onContinuing = nil
            continuing()
        }
    }

    /// Ends a call whose handler returned without a final reply, so methods returning
    /// nothing need not reply explicitly and a `more` stream always ends.
    func finishIfUnanswered() async throws {
        guard !answered else { return }
        try await send(ReplyEncoding.reply(Self.emptyParameters, continues: false), final: true)
    }

    /// Best effort: the handler failed, the client may be gone too.
    func failIfUnanswered(with error: VarlinkError) async {
        guard !answered else { return }
        try? await send([ReplyEncoding.error(error)], final: true)
    }

    private static let emptyParameters = try! VarlinkEncodedParameters([String: JSONValue]())
}
