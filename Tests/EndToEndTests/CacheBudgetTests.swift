import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The decoded-loop cache on a small disk: it stays within its budget, and a
/// disk that fills while a loop is being written costs nothing audible.
@Suite("PCM cache budget", .serialized, .timeLimit(.minutes(1)))
struct CacheBudgetTests {
    static func files(in directory: String, namespaceOf pid: Int32? = nil) throws -> [String] {
        let command = (pid.map { ["nsenter", "-t", "\($0)", "-m"] } ?? []) + ["ls", "-A", directory]
        return try ChildProcess.run(command).requireSuccess().stdout.split(separator: "\n").map(String.init)
    }

    /// No stretch of 20 ms or more below -60 dBFS: the tone played on without a gap.
    static func expectNoGap(_ clip: AudioClip, _ what: String) {
        let sound = clip.slice(from: clip.firstNonSilentTime() ?? 0)
        #expect(sound.duration > 1.5, "\(what): only \(sound.duration) s of sound")
        #expect(
            sound.silentStretches(thresholdDB: -60, minMs: 20).isEmpty,
            "\(what): gaps \(sound.silentStretches(thresholdDB: -60, minMs: 20))")
    }

    @Test("a loop larger than the cache budget is never written and plays by decoding")
    func overBudgetPlaysByDecoding() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            try graph.waitForDefaultSink("speaker")
            let cache = graph.directory.appendingPathComponent("pcm").path
            let daemon = try Soundscaped(graph: graph, arguments: ["--cache-dir", cache, "--cache-size", "10"])
            _ = try ToneLoops.make(id: "long", frequency: 440, seconds: 60, in: daemon.userSoundscapes)
            try daemon.start()
            try daemon.must("play", "long")
            try waitUntil(timeout: .seconds(5), "the daemon to say the loop is over budget") {
                graph.logTail(lines: 200).contains("would not fit the cache budget")
            }
            Self.expectNoGap(try graph.record(sink: "speaker", seconds: 2.5), "decoding a loop over budget")
            #expect(
                ((try? Self.files(in: cache)) ?? []).filter { $0.hasSuffix(".f32") || $0.contains(".tmp-") }.isEmpty,
                "the cache holds files")
        }
    }

    @Test("a disk that fills while a loop is cached: the partial file goes, the tone plays on without a gap")
    func diskFullDuringTheWrite() throws {
        try PipeWireGraph.withGraph { graph in
            try graph.createNullSink(name: "speaker")
            try graph.waitForDefaultSink("speaker")
            let cache = graph.directory.appendingPathComponent("pcm").path
            try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
            let daemon = try Soundscaped(graph: graph, arguments: ["--cache-dir", cache])
            // 60 s decoded is 23 MB: it fits a 48 MiB disk with the 16 MiB reserve, until something else fills it.
            _ = try ToneLoops.make(id: "long", frequency: 440, seconds: 60, in: daemon.userSoundscapes)
            let child = try daemon.start(launcher: [
                "unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=48m,mode=0700 tmpfs \"$1\" && shift && exec \"$@\"",
                "sh", cache,
            ])
            try daemon.must("play", "long")
            // The build decodes at idle priority for a second or so; the disk fills under it.
            _ = try ChildProcess.run([
                "nsenter", "-t", "\(child.pid)", "-m", "sh", "-c",
                "dd if=/dev/zero of=\"$0\"/filler bs=1M 2>/dev/null; true", cache,
            ])
            try waitUntil(timeout: .seconds(20), "the daemon to give up caching on a full disk") {
                graph.logTail(lines: 200).contains("cannot cache the decoded loop")
            }
            // The fingerprint memo (FingerprintMemo, one short line a file) lives beside the
            // loops and may stay; no loop, whole or partial, may.
            let left = try Self.files(in: cache, namespaceOf: child.pid).filter { $0 != "fingerprints" }
            #expect(left == ["filler"], "partial or cached files left: \(left)")
            Self.expectNoGap(try graph.record(sink: "speaker", seconds: 2.5), "after the failed cache write")
            #expect(try daemon.status()["state"] as? String == "playing")
        }
    }
}
