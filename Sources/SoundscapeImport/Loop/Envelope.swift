/// A recording's level over time, in short blocks, from one pass over its samples: what
/// the trim and the loop search decide on, without keeping the samples (an hour at
/// 48 kHz is 3.5 MB of envelope, against 1.4 GB of stereo float).
public struct Envelope: Sendable, Equatable {
    /// Frames per block: 10 ms at 48 kHz.
    public static let blockFrames = 480

    /// Mean square of each block's samples, both channels together.
    public var power: [Float] = []
    /// Mean square of each block's sample-to-sample differences: how bright it is
    /// (a hiss against a rumble at the same level).
    public var brightness: [Float] = []
    /// Largest absolute sample of each block.
    public var peak: [Float] = []
    /// Frames seen, the last (partial) block's included.
    public var frames = 0

    public init() {}

    public var blocks: Int { power.count }
}

/// Builds an `Envelope` from interleaved stereo frames, in chunks of any size.
public struct EnvelopeBuilder: Sendable {
    public private(set) var envelope = Envelope()
    private var sum: Double = 0
    private var differences: Double = 0
    private var peak: Float = 0
    private var inBlock = 0
    private var last: (Float, Float) = (0, 0)

    public init() {}

    public mutating func add(_ stereo: UnsafeBufferPointer<Float>) {
        let frames = stereo.count / 2
        for frame in 0..<frames {
            let left = stereo[2 * frame]
            let right = stereo[2 * frame + 1]
            sum += Double(left * left + right * right)
            if envelope.frames > 0 {
                let dl = left - last.0
                let dr = right - last.1
                differences += Double(dl * dl + dr * dr)
            }
            peak = max(peak, abs(left), abs(right))
            last = (left, right)
            envelope.frames += 1
            inBlock += 1
            if inBlock == Envelope.blockFrames { closeBlock() }
        }
    }

    public mutating func add(_ stereo: [Float]) {
        stereo.withUnsafeBufferPointer { add($0) }
    }

    /// The envelope with the last partial block, if any.
    public func finished() -> Envelope {
        var copy = self
        if copy.inBlock > 0 { copy.closeBlock() }
        return copy.envelope
    }

    private mutating func closeBlock() {
        let count = Double(2 * inBlock)
        envelope.power.append(Float(sum / count))
        envelope.brightness.append(Float(differences / count))
        envelope.peak.append(peak)
        sum = 0
        differences = 0
        peak = 0
        inBlock = 0
    }
}
