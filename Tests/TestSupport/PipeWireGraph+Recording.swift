import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What reaches a sink, recorded with `pw-record` from its monitor.
extension PipeWireGraph {
    // MARK: - Recording

    /// Starts `pw-record --target <sink> --format f32 --rate 48000 --channels 2`
    /// (which records the sink's monitor) and returns once the recorder is
    /// linked to the sink and data is arriving, so anything played afterwards
    /// is captured. A recording's first graph cycle is silent even when the
    /// sink is already playing: pw-record's link delivers from the cycle after
    /// it starts, whoever plays (measured with pw-play as the player too), so
    /// analyses start from the first sound (`fromFirstSound`).
    public func startRecording(sink: String, file: URL? = nil, timeout: Duration = .seconds(5)) throws -> Recording {
        let url = file ?? recordingsDirectory.appendingPathComponent("\(uniqueName("recording-\(sink)")).wav")
        let recorder = try spawn(
            // stream.capture.sink: without it WirePlumber links a capture stream to the
            // *default* sink's monitor whatever the target, so only the default could be recorded.
            "pw-record",
            [
                "--target", sink, "-P", "{ stream.capture.sink=true }", "--format", "f32", "--rate", "48000",
                "--channels", "2", url.path,
            ],
            name: "pw-record-\(sink)")
        var observed = "nothing yet"
        do {
            try waitUntil(timeout: timeout, "pw-record (pid \(recorder.pid)) linked to sink '\(sink)' and writing") {
                try requireAlive(recorder, during: "waiting for it to record")
                guard let snap = try? snapshot() else {
                    observed = "pw-dump failed"
                    return false
                }
                guard let sinkNode = snap.node(named: sink) else {
                    observed = "no node named '\(sink)'; sinks: \(snap.sinks.compactMap(\.name))"
                    return false
                }
                let recorderNodes = Set(snap.nodes(ofProcess: recorder.pid).map(\.id))
                let links = snap.links(from: sinkNode.id).filter { recorderNodes.contains($0.inputNodeID) }
                observed = "recorder nodes \(recorderNodes.sorted()), links from sink: \(links)"
                guard !links.isEmpty, links.allSatisfy({ $0.state == "active" }) else { return false }
                let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
                observed += ", file size \(size)"
                return size > 1024
            }
        } catch {
            recorder.killNow()
            throw HarnessError(
                "startRecording(sink: \(sink)) failed: \(error)\n  last seen: \(observed)\n\(logTail(lines: 15))")
        }
        return Recording(sink: sink, file: url, process: recorder)
    }

    /// Records `sink` for `seconds` and returns the clip.
    public func record(sink: String, seconds: Double) throws -> AudioClip {
        let recording = try startRecording(sink: sink)
        Thread.sleep(forTimeInterval: seconds)
        return try recording.stop()
    }
}

/// A running `pw-record`.
public final class Recording: @unchecked Sendable {
    public let sink: String
    public let file: URL
    public let process: ChildProcess

    init(sink: String, file: URL, process: ChildProcess) {
        self.sink = sink
        self.file = file
        self.process = process
    }

    /// Stops the recorder with SIGINT (so it finalises the WAV header), waits
    /// for it to exit (escalating to SIGTERM/SIGKILL if needed) and parses the file.
    public func stop(timeout: Duration = .seconds(5)) throws -> AudioClip {
        if process.isRunning {
            process.signal(SIGINT)
            if process.waitForExit(timeout: timeout) == nil {
                process.signal(SIGTERM)
                if process.waitForExit(timeout: .seconds(2)) == nil { process.killNow() }
            }
        }
        return try WAVFile.read(file)
    }
}
