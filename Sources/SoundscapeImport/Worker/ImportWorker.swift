import COpusFile
import CSoundscapeCodecs
import CSoundscapeImport
import Glibc
import SoundscapeLibrary

/// The import's untrusted half: `soundscapectl import` runs it as a child process
/// (`soundscapectl import-worker`) with the recording on descriptor 0, an empty file
/// for the Opus output on 1 and a pipe for its report on 2, and nothing else open. It
/// bounds its address space, confines itself (`scs_import_confine`: no open, no socket,
/// no exec, no process), and only then reads a byte of the recording.
///
/// Two passes over the recording, each streaming (memory is the envelope, the crossfade
/// and the look-ahead, not the file): the first measures (`Envelope`, momentary loudness)
/// and `LoopPlanner` decides; the second writes the loop through the gain and, when the
/// gain would take a peak over the ceiling, the `PeakLimiter`, into the encoder.
///
/// The report: `progress FRACTION` lines, then `result key=value ...` or `error REASON`.
public enum ImportWorker {
    public static let input: Int32 = 0
    public static let output: Int32 = 1
    public static let report: Int32 = 2
    /// Address space allowed beyond what the process has mapped at its start.
    public static let memoryAllowance = 768 << 20

    public struct Outcome: Sendable, Equatable {
        public var plan: LoopPlan
        public var sourceFrames: Int
        public var sourceRate: Int
        public var sourceChannels: Int
        public var loudness: Double
        /// dBTP of the file as it decodes; NaN when not measured (`samplePeak` stayed 3 dB under the ceiling).
        public var truePeak: Double
        /// dBFS of what went into the encoder.
        public var samplePeak: Double
        public var limiterDepth: Double

        var line: String {
            "result loop=\(plan.loop) start=\(plan.start) crossfade=\(plan.crossfade) trimmedEnd=\(plan.trimmedEnd) "
                + "source=\(plan.loudness) gain=\(plan.gain) loudness=\(loudness) truePeak=\(truePeak) samplePeak=\(samplePeak) limiter=\(limiterDepth) "
                + "rate=\(sourceRate) channels=\(sourceChannels) frames=\(sourceFrames)"
        }
    }

    /// Runs the import on descriptors 0, 1 and 2; the exit status (0 done, 1 refused).
    public static func run(title: String?, serial: Int32) -> Int32 {
        if let problem = confine() {
            say("error \(ImportError.sandbox(problem))")
            return 1
        }
        do {
            let outcome = try importRecording(title: title, serial: serial)
            say(outcome.line)
            return 0
        } catch {
            say("error \(error)")
            return 1
        }
    }

    static func confine() -> String? {
        var limit = rlimit()
        let pages = FileSystemStatm.virtualPages()
        let allowed = rlim_t(pages * Int(sysconf(Int32(_SC_PAGESIZE))) + memoryAllowance)
        limit.rlim_cur = allowed
        limit.rlim_max = allowed
        guard setrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0 else { return "setrlimit: \(String(cString: strerror(errno)))" }
        let result = scs_import_confine()
        return result == 0 ? nil : "seccomp: \(String(cString: strerror(-result)))"
    }

    static func say(_ line: String) {
        var text = line.replacingNewlines() + "\n"
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(report, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    static func importRecording(title: String?, serial: Int32) throws(ImportError) -> Outcome {
        // The container's own promises first (a WAV cut short plays as far as it goes).
        let finding = probeInput()
        if let problem = finding.problem { throw .damaged(problem) }
        // Pass 1: measure.
        let first = try SourceReader(descriptor: input)
        let rate = first.sampleRate
        let channels = first.channels
        let expected = first.declaredFrames > 0 ? Double(first.declaredFrames) * Double(LoopPlanner.sampleRate) / Double(rate) : 0
        var builder = EnvelopeBuilder()
        guard let meter = ebur128_init(2, UInt(LoopPlanner.sampleRate), Int32(EBUR128_MODE_M.rawValue)) else {
            throw .unsupported("cannot measure loudness")
        }
        defer { destroyMeter(meter) }
        var momentary: [Float] = []
        var inHop = 0
        let maximum = Int(LoopPlanner.maximumSeconds) * LoopPlanner.sampleRate
        var progress = Progress(expected: expected, share: 0.5, offset: 0)
        let read = try first.stream { (chunk) throws(ImportError) -> Bool in
            builder.add(chunk)
            var offset = 0
            let frames = chunk.count / 2
            while offset < frames {
                let take = min(GatedLoudness.hopFrames - inHop, frames - offset)
                ebur128_add_frames_float(meter, chunk.baseAddress! + 2 * offset, take)
                offset += take
                inHop += take
                if inHop == GatedLoudness.hopFrames {
                    var value = 0.0
                    ebur128_loudness_momentary(meter, &value)
                    momentary.append(Float(value))
                    inHop = 0
                }
            }
            if builder.envelope.frames > maximum { throw .tooLong }
            progress.advance(to: builder.envelope.frames)
            return true
        }
        if first.declaresExactLength, Double(read) < Double(first.declaredFrames) * 0.99 - 1 {
            throw .truncated(declared: Double(first.declaredFrames) / Double(rate), read: Double(read) / Double(rate))
        }
        let envelope = builder.finished()
        let planned = Result { () throws(LoopPlanError) -> LoopPlan in try LoopPlanner.plan(envelope, momentary: momentary) }
            .mapError { ImportError.plan($0) }

        // Pass 2: the loop, through the gain (and limiter) into the encoder. When what came out
        // is off the target by more than a few tenths (the limiter took some, or the crossfade
        // merged unlike halves), once more with the gain corrected.
        var plan = try planned.get()
        var ceiling = LoopPlanner.ceiling
        var written = try writeLoop(plan, ceiling: ceiling, title: title, serial: serial)
        if abs(written.loudness - SoundscapeLoudness.target) > 0.3, plan.gain < LoopPlanner.maximumBoost {
            let peak = Decibels.of(Double(envelope.peak.max() ?? 0)) + plan.gain
            plan.gain = min(LoopPlanner.maximumBoost, plan.gain + SoundscapeLoudness.target - written.loudness)
            plan.limits = plan.limits || peak - written.loudness + SoundscapeLoudness.target > ceiling
            written = try rewrite(plan, ceiling: ceiling, title: title, serial: serial)
        }
        // The true peak of what a player decodes: the encoder can overshoot what went in.
        // Checked on the file as it decodes unless its samples stayed 3 dB under the ceiling
        // before encoding (the encoder's overshoot and the peaks between samples are less).
        guard written.samplePeak > SoundscapeLoudness.truePeakCeiling - 3 else {
            return Outcome(
                plan: plan, sourceFrames: read, sourceRate: rate, sourceChannels: channels, loudness: written.loudness,
                truePeak: .nan, samplePeak: written.samplePeak, limiterDepth: written.limiterDepth)
        }
        var decoded = try decodedTruePeak()
        for _ in 0..<2 where decoded > SoundscapeLoudness.truePeakCeiling {
            ceiling -= decoded - SoundscapeLoudness.truePeakCeiling + 0.3
            plan.limits = true
            written = try rewrite(plan, ceiling: ceiling, title: title, serial: serial)
            decoded = try decodedTruePeak()
        }
        written.truePeak = decoded
        return Outcome(
            plan: plan, sourceFrames: read, sourceRate: rate, sourceChannels: channels, loudness: written.loudness,
            truePeak: written.truePeak, samplePeak: written.samplePeak, limiterDepth: written.limiterDepth)
    }

    static func rewrite(
        _ plan: LoopPlan, ceiling: Double, title: String?, serial: Int32
    ) throws(ImportError) -> (loudness: Double, truePeak: Double, samplePeak: Double, limiterDepth: Double) {
        guard ftruncate(output, 0) == 0, lseek(output, 0, SEEK_SET) == 0 else { throw .write(errno) }
        return try writeLoop(plan, ceiling: ceiling, title: title, serial: serial)
    }

    /// The output decoded (libopusfile, from the descriptor it was written to): its true peak (dBTP).
    static func decodedTruePeak() throws(ImportError) -> Double {
        guard lseek(output, 0, SEEK_SET) == 0 else { throw .write(errno) }
        var callbacks = OpusFileCallbacks()
        guard let stream = op_fdopen(&callbacks, dup(output), "rb") else { throw .write(errno) }
        var error: Int32 = 0
        guard let file = op_open_callbacks(stream, &callbacks, nil, 0, &error) else {
            _ = callbacks.close?(stream)
            throw .encoder("its own output does not decode (\(error))")
        }
        defer { op_free(file) }
        guard let meter = ebur128_init(2, UInt(LoopPlanner.sampleRate), Int32(EBUR128_MODE_TRUE_PEAK.rawValue)) else {
            throw .unsupported("cannot measure loudness")
        }
        defer { destroyMeter(meter) }
        var buffer = [Float](repeating: 0, count: 2 * 5760)
        while true {
            let frames = buffer.withUnsafeMutableBufferPointer { op_read_float_stereo(file, $0.baseAddress, Int32($0.count)) }
            if frames < 0 { throw .encoder("its own output does not decode (\(frames))") }
            if frames == 0 { break }
            buffer.withUnsafeBufferPointer { _ = ebur128_add_frames_float(meter, $0.baseAddress, Int(frames)) }
        }
        var peak = 0.0
        for channel in 0..<2 {
            var value = 0.0
            ebur128_true_peak(meter, UInt32(channel), &value)
            peak = max(peak, value)
        }
        return Decibels.of(peak)
    }

    static func writeLoop(
        _ plan: LoopPlan, ceiling: Double, title: String?, serial: Int32
    ) throws(ImportError) -> (loudness: Double, truePeak: Double, samplePeak: Double, limiterDepth: Double) {
        var error: Int32 = 0
        guard let encoder = scs_opus_writer_open(output, 96000, serial, title, &error) else {
            throw .encoder(String(cString: ope_strerror(error)))
        }
        defer { ope_encoder_destroy(encoder) }
        // Loudness only: the true peak is measured on the file as it decodes (`decodedTruePeak`).
        guard let outputMeter = ebur128_init(2, UInt(LoopPlanner.sampleRate), Int32(EBUR128_MODE_I.rawValue))
        else { throw .unsupported("cannot measure loudness") }
        defer { destroyMeter(outputMeter) }
        var stage = OutputStage(plan: plan, ceiling: ceiling, encoder: encoder, meter: outputMeter)
        let second = try SourceReader(descriptor: input)
        let start = plan.start
        let fade = plan.crossfade
        let loopEnd = plan.start + plan.loop
        let end = loopEnd + fade
        let primeFrom = start + fade - min(fade, stage.preRoll)
        var head = [Float](repeating: 0, count: 2 * fade)
        var wrap: [Float] = []
        var position = 0
        var progress = Progress(expected: Double(end), share: 0.5, offset: 0.5)
        try second.stream { (chunk) throws(ImportError) -> Bool in
            for frame in 0..<(chunk.count / 2) {
                let here = position
                position += 1
                let left = chunk[2 * frame]
                let right = chunk[2 * frame + 1]
                if here < start { continue }
                if here < start + fade {
                    let j = here - start
                    head[2 * j] = left
                    head[2 * j + 1] = right
                    if here >= primeFrom {
                        let weight = Crossfade.weights(j, of: fade).fadeIn
                        try stage.prime(left * weight, right * weight)
                    }
                } else if here < loopEnd {
                    if wrap.count < 2 * stage.delay {
                        wrap.append(left)
                        wrap.append(right)
                    }
                    try stage.push(left, right)
                } else if here < end {
                    let j = here - loopEnd
                    let (fadeIn, fadeOut) = Crossfade.weights(j, of: fade)
                    try stage.push(head[2 * j] * fadeIn + left * fadeOut, head[2 * j + 1] * fadeIn + right * fadeOut)
                } else {
                    return false
                }
            }
            progress.advance(to: position)
            return true
        }
        guard position >= end else {
            throw .truncated(declared: Double(end) / Double(LoopPlanner.sampleRate), read: Double(position) / Double(LoopPlanner.sampleRate))
        }
        try stage.finish(wrap: wrap)
        var loudness = 0.0
        ebur128_loudness_global(outputMeter, &loudness)
        return (loudness, .nan, Decibels.of(Double(stage.peak)), Decibels.of(Double(stage.deepest)))
    }

    static func probeInput() -> ContainerProbe.Finding {
        var info = stat()
        guard fstat(input, &info) == 0 else { return ContainerProbe.Finding(kind: .unknown) }
        var prefix = [UInt8](repeating: 0, count: ContainerProbe.prefixLength)
        let count = prefix.withUnsafeMutableBytes { pread(input, $0.baseAddress, $0.count, 0) }
        return ContainerProbe.probe(Array(prefix.prefix(max(0, count))), fileSize: Int(info.st_size))
    }

    /// `progress FRACTION` lines, at most one a percent.
    struct Progress {
        let expected: Double
        let share: Double
        let offset: Double
        var last = -1

        init(expected: Double, share: Double, offset: Double) {
            self.expected = expected
            self.share = share
            self.offset = offset
        }

        mutating func advance(to frames: Int) {
            guard expected > 0 else { return }
            let percent = Int((offset + share * min(1, Double(frames) / expected)) * 100)
            guard percent > last else { return }
            last = percent
            ImportWorker.say("progress \(Double(percent) / 100)")
        }
    }
}

/// The loop's samples on their way out: the gain, the limiter when the plan says, the
/// output meter and the encoder, in blocks.
struct OutputStage {
    let gain: Float
    var limiter: PeakLimiter?
    let encoder: OpaquePointer
    let meter: UnsafeMutablePointer<ebur128_state>
    let total: Int
    var discard = 0
    var written = 0
    var buffer: [Float] = []
    /// The largest sample that went into the encoder.
    var peak: Float = 0
    /// Frames of the head's end run through the limiter before the loop, so that its gain
    /// where the file starts is what it is where the file ends (it continues from there).
    let preRoll = 9600

    init(plan: LoopPlan, ceiling: Double, encoder: OpaquePointer, meter: UnsafeMutablePointer<ebur128_state>) {
        gain = Float(Decibels.gain(plan.gain))
        limiter = plan.limits ? PeakLimiter(ceiling: Float(Decibels.gain(ceiling))) : nil
        self.encoder = encoder
        self.meter = meter
        total = plan.loop
        buffer.reserveCapacity(2 * 4800)
    }

    var delay: Int { limiter?.delay ?? 0 }
    var deepest: Float { limiter?.deepest ?? 1 }

    /// A frame before the loop, for the limiter's state only: its output is dropped.
    mutating func prime(_ left: Float, _ right: Float) throws(ImportError) {
        guard limiter != nil else { return }
        discard += 1
        if let out = limiter!.process(left * gain, right * gain) { try emit(out.0, out.1) }
    }

    mutating func push(_ left: Float, _ right: Float) throws(ImportError) {
        if limiter != nil {
            guard let out = limiter!.process(left * gain, right * gain) else { return }
            try emit(out.0, out.1)
        } else {
            try emit(left * gain, right * gain)
        }
    }

    private mutating func emit(_ left: Float, _ right: Float) throws(ImportError) {
        if discard > 0 {
            discard -= 1
            return
        }
        guard written < total else { return }
        buffer.append(left)
        buffer.append(right)
        peak = max(peak, abs(left), abs(right))
        written += 1
        if buffer.count == buffer.capacity { try flush() }
    }

    private mutating func flush() throws(ImportError) {
        let frames = buffer.count / 2
        guard frames > 0 else { return }
        let result = buffer.withUnsafeBufferPointer { samples in
            ebur128_add_frames_float(meter, samples.baseAddress, frames)
            return ope_encoder_write_float(encoder, samples.baseAddress, Int32(frames))
        }
        buffer.removeAll(keepingCapacity: true)
        if result == OPE_WRITE_FAIL { throw .write(scs_opus_writer_error()) }
        if result != OPE_OK { throw .encoder(String(cString: ope_strerror(result))) }
    }

    /// The last frames: through the limiter, the first frames of the loop again as its
    /// look-ahead (what follows the last frame when it loops); then the encoder's end.
    mutating func finish(wrap: [Float]) throws(ImportError) {
        var index = 0
        while written < total && index + 1 < wrap.count {
            try push(wrap[index], wrap[index + 1])
            index += 2
        }
        try flush()
        let result = ope_encoder_drain(encoder)
        if result == OPE_WRITE_FAIL { throw .write(scs_opus_writer_error()) }
        if result != OPE_OK { throw .encoder(String(cString: ope_strerror(result))) }
    }
}

enum FileSystemStatm {
    /// The process's mapped pages (`/proc/self/statm`'s first field); read before confinement.
    static func virtualPages() -> Int {
        guard let file = fopen("/proc/self/statm", "r") else { return 0 }
        defer { fclose(file) }
        var pages = 0
        return firstNumber(file, &pages) ? pages : 0
    }

    private static func firstNumber(_ file: UnsafeMutablePointer<FILE>, _ value: inout Int) -> Bool {
        var text = [CChar](repeating: 0, count: 64)
        guard fgets(&text, 64, file) != nil else { return false }
        let line = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let first = line.split(separator: " ").first, let number = Int(first) else { return false }
        value = number
        return true
    }
}

func destroyMeter(_ state: UnsafeMutablePointer<ebur128_state>) {
    var pointer: UnsafeMutablePointer<ebur128_state>? = state
    ebur128_destroy(&pointer)
}

extension String {
    fileprivate func replacingNewlines() -> String {
        String(map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
