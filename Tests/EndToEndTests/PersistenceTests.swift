import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What survives the daemon: preferences and the wish to play, across clean
/// stops and crashes; and bad soundscape files, which must never stop it.
@Suite("Persistence and bad soundscapes", .serialized, .timeLimit(.minutes(1)))
struct PersistenceTests {
    @Test("volume, soundscape and the playing state survive a crash and a clean restart")
    func stateSurvivesRestarts() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            try daemon.must("play", "rain")
            try daemon.must("volume", "30")

            #expect(try daemon.stop(signal: SIGKILL) == .signaled(SIGKILL))
            try daemon.start()
            var status = try daemon.status()
            #expect(status["soundscape"] as? String == "rain")
            #expect(status["volume"] as? Int == 30)
            #expect(status["wantsPlaying"] as? Bool == true)
            try waitUntil(timeout: .seconds(5), "playback to resume after the crash") {
                try daemon.status()["state"] as? String == "playing"
            }
            let level = try graph.record(sink: "speaker", seconds: 1).rmsDB(from: 0.3, to: 1)
            #expect(level > -60, "no audio after restart (\(level) dBFS)")

            #expect(try daemon.stop(signal: SIGTERM) == .exited(0))
            try daemon.start()
            try waitUntil(timeout: .seconds(5), "playback to resume after a clean restart") {
                try daemon.status()["state"] as? String == "playing"
            }

            try daemon.must("stop")
            #expect(try daemon.stop(signal: SIGTERM) == .exited(0))
            try daemon.start()
            status = try daemon.status()
            #expect(status["state"] as? String == "stopped")
            #expect(status["soundscape"] as? String == "rain")
            #expect(status["volume"] as? Int == 30)
        }
    }

    @Test("missing, truncated and non-Opus files give decodeError and leave the daemon playing what it played")
    func badFilesAreRefused() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            let user = daemon.userSoundscapes
            try Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: user.appendingPathComponent("garbage.opus"))
            let rain = try Data(contentsOf: ProductLocator.soundscapesDirectory.appendingPathComponent("rain.opus"))
            try rain.prefix(rain.count * 6 / 10).write(to: user.appendingPathComponent("cut.opus"))
            let extra = graph.directory.appendingPathComponent("extra")
            try FileManager.default.createDirectory(at: extra, withIntermediateDirectories: true)
            try Data(#"{"soundscapes":[{"id":"ghost","title":"Ghost","file":"ghost.opus"}]}"#.utf8)
                .write(to: extra.appendingPathComponent("manifest.json"))
            try daemon.start(arguments: ["--soundscapes-dir", extra.path])
            try daemon.must("play", "wind")
            let events = try daemon.followEvents()
            // `list` says which file cannot play, and why, before any play is tried (issue 37).
            let list = try daemon.must("list")
            let garbage = try #require(list.stdout.split(separator: "\n").first { $0.contains(" garbage ") }, "\(list.stdout)")
            #expect(garbage.contains("UNPLAYABLE: not an Ogg Opus file"), "\(garbage)")
            let ghost = try #require(list.stdout.split(separator: "\n").first { $0.contains(" ghost ") }, "\(list.stdout)")
            #expect(ghost.contains("UNPLAYABLE: the file is missing"), "\(ghost)")
            #expect(list.stderr.contains("2 files above cannot play"), "\(list.stderr)")
            // A file cut short after its first page is found by the decoder, at play, as before.
            #expect(list.stdout.split(separator: "\n").filter { $0.contains("UNPLAYABLE") }.count == 2, "\(list.stdout)")

            for (id, words) in [("garbage", "not an Ogg Opus file"), ("cut", "truncated"), ("ghost", "missing")] {
                let result = try daemon.ctl("play", id)
                #expect(result.status == 1, "play \(id): \(result)")
                #expect(result.stderr.contains("cannot play '\(id)'") && result.stderr.contains(words), "\(result.stderr)")
                let event = try events.next(reason: "decodeError")
                #expect((event["message"] as? String)?.contains(words) == true, "\(event)")
                #expect(event["soundscape"] as? String == "wind", "a refused file must not change the soundscape")
            }
            let status = try daemon.status()
            #expect(status["state"] as? String == "playing")
            #expect(status["soundscape"] as? String == "wind")
            #expect(daemon.process?.isRunning == true)
            events.stop()
        }
    }

    @Test("a saved soundscape that has vanished falls back to the default, and says so")
    func vanishedSoundscapeFallsBack() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            let mine = try ToneLoops.make(id: "mine", frequency: 330, in: daemon.userSoundscapes)
            try daemon.start()
            try daemon.must("play", "mine")
            #expect(try daemon.stop() == .exited(0))

            try FileManager.default.removeItem(at: mine)
            try daemon.start()
            let status = try daemon.status()
            #expect(status["soundscape"] as? String == "ocean-waves")
            #expect(status["wantsPlaying"] as? Bool == true)
            let log = try String(contentsOf: graph.logDirectory.appendingPathComponent("soundscaped-2.log"), encoding: .utf8)
            #expect(log.contains("the saved soundscape 'mine' is no longer available; using 'ocean-waves'"), "\(log)")
        }
    }
}
