import NIOCore

/// Serves one client: reads its calls in order and answers each before reading the next.
///
/// Backpressure falls out of that order. While a reply waits for the client to read, the
/// handler is suspended in its `reply`, no further call is taken from the inbound stream,
/// and once that stream's small buffer is full NIO stops reading the socket. A client that
/// never reads thus stalls only itself, with at most a few messages buffered on each side.
struct ServerConnection {
    let channel: NIOAsyncChannel<VarlinkFrame, ByteBuffer>
    let dispatcher: CallDispatcher
    let maxMessageBytes: Int
    let registry: ConnectionRegistry
    let id: ConnectionRegistry.ID

    /// Returns when the client disconnects, sends an oversized message, the server shuts
    /// down (after the call in progress answers), or the task is cancelled; the connection
    /// is closed by then.
    func serve() async {
        // I/O errors only mean the client is gone; there is nobody left to tell.
        try? await channel.executeThenClose { inbound, outbound in
            let disconnect = DisconnectCancellation(channel: channel.channel)
            for try await frame in inbound {
                switch frame {
                case .oversized:
                    dispatcher.log("varlink: closing a connection that sent a message over \(maxMessageBytes) bytes")
                    try await outbound.write(ReplyEncoding.error(.messageTooLarge(limit: maxMessageBytes)))
                    return
                case .overBudget:
                    dispatcher.log("varlink: closing a connection: unfinished messages already hold the server's inbound budget")
                    try await outbound.write(ReplyEncoding.error(.serverBusy()))
                    return
                case .message(let message):
                    let request: VarlinkRequest
                    do throws(VarlinkError) {
                        request = try VarlinkRequest(parsing: message)
                    } catch {
                        try await outbound.write(ReplyEncoding.error(error))
                        continue
                    }
                    // A call read once the server is shutting down is not taken.
                    guard registry.beginCall(id) else { return }
                    if request.oneway {
                        // The client may well have hung up already; that is no reason not to act.
                        await dispatcher.dispatch(request, replyingTo: outbound)
                    } else if channel.channel.isActive {
                        await disconnect.run { [registry, id] in
                            await dispatcher.dispatch(request, replyingTo: outbound) { registry.streaming(id) }
                        }
                    }
                    guard registry.endCall(id) else { return }
                }
            }
        }
    }
}
