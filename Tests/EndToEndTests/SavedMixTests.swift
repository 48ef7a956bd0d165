import Foundation
import Testing
import TestSupport

/// Saved mixes (issue 39) on a private graph: saved, played back by name (its
/// layers heard at the sink, at their levels), kept across a restart, deleted.
@Suite(.serialized) struct SavedMixTests {
    /// `list --json`'s saved mixes, as `[name: [id: level]]`.
    static func mixes(_ daemon: Soundscaped) throws -> [String: [String: Int]] {
        let list = try JSONSerialization.jsonObject(with: Data(try daemon.must("list", "--json").stdout.utf8)) as? [String: Any]
        let mixes = try #require(list?["mixes"] as? [[String: Any]], "list --json has a mixes key")
        #expect(list?["soundscapes"] is [[String: Any]], "list --json keeps its soundscapes")
        return Dictionary(
            uniqueKeysWithValues: mixes.compactMap { mix in
                (mix["name"] as? String).map { ($0, LayerTests.layers(mix)) }
            })
    }

    /// What TAB offers after `soundscapectl SUBCOMMAND `, asked as the bash completion asks.
    static func completions(_ daemon: Soundscaped, _ subcommand: String) throws -> [String] {
        let ctl = try ProductLocator.soundscapectl().path
        let words = [ctl, subcommand, "--socket", daemon.socket, ""]
        let result = try ChildProcess.run(
            [ctl, "---completion", subcommand, "--", "positional@0", "\(words.count - 1)", "0"] + words)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test("save NAME keeps the layers; play NAME brings them back at the sink, across a restart; delete removes it")
    func savedMixAtTheSink() throws {
        try PipeWireGraph.withGraph { graph in
            let daemon = try LayerTests.twoTones(on: graph)
            // Two tones as loud: the mix is 3 dB above either alone, which says at the sink what plays.
            try daemon.must("play", "low", "high=100")
            let mixed = try graph.record(sink: "speaker", seconds: 1.6).rmsDB(from: 0.9)

            let events = try daemon.followEvents()
            defer { events.stop() }
            let saved = try daemon.must("save", "night")
            #expect(saved.stdout.contains("Saved night: low + high"), "\(saved.stdout)")
            let news = try events.next(reason: "mixesChanged")
            #expect((news["message"] as? String)?.contains("night") == true)
            #expect(try daemon.status()["mix"] as? String == "night")
            // TAB: play offers the mix beside the soundscapes; delete offers the mixes alone.
            let playable = try Self.completions(daemon, "play")
            #expect(playable.contains("low") && playable.last == "night", "\(playable)")
            #expect(try Self.completions(daemon, "delete") == ["night"])

            // Refused, exit status 1: a soundscape's id, and a name no id could be.
            let clash = try daemon.ctl("save", "low")
            #expect(clash.status == 1)
            #expect(clash.stderr.contains("'low' is a soundscape's id"), "\(clash.stderr)")
            #expect(try daemon.ctl("save", ".night").status == 1)

            // Another soundscape, then the mix by its name: its layers, heard at their levels.
            try daemon.must("play", "high")
            #expect(try daemon.status()["mix"] is NSNull)
            let single = try graph.record(sink: "speaker", seconds: 1.6).rmsDB(from: 0.9)
            #expect(abs(mixed - single - 3) < 1, "the mix is 3 dB above its single layer: \(single) → \(mixed) dBFS")
            let asked = ContinuousClock.now
            let played = try daemon.must("play", "night")
            #expect(ContinuousClock.now - asked < .seconds(3), "play NAME answers as play ID does")
            #expect(played.stdout.contains("Playing"), "\(played.stdout)")
            var status = try daemon.status()
            #expect(LayerTests.layers(status) == ["low": 100, "high": 100])
            #expect(status["mix"] as? String == "night")
            let back = try graph.record(sink: "speaker", seconds: 1.6).rmsDB(from: 0.9)
            #expect(abs(back - mixed) < 0.5, "the saved mix sounds as it did: \(mixed) → \(back) dBFS")

            // A restart: the saved mix is still there, and what played resumes under its name.
            try daemon.stop()
            try daemon.start()
            try waitUntil(timeout: .seconds(10), "the restarted daemon to play again") {
                (try? daemon.status())?["isPlaying"] as? Bool == true
            }
            status = try daemon.status()
            #expect(status["mix"] as? String == "night")
            #expect(try Self.mixes(daemon) == ["night": ["low": 100, "high": 100]])
            let list = try daemon.must("list").stdout
            #expect(list.contains("Saved mixes:") && list.contains("night") && list.contains("low + high"), "\(list)")

            // Deleted: gone from the list, what plays goes on unnamed, and a second delete is refused.
            try daemon.must("delete", "night")
            #expect(try Self.mixes(daemon).isEmpty)
            #expect(try daemon.status()["mix"] is NSNull)
            #expect(LayerTests.layers(try daemon.status()) == ["low": 100, "high": 100])
            let again = try daemon.ctl("delete", "night")
            #expect(again.status == 1)
            #expect(again.stderr.contains("no saved mix named 'night'"), "\(again.stderr)")
            let neither = try daemon.ctl("play", "night")
            #expect(neither.status == 1)
            #expect(neither.stderr.contains("no soundscape or saved mix named 'night'"), "\(neither.stderr)")
            // A layer is a soundscape only: a mix's name there is no soundscape.
            let asLayer = try daemon.ctl("play", "low", "night=50")
            #expect(asLayer.status == 1)
            #expect(asLayer.stderr.contains("no soundscape named 'night'"), "\(asLayer.stderr)")
        }
    }
}
