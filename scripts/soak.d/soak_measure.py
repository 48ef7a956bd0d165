"""What the soak measures while it runs: the sinks (what was audible when), the
daemon's events (seq gaps, the signer's state), each daemon life's memory and
descriptors, and the machine's load. Used by scripts/soak.d/soak.py (see there)."""
import json
import math
import os
import struct
import subprocess
import threading
import time
from statistics import median_high

from soak_graph import BENCH, CTL, ENV, REASON, log, now

SNAPSHOT, SIGNER_DOWN, SIGNER_RESTORED = REASON("snapshot", "signerDown", "signerRestored")

THRESHOLD = 10 ** (-60 / 20)


class Recorder(threading.Thread):
    """pw-record of one sink's monitor, analysed as it arrives: for each 10 ms, whether it was audible.
    Restarted whenever it ends (the server was killed, the sink destroyed). With `sounds`, also
    what each 100 ms carried (soundscape, cue, sound or silence: a SinkSound beside it), appended
    there as (time it ended, kind)."""

    def __init__(self, sink, timeline, lock, sounds=None):
        super().__init__(daemon=True)
        self.sink = sink
        self.timeline = timeline
        self.lock = lock
        self.sounds = sounds
        self.stopped = False
        self.process = None
        self.last_block = 0.0
        self.follower = SinkSound(sink, sounds, lock) if sounds is not None else None

    def run(self):
        if self.follower:
            self.follower.start()
        block = 480 * 2  # 10 ms of mono s16 at 48 kHz
        while not self.stopped:
            try:
                self.process = subprocess.Popen(
                    # node.dont-reconnect: when its sink goes, WirePlumber must not move it to
                    # another one (it would then record that sink's audio as this one's).
                    ["pw-record", "--target", self.sink, "-P", "{ stream.capture.sink=true node.dont-reconnect=true }",
                     "--format", "s16",
                     "--rate", "48000", "--channels", "1", "-"], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                buffered = b""
                cursor = None
                while not self.stopped:
                    data = self.process.stdout.read1(65536)
                    if not data:
                        break
                    buffered += data
                    arrived = now()
                    # A read holds a graph cycle or more: its 10 ms blocks were recorded one
                    # after another, ending about now. They are placed right after the previous
                    # read's (arrival times jitter by tens of ms on a busy machine, which would
                    # leave false holes between reads), unless the stream really paused: then
                    # they start anew from the arrival time.
                    count = len(buffered) // block
                    nominal = arrived - count * 0.01
                    if cursor is None or abs(nominal - cursor) > 0.08:
                        cursor = nominal
                    for index in range(count):
                        chunk = buffered[index * block:(index + 1) * block]
                        samples = struct.unpack(f"<{block // 2}h", chunk)
                        rms = math.sqrt(sum(s * s for s in samples) / len(samples)) / 32768
                        with self.lock:
                            self.timeline.append((cursor, rms > THRESHOLD))
                        cursor += 0.01
                    buffered = buffered[count * block:]
                    if count:
                        self.last_block = arrived
                self.process.wait()
            except Exception as error:
                log(f"recorder {self.sink}: {error}")
            time.sleep(0.2)

    def restart(self):
        """A new pw-record for this sink (after the sink was made again)."""
        if self.process and self.process.poll() is None:
            self.process.kill()
        if self.follower:
            self.follower.restart()

    def stop(self):
        self.stopped = True
        if self.process and self.process.poll() is None:
            self.process.kill()
        if self.follower:
            self.follower.stop()


class SinkSound(threading.Thread):
    """`soundscape-bench sink-sound SINK` (TestSupport's CueClassifier, 100 ms windows): what the
    sink carried, appended to `sounds` as (time the window ended, kind). Restarted whenever it ends,
    as the recorder is; a new recording starts a new classification."""

    def __init__(self, sink, sounds, lock):
        super().__init__(daemon=True)
        self.sink = sink
        self.sounds = sounds
        self.lock = lock
        self.stopped = False
        self.process = None

    def run(self):
        while not self.stopped:
            try:
                self.process = subprocess.Popen([BENCH, "sink-sound", self.sink], env=ENV, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL, text=True)
                for line in self.process.stdout:
                    window = json.loads(line)
                    with self.lock:
                        self.sounds.append((window["t"], window["kind"]))
                self.process.wait()
            except Exception as error:
                log(f"sink-sound {self.sink}: {error}")
            time.sleep(0.2)

    def restart(self):
        if self.process and self.process.poll() is None:
            self.process.kill()

    def stop(self):
        self.stopped = True
        self.restart()


class EventFollower(threading.Thread):
    """soundscapectl events --json: seq gaps within a subscription, and the signer's state over time."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stopped = False
        self.gaps = []
        self.events = 0
        self.process = None
        self.signer = []  # (time, running)
        self.verdicts = []  # (time, "signerDown" or "signerRestored"), as they arrived

    def run(self):
        while not self.stopped:
            try:
                self.process = subprocess.Popen([CTL, "events", "--json"], env=ENV, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL, text=True)
                last = None
                for line in self.process.stdout:
                    event = json.loads(line)
                    seq = event.get("seq")
                    if event.get("reason") != SNAPSHOT and last is not None and seq != last + 1:
                        self.gaps.append((now(), last, seq))
                    last = seq
                    self.events += 1
                    signer = event.get("signer") or {}
                    self.signer.append((now(), signer.get("state") == "running"))
                    if event.get("reason") in (SIGNER_DOWN, SIGNER_RESTORED):
                        self.verdicts.append((now(), event["reason"]))
                self.process.wait()
            except Exception as error:
                log(f"events: {error}")
            time.sleep(0.2)

    def stop(self):
        self.stopped = True
        if self.process and self.process.poll() is None:
            self.process.kill()


class Lives:
    """The daemon's resident memory and descriptors over each of its lives (one per
    process systemd started): the sample at the end of the life's first minute, and
    the last one. A life is timed from its exec (systemd's ExecMainStartTimestampMonotonic)."""

    FIRST_MINUTE = 60.0

    def __init__(self):
        self.lives = {}  # pid -> dict(start, first_minute, last, samples)

    def sample(self, pid, started):
        stats = process_stats(pid)
        if not stats:
            return
        t = now()
        life = self.lives.setdefault(pid, {"start": started or t, "first_minute": None, "last": None, "samples": 0})
        sample = {"age_s": t - life["start"], "rss_kB": stats[0], "fds": stats[1]}
        if sample["age_s"] <= self.FIRST_MINUTE:
            life["first_minute"] = sample
        life["last"] = sample
        life["samples"] += 1

    def report(self):
        """Per life: RSS and fds at the end of its first minute and at its end (a life
        shorter than a minute has only the end), and how far the end is above the first minute."""
        out = []
        for pid, life in self.lives.items():
            first, last = life["first_minute"] or life["last"], life["last"]
            out.append({
                "pid": pid, "seconds": round(last["age_s"], 1),
                "rss_kB_first_minute": first["rss_kB"], "rss_kB_end": last["rss_kB"],
                "rss_growth_kB": last["rss_kB"] - first["rss_kB"],
                "fds_first_minute": first["fds"], "fds_end": last["fds"],
                "longer_than_a_minute": last["age_s"] > self.FIRST_MINUTE,
            })
        return out


class Load:
    """The machine's load average (1 minute), sampled through the soak: other programs
    compete with the daemon for the CPU, and a restart takes longer on a busy machine."""

    def __init__(self):
        self.samples = []

    def sample(self):
        try:
            self.samples.append(float(open("/proc/loadavg").read().split()[0]))
        except Exception:
            pass

    def report(self):
        if not self.samples:
            return {}
        ordered = sorted(self.samples)
        return {"mean": round(sum(ordered) / len(ordered), 2), "median": median_high(ordered),
                "max": ordered[-1], "cpus": os.cpu_count()}


def process_stats(pid):
    try:
        status = open(f"/proc/{pid}/status").read()
        rss = int(next(l for l in status.splitlines() if l.startswith("VmRSS:")).split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return rss, fds
    except Exception:
        return None
