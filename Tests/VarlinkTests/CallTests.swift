import Testing
@testable import Varlink

/// Calls through a real socket: routing, replies, streams and errors.
@Suite struct CallTests {
    @Test func plainCall() async throws {
        try await withServer { path in
            try await withClient(path) { client in
                let reply = try await client.call("org.example.test.Add", parameters: ["a": 2, "b": 3])
                #expect(reply == ["sum": 5])
            }
        }
    }

    @Test func typedCall() async throws {
        struct Echo: Codable, Sendable, Equatable {
            var value: String
        }
        try await withServer { path in
            try await withClient(path) { client in
                let reply = try await client.call("org.example.test.Echo", parameters: Echo(value: "hi"), returning: Echo.self)
                #expect(reply == Echo(value: "hi"))
            }
        }
    }

    @Test func routingErrors() async throws {
        try await withServer { path in
            try await withClient(path) { client in
                await #expect(throws: VarlinkError.interfaceNotFound(interface: "org.example.nope")) {
                    try await client.call("org.example.nope.Add")
                }
                await #expect(throws: VarlinkError.methodNotFound(method: "org.example.test.Nope")) {
                    try await client.call("org.example.test.Nope")
                }
                await #expect(throws: VarlinkError.invalidParameter(parameter: "method")) {
                    try await client.call("NoInterface")
                }
            }
        }
    }

    @Test func handlerErrors() async throws {
        let log = LogRecorder()
        try await withServer(logger: log.logger) { path in
            try await withClient(path) { client in
                await #expect(throws: VarlinkError.invalidParameter(parameter: "b")) {
                    try await client.call("org.example.test.Add", parameters: ["a": 1, "b": 2.5])
                }
                await #expect(throws: VarlinkError.internalError()) {
                    try await client.call("org.example.test.Fail")
                }
                try await log.waitFor(lineContaining: "org.example.test.Fail failed")
                // The connection survives errors.
                #expect(try await client.call("org.example.test.Add", parameters: ["a": 1, "b": 1]) == ["sum": 2])
            }
        }
    }

    @Test func moreStreamEndsWithTheFinalReply() async throws {
        try await withServer { path in
            try await withClient(path) { client in
                var replies: [[String: JSONValue]] = []
                for try await reply in client.callMore("org.example.test.Count", parameters: ["n": 3]) {
                    replies.append(reply)
                }
                #expect(replies == [["i": 1], ["i": 2], ["i": 3]])

                // A handler returning without a final reply ends the stream with an empty one.
                var empty: [[String: JSONValue]] = []
                for try await reply in client.callMore("org.example.test.Count", parameters: ["n": 0]) {
                    empty.append(reply)
                }
                #expect(empty == [[:]])
            }
        }
    }

    @Test func preEncodedReplies() async throws {
        try await withServer { path in
            try await withClient(path) { client in
                var replies: [[String: JSONValue]] = []
                for try await reply in client.callMore("org.example.test.Shared") {
                    replies.append(reply)
                }
                #expect(replies == [["event": ["kind": "stopped"]], ["event": ["kind": "stopped"]]])
            }
        }
    }

    @Test func nothingFollowsTheFinalReply() async throws {
        let interface = TestInterface()
        try await withServer(interfaces: [interface]) { path in
            try await withClient(path) { client in
                #expect(try await client.call("org.example.test.ReplyTwice") == ["n": 1])
                try await interface.waitFor("second reply: \(VarlinkReplyError.callAlreadyAnswered)")
                // The refused second reply did not end up answering the next call.
                #expect(try await client.call("org.example.test.Echo", parameters: ["value": "next"]) == ["value": "next"])
            }
        }
    }

    @Test func streamingWithoutMoreIsExpectedMore() async throws {
        try await withServer { path in
            try await withClient(path) { client in
                await #expect(throws: VarlinkError.expectedMore()) {
                    try await client.call("org.example.test.Count", parameters: ["n": 3])
                }
            }
        }
    }

    @Test func moreStreamErrorIsThrown() async throws {
        try await withServer { path in
            try await withClient(path) { client in
                await #expect(throws: VarlinkError.invalidParameter(parameter: "n")) {
                    for try await _ in client.callMore("org.example.test.Count", parameters: ["n": "3"]) {}
                }
            }
        }
    }

    @Test func pipelinedCallsAreAnsweredInOrder() async throws {
        try await withServer { path in
            let connection = try RawConnection(path: path)
            try await connection.send(
                #"{"method":"org.example.test.Echo","parameters":{"value":"one"}}"# + "\0"
                    + #"{"method":"org.example.test.Count","parameters":{"n":2},"more":true}"# + "\0"
                    + #"{"method":"org.example.test.Echo","parameters":{"value":"three"}}"# + "\0"
            )
            #expect(try await connection.receiveMessage() == #"{"parameters":{"value":"one"}}"#)
            #expect(try await connection.receiveMessage() == #"{"parameters":{"i":1},"continues":true}"#)
            #expect(try await connection.receiveMessage() == #"{"parameters":{"i":2}}"#)
            #expect(try await connection.receiveMessage() == #"{"parameters":{"value":"three"}}"#)
        }
    }

    @Test func concurrentCallsOnOneClientEachGetTheirReply() async throws {
        try await withServer { path in
            try await withClient(path) { client in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<50 {
                        group.addTask {
                            let reply = try await client.call("org.example.test.Add", parameters: ["a": .number(Double(i)), "b": 1])
                            #expect(reply == ["sum": .number(Double(i + 1))])
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    @Test func onewayCallsRunWithoutReply() async throws {
        let interface = TestInterface()
        try await withServer(interfaces: [interface]) { path in
            let connection = try RawConnection(path: path)
            try await connection.send(
                #"{"method":"org.example.test.Record","parameters":{"tag":"a"},"oneway":true}"# + "\0"
                    + #"{"method":"org.example.test.Echo","parameters":{"value":"after"}}"# + "\0"
            )
            // The first reply is the second call's: the oneway call got none.
            #expect(try await connection.receiveMessage() == #"{"parameters":{"value":"after"}}"#)
            try await interface.waitFor("recorded a")

            // A oneway call still runs if its client hangs up right after sending it.
            let hangingUp = try RawConnection(path: path)
            try await hangingUp.send(#"{"method":"org.example.test.Record","parameters":{"tag":"b"},"oneway":true}"# + "\0")
            hangingUp.close()
            try await interface.waitFor("recorded b")
        }
    }

    @Test func clientMayHalfCloseAndStillGetItsReply() async throws {
        try await withServer { path in
            let connection = try RawConnection(path: path)
            try await connection.send(#"{"method":"org.example.test.Echo","parameters":{"value":"x"}}"# + "\0")
            connection.shutdownSending()
            #expect(try await connection.receiveMessage() == #"{"parameters":{"value":"x"}}"#)
            try await connection.receiveClose()
        }
    }

    @Test func upgradeIsRefused() async throws {
        try await withServer { path in
            let connection = try RawConnection(path: path)
            try await connection.send(#"{"method":"org.example.test.Echo","parameters":{"value":"x"},"upgrade":true}"# + "\0")
            #expect(
                try await connection.receiveMessage()
                    == #"{"error":"org.varlink.service.InvalidParameter","parameters":{"parameter":"upgrade"}}"#)
        }
    }
}
