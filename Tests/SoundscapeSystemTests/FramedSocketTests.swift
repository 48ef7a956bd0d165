import Glibc
import SoundscapeSystem
import Testing

/// NUL framing, and the socket that carries it: blocking, and on a poll loop.
@Suite struct FramedSocketTests {
    @Test func framesSplitWhereverTheBytesBreak() {
        var frames = NULFrames(limit: 100)
        frames.append(Array("{\"a\":1}".utf8) + [0] + Array("{\"b\"".utf8))
        #expect(frames.next() == Array("{\"a\":1}".utf8))
        #expect(frames.next() == nil)
        #expect(frames.unfinished == 4)
        frames.append(Array(":2}".utf8))
        #expect(frames.next() == nil)
        frames.append([0, 0])
        #expect(frames.next() == Array("{\"b\":2}".utf8))
        #expect(frames.next() == [], "an empty message is a message")
        #expect(frames.next() == nil)
        #expect(frames.unfinished == 0)
    }

    @Test func anUnfinishedMessageIsBounded() {
        var frames = NULFrames(limit: 4)
        frames.append(Array("abcd".utf8))
        #expect(frames.next() == nil)
        #expect(!frames.isOverLimit)
        frames.append(Array("e".utf8))
        #expect(frames.isOverLimit)
    }

    @Test func blockingCallsAndAnOrderlyClose() throws {
        let (client, server) = try Self.pair()
        try client.sendMessage("ping")
        #expect(try server.receiveMessage() == Array("ping".utf8))
        try server.send(Array("pong".utf8) + [0] + Array("late".utf8) + [0])
        #expect(try client.receiveMessage() == Array("pong".utf8))
        #expect(try client.receiveMessage() == Array("late".utf8), "a second message in the same read is kept")
        server.close()
        #expect(try client.receiveMessage() == nil)
    }

    @Test func aBlockingReceiveTimesOut() throws {
        let (client, server) = try Self.pair()
        UnixSocket.setTimeouts(client.descriptor, send: nil, receive: .milliseconds(50))
        #expect(throws: FramedSocket.Failure.timedOut("recv")) { try client.receiveMessage() }
        withExtendedLifetime(server) {}
    }

    @Test func aPollLoopSendsAndReceivesWithoutBlocking() throws {
        let (client, server) = try Self.pair()
        client.setNonBlocking()
        var messages: [[UInt8]] = []
        try client.receiveAvailable(into: &messages)
        #expect(messages.isEmpty, "nothing to read returns at once")
        client.queueMessage(Array("one".utf8))
        client.queueMessage(Array("two".utf8))
        #expect(client.wantsWrite)
        try client.flush()
        #expect(!client.wantsWrite)
        #expect(try server.receiveMessage() == Array("one".utf8))
        #expect(try server.receiveMessage() == Array("two".utf8))
        try server.send(Array("a".utf8) + [0] + Array("b".utf8) + [0] + Array("c".utf8))
        server.close()
        #expect(throws: FramedSocket.Failure.closed) { try client.receiveAvailable(into: &messages) }
        #expect(messages == [Array("a".utf8), Array("b".utf8)], "what came before the end is delivered")
    }

    @Test func aPollLoopRefusesAnEndlessMessage() throws {
        let (client, server) = try Self.pair(limit: 16)
        client.setNonBlocking()
        try server.send([UInt8](repeating: 0x61, count: 17))
        var messages: [[UInt8]] = []
        #expect(throws: FramedSocket.Failure.tooLong(limit: 16)) { try client.receiveAvailable(into: &messages) }
    }

    @Test func sendIfRoomStopsWhenThePeerStopsReading() throws {
        let (client, server) = try Self.pair()
        var accepted = 0
        while accepted < 1_000_000, try client.sendMessageIfRoom(String(repeating: "x", count: 1000)) { accepted += 1 }
        #expect(accepted < 1_000_000)
        withExtendedLifetime(server) {}
    }

    @Test func aListeningSocketAcceptsAClient() throws {
        var template = Array("/tmp/framed-socket.XXXXXX".utf8CString)
        let directory = String(cString: try #require(mkdtemp(&template)))
        defer { rmdir(directory) }
        let path = directory + "/socket"
        let listener = try UnixSocket.bind(.stream, to: UnixSocketAddress(path: path), listening: true)
        defer { close(listener); unlink(path) }
        let client = try FramedSocket(path: path, timeout: .seconds(5))
        let server = FramedSocket(descriptor: accept(listener, nil, nil))
        try client.sendMessage("hello")
        #expect(try server.receiveMessage() == Array("hello".utf8))
        #expect(throws: UnixSocket.Failure.self) { try FramedSocket(path: directory + "/none") }
    }

    private static func pair(limit: Int = FramedSocket.defaultLimit) throws -> (FramedSocket, FramedSocket) {
        var fds: [CInt] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw UnixSocket.Failure(description: "socketpair: \(errno)")
        }
        return (FramedSocket(descriptor: fds[0], limit: limit), FramedSocket(descriptor: fds[1], limit: limit))
    }
}
