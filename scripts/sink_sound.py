#!/usr/bin/env python3
"""What a sink carries, told apart as it arrives: the soundscape, the signer-down
cue, or silence.

The soundscapes are noise (broadband); the signer-down cue
(soundscapes/cues/signer-down.opus, made by scripts/make-soundscapes) is silence
with a soft chime every 5 s: E5 (659.26 Hz) then A5 (880 Hz), each with its
octave. So each window of the sink's monitor is, by its RMS level and the share
of its power at the chime's four frequencies (Goertzel, Hann window):
  silence      RMS below -60 dBFS
  cue          at least 20 % of its power at the chime's frequencies (a note of
               the chime puts 60-95 % there, the soundscapes' noise under 5 %)
  soundscape   audible, under 20 % there, and so was the window before
  sound        audible, under 20 % there, after a window that was not: the
               onset of a note whose attack fills only the window's edge (where
               the Hann window hides it) looks like this, so one such window
               alone decides nothing (measured over the cue at every alignment
               of 100 ms windows: never two in a row)
A crossfade between the two is `soundscape` until the noise has faded out (the
cue begins with 0.7 s of silence, longer than the player's 0.6 s crossfade).

As a program (for scripts/check-package, and a soak that watches for the cue):

    sink_sound.py SINK [--window SECONDS]

records SINK's monitor with pw-record (in the caller's PipeWire session) and
prints one JSON line per window (default 0.1 s), until killed:

    {"t": 5234.567, "rms": -31.2, "cue": 0.01, "kind": "soundscape"}

`t` is when the window ended, on CLOCK_MONOTONIC (Python's time.monotonic()),
so a caller can place it beside its own events: the arrival time of the graph
cycle that carried it, less the frames after the window's end (a cycle is
2048 frames, 43 ms, on Debian 12's PipeWire). `rms` is in dBFS, `cue` the
chime's share of the window's power.
"""
import array
import json
import math
import os
import subprocess
import sys
import time

RATE = 48000
CUE_TONES = (659.26, 880.0, 1318.51, 1760.0)
SILENCE_DB = -60.0
CUE_SHARE = 0.2


class Classifier:
    """Classifies windows of `frames` mono samples (floats in -1…1)."""

    def __init__(self, frames, rate=RATE):
        # Windows are classified in order: a window's kind depends on the one before.
        self.frames = frames
        self.window = [0.5 - 0.5 * math.cos(2 * math.pi * i / (frames - 1)) for i in range(frames)]
        self.gain = sum(self.window)
        self.coefficients = [2 * math.cos(2 * math.pi * f / rate) for f in CUE_TONES]
        self.previous = "silence"

    def tone_power(self, weighted, coefficient):
        """Power of a sine at the Goertzel frequency (A²/2 for amplitude A)."""
        s1 = s2 = 0.0
        for x in weighted:
            s1, s2 = x + coefficient * s1 - s2, s1
        magnitude_squared = s1 * s1 + s2 * s2 - coefficient * s1 * s2
        amplitude = 2 * math.sqrt(max(magnitude_squared, 0.0)) / self.gain
        return amplitude * amplitude / 2

    def classify(self, samples):
        """(rms dBFS, the cue's share of the power, kind) of the next window."""
        power = sum(x * x for x in samples) / len(samples)
        rms_db = 10 * math.log10(power) if power > 0 else -math.inf
        if rms_db < SILENCE_DB:
            kind, share = "silence", 0.0
        else:
            weighted = [x * w for x, w in zip(samples, self.window)]
            share = min(1.0, sum(self.tone_power(weighted, c) for c in self.coefficients) / power)
            kind = "cue" if share >= CUE_SHARE else "soundscape" if self.previous in ("sound", "soundscape") else "sound"
        self.previous = kind
        return rms_db, share, kind


def monitor(sink, window_seconds, out):
    frames = int(RATE * window_seconds)
    classifier = Classifier(frames)
    recorder = subprocess.Popen(
        ["pw-record", "--target", sink, "-P", "{ stream.capture.sink=true node.dont-reconnect=true }",
         "--format", "s16", "--rate", str(RATE), "--channels", "1", "-"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    pending = b""
    try:
        while True:
            data = recorder.stdout.read1(65536)
            arrived = time.monotonic()
            if not data:
                sys.exit(f"sink_sound: pw-record for {sink} ended (status {recorder.wait()})")
            if not pending and data.startswith(b"RIFF"):
                sys.exit("sink_sound: pw-record wrote a WAV header to its stdout; this expects raw samples")
            pending += data
            whole = len(pending) // (2 * frames)
            for index in range(whole):
                chunk = array.array("h", pending[index * 2 * frames:(index + 1) * 2 * frames])
                if sys.byteorder != "little":
                    chunk.byteswap()
                rms_db, share, kind = classifier.classify([s / 32768 for s in chunk])
                # This window ended `later` frames before the last one that arrived.
                later = (len(pending) // 2) - (index + 1) * frames
                out.write(json.dumps({"t": round(arrived - later / RATE, 3), "rms": round(rms_db, 1) if rms_db > -200 else -200,
                                      "cue": round(share, 3), "kind": kind}) + "\n")
            out.flush()
            pending = pending[whole * 2 * frames:]
    finally:
        recorder.kill()
        recorder.wait()


if __name__ == "__main__":
    arguments = sys.argv[1:]
    window = 0.1
    if "--window" in arguments:
        index = arguments.index("--window")
        window = float(arguments[index + 1])
        del arguments[index:index + 2]
    if len(arguments) != 1:
        sys.exit("usage: sink_sound.py SINK [--window SECONDS]")
    try:
        monitor(arguments[0], window, sys.stdout)
    except (KeyboardInterrupt, BrokenPipeError):
        os._exit(0)
