#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Varlink
import TestSupport

/// Misbehaving clients: each may hurt only its own connection.
@Suite struct RobustnessTests {
    @Test func garbageGetsANamedErrorAndTheConnectionStaysUsable() async throws {
        try await withServer { path in
            let connection = try RawConnection(path: path)
            let invalidMethod = #"{"error":"org.varlink.service.InvalidParameter","parameters":{"parameter":"method"}}"#
            try await connection.send("this is not json\0")
            #expect(try await connection.receiveMessage() == invalidMethod)
            try await connection.send("[1,2,3]\0")
            #expect(try await connection.receiveMessage() == invalidMethod)
            try await connection.send(#"{"parameters":{}}"# + "\0")
            #expect(try await connection.receiveMessage() == invalidMethod)

            try await connection.send(#"{"method":"org.example.test.Echo","parameters":{"value":"still here"}}"# + "\0")
            #expect(try await connection.receiveMessage() == #"{"parameters":{"value":"still here"}}"#)
        }
    }

    @Test func oversizedMessageClosesOnlyItsConnection() async throws {
        let log = LogRecorder()
        try await withServer(limits: .init(maxMessageBytes: 1024), logger: log.logger) { path in
            try await withClient(path) { bystander in
                let connection = try RawConnection(path: path)
                // A valid call first: it is still answered, in order, before the verdict.
                try await connection.send(#"{"method":"org.example.test.Echo","parameters":{"value":"first"}}"# + "\0")
                try await connection.send(String(repeating: "x", count: 2000))
                #expect(try await connection.receiveMessage() == #"{"parameters":{"value":"first"}}"#)
                #expect(
                    try await connection.receiveMessage()
                        == #"{"error":"org.swift-varlink.MessageTooLarge","parameters":{"limit":1024}}"#)
                try await connection.receiveClose()
                try await log.waitFor(lineContaining: "over 1024 bytes")

                #expect(try await bystander.call("org.example.test.Add", parameters: ["a": 1, "b": 2]) == ["sum": 3])
            }
        }
    }

    /// How connections share the budget is FrameDecoderTests' business; here, that a
    /// connection whose unfinished message passes it is told so and closed, alone.
    @Test func anUnfinishedMessageBeyondTheServersBudgetClosesItsConnectionOnly() async throws {
        let log = LogRecorder()
        try await withServer(limits: .init(maxMessageBytes: 8192, maxBufferedBytes: 1000), logger: log.logger) { path in
            try await withClient(path) { bystander in
                let greedy = try RawConnection(path: path)
                try await greedy.send(String(repeating: "z", count: 3000))
                let refusal = try await greedy.receiveMessage()
                #expect(refusal == #"{"error":"org.swift-varlink.ServerBusy","parameters":{}}"#, "got \(refusal)")
                try await greedy.receiveClose()
                try await log.waitFor(lineContaining: "inbound budget")
                #expect(try await bystander.call("org.example.test.Add", parameters: ["a": 2, "b": 2]) == ["sum": 4])
            }
        }
    }

    @Test func aMessageLeftUnfinishedPastTheTimeoutClosesItsConnection() async throws {
        let log = LogRecorder()
        try await withServer(limits: .init(partialMessageTimeout: .milliseconds(300)), logger: log.logger) { path in
            try await withClient(path) { bystander in
                let slow = try RawConnection(path: path)
                try await slow.send(#"{"method":"org.example.test.Echo","#)
                try await slow.receiveClose()
                try await log.waitFor(lineContaining: "left a message unfinished")
                #expect(try await bystander.call("org.example.test.Add", parameters: ["a": 1, "b": 2]) == ["sum": 3])
            }
        }
    }

    @Test func aPeerOfAnotherUserIsRefused() async throws {
        let log = LogRecorder()
        // This test runs as some uid; allow only another one, so that this one is the stranger.
        let other = getuid() == 4242 ? UInt32(4243) : 4242
        try await withServer(limits: .init(allowedUIDs: [other]), logger: log.logger) { path in
            let stranger = try RawConnection(path: path)
            try await stranger.receiveClose()
            try await log.waitFor(lineContaining: "refusing a connection from uid \(getuid())")
        }
        // And allowed, it is served.
        try await withServer(limits: .init(allowedUIDs: [UInt32(getuid())])) { path in
            let sum = try await withClient(path) { client in
                try await client.call("org.example.test.Add", parameters: ["a": 1, "b": 2])
            }
            #expect(sum == ["sum": 3])
        }
    }

    @Test func clientLeavingMidStreamCancelsTheHandler() async throws {
        let interface = TestInterface()
        try await withServer(interfaces: [interface]) { path in
            let client = try await VarlinkClient.connect(unixPath: path)
            for try await reply in client.callMore("org.example.test.Subscribe") {
                #expect(reply == ["event": "subscribed"])
                break  // Abandoning the stream closes the connection.
            }
            try await interface.waitFor("cancelled")
            await client.close()
        }
    }

    @Test func rawClientHangingUpMidStreamCancelsTheHandler() async throws {
        let interface = TestInterface()
        try await withServer(interfaces: [interface]) { path in
            let connection = try RawConnection(path: path)
            try await connection.send(#"{"method":"org.example.test.Subscribe","more":true}"# + "\0")
            #expect(try await connection.receiveMessage() == #"{"parameters":{"event":"subscribed"},"continues":true}"#)
            connection.close()
            try await interface.waitFor("cancelled")
        }
    }

    @Test func stoppingTheServerEndsOpenStreams() async throws {
        let interface = TestInterface()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.socketPath
        let server = VarlinkServer(listener: .unixPath(path), interfaces: [interface], info: testServiceInfo)
        try await withTimeout("the server to stop") {
            try await withThrowingTaskGroup(of: Void.self) { group in
                try await start(server, in: &group)
                let subscriber = try RawConnection(path: path)
                try await subscriber.send(#"{"method":"org.example.test.Subscribe","more":true}"# + "\0")
                #expect(try await subscriber.receiveMessage() == #"{"parameters":{"event":"subscribed"},"continues":true}"#)

                group.cancelAll()
                try await group.waitForAll()
                try await interface.waitFor("cancelled")
                try await subscriber.receiveClose()
            }
        }
    }

    @Test func connectionsOverTheLimitAreClosed() async throws {
        let log = LogRecorder()
        try await withServer(limits: .init(maxConnections: 2), logger: log.logger) { path in
            try await withClient(path) { first in
                try await withClient(path) { second in
                    // Both answered, so both are counted.
                    _ = try await first.call("org.varlink.service.GetInfo")
                    _ = try await second.call("org.varlink.service.GetInfo")

                    let refused = try RawConnection(path: path)
                    try await refused.receiveClose()
                    try await log.waitFor(lineContaining: "refusing a connection")
                    _ = try await first.call("org.varlink.service.GetInfo")
                }
                // The slot is given back once the server has noticed the departure, which
                // nothing signals to a client: poll, within the test's time limit.
                while try await withClient(path, { (try? await $0.call("org.varlink.service.GetInfo")) == nil }) {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
        }
    }

    @Test func clientThatDoesNotReadStallsOnlyItself() async throws {
        let interface = TestInterface()
        let calls = 200
        let size = 32 * 1024
        try await withServer(interfaces: [interface]) { path in
            let hoarder = try RawConnection(path: path)
            let call = #"{"method":"org.example.test.Big","parameters":{"size":\#(size)}}"# + "\0"
            try await hoarder.send(String(repeating: call, count: calls))

            // Others are served while the hoarder's replies pile up unread.
            try await withClient(path) { bystander in
                let reply = try await bystander.call("org.example.test.Add", parameters: ["a": 1, "b": 2])
                #expect(reply == ["sum": 3])
            }
            // Without backpressure all calls would have been handled by now, their replies
            // buffered in memory. (This cannot catch a server that is merely slow, but a
            // bounded one never fails it: socket and channel buffers hold about ten replies.)
            #expect(await interface.bigCalls.value < calls)

            // Every reply arrives, in order, once the hoarder reads.
            let expected = #"{"parameters":{"data":""# + String(repeating: "x", count: size) + #""}}"#
            for _ in 0..<calls {
                #expect(try await hoarder.receiveMessage() == expected)
            }
        }
    }
}
