/// The steady render's inner loop: one layer's interleaved stereo frames, at one
/// gain, split into the two planes (copied for the first layer, added for the rest).
///
/// Why a function of its own, optimised for speed: the release build optimises for
/// size (`packaging/release/build`, `-Osize`), and at that setting LLVM leaves loops
/// scalar, a `mulss` and an `addss` per sample. This is the one loop every sample of
/// every layer passes through on the data thread, so it alone is compiled for speed,
/// which vectorises it (`shufps` to split the frames, `mulps`/`addps` four samples at
/// a time). `@inline(never)` keeps it out of its (size-optimised) caller, where it
/// would be scalar again. The arithmetic is the same per sample (a multiply, then an
/// add), so the output is bit for bit what the scalar loop wrote.
///
/// Free functions, not static methods: the optimiser drops a static method's unused
/// metatype argument by making a specialised copy, and the copy loses
/// `@_optimize(speed)` (it was scalar). docs/performance.md, "Layers", has what
/// this saved.
@_optimize(speed) @inline(never)
func planeMixCopy(
    _ source: UnsafePointer<Float>, frames: Int, gain: Float,
    left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
) {
    for frame in 0..<frames {
        left[frame] = source[frame * 2] * gain
        right[frame] = source[frame * 2 + 1] * gain
    }
}

/// `planeMixCopy`, added to what the planes hold.
@_optimize(speed) @inline(never)
func planeMixAdd(
    _ source: UnsafePointer<Float>, frames: Int, gain: Float,
    left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
) {
    for frame in 0..<frames {
        left[frame] += source[frame * 2] * gain
        right[frame] += source[frame * 2 + 1] * gain
    }
}
