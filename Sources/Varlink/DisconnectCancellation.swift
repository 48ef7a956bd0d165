import NIOCore

/// Cancels the running handler when its client disconnects.
///
/// Varlink has no message for abandoning a call: a client stops a `more` subscription by
/// closing the connection. A handler waiting for its next event would not notice until it
/// next replies, possibly never, so the connection's closing cancels the handler's task.
///
/// The handler runs in a task of its own only so that there is a handle to cancel from the
/// channel's close callback; it is always awaited, so its lifetime stays within the call.
/// One close callback per connection (not per call) keeps long-lived connections from
/// accumulating callbacks.
final class DisconnectCancellation: Sendable {
    private let channel: any Channel
    /// Confined to the channel's event loop, like the close callback that reads it.
    private let running: NIOLoopBoundBox<Task<Void, Never>?>

    init(channel: any Channel) {
        self.channel = channel
        running = .makeEmptyBox(valueType: Task<Void, Never>.self, eventLoop: channel.eventLoop)
        channel.closeFuture.whenComplete { [running] _ in
            running.value?.cancel()
        }
    }

    func run(_ operation: @escaping @Sendable () async -> Void) async {
        let task = Task { await operation() }
        channel.eventLoop.execute { [running, channel] in
            // Checked on the event loop, so either the close callback sees this task or
            // this sees the channel closed; a disconnect cannot slip in between.
            if channel.isActive {
                running.value = task
            } else {
                task.cancel()
            }
        }
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }
}
