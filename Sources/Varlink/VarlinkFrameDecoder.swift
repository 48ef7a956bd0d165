import NIOCore
import Synchronization

/// One unit of the varlink byte stream, as cut by ``VarlinkFrameDecoder``.
enum VarlinkFrame: Sendable, Hashable {
    /// The bytes of one message, without its terminating NUL.
    case message(ByteBuffer)
    /// More than the limit arrived without a NUL. The peer is broken or hostile and the next
    /// message boundary is unknowable, so this is the last frame of the connection.
    case oversized
    /// Holding this connection's unfinished message would take the server past the bytes
    /// it buffers for all connections together; the last frame of the connection.
    case overBudget
}

/// The bytes every connection's decoder holds for messages not yet complete,
/// counted together against one limit, so that many clients each sending part of
/// a message cannot make the server hold more than `limit` bytes between them.
public final class InboundBudget: Sendable {
    public let limit: Int
    private let used = Atomic<Int>(0)

    public init(limit: Int) {
        precondition(limit > 0, "the inbound budget must be positive")
        self.limit = limit
    }

    /// Bytes held now.
    public var bytesHeld: Int { used.load(ordering: .relaxed) }

    /// Changes what one decoder holds from `old` to `new` bytes; false (and no change)
    /// when growing to `new` would pass the limit.
    func change(from old: Int, to new: Int) -> Bool {
        let delta = new - old
        guard delta > 0 else {
            _ = used.subtract(-delta, ordering: .relaxed)
            return true
        }
        var current = used.load(ordering: .relaxed)
        while true {
            guard current + delta <= limit else { return false }
            let (done, original) = used.compareExchange(expected: current, desired: current + delta, ordering: .relaxed)
            if done { return true }
            current = original
        }
    }
}

/// Cuts the stream into NUL-terminated messages, refusing to buffer more than
/// `maxMessageBytes` for one message, or to hold part of a message longer than
/// `partialTimeout`, or past the server's `budget` for all connections.
///
/// Emitting `.oversized` (and `.overBudget`) as a frame rather than throwing keeps
/// it in order behind the messages before it, so the server answers those first
/// and only then reports the problem and closes.
struct VarlinkFrameDecoder: ByteToMessageDecoder, Sendable {
    typealias InboundOut = VarlinkFrame

    /// Largest message accepted, excluding its NUL terminator.
    let maxMessageBytes: Int
    /// The server's budget for unfinished messages across connections, if any.
    let budget: InboundBudget?
    /// How long part of a message may sit before the connection is closed.
    let partialTimeout: TimeAmount?
    /// Called (on the event loop) when a connection is closed for holding part of a message too long.
    let onTimeout: (@Sendable () -> Void)?
    private var gaveUp = false
    /// How many bytes after the reader index are known to hold no NUL, so that a message
    /// trickling in byte by byte is scanned once rather than once per read.
    private var searched = 0
    /// The bytes of unfinished messages this decoder has counted against `budget`.
    private var held = 0
    private var timeout: Scheduled<Void>?

    init(
        maxMessageBytes: Int, budget: InboundBudget? = nil, partialTimeout: TimeAmount? = nil,
        onTimeout: (@Sendable () -> Void)? = nil
    ) {
        precondition(maxMessageBytes > 0, "maxMessageBytes must be positive")
        self.maxMessageBytes = maxMessageBytes
        self.budget = budget
        self.partialTimeout = partialTimeout
        self.onTimeout = onTimeout
    }

    /// Takes the next frame off the front of `buffer`, or returns `nil` if it needs more data.
    /// This is the whole framing logic; `decode` only adapts it to NIO, so tests can drive
    /// it without a channel.
    mutating func nextFrame(from buffer: inout ByteBuffer) -> VarlinkFrame? {
        guard !gaveUp else {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return nil
        }
        // A terminator beyond the limit is as bad as none: look only where a legal one can be.
        let bytes = buffer.readableBytesView
        let searchable = bytes.startIndex + min(bytes.count, maxMessageBytes + 1)
        if let nul = bytes[(bytes.startIndex + searched)..<searchable].firstIndex(of: 0) {
            searched = 0
            let message = buffer.readSlice(length: nul - buffer.readerIndex)!
            buffer.moveReaderIndex(forwardBy: 1)
            return .message(message)
        }
        searched = searchable - bytes.startIndex
        if buffer.readableBytes > maxMessageBytes {
            return giveUp(&buffer, .oversized)
        }
        return nil
    }

    /// Counts what is left in `buffer` (part of a message) against the budget; the
    /// frame to end the connection with when that would pass it.
    mutating func account(_ buffer: inout ByteBuffer) -> VarlinkFrame? {
        guard let budget, !gaveUp else { return nil }
        let now = buffer.readableBytes
        guard budget.change(from: held, to: now) else { return giveUp(&buffer, .overBudget) }
        held = now
        return nil
    }

    private mutating func giveUp(_ buffer: inout ByteBuffer, _ frame: VarlinkFrame) -> VarlinkFrame {
        gaveUp = true
        buffer.moveReaderIndex(to: buffer.writerIndex)
        release()
        return frame
    }

    private mutating func release() {
        if let budget, held > 0 { _ = budget.change(from: held, to: 0) }
        held = 0
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if let frame = nextFrame(from: &buffer) {
            context.fireChannelRead(wrapInboundOut(frame))
            return .continue
        }
        if let frame = account(&buffer) {
            context.fireChannelRead(wrapInboundOut(frame))
            return .needMoreData
        }
        armTimeout(context: context, partial: buffer.readableBytes > 0)
        return .needMoreData
    }

    /// Part of a message is held: the clock runs until the message completes.
    private mutating func armTimeout(context: ChannelHandlerContext, partial: Bool) {
        guard let partialTimeout else { return }
        if !partial {
            timeout?.cancel()
            timeout = nil
        } else if timeout == nil, !gaveUp {
            let channel = context.channel
            let onTimeout = self.onTimeout
            timeout = context.eventLoop.scheduleTask(in: partialTimeout) {
                onTimeout?()
                channel.close(promise: nil)
            }
        }
    }

    /// A message cut short by end-of-stream is dropped: its sender is gone and cannot get an answer.
    mutating func decodeLast(
        context: ChannelHandlerContext,
        buffer: inout ByteBuffer,
        seenEOF: Bool
    ) throws -> DecodingState {
        while let frame = nextFrame(from: &buffer) {
            context.fireChannelRead(wrapInboundOut(frame))
        }
        buffer.moveReaderIndex(to: buffer.writerIndex)
        release()
        timeout?.cancel()
        timeout = nil
        return .needMoreData
    }

    mutating func decoderRemoved(context: ChannelHandlerContext) {
        release()
        timeout?.cancel()
        timeout = nil
    }
}
