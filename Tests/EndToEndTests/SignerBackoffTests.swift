import Foundation
import Testing
import TestSupport

/// A real daemon restarting a signer that exits at once (`/bin/false`): the delays its
/// `signerRestarting` events name double up to the maximum, as docs/signer.md says
/// (SignerBackoffDocumentationTests holds the page's numbers to the machine).
@Suite("Signer restart backoff", .serialized, .timeLimit(.minutes(1)))
struct SignerBackoffTests {
    @Test("a signer that exits at once waits 0.1, 0.2, 0.4, 0.4 … s; a play meanwhile keeps the backoff")
    func doublingDelays() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(
                graph: graph,
                arguments: [
                    "--signer-command", "/bin/false", "--signer-crash-limit", "0",
                    "--signer-restart-delay", "0.1", "--signer-restart-max-delay", "0.4",
                ])
            try daemon.start()
            let events = try daemon.followEvents()
            try daemon.must("play")
            var delays: [String] = []
            for _ in 0..<5 {
                delays.append(try events.next(reason: "signerRestarting")["message"] as? String ?? "?")
            }
            #expect(delays == ["0.1", "0.2", "0.4", "0.4", "0.4"].map { "restarting in \($0) s" })

            // Another play while it waits or starts: the signer has not failed, so nothing starts afresh.
            try daemon.must("play")
            let next = try events.next(reason: "signerRestarting")["message"] as? String
            #expect(next == "restarting in 0.4 s")
            events.stop()
        }
    }
}
