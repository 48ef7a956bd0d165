import NIOCore

/// Splits a child's output into lines. A line longer than `maximumLength` is
/// cut into pieces of that size rather than buffered without bound: a child
/// printing megabytes without a newline costs us nothing.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = String
    let maximumLength: Int

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - buffer.readerIndex
            var line = buffer.readString(length: length) ?? ""
            buffer.moveReaderIndex(forwardBy: 1)
            if line.hasSuffix("\r") { line.removeLast() }
            context.fireChannelRead(wrapInboundOut(line))
            return .continue
        }
        if buffer.readableBytes >= maximumLength {
            context.fireChannelRead(wrapInboundOut(buffer.readString(length: maximumLength) ?? ""))
            return .continue
        }
        return .needMoreData
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0, let rest = buffer.readString(length: buffer.readableBytes) {
            context.fireChannelRead(wrapInboundOut(rest))
        }
        return .needMoreData
    }
}
