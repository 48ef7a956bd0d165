import NIOCore

/// One unit of the varlink byte stream, as cut by ``VarlinkFrameDecoder``.
enum VarlinkFrame: Sendable, Hashable {
    /// The bytes of one message, without its terminating NUL.
    case message(ByteBuffer)
    /// More than the limit arrived without a NUL. The peer is broken or hostile and the next
    /// message boundary is unknowable, so this is the last frame of the connection.
    case oversized
}

/// Cuts the stream into NUL-terminated messages, refusing to buffer more than
/// `maxMessageBytes` for one message.
///
/// Emitting `.oversized` as a frame (rather than throwing) keeps it in order behind the
/// messages before it, so the server answers those first and only then reports the
/// oversized one and closes.
struct VarlinkFrameDecoder: ByteToMessageDecoder, Sendable {
    typealias InboundOut = VarlinkFrame

    /// Largest message accepted, excluding its NUL terminator.
    let maxMessageBytes: Int
    private var gaveUp = false
    /// How many bytes after the reader index are known to hold no NUL, so that a message
    /// trickling in byte by byte is scanned once rather than once per read.
    private var searched = 0

    init(maxMessageBytes: Int) {
        precondition(maxMessageBytes > 0, "maxMessageBytes must be positive")
        self.maxMessageBytes = maxMessageBytes
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
            gaveUp = true
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .oversized
        }
        return nil
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = nextFrame(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(frame))
        return .continue
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
        return .needMoreData
    }
}
