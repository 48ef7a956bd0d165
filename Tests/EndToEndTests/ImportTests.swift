import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `soundscapectl import` and `remove`, with the real CLI and daemon on a private graph:
/// recordings made with sox (ImportMaterial), their loops judged as the loop quality tests
/// judge the built-ins', at the sink and in the file.
@Suite("Import: your own recordings as seamless, even soundscapes", .serialized, .timeLimit(.minutes(3)))
struct ImportTests {
    /// Runs soundscapectl in the graph's environment (its XDG_DATA_HOME: the daemon's user folder).
    private func ctl(_ graph: PipeWireGraph, _ daemon: Soundscaped?, _ arguments: [String]) throws -> ProcessResult {
        try graph.run(
            [try ProductLocator.soundscapectl().path] + arguments + (daemon.map { ["--socket", $0.socket] } ?? []), timeout: .seconds(60))
    }

    private func decode(_ opus: URL, in directory: URL) throws -> AudioClip {
        let wav = directory.appendingPathComponent("decoded-\(opus.deletingPathExtension().lastPathComponent).wav")
        try ChildProcess.run(["opusdec", "--quiet", "--float", opus.path, wav.path]).requireSuccess()
        return try WAVFile.read(wav)
    }

    /// `list --json`'s soundscapes by id.
    private func listed(_ json: String) -> [String: [String: Any]] {
        let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any]
        let items = object?["soundscapes"] as? [[String: Any]] ?? []
        return Dictionary(items.compactMap { item in (item["id"] as? String).map { ($0, item) } }) { first, _ in first }
    }

    private func folderListing(_ daemon: Soundscaped) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: daemon.userSoundscapes.path)) ?? []).sorted()
    }

    @Test("each container and rate imports into a seamless loop at -21.2 LUFS, listed by the running daemon at once")
    func everyContainerAndRate() throws {
        try ExternalTools.require(["sox", "opusenc", "opusdec"])
        let mp3 = (try? ExternalTools.require(["lame"])) != nil
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            // (container, rate, channels, volume): a quiet one, a loud one, mono and stereo, 44.1 and 48 kHz.
            var cases: [(ImportMaterial.Container, Int, Int, Double)] = [
                (.wav, 44100, 2, 0.05), (.flac, 48000, 1, 0.45), (.ogg, 44100, 2, 0.1), (.opus, 48000, 2, 0.2),
            ]
            if mp3 { cases.append((.mp3, 44100, 2, 0.1)) } else { print("note: no lame on this machine; the MP3 case is skipped") }
            for (container, rate, channels, volume) in cases {
                let name = "Field \(container.rawValue) \(rate)"
                let id = "field-\(container.rawValue)-\(rate)"
                let file = try ImportMaterial.make(
                    name, container: container, rate: rate, channels: channels, volume: volume, in: graph.directory)
                let result = try ctl(graph, nil, ["import", file.path, "--credit", "test material, CC0"])
                #expect(result.succeeded, "\(name): \(result)")
                guard result.succeeded else { continue }
                #expect(result.stdout.contains("Imported \(id)"), "\(result.stdout)")
                #expect(result.stdout.contains("loop ") && result.stdout.contains("LUFS"), "\(result.stdout)")
                #expect(result.stderr.isEmpty, "progress written where no terminal is: \(result.stderr)")

                let loop = try decode(daemon.userSoundscapes.appendingPathComponent("\(id).opus"), in: graph.directory)
                #expect(loop.sampleRate == 48000 && loop.channels == 2)
                // 1.2 s of silence, 9 s of bed and 3 s of fade: the loop must not keep the silence or the fade.
                #expect(loop.duration > 4 && loop.duration < 10.5, "\(name): a loop of \(loop.duration) s")
                let seam = SeamCheck(loop: loop)
                #expect(!seam.clicks && !seam.dips, "\(name): \(seam.description)")
                #expect(loop.silentStretches(thresholdDB: -60, minMs: 10).isEmpty, "\(name): a gap in the loop")
                let loudness = try #require(BS1770.loudness(loop))
                #expect(abs(loudness - -21.2) < 1, "\(name): \(loudness) LUFS")
                #expect(loop.peakDB <= -1, "\(name): sample peak \(loop.peakDB) dBFS")

                // The running daemon lists it, with its title and credit, without a restart.
                let list = try daemon.must("list", "--json").stdout
                #expect(list.contains("\"\(id)\""), "\(id) not listed: \(list)")
                let item = try #require(listed(list)[id], "\(id) not listed: \(list)")
                #expect(item["title"] as? String == id && item["credit"] as? String == "test material, CC0", "\(item)")
                let line = try daemon.must("list").stdout.split(separator: "\n").first { $0.contains(" \(id) ") }
                #expect(line?.hasSuffix("(user)  — test material, CC0") == true, "the credit is not shown: \(line ?? "no line")")
            }
            #expect(!folderListing(daemon).contains { $0.hasPrefix(".import-") })
        }
    }

    @Test("an import plays at the sink with no click, gap or dip at the seam, as loud as a built-in")
    func playsSeamlesslyAsLoudAsABuiltin() throws {
        try ExternalTools.require(["sox", "opusenc", "opusdec"])
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            let file = try ImportMaterial.make(
                "creek", container: .wav, rate: 44100, channels: 2, volume: 0.03, head: 0.8, body: 6, fade: 2, in: graph.directory)
            let imported = try ctl(graph, nil, ["import", file.path, "--title", "Creek"])
            try #require(imported.succeeded, "\(imported)")
            let loop = try decode(daemon.userSoundscapes.appendingPathComponent("creek.opus"), in: graph.directory)

            try daemon.must("volume", "100")
            try daemon.must("play", "creek")
            let clip = try graph.record(sink: "speaker", seconds: loop.duration + 2.5).fromFirstSound()
            let start = clip.frameIndex(at: 0.5)
            // Where the loop's first frame plays: its first 2048 frames found in the recording
            // (at volume 100 the sink plays the decoded loop sample for sample).
            let window = 2048
            var seam: Int?
            clip.samples.withUnsafeBufferPointer { recorded in
                loop.samples.withUnsafeBufferPointer { reference in
                    var frame = start
                    while seam == nil && frame + window < clip.frameCount {
                        var index = 0
                        while index < 2 * window && abs(recorded[2 * frame + index] - reference[index]) < 1e-4 { index += 1 }
                        if index == 2 * window { seam = frame }
                        frame += 1
                    }
                }
            }
            let found = try #require(seam, "the loop's start is not in the recording (\(clip.duration) s)")
            let check = SeamCheck(clip, seamAt: found, loop: loop)
            #expect(!check.clicks && !check.dips, "at the sink: \(check.description)")
            #expect(clip.slice(from: 0.5).silentStretches(thresholdDB: -60, minMs: 10).isEmpty, "a gap at the sink")
            let importedLoudness = try #require(BS1770.loudness(clip.slice(from: 0.5)))

            try daemon.must("play", "ocean-waves")
            let builtin = try graph.record(sink: "speaker", seconds: 12).fromFirstSound()
            let builtinLoudness = try #require(BS1770.loudness(builtin.slice(from: 1)))
            #expect(
                abs(importedLoudness - builtinLoudness) < 2,
                "at volume 100: the import \(importedLoudness) LUFS, ocean-waves \(builtinLoudness) LUFS")
        }
    }

    @Test("bad input is refused within seconds, naming the file and the reason; the folder and the daemon are untouched")
    func badInputIsRefused() throws {
        try ExternalTools.require(["sox"])
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            let directory = graph.directory
            func at(_ name: String) -> URL { directory.appendingPathComponent(name) }
            let good = try ImportMaterial.make("good", container: .wav, rate: 48000, channels: 2, volume: 0.1, in: directory)
            let bytes = try Data(contentsOf: good)
            try Data().write(to: at("empty.wav"))
            try bytes.prefix(bytes.count / 3).write(to: at("truncated.wav"))
            var random = SystemRandomNumberGenerator()
            try Data((0..<200_000).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: at("random.mp3"))
            var liar = bytes
            if let data = liar.range(of: Data("data".utf8)) {
                liar.replaceSubrange((data.upperBound)..<(data.upperBound + 4), with: [0x00, 0xE1, 0xF5, 0x05])  // 100 000 000 bytes
            }
            try liar.write(to: at("liar.wav"))
            try FileManager.default.createDirectory(at: at("a-directory"), withIntermediateDirectories: true)
            #expect(mkfifo(at("fifo.wav").path, 0o600) == 0)
            try ChildProcess.run(["sox", "-R", "-n", "-r", "48000", "-c", "2", at("short.wav").path, "synth", "2.5", "pinknoise", "vol", "0.1"])
                .requireSuccess()

            try daemon.must("play", "rain")
            let before = folderListing(daemon)
            let cases: [(file: String, reason: String)] = [
                ("empty.wav", "the file is empty"),
                ("truncated.wav", "cut short"),
                ("random.mp3", "not a recording soundscapectl can read"),
                ("liar.wav", "its header promises"),
                ("a-directory", "is a directory"),
                ("fifo.wav", "is a FIFO"),
                ("missing.flac", "no such file"),
                ("short.wav", "too short to loop"),
            ]
            for (file, reason) in cases {
                let result = try ctl(graph, nil, ["import", at(file).path, "--id", "bad"])
                #expect(result.status == 1, "\(file): exit status \(result.status), expected 1: \(result)")
                #expect(result.stderr.contains(file) && result.stderr.contains(reason), "\(file): \(result.stderr)")
                #expect(result.duration < .seconds(10), "\(file): refused only after \(result.duration)")
                #expect(folderListing(daemon) == before, "\(file) left \(folderListing(daemon))")
            }
            let status = try daemon.status()
            #expect(status["state"] as? String == "playing" && status["soundscape"] as? String == "rain")
        }
    }

    @Test("ids: not a plain name is a usage error, an existing one needs --replace, a built-in is never touched; remove")
    func idsReplaceAndRemove() throws {
        try ExternalTools.require(["sox"])
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            let file = try ImportMaterial.make("Night Rain", container: .wav, rate: 48000, channels: 2, volume: 0.1, in: graph.directory)
            for bad in ["../x", "a/b", "tab\tbed", String(repeating: "x", count: 65)] {
                let result = try ctl(graph, nil, ["import", file.path, "--id", bad])
                #expect(result.status == 64, "--id \(bad): \(result)")
            }
            let builtin = try ctl(graph, nil, ["import", file.path, "--id", "rain"])
            #expect(builtin.status == 1 && builtin.stderr.contains("built-in"), "\(builtin)")

            let first = try ctl(graph, nil, ["import", file.path])
            #expect(first.succeeded && first.stdout.contains("Imported night-rain"), "\(first)")
            let again = try ctl(graph, nil, ["import", file.path])
            #expect(again.status == 1 && again.stderr.contains("--replace"), "\(again)")
            let replaced = try ctl(graph, nil, ["import", file.path, "--replace", "--title", "Night rain", "--credit", "me, CC0"])
            #expect(replaced.succeeded && replaced.stdout.contains("Replaced night-rain"), "\(replaced)")
            let list = try daemon.must("list", "--json").stdout
            #expect(list.contains("Night rain"), "the new title is not listed: \(list)")

            // Playing it, then removing it: the daemon switches away first.
            try daemon.must("play", "night-rain")
            let removed = try ctl(graph, daemon, ["remove", "night-rain"])
            #expect(removed.succeeded && removed.stdout.contains("Removed night-rain"), "\(removed)")
            let status = try daemon.status()
            #expect(status["state"] as? String == "playing" && status["soundscape"] as? String != "night-rain", "\(status)")
            #expect(!(try daemon.must("list", "--json").stdout.contains("night-rain")))
            #expect(!FileManager.default.fileExists(atPath: daemon.userSoundscapes.appendingPathComponent("night-rain.opus").path))

            let builtinRemove = try ctl(graph, daemon, ["remove", "rain"])
            #expect(builtinRemove.status == 1 && builtinRemove.stderr.contains("built-in"), "\(builtinRemove)")
            #expect(ProductLocator.soundscapesDirectory.appendingPathComponent("rain.opus").path.isEmpty == false)
            let unknown = try ctl(graph, daemon, ["remove", "nothing-here"])
            #expect(unknown.status == 1, "\(unknown)")
        }
    }

    /// Starts `import` of `recording` and SIGKILLs it and its decoding child half-way: once the
    /// child writes the loop into the temporary file. Returns that file's name.
    private func killHalfWay(_ recording: URL, graph: PipeWireGraph, daemon: Soundscaped) throws -> String {
        let events = try DirectoryEvents(daemon.userSoundscapes.path)
        let ctl = try graph.spawn(try ProductLocator.soundscapectl().path, ["import", recording.path, "--id", "killed"], name: "import")
        let temporary = try events.next(timeout: .seconds(30), "the import to write its temporary file\n\(graph.logTail(lines: 20))") {
            mask, name in mask & UInt32(IN_MODIFY) != 0 && name.hasPrefix(".import-") && name.hasSuffix(".tmp")
        }
        // Its children, of whichever of its threads started them.
        let workers = ProcFS.taskIDs(ctl.pid).flatMap { task in
            (ProcFS.read("/proc/\(ctl.pid)/task/\(task)/children") ?? "").split(separator: " ").compactMap { Int32($0) }
        }
        ctl.signal(SIGKILL)  // first: else it would see its child die and clean up after it
        for worker in workers { kill(worker, SIGKILL) }
        #expect(workers.count == 1, "soundscapectl's decoding child, running when killed: \(workers)")
        #expect(ctl.waitForExitStatus(timeout: .seconds(5)) == .signaled(SIGKILL))
        try waitUntil(timeout: .seconds(5), "the killed decoder \(workers) to be gone") { !workers.contains(where: ProcFS.isAlive) }
        return temporary
    }

    @Test("an import killed with SIGKILL half-way shows nothing; the daemon's start and the next import remove what it left")
    func killedHalfWay() throws {
        try ExternalTools.require(["sox"])
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            let daemon = try Soundscaped(graph: graph)
            try daemon.start()
            // A minute of material: the decoder writes for a second or more.
            let long = try ImportMaterial.make("long", container: .flac, rate: 44100, channels: 2, volume: 0.1, body: 60, in: graph.directory)
            let before = folderListing(daemon)
            func listedIDs() throws -> Set<String> {
                Set(listed(try daemon.must("list", "--json").stdout).keys)
            }
            let builtins = try listedIDs()

            let first = try killHalfWay(long, graph: graph, daemon: daemon)
            #expect(folderListing(daemon) == (before + [first]).sorted(), "the leftover is the only change")
            #expect(try listedIDs() == builtins, "a killed import is listed")
            let plain = try daemon.must("list").stdout
            #expect(!plain.contains("killed") && !plain.contains(".import-"), "\(plain)")

            try daemon.stop()
            try daemon.start()
            #expect(folderListing(daemon) == before, "left after the daemon's start: \(folderListing(daemon))")

            let second = try killHalfWay(long, graph: graph, daemon: daemon)
            #expect(folderListing(daemon) == (before + [second]).sorted())
            let short = try ImportMaterial.make("after", container: .wav, rate: 48000, channels: 2, volume: 0.1, in: graph.directory)
            let next = try ctl(graph, nil, ["import", short.path])
            #expect(next.succeeded, "\(next)")
            #expect(
                folderListing(daemon) == Set(before + ["after.opus", "manifest.json"]).sorted(),
                "the next import leaves: \(folderListing(daemon))")
            #expect(try listedIDs() == builtins.union(["after"]))
        }
    }

    @Test("a full disk during the write: refused, naming the file and the reason; no partial or stray file")
    func fullDisk() throws {
        try ExternalTools.require(["sox", "unshare", "mount"])
        try PipeWireGraph.withGraph { graph in
            let recording = try ImportMaterial.make("full", container: .wav, rate: 48000, channels: 2, volume: 0.1, body: 20, in: graph.directory)
            let data = graph.directory.appendingPathComponent("tiny-disk")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            // XDG_DATA_HOME on a 64 KiB tmpfs, in a mount namespace of its own (gone with it): the
            // folder is made, the loop (a few hundred KiB) does not fit. What is left is listed inside.
            let script = """
                mount -t tmpfs -o size=64k,mode=0755 tmpfs "$1" || exit 90
                "$2" import "$3" --id full
                echo "status $?"
                find "$1" -mindepth 1 -printf 'left %y %P\\n'
                """
            let result = try ChildProcess.run(
                [
                    "unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", data.path, try ProductLocator.soundscapectl().path,
                    recording.path,
                ],
                environment: graph.environment(adding: ["XDG_DATA_HOME": data.path]), timeout: .seconds(60))
            #expect(result.status == 0 && result.stdout.contains("status 1\n"), "\(result)")
            #expect(
                result.stderr.contains(recording.path) && result.stderr.contains("No space left on device"),
                "not the file and the reason: \(result.stderr)")
            let left = result.stdout.split(separator: "\n").filter { $0.hasPrefix("left ") }
            #expect(left == ["left d soundscaped", "left d soundscaped/soundscapes"], "files left on the full disk: \(left)")
        }
    }
}
