import Foundation
import Synchronization
import Testing
@testable import Varlink
import TestSupport

/// A graceful shutdown owes each call in progress its answer: a daemon that answers a call
/// and then stops (a mended configuration's `Restarting`) must not close that connection
/// before the answer is written. Idle connections and streams that have answered close at
/// once; a call that does not answer within the grace is cancelled.
@Suite struct ShutdownTests {
    @Test func aCallInProgressAnswersBeforeItsConnectionCloses() async throws {
        let interface = GatedInterface()
        try await withGatedServer(interface) { server, path in
            try await withClient(path) { client in
                let reply = Task { try await client.call("org.example.gated.Hold") }
                try await interface.waitFor("started Hold")
                await server.shutDownGracefully()
                // Returned: no new connection is served.
                await #expect(throws: (any Error).self) {
                    let late = try await VarlinkClient.connect(unixPath: path, timeout: .seconds(1))
                    _ = try await late.call("org.example.gated.Record")
                }
                interface.openGate()
                #expect(try await reply.value == ["released": true])
            }
        }
        #expect(!interface.reported.contains("started Record"))
    }

    @Test func idleConnectionsAndAnsweredStreamsCloseWithoutTheGrace() async throws {
        let interface = GatedInterface()
        let started = ContinuousClock.now
        // A grace far longer than the test's bound: the server must not wait for it.
        try await withGatedServer(interface, grace: .seconds(600)) { server, path in
            let idle = try RawConnection(path: path)
            defer { idle.close() }
            // Served once, so the server has it, between calls.
            try await idle.send(#"{"method":"org.example.gated.Record"}"# + "\0")
            _ = try await idle.receiveMessage()
            try await withClient(path) { client in
                var stream = client.callMore("org.example.gated.Stream").makeAsyncIterator()
                let first = try await stream.next()
                #expect(first == ["event": "first"])
                await server.shutDownGracefully()
                await #expect(throws: VarlinkClientError.connectionClosed) {
                    while try await stream.next() != nil {}
                }
            }
            try await idle.receiveClose()
        }
        try await interface.waitFor("cancelled Stream")
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test func aCallReadAfterTheShutdownBeganIsNotTaken() async throws {
        let interface = GatedInterface()
        try await withGatedServer(interface) { server, path in
            let connection = try RawConnection(path: path)
            defer { connection.close() }
            // Two calls at once: the second waits in the server's buffer while the first holds.
            try await connection.send(
                #"{"method":"org.example.gated.Hold"}"# + "\0" + #"{"method":"org.example.gated.Record"}"# + "\0")
            try await interface.waitFor("started Hold")
            await server.shutDownGracefully()
            interface.openGate()
            #expect(try await connection.receiveMessage() == #"{"parameters":{"released":true}}"#)
            try await connection.receiveClose()
        }
        #expect(interface.reported == ["started Hold"])
    }

    /// A client that connected while the server still accepted has its call on the way: a
    /// restarting daemon owes it an answer (`Restarting`) as much as a call it has read.
    @Test func aConnectionsFirstCallIsTakenDuringTheShutdown() async throws {
        let interface = GatedInterface()
        try await withGatedServer(interface) { server, path in
            let fresh = try RawConnection(path: path)
            defer { fresh.close() }
            // Connections are accepted and served in order: one answered later proves that
            // the server holds the first.
            let answered = try await withClient(path) { client in try await client.call("org.example.gated.Record") }
            #expect(answered == [:])
            await server.shutDownGracefully()
            try await fresh.send(#"{"method":"org.example.gated.Record"}"# + "\0")
            #expect(try await fresh.receiveMessage() == #"{"parameters":{}}"#)
            try await fresh.receiveClose()
        }
        #expect(interface.reported == ["started Record", "started Record"])
    }

    @Test func aCallThatOutlastsTheGraceIsCancelled() async throws {
        let interface = GatedInterface()
        try await withGatedServer(interface, grace: .milliseconds(200)) { server, path in
            try await withClient(path) { client in
                let reply = Task { try await client.call("org.example.gated.Hold") }
                try await interface.waitFor("started Hold")
                await server.shutDownGracefully()
                await #expect(throws: VarlinkClientError.connectionClosed) { _ = try await reply.value }
            }
        }
        try await interface.waitFor("cancelled Hold")
    }

    @Test func cancellingStillStopsAtOnce() async throws {
        let interface = GatedInterface()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = VarlinkServer(
            listener: .unixPath(directory.socketPath), interfaces: [interface], info: testServiceInfo,
            limits: .init(shutdownGrace: .seconds(600)))
        try await withTimeout("the cancelled server to return", seconds: 10) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                try await start(server, in: &group)
                try await withClient(directory.socketPath) { client in
                    let reply = Task { try await client.call("org.example.gated.Hold") }
                    try await interface.waitFor("started Hold")
                    group.cancelAll()
                    try await group.waitForAll()
                    await #expect(throws: VarlinkClientError.connectionClosed) { _ = try await reply.value }
                }
            }
        }
        try await interface.waitFor("cancelled Hold")
    }

    /// Runs a server with `interface` for `body`, which stops it gracefully; waits (bounded)
    /// for the server to return.
    private func withGatedServer(
        _ interface: GatedInterface, grace: Duration = .seconds(10),
        _ body: @escaping @Sendable (VarlinkServer, String) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = VarlinkServer(
            listener: .unixPath(directory.socketPath), interfaces: [interface], info: testServiceInfo,
            limits: .init(shutdownGrace: grace))
        try await withTimeout("the test against a server shutting down gracefully", seconds: 10) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                try await start(server, in: &group)
                try await body(server, directory.socketPath)
                // No cancellation: the graceful shutdown alone ends the server.
                try await group.waitForAll()
            }
        }
    }
}

/// `Hold` waits until the test opens the gate, then answers; `Stream` answers once and
/// goes on until cancelled; `Record` only returns. Every call reports that it started,
/// and a handler cancelled reports "cancelled <method>".
struct GatedInterface: VarlinkInterface {
    let name = "org.example.gated"
    let description = """
        interface org.example.gated

        method Hold() -> (released: bool)
        method Stream() -> (event: string)
        method Record() -> ()

        """
    private let events: AsyncStream<String>
    private let report: AsyncStream<String>.Continuation
    private let log = Log()
    private let gate: AsyncStream<Void>
    private let opener: AsyncStream<Void>.Continuation

    init() {
        (events, report) = AsyncStream.makeStream(of: String.self)
        (gate, opener) = AsyncStream.makeStream(of: Void.self)
    }

    func openGate() {
        opener.yield()
    }

    /// Everything reported so far, in order.
    var reported: [String] { log.events.withLock { $0 } }

    func waitFor(_ event: String) async throws {
        try await withTimeout("server-side event \"\(event)\"") { [events] in
            guard await events.first(where: { $0 == event }) != nil else {
                throw StreamEnded(waitingFor: event)
            }
        }
    }

    func handle(_ call: VarlinkCall) async throws {
        record("started \(call.unqualifiedMethod)")
        switch call.unqualifiedMethod {
        case "Hold":
            // Ends with the first element, or, cancelled, with none.
            for await _ in gate { break }
            try cancelled("Hold")
            try await call.reply(["released": true])
        case "Stream":
            try await call.reply(["event": "first"], continues: true)
            // Ends only when cancelled.
            try? await Task.sleep(for: .seconds(3600))
            try cancelled("Stream")
        case "Record":
            return
        default:
            throw call.methodNotFound
        }
    }

    private func record(_ event: String) {
        log.events.withLock { $0.append(event) }
        report.yield(event)
    }

    private final class Log: Sendable {
        let events = Mutex<[String]>([])
    }

    private func cancelled(_ method: String) throws {
        guard Task.isCancelled else { return }
        record("cancelled \(method)")
        throw CancellationError()
    }
}
