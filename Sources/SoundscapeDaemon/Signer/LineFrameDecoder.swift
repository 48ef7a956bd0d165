import NIOCore

/// Splits a child's output into lines. A line longer than `maximumLength` is
/// cut into pieces of that size rather than buffered without bound: a child
/// printing megabytes without a newline costs us nothing.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = String
    let maximumLength: Int

    /// The next line (without its newline, or a trailing CR) off the front of
    /// `buffer`, or a `maximumLength` piece of a longer one; nil when more is
    /// needed. The whole framing; `decode` adapts it to NIO (and Fuzz/ drives it).
    static func nextLine(from buffer: inout ByteBuffer, maximumLength: Int) -> String? {
        let searchable = buffer.readableBytesView.prefix(maximumLength + 1)
        if let newline = searchable.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - buffer.readerIndex
            var line = buffer.readString(length: length) ?? ""
            buffer.moveReaderIndex(forwardBy: 1)
            if line.hasSuffix("\r") { line.removeLast() }
            return line
        }
        // Only once the byte after a full piece is here and is not its newline: a line of
        // exactly `maximumLength` bytes is one line whenever its newline arrives (a finding
        // of Fuzz/ signer-lines: cut as soon as the limit was reached, it became a piece
        // and an empty line, depending on how the output was read).
        if buffer.readableBytes > maximumLength {
            return buffer.readString(length: maximumLength) ?? ""
        }
        return nil
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let line = Self.nextLine(from: &buffer, maximumLength: maximumLength) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0, let rest = buffer.readString(length: buffer.readableBytes) {
            context.fireChannelRead(wrapInboundOut(rest))
        }
        return .needMoreData
    }
}
