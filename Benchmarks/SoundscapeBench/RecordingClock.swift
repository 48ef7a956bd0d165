import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Maps frames of a `pw-record` WAV file to CLOCK_MONOTONIC.
///
/// Method: pw-record (pw-cat) writes each graph cycle's buffer to the file
/// from its process callback with plain write(2)s (libsndfile keeps no
/// user-space write buffer), so the file grows by one quantum per cycle, right
/// after the cycle ran. A thread stats the file every `interval` (1 ms) and
/// keeps every (monotonic time, size) pair where the size changed. The first
/// poll at which the file holds frame k is an upper bound on when frame k
/// reached the sink's monitor; it is late by at most the poll interval plus
/// pw-record's own wake-up, and the graph cycle that carried frame k started
/// no earlier than the previous observed growth. The header size is read from
/// the finished file, so sizes convert exactly to frame counts.
///
/// This avoids trusting the recorder's start time (pw-record links, then
/// writes whatever the monitor carries — silence included — so frame 0 of the
/// file is not "the moment we started it").
final class RecordingClock: @unchecked Sendable {
    struct Point: Sendable {
        var nanos: UInt64
        var bytes: Int
    }

    let file: URL
    private let interval: Double
    private let lock = NSLock()
    private var points: [Point] = []
    private var stopRequested = false
    private var finished = false
    private let done = NSCondition()

    init(file: URL, interval: Double = 0.001) {
        self.file = file
        self.interval = interval
    }

    func start() {
        let thread = Thread { [self] in
            var last = -1
            var st = stat()
            while true {
                lock.lock()
                let stop = stopRequested
                lock.unlock()
                if stop { break }
                if stat(file.path, &st) == 0 {
                    let now = monoNanos()
                    let size = Int(st.st_size)
                    if size != last {
                        last = size
                        lock.lock()
                        points.append(Point(nanos: now, bytes: size))
                        lock.unlock()
                    }
                }
                usleep(UInt32(interval * 1_000_000))
            }
            done.lock()
            finished = true
            done.broadcast()
            done.unlock()
        }
        thread.name = "bench-recording-clock"
        thread.start()
    }

    func stop() {
        lock.lock()
        stopRequested = true
        lock.unlock()
        done.lock()
        let deadline = Date(timeIntervalSinceNow: 2)
        while !finished, done.wait(until: deadline) {}
        done.unlock()
    }

    var observations: [Point] {
        lock.lock()
        defer { lock.unlock() }
        return points
    }

    /// Byte offset of the data chunk and bytes per frame, from the finished file.
    static func dataLayout(of file: URL) throws -> (offset: Int, frameBytes: Int) {
        guard let handle = FileHandle(forReadingAtPath: file.path) else {
            throw HarnessError("cannot open \(file.path)")
        }
        defer { try? handle.close() }
        let bytes = [UInt8](handle.readData(ofLength: 4096))
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        func tag(_ o: Int) -> String { String(decoding: bytes[o..<o + 4], as: UTF8.self) }
        guard bytes.count >= 12, tag(0) == "RIFF", tag(8) == "WAVE" else {
            throw HarnessError("\(file.path) is not a WAV file")
        }
        var offset = 12
        var frameBytes: Int?
        while offset + 8 <= bytes.count {
            let id = tag(offset)
            let size = u32(offset + 4)
            if id == "fmt " { frameBytes = u16(offset + 8 + 12) }
            if id == "data" {
                guard let frameBytes, frameBytes > 0 else { throw HarnessError("\(file.path): data before fmt") }
                return (offset + 8, frameBytes)
            }
            offset += 8 + size + (size & 1)
        }
        throw HarnessError("\(file.path): no data chunk in the first 4 KB")
    }

    /// The first observation at which the file held frame `frame`, and how
    /// many frames that growth added (the cycle's size).
    func arrival(ofFrame frame: Int, layout: (offset: Int, frameBytes: Int))
        -> (nanos: UInt64, cycleFrames: Int, offsetInCycle: Int)?
    {
        let pts = observations
        var previousFrames = 0
        for p in pts {
            let frames = max(0, (p.bytes - layout.offset) / layout.frameBytes)
            if frames > frame { return (p.nanos, frames - previousFrames, frame - previousFrames) }
            previousFrames = frames
        }
        return nil
    }

    /// Most common growth in frames between observations (= the graph quantum
    /// while the recorder ran), or nil with too few observations.
    func typicalCycleFrames(layout: (offset: Int, frameBytes: Int)) -> Int? {
        let frames = observations.map { max(0, ($0.bytes - layout.offset) / layout.frameBytes) }
        guard frames.count > 3 else { return nil }
        var counts: [Int: Int] = [:]
        for i in 1..<frames.count where frames[i] > frames[i - 1] { counts[frames[i] - frames[i - 1], default: 0] += 1 }
        return counts.max { $0.value < $1.value }?.key
    }
}

/// When sound first reached the sink after a cause (a Play sent, a process
/// spawned), at two levels: the first frame that is not digital silence, and
/// the first loud enough to hear.
struct Onset: Sendable {
    /// The first frame ≥ -120 dBFS: digital silence is exactly 0 on the null
    /// sink's monitor, so this is where the player's output (a fade-in's first
    /// samples) begins.
    var firstSound: AudioArrival?
    /// The first frame ≥ the audible level (-60 dBFS by default).
    var audible: AudioArrival?
    var notes: [String] = []

    static let firstSoundDB = -120.0
}

extension RecordingClock {
    /// The onset in `clip`, this clock's recording (stopped), timed from
    /// `since`: a CLOCK_MONOTONIC stamp taken just before the cause. Each level's
    /// first frame is mapped to the first observed write that held it
    /// (`arrival(ofFrame:layout:)`), never to the recording's start. `cause`
    /// completes the note for sound that arrived before it.
    func onset(in clip: AudioClip, audibleDB: Double, since: UInt64, cause: String) throws -> Onset {
        let layout = try Self.dataLayout(of: file)
        var onset = Onset()
        for db in [Onset.firstSoundDB, audibleDB] {
            let threshold = AudioLevel.linear(dBFS: Float(db))
            guard let index = clip.samples.firstIndex(where: { abs($0) >= threshold }) else {
                onset.notes.append(String(format: "no sample reached %.0f dBFS within the %.1f s recorded", db, clip.duration))
                continue
            }
            let frame = index / clip.channels
            guard let arrival = arrival(ofFrame: frame, layout: layout) else {
                onset.notes.append("the recorder's writes were not observed up to frame \(frame)")
                continue
            }
            if arrival.nanos < since { onset.notes.append("sound before \(cause)") }
            let earlier = observations.last { $0.nanos < arrival.nanos }
            let value = AudioArrival(
                thresholdDB: db, ms: secondsBetween(since, arrival.nanos) * 1000, cycleFrames: arrival.cycleFrames,
                previousWriteMs: earlier.map { secondsBetween(since, $0.nanos) * 1000 },
                offsetInCycleMs: Double(arrival.offsetInCycle) / Double(clip.sampleRate) * 1000)
            if db == Onset.firstSoundDB { onset.firstSound = value } else { onset.audible = value }
        }
        return onset
    }
}
