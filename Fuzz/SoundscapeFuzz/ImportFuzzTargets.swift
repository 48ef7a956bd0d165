#if FUZZING
import SoundscapeImport

/// The importer's own parsing and decisions on outside bytes (the decoders are libsndfile's).
enum ImportFuzzTargets {
    /// A recording's first bytes and a file size: a problem is only ever a WAV's, and the
    /// probe never reads past what it was given.
    static func containerProbe(_ bytes: [UInt8]) {
        guard bytes.count >= 4 else { return }
        let size = Int(bytes[0]) << 16 | Int(bytes[1]) << 8 | Int(bytes[2])
        let finding = ContainerProbe.probe(Array(bytes.dropFirst(3)), fileSize: size)
        precondition(finding.problem == nil || finding.kind == .wav, "a problem found in a \(finding.kind.rawValue)")
    }

    /// An envelope and momentary loudness made of the bytes (each byte a block's level): the
    /// plan, when there is one, stays inside the recording, its crossfade inside the loop,
    /// and its gain finite and at most the largest boost.
    static func loopPlan(_ bytes: [UInt8]) {
        var envelope = Envelope()
        for byte in bytes {
            let power = byte == 0 ? 0 : Float(byte) * Float(byte) / 65025
            envelope.power.append(power)
            envelope.brightness.append(power * Float(byte & 0x0F) / 16)
            envelope.peak.append(power.squareRoot() * 2)
        }
        envelope.frames = bytes.count * Envelope.blockFrames
        let momentary = stride(from: 0, to: bytes.count, by: 10).map { Float(bytes[$0]) / 3 - 80 }
        guard let plan = try? LoopPlanner.plan(envelope, momentary: momentary) else { return }
        precondition(plan.start >= 0 && plan.used.upperBound <= envelope.frames, "a loop outside the recording: \(plan)")
        precondition(plan.crossfade > 0 && plan.loop >= plan.crossfade, "a crossfade longer than its loop: \(plan)")
        precondition(plan.gain.isFinite && plan.gain <= LoopPlanner.maximumBoost, "a gain of \(plan.gain)")
        precondition(Double(plan.used.count) >= LoopPlanner.minimumSeconds * Double(LoopPlanner.sampleRate) * 0.5)
    }
}
#endif
