/// A look-ahead peak limiter for interleaved stereo: no output sample above `ceiling`,
/// and no step in gain (it falls over `lookahead` frames before a peak, never at it, and
/// rises again at `release` per frame). Streaming, so memory is the look-ahead's only;
/// the output lags the input by `lookahead - 1` frames. The first `lookahead` frames have
/// no past to ramp down from (a peak there is clamped): feed it frames before what counts.
///
/// The gain at frame j is the mean of `held` over the `lookahead` frames up to j, where
/// `held[i]` is at most the smallest gain any frame in `[i, i + lookahead)` needs. Every
/// one of those windows holds j, so the mean is at most what j needs.
public struct PeakLimiter: Sendable {
    public let ceiling: Float
    public let lookahead: Int
    public let release: Double

    private var input: [Float]
    private var needs: [(index: Int, gain: Float)] = []
    private var needsFront = 0
    private var held: [Double]
    private var heldSum: Double
    private var lastHeld: Double = 1
    private var count = 0
    /// The smallest gain applied so far.
    public private(set) var deepest: Float = 1

    /// `releaseSeconds`: how long the gain takes to rise from 0 to 1 again.
    public init(ceiling: Float, lookahead: Int = 240, releaseSeconds: Double = 0.3, sampleRate: Int = 48000) {
        precondition(lookahead >= 1 && ceiling > 0)
        self.ceiling = ceiling
        self.lookahead = lookahead
        release = 1 / (releaseSeconds * Double(sampleRate))
        input = Array(repeating: 0, count: 2 * lookahead)
        held = Array(repeating: 1, count: lookahead)
        heldSum = Double(lookahead)
    }

    public var delay: Int { lookahead - 1 }

    /// Takes one frame; gives the frame `delay` frames back, limited, once there is one.
    public mutating func process(_ left: Float, _ right: Float) -> (Float, Float)? {
        let n = count
        count += 1
        let slot = n % lookahead
        input[2 * slot] = left
        input[2 * slot + 1] = right
        let loudest = max(abs(left), abs(right))
        let need = loudest > ceiling ? ceiling / loudest : 1
        // The smallest need over the last `lookahead` frames, kept in a monotonic queue.
        while needs.count > needsFront, needs[needs.count - 1].gain >= need { needs.removeLast() }
        needs.append((n, need))
        while needs[needsFront].index <= n - lookahead { needsFront += 1 }
        if needsFront > 4096 {
            needs.removeFirst(needsFront)
            needsFront = 0
        }
        guard n >= lookahead - 1 else { return nil }
        let j = n - (lookahead - 1)
        let minimum = Double(needs[needsFront].gain)
        let next = min(minimum, lastHeld + release)
        lastHeld = next
        let heldSlot = j % lookahead
        heldSum += next - held[heldSlot]
        held[heldSlot] = next
        let gain = Float(min(1, heldSum / Double(lookahead)))
        deepest = min(deepest, gain)
        let out = j % lookahead
        // The mean is at most what frame j needs; the clamp only absorbs float rounding.
        return (clamp(input[2 * out] * gain), clamp(input[2 * out + 1] * gain))
    }

    private func clamp(_ value: Float) -> Float {
        max(-ceiling, min(ceiling, value))
    }
}
