#!/usr/bin/env python3
"""WAV helpers for the shell checks (scripts/check-package).

  wav.py level FILE
      the RMS level and the peak of the recording's second half (the first may
      hold the stream's start), in dBFS, as "RMS PEAK" ("-inf" for silence);
      FILE is 16-bit PCM, as pw-record --format s16 writes it
  wav.py tone FILE
      writes 30 s of a 300 Hz sine (mono, 48 kHz, 16-bit, peak -11.2 dBFS): a call's
      stand-in for pw-play --media-role=Communication
"""
import array
import math
import sys
import wave


def level(path):
    with wave.open(path) as w:
        samples = array.array("h", w.readframes(w.getnframes()))
    tail = samples[len(samples) // 2:]
    if not tail:
        sys.exit("an empty recording")
    rms = math.sqrt(sum(s * s for s in tail) / len(tail)) / 32768
    peak = max(abs(s) for s in tail) / 32768
    db = lambda x: f"{20 * math.log10(x):.1f}" if x > 0 else "-inf"
    print(db(rms), db(peak))


def tone(path):
    with wave.open(path, "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(48000)
        w.writeframes(array.array("h", (int(9000 * math.sin(2 * math.pi * 300 * i / 48000)) for i in range(48000 * 30))).tobytes())


if __name__ == "__main__":
    commands = {"level": level, "tone": tone}
    if len(sys.argv) != 3 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](sys.argv[2])
