import Foundation
import TestSupport

/// Volume off, issue 22's silent keep-alive: the daemon playing, then
/// `SetVolume 0`. The stream stops, so the sink suspends once WirePlumber's
/// idle timeout passes, and the daemon should make no audio wake-ups.
struct VolumeOffResult: Codable, Sendable {
    /// The daemon over the window while playing, then at volume off.
    var playing: ProcessWindowResult
    var muted: ProcessWindowResult
    /// The sink's node state (pw-dump) at the end of each window.
    var sinkStateWhilePlaying: String
    var sinkStateMuted: String
    /// From SetVolume 0's reply until pw-dump first showed the sink suspended.
    var suspendedAfterSeconds: Double
    /// The daemon's status after SetVolume 0.
    var state: String
    var interruptions: [String]
    var isPlaying: Bool?
    var wantsPlaying: Bool?
}

struct VolumeOffBench {
    let daemon: DaemonUnderTest
    let graph: PipeWireGraph
    let sink: String
    let soundscape: String

    /// Nothing that talks to the daemon or the graph runs inside a window: a
    /// pw-dump is a new PipeWire client, which the daemon's registry watch
    /// hears about, and a call wakes its event loop. Each window starts 1.5 s
    /// after the last command, past the answer's 1 s write bound.
    func run(seconds: Double) async throws -> VolumeOffResult {
        try await daemon.call("Play", ["soundscape": .string(soundscape)])
        let volume = try await daemon.status()["volume"]?.intValue ?? 100
        try await Task.sleep(for: .seconds(1.5))
        let playing = try measure(seconds: seconds)
        let stateWhilePlaying = try sinkState()

        try await daemon.call("SetVolume", ["volume": 0])
        let muted = monoNanos()
        let status = try await daemon.status()
        try waitUntil(timeout: .seconds(20), pollInterval: .milliseconds(100), "the sink to suspend at volume off") {
            (try? sinkState()) == "suspended"
        }
        let suspended = secondsBetween(muted, monoNanos())
        try await Task.sleep(for: .seconds(1.5))
        let quiet = try measure(seconds: seconds)
        let stateMuted = try sinkState()
        try await daemon.call("SetVolume", ["volume": .number(Double(volume))])
        return VolumeOffResult(
            playing: playing, muted: quiet, sinkStateWhilePlaying: stateWhilePlaying, sinkStateMuted: stateMuted,
            suspendedAfterSeconds: suspended, state: status["state"]?.stringValue ?? "?",
            interruptions: status["interruptions"]?.arrayValue?.compactMap(\.stringValue) ?? [],
            isPlaying: status["isPlaying"]?.boolValue, wantsPlaying: status["wantsPlaying"]?.boolValue)
    }

    private func measure(seconds: Double) throws -> ProcessWindowResult {
        guard let pid = daemon.pid else { throw HarnessError("the daemon is not running") }
        let window = ProcessWindow()
        window.begin([pid])
        Thread.sleep(forTimeInterval: seconds)  // the window being measured
        return window.end()[0]
    }

    private func sinkState() throws -> String {
        try graph.snapshot().node(named: sink)?.state ?? "(no sink)"
    }
}
