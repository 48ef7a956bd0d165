@testable import Varlink
import TestSupport

/// A small interface exercising what handlers do: plain replies, streams, failures, large
/// replies, and waiting until the client leaves. It reports what happened inside the server
/// through ``events``, so tests can wait for it instead of guessing with sleeps.
struct TestInterface: VarlinkInterface {
    struct Failure: Error {}

    let name = "org.example.test"
    let description = """
        interface org.example.test

        method Echo(value: string) -> (value: string)
        method Add(a: int, b: int) -> (sum: int)
        method Count(n: int) -> (i: int)
        method Subscribe() -> (event: string)
        method Record(tag: string) -> ()
        method Big(size: int) -> (data: string)
        method Fail() -> ()
        method ReplyTwice() -> (n: int)
        method Shared() -> (event: object)

        """

    /// "cancelled" when Subscribe's task is cancelled, "recorded <tag>" for Record,
    /// "second reply: <error>" for ReplyTwice.
    let events: AsyncStream<String>
    let bigCalls = Tally()
    private let report: AsyncStream<String>.Continuation

    init() {
        (events, report) = AsyncStream.makeStream(of: String.self)
    }

    func handle(_ call: VarlinkCall) async throws {
        let parameters = call.parameters
        switch call.unqualifiedMethod {
        case "Echo":
            try parameters.rejectUnknown(allowed: ["value"])
            try await call.reply(["value": JSONValue.string(parameters.string("value"))])
        case "Add":
            try await call.reply(["sum": try parameters.int("a") + parameters.int("b")])
        case "Count":
            let n = try parameters.int("n")
            // Returning without a final reply, as for n = 0, ends the stream with an empty one.
            for i in stride(from: 1, through: n, by: 1) {
                try await call.reply(["i": i], continues: i < n)
            }
        case "Subscribe":
            try await call.reply(["event": "subscribed"], continues: true)
            do {
                try await Task.sleep(for: .seconds(3600))
            } catch {
                report.yield("cancelled")
                throw error
            }
        case "Record":
            report.yield("recorded \(try parameters.string("tag"))")
        case "Big":
            await bigCalls.increment()
            try await call.reply(["data": String(repeating: "x", count: try parameters.int("size"))])
        case "Fail":
            throw Failure()
        case "ReplyTwice":
            try await call.reply(["n": 1])
            do {
                try await call.reply(["n": 2])
            } catch {
                report.yield("second reply: \(error)")
            }
        case "Shared":
            try await call.reply(preEncoded: Self.shared, continues: true)
            try await call.reply(preEncoded: Self.shared)
        default:
            throw call.methodNotFound
        }
    }

    /// Encoded once, sent twice: how a server fans one event out to many subscribers.
    private static let shared = VarlinkEncodedParameters.wrapping(
        field: "event",
        jsonObject: Array(#"{"kind":"stopped"}"#.utf8)
    )

    /// Waits for `event`, skipping others.
    func waitFor(_ event: String) async throws {
        try await withTimeout("server-side event \"\(event)\"") { [events] in
            guard await events.first(where: { $0 == event }) != nil else {
                throw StreamEnded(waitingFor: event)
            }
        }
    }
}

actor Tally {
    private(set) var value = 0

    func increment() {
        value += 1
    }
}
