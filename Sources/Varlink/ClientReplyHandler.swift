import NIOCore

/// Hands each reply to the call it answers.
///
/// The server answers calls in the order it received them, so pending calls form a queue
/// and the head owns every reply until it gets its last. Queueing and writing happen
/// together on the event loop, which keeps the queue in the order the server sees.
final class ClientReplyHandler: ChannelInboundHandler {
    typealias InboundIn = VarlinkFrame

    private var pending = CircularBuffer<PendingCall>()

    /// Must run on the channel's event loop.
    func send(_ message: ByteBuffer, for call: PendingCall, on channel: any Channel) {
        guard channel.isActive else {
            call.fail(VarlinkClientError.connectionClosed)
            return
        }
        pending.append(call)
        channel.writeAndFlush(message, promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .oversized, .overBudget:
            abandon(context, reason: "reply exceeds the client's message size limit")
        case .message(let message):
            guard let call = pending.first else {
                abandon(context, reason: "reply without a call")
                return
            }
            do {
                if try call.receive(message) {
                    pending.removeFirst()
                }
            } catch {
                abandon(context, reason: "\(error)")
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let abandoned = pending
        pending.removeAll()
        for call in abandoned {
            call.fail(VarlinkClientError.connectionClosed)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// The head call gets the reason; the rest learn of the closed connection.
    private func abandon(_ context: ChannelHandlerContext, reason: String) {
        pending.popFirst()?.fail(VarlinkClientError.invalidReply(reason: reason))
        context.close(promise: nil)
    }
}
