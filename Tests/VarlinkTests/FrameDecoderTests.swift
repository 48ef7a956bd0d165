import NIOCore
import NIOEmbedded
import Testing
@testable import Varlink

@Suite struct FrameDecoderTests {
    private func frames(_ decoder: inout VarlinkFrameDecoder, _ buffer: inout ByteBuffer) -> [VarlinkFrame] {
        var frames: [VarlinkFrame] = []
        while let frame = decoder.nextFrame(from: &buffer) { frames.append(frame) }
        return frames
    }

    private func message(_ text: String) -> VarlinkFrame {
        .message(ByteBuffer(string: text))
    }

    @Test func severalMessagesInOneRead() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 100)
        var buffer = ByteBuffer(string: "{\"a\":1}\0{}\0\0")
        #expect(frames(&decoder, &buffer) == [message("{\"a\":1}"), message("{}"), message("")])
        #expect(buffer.readableBytes == 0)
    }

    @Test func messageSplitAcrossReads() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 100)
        var buffer = ByteBuffer(string: "{\"method\":")
        #expect(frames(&decoder, &buffer) == [])
        buffer.writeString("\"a.B\"}\0{\"meth")
        #expect(frames(&decoder, &buffer) == [message("{\"method\":\"a.B\"}")])
        buffer.writeString("od\":\"a.C\"}\0")
        #expect(frames(&decoder, &buffer) == [message("{\"method\":\"a.C\"}")])
    }

    @Test func messagesArrivingByteByByte() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 100)
        var buffer = ByteBuffer()
        var received: [VarlinkFrame] = []
        for byte in "{\"a\":1}\0{}\0".utf8 {
            buffer.writeInteger(byte)
            received += frames(&decoder, &buffer)
        }
        #expect(received == [message("{\"a\":1}"), message("{}")])
    }

    @Test func trailingPartialMessageWaitsForMore() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 100)
        var buffer = ByteBuffer(string: "{}\0{\"partial")
        #expect(frames(&decoder, &buffer) == [message("{}")])
        #expect(buffer.readableBytes == "{\"partial".utf8.count)
    }

    @Test func messageOfExactlyTheLimitIsAccepted() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 4)
        var buffer = ByteBuffer(string: "abcd\0")
        #expect(frames(&decoder, &buffer) == [message("abcd")])
    }

    @Test func oversizedWithoutTerminatorEndsTheStream() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 4)
        var buffer = ByteBuffer(string: "{}\0abcde")
        #expect(frames(&decoder, &buffer) == [message("{}"), .oversized])
        // Whatever follows is discarded: the next message boundary is unknowable.
        buffer.writeString("\0{}\0")
        #expect(frames(&decoder, &buffer) == [])
        #expect(buffer.readableBytes == 0)
    }

    @Test func terminatorBeyondTheLimitIsOversized() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 4)
        var buffer = ByteBuffer(string: "abcdef\0")
        #expect(frames(&decoder, &buffer) == [.oversized])
    }

    @Test func oversizedIsDetectedAcrossReads() {
        var decoder = VarlinkFrameDecoder(maxMessageBytes: 4)
        var buffer = ByteBuffer(string: "abc")
        #expect(frames(&decoder, &buffer) == [])
        buffer.writeString("de")
        #expect(frames(&decoder, &buffer) == [.oversized])
    }

    @Test func worksInAChannelPipeline() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(VarlinkFrameDecoder(maxMessageBytes: 16)))
        try channel.writeInbound(ByteBuffer(string: "{}\0{\"a\""))
        try channel.writeInbound(ByteBuffer(string: ":1}\0"))
        #expect(try channel.readInbound(as: VarlinkFrame.self) == message("{}"))
        #expect(try channel.readInbound(as: VarlinkFrame.self) == message("{\"a\":1}"))
        #expect(try channel.readInbound(as: VarlinkFrame.self) == nil)
        // A message cut off by the end of the stream is dropped, not reported as an error.
        try channel.writeInbound(ByteBuffer(string: "{\"cut"))
        #expect(try channel.finish().isClean)
    }

    // MARK: The server's budget for unfinished messages

    @Test func decodersShareTheBudgetAndOnlyTheOneThatWouldPassItGivesUp() {
        let budget = InboundBudget(limit: 7000)
        var first = VarlinkFrameDecoder(maxMessageBytes: 8192, budget: budget)
        var second = VarlinkFrameDecoder(maxMessageBytes: 8192, budget: budget)
        var third = VarlinkFrameDecoder(maxMessageBytes: 8192, budget: budget)
        var a = ByteBuffer(string: String(repeating: "a", count: 3000))
        var b = ByteBuffer(string: String(repeating: "b", count: 3000))
        var c = ByteBuffer(string: String(repeating: "c", count: 3000))
        #expect(frames(&first, &a) == [] && first.account(&a) == nil)
        #expect(frames(&second, &b) == [] && second.account(&b) == nil)
        #expect(budget.bytesHeld == 6000)
        #expect(frames(&third, &c) == [])
        #expect(third.account(&c) == .overBudget)
        #expect(budget.bytesHeld == 6000, "a refused decoder holds nothing")
        // The first completes its message: its bytes are no longer held.
        a.writeString("\0")
        #expect(frames(&first, &a).count == 1)
        #expect(first.account(&a) == nil)
        #expect(budget.bytesHeld == 3000)
        // Growing by a little more is fine while it fits.
        b.writeString(String(repeating: "b", count: 3500))
        #expect(frames(&second, &b) == [] && second.account(&b) == nil)
        #expect(budget.bytesHeld == 6500)
    }
}
