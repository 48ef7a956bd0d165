import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `soundscapectl events` follows the daemon across restarts, as `journalctl -f` follows
/// a journal: a daemon that goes away (stopped, or killed) is said once on stderr, the
/// command waits, and once a daemon answers on the socket again it says where it
/// reconnected and prints that daemon's snapshot and events. `--no-follow` ends instead.
@Suite("soundscapectl events across restarts", .serialized, .timeLimit(.minutes(1)))
struct EventsFollowTests {
    /// `soundscapectl events --json` against `daemon`, stdout and stderr captured, once it
    /// printed its first snapshot.
    static func events(_ daemon: Soundscaped, _ extra: [String] = []) throws -> ChildProcess {
        let child = try daemon.graph.spawn(
            try ProductLocator.soundscapectl().path, ["events", "--json", "--socket", daemon.socket] + extra,
            name: "events", stdout: .capture, stderr: .capture)
        let snapshot = child.nextLine(timeout: .seconds(10)) { $0.contains(#""reason":"snapshot""#) }
        guard snapshot != nil else { throw HarnessError("no snapshot from events: \(child.stderrText)") }
        return child
    }

    static func occurrences(of text: String, in output: String) -> Int {
        output.components(separatedBy: text).count - 1
    }

    @Test("events goes on across a stop and a crash of the daemon: says it went away once each time, and where it reconnected")
    func followsAcrossRestarts() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            let events = try Self.events(daemon)
            try daemon.must("volume", "30")
            #expect(events.nextLine(timeout: .seconds(10)) { $0.contains(#""volume":30"#) && $0.contains("volumeChanged") } != nil)

            for (round, signal) in [(1, SIGTERM), (2, SIGKILL)] {
                try daemon.stop(signal: signal)
                try waitUntil(timeout: .seconds(10), "events to say the daemon went away (round \(round)): \(events.stderrText)") {
                    Self.occurrences(of: "soundscaped went away; waiting for it to come back", in: events.stderrText) == round
                }
                #expect(events.isRunning, "events ended when the daemon went away: \(events.stderrText)")

                try daemon.start()
                // The new daemon's snapshot (its seq starts again), then an event it publishes.
                let snapshot = events.nextLine(timeout: .seconds(10)) { $0.contains(#""reason":"snapshot""#) }
                #expect(snapshot != nil, "no snapshot from the new daemon: \(events.stderrText)")
                let volume = 40 + round
                try daemon.must("volume", "\(volume)")
                let changed = events.nextLine(timeout: .seconds(10)) {
                    $0.contains("volumeChanged") && $0.contains(#""volume":\#(volume)"#)
                }
                #expect(changed != nil, "events printed nothing from the new daemon: \(events.stderrText)")
                #expect(events.isRunning)
                #expect(
                    Self.occurrences(of: "soundscapectl: reconnected: soundscaped ", in: events.stderrText) == round,
                    "\(events.stderrText)")
                #expect(Self.occurrences(of: "went away", in: events.stderrText) == round, "said more than once: \(events.stderrText)")
            }
            // The reconnection names the daemon's version and state, as status has them.
            let status = try daemon.status()
            let version = try #require(status["version"] as? String)
            #expect(
                events.stderrText.contains("reconnected: soundscaped \(version), state \(status["state"] as? String ?? "?")"),
                "\(events.stderrText)")
            events.terminate()
        }
    }

    @Test("events --no-follow ends when the daemon goes away, exit status 2")
    func noFollowEnds() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            let events = try Self.events(daemon, ["--no-follow"])
            try daemon.stop()
            let status = events.waitForExit(timeout: .seconds(10))
            events.waitForOutputDrained(timeout: .seconds(2))
            #expect(status == 2, "\(events.stderrText)")
            #expect(!events.stderrText.contains("waiting for it"), "\(events.stderrText)")
        }
    }

    @Test("events with nothing answering at the start ends at once, exit status 2, as every command does")
    func nothingAnsweringAtTheStart() throws {
        let result = try ChildProcess.run(
            [try ProductLocator.soundscapectl().path, "events", "--socket", "/nonexistent/soundscaped/control.sock"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("soundscaped is not running"), "\(result)")
    }
}
