#!/usr/bin/env python3
"""The proof with a real signer, for scripts/check-package: a NIP-46 bunker
supervised by the installed daemon signs for a NIP-46 client while the
soundscape plays; SIGSTOP it, and the sound tells the truth.

    check-bunker.py --python PY --sign SIGN.PY --uri BUNKER_URI --sink SINK
                    --interval S --retries N --timeout S

The daemon (reached with soundscapectl, as its user) already plays, with the
bunker as its signer and a health command that asks the bunker for a real
signature (SIGN.PY one shot), every S seconds, failing after N failures of at
most --timeout S each. Throughout, this follows the daemon's events, what the
sink carries (`soundscape-bench sink-sound`, TestSupport's CueClassifier:
soundscape, cue or silence, per 100 ms)
and a NIP-46 app asking the bunker for a signature every 0.5 s (SIGN.PY's loop,
with PY: the Python that has nostr-sdk). Every time is taken on
CLOCK_MONOTONIC as things arrive, and measured from the SIGSTOP.

The event reasons looked for are checked against those the installed daemon
declares (scripts/events.py): an unknown one fails the check at once.

soundscape-bench is $SOUNDSCAPE_BENCH when set, else the checkout's debug build
of it, built (or brought up to date, seconds after scripts/test) first when a
Swift toolchain is found.

Checked:
  1. before: the health check passes, the app's requests are answered, the sink
     carries the soundscape and no cue;
  2. SIGSTOP: within interval × retries + timeout the health check has failed
     `retries` times (signerUnhealthy, signerDown), and the app's requests go
     unanswered;
  3. the cue replaces the soundscape: its chime at the sink within 2 s of
     signerDown, and no soundscape at the sink from 1 s after signerDown (a 0.6 s
     crossfade) until signerRestored;
  4. the stopped instance is stopped cleanly (its stop signal, then SIGCONT:
     exit status 0, not SIGKILL) and restarted: a new pid;
  5. signing resumes (signerHealthy, signerRestored, every app request sent
     after it answered) and the soundscape is back at the sink within 2 s.
Prints the timings. Exits 1 with the reason, the events and the sink's
timeline on failure.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from statistics import median_high

from events import Reasons  # beside this file: the installed daemon's event reasons

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(message):
    raise SystemExit(f"check-bunker: {message}")


class Lines(threading.Thread):
    """A child's stdout, one JSON object a line, each stamped with its arrival (monotonic)."""

    def __init__(self, command):
        super().__init__(daemon=True)
        self.command = command
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.items = []
        self.lock = threading.Lock()
        self.start()

    def run(self):
        for line in self.process.stdout:
            try:
                item = json.loads(line)
            except ValueError:
                continue
            with self.lock:
                self.items.append((time.monotonic(), item))

    def snapshot(self):
        with self.lock:
            return list(self.items)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.join(timeout=5)


def bench():
    """soundscape-bench, for its `sink-sound` (see the docstring above)."""
    if os.environ.get("SOUNDSCAPE_BENCH"):
        return os.environ["SOUNDSCAPE_BENCH"]
    swift = shutil.which("swift") or next((p for p in ["/opt/swift/usr/bin/swift"] if os.access(p, os.X_OK)), None)
    if swift:
        built = subprocess.run([swift, "build", "--package-path", ROOT, "--product", "soundscape-bench"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if built.returncode != 0:
            fail(f"cannot build soundscape-bench:\n{built.stdout[-3000:]}")
    path = os.path.join(ROOT, ".build", "debug", "soundscape-bench")
    if not os.access(path, os.X_OK):
        fail(f"no {path}: build it (swift build --product soundscape-bench) or set SOUNDSCAPE_BENCH")
    return path


def wait_for(seconds, what, condition, diagnose=lambda: ""):
    deadline = time.monotonic() + seconds
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            fail(f"timed out after {seconds:g} s waiting for {what}{diagnose()}")
        time.sleep(0.05)


def status():
    out = subprocess.run(["soundscapectl", "status", "--json"], capture_output=True, text=True, timeout=10)
    if out.returncode != 0:
        fail(f"soundscapectl status failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser()
    for name in ("--python", "--sign", "--uri", "--sink"):
        parser.add_argument(name, required=True)
    parser.add_argument("--interval", type=float, required=True)
    parser.add_argument("--retries", type=int, required=True)
    parser.add_argument("--timeout", type=float, required=True)
    arguments = parser.parse_args()
    # Every reason looked for is one the daemon declares: a renamed event fails here, not by a timeout.
    reasons = Reasons()
    interruption = reasons("interrupted", "resumed")
    sink_sound = [bench(), "sink-sound", arguments.sink]

    events = Lines(["soundscapectl", "events", "--json"])
    sink = Lines(sink_sound)
    app = Lines([arguments.python, arguments.sign, "--uri", arguments.uri, "--every", "0.5", "--duration", "120",
                 "--timeout", "2"])
    t0 = None

    def since(t):
        return f"{t - t0:+.2f} s" if t0 is not None else f"{t:.2f}"

    def diagnose():
        seen = [f"{since(t)} {e.get('reason')}" + (f" ({e['message']})" if e.get("message") else "") for t, e in events.snapshot()
                if e.get("type") == "signer" or e.get("reason") in interruption]
        windows = sink.snapshot()
        start = t0 - 2 if t0 is not None else (windows[-1][1]["t"] - 10 if windows else 0)
        timeline = "".join({"silence": ".", "cue": "c", "soundscape": "S", "sound": "s"}[w["kind"]]
                           for _, w in windows if w["t"] >= start)
        return (f"\n  events: {'; '.join(seen[-20:])}\n  sink from {since(start)} (100 ms each; S soundscape, c cue,"
                f" . silence, s undecided): {timeline}")

    def event(reason, after, **wanted):
        reasons(reason)
        for t, e in events.snapshot():
            if t >= after and e.get("reason") == reason and all(e.get(k) == v for k, v in wanted.items()):
                return t, e
        return None

    def windows(start, end=float("inf")):
        return [w for _, w in sink.snapshot() if start <= w["t"] < end]

    def requests():
        return [r for _, r in app.snapshot() if "seq" in r]

    try:
        # 1. Before: it signs, for the health check and for the app, while the soundscape plays.
        wait_for(20, "the bunker's health check to pass", lambda: (status().get("signer") or {}).get("health") == "healthy",
                 diagnose)
        wait_for(15, "three answered sign requests in a row from the NIP-46 app",
                 lambda: len(requests()) >= 3 and all(r["ok"] for r in sorted(requests(), key=lambda r: r["seq"])[-3:]),
                 lambda: f"\n  app: {requests()[-5:]}")
        # From here on the bunker is connected: every request must be answered until the SIGSTOP.
        signing_since = sorted(requests(), key=lambda r: r["seq"])[-3]["seq"]
        wait_for(5, "a second of soundscape at the sink",
                 lambda: [w["kind"] for w in windows(time.monotonic() - 1.2)].count("soundscape") >= 9, diagnose)
        before = windows(time.monotonic() - 1.2)
        if any(w["kind"] == "cue" for w in before):
            fail(f"the cue plays while the bunker signs{diagnose()}")
        answered = [r["ms"] for r in requests() if r["ok"]]
        print(f"The bunker signs for a NIP-46 app while the soundscape plays ({before[-1]['rms']:.0f} dBFS at "
              f"{arguments.sink}): {len(answered)} requests answered, median {median_high(answered):.0f} ms")

        # 2. SIGSTOP.
        old = status()["signer"]["pid"]
        t0 = time.monotonic()
        os.kill(old, signal.SIGSTOP)
        # Checks start every interval (from each start); with timeout ≤ interval the last of
        # `retries` failures comes at most interval × retries + timeout after the SIGSTOP.
        bound = arguments.interval * arguments.retries + arguments.timeout
        unhealthy = wait_for(bound + 1, "signerUnhealthy", lambda: event("signerUnhealthy", t0), diagnose)
        down = wait_for(2, "signerDown", lambda: event("signerDown", t0, message="unhealthy"), diagnose)
        exited = wait_for(10, "the stopped instance to end", lambda: event("signerExited", t0), diagnose)
        started = wait_for(10, "a new instance", lambda: event("signerStarted", exited[0]), diagnose)
        healthy = wait_for(arguments.interval + arguments.timeout + 5, "signerHealthy", lambda: event("signerHealthy", started[0]),
                           diagnose)
        restored = wait_for(3, "signerRestored", lambda: event("signerRestored", started[0]), diagnose)
        back = wait_for(3, "the soundscape back at the sink",
                        lambda: next((w["t"] for w in windows(restored[0]) if w["kind"] == "soundscape"), None), diagnose)
        wait_for(5, "two answered app requests sent after signerRestored",
                 lambda: sum(1 for r in requests() if r["ok"] and r["mono"] > restored[0]) >= 2, diagnose)
        app.stop()

        problems = []
        if unhealthy[0] - t0 > bound + 0.5:
            problems.append(f"signerUnhealthy came {unhealthy[0] - t0:.2f} s after the SIGSTOP, past interval × retries + timeout"
                            f" = {bound:g} s")
        if exited[1].get("message") != "exited with status 0":
            problems.append(f"the stopped bunker ended '{exited[1].get('message')}', not 'exited with status 0':"
                            " was it sent SIGCONT after its stop signal?")
        new = (started[1].get("signer") or {}).get("pid")
        if new in (None, old):
            problems.append(f"no new instance: pid {new} (was {old})")
        if os.path.exists(f"/proc/{old}"):
            problems.append(f"the stopped instance {old} still exists")
        cue = next((w["t"] for w in windows(down[0]) if w["kind"] == "cue"), None)
        if cue is None or cue > restored[0] + 0.3 or cue - down[0] > 2:
            problems.append("no chime of the cue at the sink within 2 s of signerDown, before signerRestored")
        leaked = [w for w in windows(down[0] + 1.0, restored[0]) if w["kind"] == "soundscape"]
        if leaked:
            problems.append(f"the soundscape at the sink while signing was down, at {', '.join(since(w['t']) for w in leaked[:5])}")
        if back - restored[0] > 2:
            problems.append(f"the soundscape came back {back - restored[0]:.2f} s after signerRestored (over 2 s)")
        settled = requests()
        early = [r for r in settled if r["seq"] >= signing_since and r["mono"] < t0 - 2.5 and not r["ok"]]
        late = [r for r in settled if r["mono"] > restored[0] and not r["ok"]]
        stalled = [r for r in settled if t0 < r["mono"] < unhealthy[0] - 2 and r["ok"]]
        if early or late:
            problems.append(f"app requests unanswered while the bunker signed: {early + late}")
        if stalled:
            problems.append(f"app requests answered by a stopped bunker: {stalled}")
        answered = [r["mono"] for r in settled if r["ok"]]
        gap = max(b - a for a, b in zip(answered, answered[1:]))
        last_soundscape = max((w["t"] for w in windows(t0, down[0] + 1.0) if w["kind"] == "soundscape"), default=t0)

        print("From the SIGSTOP of the bunker (pid %d):" % old)
        for what, t in [("signerUnhealthy (%s)" % unhealthy[1].get("message"), unhealthy[0]), ("signerDown", down[0]),
                        ("the last soundscape at the sink", last_soundscape),
                        ("the cue's first chime at the sink", cue if cue is not None else float("nan")),
                        (f"signerExited ({exited[1].get('message')})", exited[0]),
                        (f"signerStarted (pid {new})", started[0]), ("signerHealthy", healthy[0]),
                        ("signerRestored", restored[0]), ("the soundscape back at the sink", back)]:
            print(f"  {t - t0:6.2f} s  {what}")
        print(f"  NIP-46 app: {len(answered)} of {len(settled)} requests answered; the longest time without an answer"
              f" {gap:.2f} s (interval × retries + timeout = {bound:g} s to notice, then the restart and its first check)")
        if problems:
            fail("\n  ".join(["the bunker check failed:"] + problems) + diagnose())
    finally:
        for child in (events, sink, app):
            child.stop()


if __name__ == "__main__":
    main()
