import NIOCore

/// Routes a parsed call to its interface and turns the handler's outcome into the reply.
struct CallDispatcher: Sendable {
    let interfaces: [String: any VarlinkInterface]
    let log: @Sendable (String) -> Void

    /// Never throws: every failure becomes an error reply (or, for a oneway call or a
    /// vanished client, nothing).
    ///
    /// - Parameter onContinuing: Called once a `more` call's first reply that goes on is written.
    func dispatch(
        _ request: VarlinkRequest, replyingTo outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        onContinuing: @escaping @Sendable () -> Void = {}
    ) async {
        let sink = ReplySink(outbound: request.oneway ? nil : outbound, onContinuing: onContinuing)
        do {
            // Switching the connection to another protocol is not supported.
            if request.upgrade { throw VarlinkError.invalidParameter(parameter: "upgrade") }
            try await route(VarlinkCall(request, sink: sink))
            try await sink.finishIfUnanswered()
        } catch let error as VarlinkError {
            await sink.failIfUnanswered(with: error)
        } catch VarlinkReplyError.connectionClosed {
            // The client left; there is nobody to answer.
        } catch is CancellationError where Task.isCancelled {
            // The client left or the server is stopping.
        } catch {
            log("varlink: \(request.method) failed: \(error)")
            await sink.failIfUnanswered(with: .internalError())
        }
    }

    private func route(_ call: VarlinkCall) async throws {
        guard let name = MethodName(call.method) else { throw VarlinkError.invalidParameter(parameter: "method") }
        guard let interface = interfaces[name.interface] else {
            throw VarlinkError.interfaceNotFound(interface: name.interface)
        }
        try await interface.handle(call)
    }
}
