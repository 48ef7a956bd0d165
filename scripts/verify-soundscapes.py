#!/usr/bin/env python3
"""Checks decoded soundscapes as scripts/make-soundscapes makes them (its `verify`).

  verify-soundscapes.py RATE LOOP_SAMPLES [ID SAMPLES F32_FILE GAIN OPUS_BYTES]...

For each soundscape, SAMPLES is what soxi counts in the decoded file and
F32_FILE its samples (stereo, little-endian float32); GAIN is its manifest
gain. Each must be exactly LOOP_SAMPLES long, at -24..-20 dBFS RMS, peak
below -3 dBFS, with no step across the loop seam bigger than the file's own
99.9th percentile step, and the same level in its first and last 100 ms; the
manifest gains must bring them within 1.5 LU of one another (ITU-R BS.1770).
Prints a table; exits 1 on any failure. Needs numpy (Debian: python3-numpy).
"""
import sys
import numpy as np
np.seterr(all="ignore")

rate, loop_samples = int(sys.argv[1]), int(sys.argv[2])
rest = sys.argv[3:]
entries = [rest[i:i + 5] for i in range(0, len(rest), 5)]

def db(x):
    return 20 * np.log10(max(x, 1e-12))

def k_weighted_loudness(x):
    """ITU-R BS.1770 integrated loudness (LUFS) with gating. The loop is filtered circularly
    (FFT), which is exactly the steady state of the looped sound."""
    n = x.shape[0]
    w = np.exp(-2j * np.pi * np.fft.rfftfreq(n))           # z^-1 on the unit circle
    def biquad(b, a):
        return (b[0] + b[1] * w + b[2] * w * w) / (a[0] + a[1] * w + a[2] * w * w)
    h = biquad([1.53512485958697, -2.69169618940638, 1.19839281085285],
               [1.0, -1.69065929318241, 0.73248077421585]) \
      * biquad([1.0, -2.0, 1.0], [1.0, -1.99004745483398, 0.99007225036621])
    y = np.fft.irfft(np.fft.rfft(x, axis=0) * h[:, None], n=n, axis=0)
    block, hop = int(0.4 * rate), int(0.1 * rate)
    p = np.concatenate([y, y[:block]]) ** 2                  # wrap: it is a loop
    c = np.cumsum(np.vstack([np.zeros((1, 2)), p]), axis=0)
    starts = np.arange(0, n, hop)
    ms = ((c[starts + block] - c[starts]) / block).sum(axis=1)
    lk = -0.691 + 10 * np.log10(np.maximum(ms, 1e-20))
    ms = ms[lk > -70]
    if ms.size == 0:
        return float("-inf")
    rel = -0.691 + 10 * np.log10(ms.mean()) - 10
    ms = ms[-0.691 + 10 * np.log10(ms) > rel]
    return -0.691 + 10 * np.log10(ms.mean())

ok = True
rows = []
print(f"{'id':<12} {'samples/ch':>10} {'secs':>5} {'bytes':>7} {'RMS dBFS':>8} {'peak dBFS':>9} "
      f"{'LUFS':>6} {'gain':>5} {'+gain':>6} | {'seam step L/R':>15} {'p99.9 step L/R':>15} "
      f"{'ratio':>5} {'head/tail RMS dB L/R':>21}")
for ident, nsamp, path, gain, size in entries:
    x = np.fromfile(path, dtype="<f4").reshape(-1, 2).astype(np.float64)
    nsamp, gain, size = int(nsamp), float(gain), int(size)
    problems = []
    if nsamp != loop_samples or x.shape[0] != loop_samples:
        problems.append(f"length {nsamp} (soxi) / {x.shape[0]} (decoded) != {loop_samples}")
    rms = db(np.sqrt(np.mean(x ** 2)))
    peak = db(np.abs(x).max())
    lufs = k_weighted_loudness(x)
    if not -24.5 <= rms <= -19.5:
        problems.append(f"RMS {rms:.1f} dBFS outside -24..-20")
    if peak >= -3.0:
        problems.append(f"peak {peak:.1f} dBFS not below -3")
    steps = np.abs(np.diff(x, axis=0))
    p999 = np.percentile(steps, 99.9, axis=0)
    seam = np.abs(x[0] - x[-1])
    ratio = (seam / p999).max()
    if np.any(seam >= p999):
        problems.append("step across the seam is not below the 99.9th percentile of in-file steps")
    m = rate // 10
    head = np.sqrt(np.mean(x[:m] ** 2, axis=0))
    tail = np.sqrt(np.mean(x[-m:] ** 2, axis=0))
    hdiff = [db(h) - db(t) for h, t in zip(head, tail)]
    if max(abs(d) for d in hdiff) > 1.5:
        problems.append("RMS of first and last 100 ms differ by more than 1.5 dB")
    rows.append((ident, lufs, gain))
    print(f"{ident:<12} {nsamp:>10} {nsamp / rate:>5.1f} {size:>7} {rms:>8.2f} {peak:>9.2f} "
          f"{lufs:>6.1f} {gain:>5.2f} {lufs + db(gain):>6.1f} | "
          f"{seam[0]:.5f}/{seam[1]:.5f} {p999[0]:.5f}/{p999[1]:.5f} {ratio:>5.2f} "
          f"{hdiff[0]:>+10.2f}/{hdiff[1]:+.2f}")
    for p in problems:
        print(f"  FAIL {ident}: {p}")
    ok = ok and not problems

quietest = min(l for _, l, _ in rows)
print("measured-loudness gains (to match the quietest): " +
      ", ".join(f"{i}={10 ** ((quietest - l) / 20):.2f}" for i, l, _ in rows))
adjusted = [l + db(g) for _, l, g in rows]
if max(adjusted) - min(adjusted) > 1.5:
    print(f"  FAIL manifest gains leave a loudness spread of {max(adjusted) - min(adjusted):.1f} LU (> 1.5)")
    ok = False
sys.exit(0 if ok else 1)
