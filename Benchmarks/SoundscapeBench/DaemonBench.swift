import Foundation
import NIOCore
import NIOPosix
import TestSupport
import Varlink

struct ControlLatencyResult: Codable, Sendable {
    var method: String
    var calls: Int
    /// Round trip in microseconds, from before `call` to its return in the awaiting task.
    var latencyMicroseconds: Summary
    var callsPerSecond: Double
}

/// When the first frame at or above a level reached the sink, relative to sending Play.
struct AudioArrival: Codable, Sendable {
    var thresholdDB: Double
    /// From just before Play is sent to the first recorder write that holds the frame.
    var ms: Double
    /// Frames of the graph cycle that carried it.
    var cycleFrames: Int
    /// The recorder write before that cycle (the cycle ran after it).
    var previousWriteMs: Double?
    /// Where in that cycle the frame sits (its extra play-out delay on a device clocked like the sink).
    var offsetInCycleMs: Double
}

struct FirstAudioTrial: Codable, Sendable {
    /// From just before Play is sent to its reply.
    var playReplyMs: Double
    /// The first frame that is not digital silence (≥ -120 dBFS): the start of the fade-in.
    var firstSound: AudioArrival?
    /// The first frame ≥ -60 dBFS: the fade-in (300 ms, cubic) has risen far enough to matter.
    var audible: AudioArrival?
    var notes: [String] = []
}

struct SwitchTrial: Codable, Sendable {
    var from: String
    var to: String
    /// Play(to) round trip while `from` plays.
    var replyMs: Double
    /// From the call to the arrival of the soundscapeChanged event at a subscriber.
    var eventMs: Double?
}

struct IdleResult: Codable, Sendable {
    var daemon: ProcessWindowResult
    var pipewire: ProcessWindowResult
    var state: String
}

/// The measurements of soundscaped alone.
struct DaemonBench {
    let daemon: DaemonUnderTest
    let graph: PipeWireGraph
    let sink: String
    let options: Options
    let soundscape: String
    let group: any EventLoopGroup

    func log(_ text: String) {
        FileHandle.standardError.write(Data("[bench] \(text)\n".utf8))
    }

    // MARK: Control latency

    /// `calls` sequential round trips on one connection for GetStatus, then for
    /// SetVolume alternating between two values (every call is a real change:
    /// a ramp, an event and a state write).
    func controlLatency(calls: Int) async throws -> [ControlLatencyResult] {
        let client = try await daemon.connect()
        defer { Task { await client.close() } }
        let method = "\(DaemonUnderTest.interface)."
        let current = try await daemon.status()["volume"]?.intValue ?? 50
        let pair = current >= 100 ? (99, 100) : (current, current + 1)
        var results: [ControlLatencyResult] = []
        for name in ["GetStatus", "SetVolume"] {
            log("control latency: \(calls) × \(name)")
            let budget = Duration.seconds(max(60, calls / 50))
            let result = try await withTimeout(budget, "\(calls) \(name) calls") {
                var samples = [Double]()
                samples.reserveCapacity(calls)
                let start = monoNanos()
                for i in 0..<calls {
                    let parameters: [String: JSONValue] =
                        name == "SetVolume" ? ["volume": .number(Double(i % 2 == 0 ? pair.1 : pair.0))] : [:]
                    let t0 = monoNanos()
                    _ = try await client.call(method + name, parameters: parameters)
                    samples.append(secondsBetween(t0, monoNanos()) * 1e6)
                }
                let total = secondsBetween(start, monoNanos())
                return ControlLatencyResult(
                    method: name, calls: calls, latencyMicroseconds: Summary(samples),
                    callsPerSecond: Double(calls) / total)
            }
            results.append(result)
        }
        try await daemon.call("SetVolume", ["volume": .number(Double(current))])
        return results
    }

    // MARK: Play to first audio

    /// Each trial: record the sink (silence), timestamp the recorder's writes,
    /// send Play, find the first non-silent frame and when the recorder got it;
    /// then Stop and wait until the fade-out is over.
    ///
    /// Method, and why the recorder's start offset does not matter: nothing is
    /// inferred from when pw-record started or from the file's frame 0.
    /// `RecordingClock` stats the WAV file every 1 ms on CLOCK_MONOTONIC, the
    /// same clock the Play call is stamped with. pw-record appends one graph
    /// cycle per write right after the cycle ran, so "the first observation at
    /// which the file holds frame k" is when the cycle carrying frame k reached
    /// the sink's monitor, late by at most ~1 ms (the poll) plus pw-record's
    /// wake-up; the observation before it bounds the cycle from below. The
    /// offset of frame k inside its cycle is reported separately: on a device
    /// clocked like the sink it would play that much later. Two levels are
    /// reported: the first frame that is not digital silence (the fade-in
    /// starts) and the first ≥ -60 dBFS (the 300 ms cubic fade-in has risen).
    func playToFirstAudio(trials: Int) async throws -> [FirstAudioTrial] {
        try await stopAndSettle()
        var out: [FirstAudioTrial] = []
        for trial in 1...trials {
            let recording = try graph.startRecording(sink: sink)
            let clock = RecordingClock(file: recording.file)
            clock.start()
            try await Task.sleep(for: .milliseconds(300))  // some silence, and writes to calibrate against
            let sent = monoNanos()
            try await daemon.call("Play", ["soundscape": .string(soundscape)])
            let replied = monoNanos()
            try await Task.sleep(for: .milliseconds(1000))
            clock.stop()
            let clip = try recording.stop()
            let onset = try clock.onset(
                in: clip, audibleDB: Double(options.silenceThresholdDB), since: sent,
                cause: "Play was sent (was it stopped?)")
            let result = FirstAudioTrial(
                playReplyMs: secondsBetween(sent, replied) * 1000, firstSound: onset.firstSound,
                audible: onset.audible, notes: onset.notes)
            try? FileManager.default.removeItem(at: recording.file)
            log(
                String(
                    format: "play→audio trial %d: %@ (reply %.1f ms)", trial,
                    result.firstSound.map { String(format: "first sound %.1f ms", $0.ms) } ?? result.notes.joined(separator: "; "),
                    result.playReplyMs))
            out.append(result)
            try await stopAndSettle()
        }
        return out
    }

    /// Stop, wait for the state to say so, then for the 250 ms fade-out to be long over.
    func stopAndSettle() async throws {
        try await daemon.call("Stop")
        try await daemon.waitForState("stopped")
        try await Task.sleep(for: .seconds(options.pause))
    }

    // MARK: Switching

    /// While one soundscape plays, Play(another): the reply, and the
    /// soundscapeChanged event at a subscriber.
    func switchTimes(trials: Int, other: String) async throws -> [SwitchTrial] {
        try await daemon.call("Play", ["soundscape": .string(soundscape)])
        try await Task.sleep(for: .milliseconds(800))
        let log = SubscriberLog(index: 0, keepRaw: true)
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SubscriberHandler(log: log))
                }
            }
            .connect(unixDomainSocketPath: daemon.socket).get()
        defer { channel.close(promise: nil) }
        try await channel.writeAndFlush(ByteBuffer(bytes: FanOutBench.subscribeCall)).get()
        try await waitAsync(timeout: .seconds(5), "the switch subscriber's snapshot") { log.messageCount >= 1 }
        var from = soundscape
        var out: [SwitchTrial] = []
        for _ in 0..<trials {
            let to = from == soundscape ? other : soundscape
            let before = log.messageCount
            let sent = monoNanos()
            try await daemon.call("Play", ["soundscape": .string(to)])
            let replied = monoNanos()
            var trial = SwitchTrial(from: from, to: to, replyMs: secondsBetween(sent, replied) * 1000)
            try? await waitAsync(timeout: .seconds(3), "the soundscapeChanged event") {
                log.messages.dropFirst(before).contains { Self.reason(of: $0) == "soundscapeChanged" }
            }
            if let event = log.messages.dropFirst(before).first(where: { Self.reason(of: $0) == "soundscapeChanged" }) {
                trial.eventMs = secondsBetween(sent, event.nanos) * 1000
            }
            self.log(String(format: "switch %@ → %@: reply %.1f ms", from, to, trial.replyMs))
            out.append(trial)
            from = to
            // Past the 600 ms crossfade before the next switch.
            try await Task.sleep(for: .milliseconds(1200))
        }
        if from != soundscape { try await daemon.call("Play", ["soundscape": .string(soundscape)]) }
        return out
    }

    static func reason(of message: SubscriberLog.Message) -> String? {
        guard let raw = message.raw,
            let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(raw))
        else { return nil }
        return object["parameters"]?["event"]?["reason"]?.stringValue
    }

    // MARK: Idle

    /// After Stop and its fade: the daemon's and pipewire's wake-ups and CPU.
    func idle(seconds: Double) async throws -> IdleResult {
        try await daemon.call("Stop")
        try await daemon.waitForState("stopped")
        try await Task.sleep(for: .seconds(1))
        guard let pid = daemon.pid, let pw = graph.process(.pipewire)?.pid else {
            throw HarnessError("daemon or pipewire not running")
        }
        log(String(format: "idle: measuring the stopped daemon for %.0f s", seconds))
        let window = ProcessWindow()
        window.begin([pid, pw])
        try await Task.sleep(for: .seconds(seconds))
        let results = window.end()
        let state = try await daemon.status()["state"]?.stringValue ?? "?"
        return IdleResult(daemon: results[0], pipewire: results[1], state: state)
    }
}
