#!/usr/bin/env python3
"""The soak: soundscaped as a systemd user service with a signer host, on a
private PipeWire graph, under random faults for MINUTES, measured at the sinks.

Run through scripts/soak, which builds the release and sets up the environment
(XDG_RUNTIME_DIR of a private graph started by scripts/lib.sh is NOT used: this
script starts and restarts its own graph, since killing PipeWire is one of the
faults).

Faults, one every 10-25 s, in random order:
  pipewire-kill   kill -9 of pipewire and wireplumber; restarted 1 s later, sinks made again
  pipewire-stop   SIGSTOP of pipewire for 1-4 s, then SIGCONT
  sink-loss       the sink we play to is destroyed (audio must move to the other one);
                  it comes back 5 s later (sink-return: audio moves back to it)
  default-switch  the default sink moves to the other sink
  call            a Communication stream plays into the phone sink for 2-5 s (we pause)
  daemon-kill     kill -9 of soundscaped; systemd restarts it (RestartSec=2s)
  daemon-stop     SIGSTOP of soundscaped for 1-5 s, then SIGCONT
  signer-kill     kill -9 of the signer host; the daemon restarts it

Measured:
  audio uptime    the share of the time audio should flow (no fault that forbids it
                  in effect) that it did flow, at either music sink (RMS > -60 dBFS per 10 ms);
                  strict, and outside recoveries (each fault's lift to its first sound left
                  out too: that is the recovery, measured on its own), which counts the
                  dropouts no fault explains; the 0.1 s before each blocking fault and
                  each sink-loss is left out of both, as the recorders cannot place audio
                  that finely there (see below)
  recovery        per fault: from the moment the fault is lifted (server back with its
                  sinks, SIGCONT sent, call ended, daemon restarted, sink gone or default
                  moved) to the first audible 10 ms
  signer uptime   the share of time the signer host was running
  seq gaps        events missing between consecutive events of one subscription
  RSS, fds        of the daemon, at the start and end of each daemon's life, and drift
"""
import json
import math
import os
import random
import signal
import struct
import subprocess
import sys
import threading
import time

MINUTES = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
RELEASE_BIN = os.environ["RELEASE_BIN"]
WORK = os.environ["SOAK_DIR"]
SEED = int(os.environ.get("SOAK_SEED", str(int(time.time()))))
RUNTIME = os.path.join(WORK, "runtime")
CTL = os.path.join(RELEASE_BIN, "soundscapectl")
SINKS = ["speaker", "headset"]
THRESHOLD = 10 ** (-60 / 20)
random.seed(SEED)


def log(text):
    print(f"[soak {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def now():
    return time.monotonic()


ENV = dict(os.environ)
ENV.update({
    "XDG_RUNTIME_DIR": RUNTIME,
    "HOME": os.path.join(WORK, "home"),
    "XDG_CONFIG_HOME": os.path.join(WORK, "home/.config"),
    "XDG_STATE_HOME": os.path.join(WORK, "home/.local/state"),
    "XDG_CACHE_HOME": os.path.join(WORK, "home/.cache"),
    "XDG_DATA_HOME": os.path.join(WORK, "home/.local/share"),
    "DBUS_SESSION_BUS_ADDRESS": f"unix:path={RUNTIME}/bus",
})
ENV.pop("PIPEWIRE_RUNTIME_DIR", None)
ENV.pop("PIPEWIRE_REMOTE", None)
ENV.pop("SOUNDSCAPED_SOCKET", None)


def run(args, check=True, timeout=10, **kwargs):
    return subprocess.run(args, env=ENV, check=check, timeout=timeout, capture_output=True, text=True, **kwargs)


def wait_for(what, predicate, timeout=15, interval=0.05):
    deadline = now() + timeout
    while now() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(interval)
    raise RuntimeError(f"timed out after {timeout}s waiting for {what}")


class Graph:
    """dbus-daemon, pipewire and wireplumber in RUNTIME, with the speaker, headset and phone sinks."""

    def __init__(self):
        self.dbus = None
        self.pipewire = None
        self.wireplumber = None
        logs = os.path.join(WORK, "logs")
        os.makedirs(logs, exist_ok=True)
        self.logs = logs

    def _spawn(self, name, args):
        out = open(os.path.join(self.logs, f"{name}.log"), "a")
        return subprocess.Popen(args, env=ENV, stdout=out, stderr=out, start_new_session=True)

    def start(self, first=False):
        if first:
            self.dbus = self._spawn("dbus", ["dbus-daemon", "--session", f"--address={ENV['DBUS_SESSION_BUS_ADDRESS']}",
                                             "--nofork", "--nopidfile"])
            wait_for("the private D-Bus", lambda: os.path.exists(f"{RUNTIME}/bus"))
        self.pipewire = self._spawn("pipewire", ["pipewire"])
        wait_for("pipewire", lambda: run(["pw-cli", "info", "0"], check=False, timeout=3).returncode == 0)
        self.wireplumber = self._spawn("wireplumber", ["wireplumber"])
        wait_for("wireplumber's default metadata",
                 lambda: 'metadata.name = "default"' in run(["pw-cli", "ls", "Metadata"], check=False, timeout=3).stdout)
        for sink in SINKS + ["phone"]:
            self.create_sink(sink)
        self.set_default("speaker")

    def create_sink(self, name):
        run(["pw-cli", "create-node", "adapter",
             f"{{ factory.name=support.null-audio-sink node.name={name} media.class=Audio/Sink "
             f"object.linger=true audio.position=[FL FR] }}"])
        wait_for(f"the sink {name}", lambda: f'node.name = "{name}"' in run(["pw-cli", "ls", "Node"], check=False, timeout=3).stdout)

    def destroy_sink(self, name):
        run(["pw-cli", "destroy", name], check=False)

    def set_default(self, name):
        run(["pw-metadata", "0", "default.configured.audio.sink", json.dumps({"name": name}), "Spa:String:JSON"], check=False)

    def kill9(self):
        for process in (self.wireplumber, self.pipewire):
            try:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=5)
            except Exception:
                pass

    def signal_pipewire(self, sig):
        self.pipewire.send_signal(sig)

    def stop(self):
        for process in (self.wireplumber, self.pipewire, self.dbus):
            if process and process.poll() is None:
                process.kill()
                process.wait()


class UserManager:
    """A real systemd user manager in a private mount namespace (see scripts/user-manager.sh)."""

    def __init__(self):
        os.makedirs("/run/systemd", exist_ok=True)
        out = open(os.path.join(WORK, "logs/user-manager.log"), "a")
        self.process = subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c",
             "mount -t tmpfs -o mode=0755 tmpfs /run/systemd && mkdir /run/systemd/system && exec /lib/systemd/systemd --user"],
            env=ENV, stdout=out, stderr=out)
        wait_for("the user manager", lambda: self.systemctl("show-environment", check=False).returncode == 0)

    def systemctl(self, *args, check=True):
        return run(["nsenter", "-t", str(self.process.pid), "-m", "systemctl", "--user", *args], check=check)

    def main_pid(self):
        result = self.systemctl("show", "-p", "MainPID", "--value", "soundscaped.service", check=False)
        pid = int((result.stdout or "0").strip() or 0)
        return pid or None

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Recorder(threading.Thread):
    """pw-record of one sink's monitor, analysed as it arrives: for each 10 ms, whether it was audible.
    Restarted whenever it ends (the server was killed, the sink destroyed)."""

    def __init__(self, sink, timeline, lock):
        super().__init__(daemon=True)
        self.sink = sink
        self.timeline = timeline
        self.lock = lock
        self.stopped = False
        self.process = None
        self.last_block = 0.0

    def run(self):
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

    def stop(self):
        self.stopped = True
        if self.process and self.process.poll() is None:
            self.process.kill()


class EventFollower(threading.Thread):
    """soundscapectl events --json: seq gaps within a subscription, and the signer's state over time."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stopped = False
        self.gaps = []
        self.events = 0
        self.process = None
        self.signer = []  # (time, running)

    def run(self):
        while not self.stopped:
            try:
                self.process = subprocess.Popen([CTL, "events", "--json"], env=ENV, stdout=subprocess.PIPE,
                                                stderr=subprocess.DEVNULL, text=True)
                last = None
                for line in self.process.stdout:
                    event = json.loads(line)
                    seq = event.get("seq")
                    if event.get("reason") != "snapshot" and last is not None and seq != last + 1:
                        self.gaps.append((now(), last, seq))
                    last = seq
                    self.events += 1
                    signer = event.get("signer") or {}
                    self.signer.append((now(), signer.get("state") == "running"))
                self.process.wait()
            except Exception as error:
                log(f"events: {error}")
            time.sleep(0.2)

    def stop(self):
        self.stopped = True
        if self.process and self.process.poll() is None:
            self.process.kill()


def process_stats(pid):
    try:
        status = open(f"/proc/{pid}/status").read()
        rss = int(next(l for l in status.splitlines() if l.startswith("VmRSS:")).split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        return rss, fds
    except Exception:
        return None


def signer_pid():
    result = run([CTL, "status", "--json"], check=False)
    try:
        return (json.loads(result.stdout).get("signer") or {}).get("pid")
    except Exception:
        return None


def main():
    os.makedirs(RUNTIME, mode=0o700, exist_ok=True)
    for path in ("home/.config/systemd/user", "home/.config/soundscaped"):
        os.makedirs(os.path.join(WORK, path), exist_ok=True)
    # The packaged units, run from the release build.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    units = os.path.join(WORK, "home/.config/systemd/user")
    for unit in ("soundscaped.socket", "soundscaped.service"):
        text = open(os.path.join(root, "packaging", unit)).read().replace("/usr/bin/", RELEASE_BIN + "/")
        open(os.path.join(units, unit), "w").write(text)
    # The daemon's log, for when a figure needs explaining (the manager has no journal here).
    os.makedirs(os.path.join(units, "soundscaped.service.d"), exist_ok=True)
    open(os.path.join(units, "soundscaped.service.d/log.conf"), "w").write(
        f"[Service]\nStandardError=append:{WORK}/logs/daemon.log\n")
    signer = os.path.join(root, "packaging/examples/example-signer")
    open(os.path.join(WORK, "home/.config/soundscaped/soundscaped.conf"), "w").write(
        f"signer-command = {signer}\nsigner-stdin = events\nsigner-liveness-timeout = 30\n")

    graph = Graph()
    graph.start(first=True)
    manager = UserManager()
    manager.systemctl("daemon-reload")
    manager.systemctl("start", "soundscaped.socket")
    run([CTL, "volume", "60"])
    run([CTL, "play"], timeout=20)
    wait_for("the first signer host", lambda: signer_pid() is not None)

    timeline, lock = [], threading.Lock()
    recorders = [Recorder(sink, timeline, lock) for sink in SINKS]
    for recorder in recorders:
        recorder.start()
    events = EventFollower()
    events.start()
    wait_for("the recorders", lambda: all(r.last_block > 0 for r in recorders))

    start = now()
    end = start + MINUTES * 60
    blocking = []   # (start, end): audio may not flow then
    faults = []     # dicts: type, start, lifted
    lives = {}      # daemon pid -> [first stats, last stats]
    current_default = "speaker"
    wireplumber_crashes = []

    def sample():
        if graph.wireplumber.poll() is not None:
            code = graph.wireplumber.returncode
            log(f"wireplumber exited ({code}); restarting it, as its user unit would")
            crashed = now()
            graph.wireplumber = graph._spawn("wireplumber", ["wireplumber"])
            wireplumber_crashes.append({"type": "wireplumber-crash", "code": code, "start": crashed - 0.5})
            try:
                wait_for("wireplumber's default metadata",
                         lambda: 'metadata.name = "default"' in run(["pw-cli", "ls", "Metadata"], check=False, timeout=3).stdout)
            except Exception as error:
                log(f"wireplumber restart: {error}")
            wireplumber_crashes[-1]["lifted"] = now()
            blocking.append((crashed - 0.5, wireplumber_crashes[-1]["lifted"]))
        pid = manager.main_pid()
        stats = process_stats(pid) if pid else None
        if stats:
            lives.setdefault(pid, [stats, stats])[1] = stats

    def recorders_back(after):
        return all(r.last_block > after for r in recorders)

    log(f"soaking for {MINUTES} minutes (seed {SEED})")
    next_fault = now() + random.uniform(10, 25)
    while now() < end:
        sample()
        if now() < next_fault:
            time.sleep(0.5)
            continue
        kind = random.choice(["pipewire-kill", "pipewire-stop", "sink-loss", "default-switch", "call",
                              "daemon-kill", "daemon-stop", "signer-kill"])
        t0 = now()
        fault = {"type": kind, "start": t0}
        try:
            if kind == "pipewire-kill":
                graph.kill9()
                time.sleep(1)
                graph.start()
                current_default = "speaker"
                # A recorder that came up before its sink was made again waits unlinked
                # (node.dont-reconnect): start each anew, now that the sinks are there.
                for recorder in recorders:
                    recorder.restart()
                lifted = now()
                wait_for("the recorders after the server's return", lambda: recorders_back(lifted), timeout=20)
                fault["lifted"] = now()
                blocking.append((t0, fault["lifted"]))
            elif kind == "pipewire-stop":
                graph.signal_pipewire(signal.SIGSTOP)
                time.sleep(random.uniform(1, 4))
                graph.signal_pipewire(signal.SIGCONT)
                fault["lifted"] = now()
                blocking.append((t0, fault["lifted"]))
            elif kind == "sink-loss":
                # Like unplugging: the sink goes, and WirePlumber picks the other one as default.
                # (Setting the configured default to the other sink first, then destroying this
                # one within a second, makes WirePlumber 0.4.13 segfault about 5 s later: its bug,
                # not a fault worth soaking; scripts/soak's wireplumber watch below would count it.)
                status = json.loads(run([CTL, "status", "--json"]).stdout)
                route = status.get("route") or current_default
                other = "headset" if route == "speaker" else "speaker"
                t0 = now()
                fault["start"] = t0
                graph.destroy_sink(route)
                fault["lifted"] = t0
                fault["sink"] = route

                def bring_back(sink=route):
                    time.sleep(5)
                    try:
                        back = now()
                        graph.create_sink(sink)
                        recorder = next(r for r in recorders if r.sink == sink)
                        recorder.restart()
                        # Plugged back in: WirePlumber makes it the default again (it is the
                        # configured one) and our stream moves there; that move is a recovery too,
                        # measured once this sink's recorder runs again (before, a move there
                        # could not be heard, so that time is left out, as a fault's is).
                        wait_for(f"the {sink} recorder", lambda: recorder.last_block > back, timeout=10)
                        lifted = now()
                        blocking.append((back, lifted))
                        faults.append({"type": "sink-return", "start": back, "lifted": lifted, "sink": sink})
                    except Exception as error:
                        log(f"recreating {sink}: {error}")
                threading.Thread(target=bring_back, daemon=True).start()
            elif kind == "default-switch":
                current_default = "headset" if current_default == "speaker" else "speaker"
                graph.set_default(current_default)
                fault["lifted"] = now()
            elif kind == "call":
                call = subprocess.Popen(["pw-play", "--media-role=Communication", "--target", "phone",
                                         os.path.join(WORK, "call.wav")], env=ENV,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(random.uniform(2, 5))
                call.kill()
                call.wait()
                fault["lifted"] = now()
                blocking.append((t0, fault["lifted"]))
            elif kind == "daemon-kill":
                pid = manager.main_pid()
                os.kill(pid, signal.SIGKILL)
                wait_for("systemd to restart soundscaped", lambda: manager.main_pid() not in (None, pid), timeout=20, interval=0.01)
                fault["lifted"] = now()
                blocking.append((t0, fault["lifted"]))
            elif kind == "daemon-stop":
                pid = manager.main_pid()
                os.kill(pid, signal.SIGSTOP)
                time.sleep(random.uniform(1, 5))
                os.kill(pid, signal.SIGCONT)
                fault["lifted"] = now()
                blocking.append((t0, fault["lifted"]))
            elif kind == "signer-kill":
                pid = signer_pid()
                if pid:
                    os.kill(pid, signal.SIGKILL)
                fault["lifted"] = now()
        except Exception as error:
            log(f"{kind}: {error}")
            fault.setdefault("lifted", now())
            blocking.append((t0, fault["lifted"]))
        faults.append(fault)
        log(f"{kind} (lifted after {fault['lifted'] - t0:.2f} s)")
        next_fault = now() + random.uniform(10, 25)

    # The last fault may have been lifted a moment ago: keep listening a while, so its
    # recovery is measured rather than counted as never having come.
    settle = now() + 3
    while now() < settle:
        sample()
        time.sleep(0.5)
    stop = now()
    faults += wireplumber_crashes
    for recorder in recorders:
        recorder.stop()
    events.stop()
    sample()

    # Analysis.
    with lock:
        audible = sorted(t for t, loud in timeline if loud)

    def first_audible_after(t):
        import bisect
        i = bisect.bisect_left(audible, t)
        return audible[i] if i < len(audible) else None

    recoveries = {}
    for fault in faults:
        first = first_audible_after(fault["lifted"])
        recovery = (first - fault["lifted"]) if first is not None else float("inf")
        # A block arrives once its 10 ms were recorded: the sound began up to 10 ms earlier.
        fault["recovery"] = max(0.0, recovery - 0.010)
        recoveries.setdefault(fault["type"], []).append(fault["recovery"])

    # Audio uptime: 10 ms slots of wanted time (no blocking fault in effect) with sound.
    slot = 0.01
    audible_slots = set(int((t - start) / slot) for t in audible)

    def uptime_over(windows):
        """(wanted slots, slots with sound, silent stretches) outside `windows`."""
        # Merged, so that one pointer walks them exactly however they overlap.
        blocked = []
        for s, e in sorted(windows):
            if blocked and s <= blocked[-1][1]:
                blocked[-1][1] = max(blocked[-1][1], e)
            else:
                blocked.append([s, e])
        wanted = flowed = 0
        silences = []   # wanted time without sound: [start, end)
        t, b = start, 0
        while t < stop:
            while b < len(blocked) and blocked[b][1] < t:
                b += 1
            in_fault = b < len(blocked) and blocked[b][0] <= t
            if not in_fault:
                wanted += 1
                index = int((t - start) / slot)
                if index in audible_slots or index + 1 in audible_slots:
                    flowed += 1
                elif silences and abs(silences[-1][1] - t) < slot / 2:
                    silences[-1][1] = t + slot
                else:
                    silences.append([t, t + slot])
            t += slot
        return wanted, flowed, silences

    # What the recorders cannot place: their blocks are laid end to end from the previous
    # read, which tolerates 80 ms of arrival jitter (Recorder.run), so the last blocks
    # before the graph or the daemon stops may be stamped up to 80 ms early, and a silence
    # that ends exactly where a fault begins appears (audio cannot stop before the fault
    # does). The 0.1 s before each blocking fault, and at the recording's two ends, are
    # therefore neither wanted nor counted.
    # The same holds before a sink-loss, for the recorder of the sink being destroyed: it
    # loses the sink's last graph cycle or two (43 ms each at our quantum), and nothing the
    # daemon does can stop the sound before the sink goes (in the 30-minute soak of
    # 2026-11-25, seven of the eight longest silences outside recoveries, 0.03-0.09 s, ended
    # within 0.02 s of a sink-loss's start).
    guard = 0.1
    unplaceable = ([(s - guard, s) for s, _ in blocking]
                   + [(f["start"] - guard, f["start"]) for f in faults if f["type"] == "sink-loss"]
                   + [(start, start + guard), (stop - guard, stop)])
    # Strict: every wanted moment counts, the recoveries after each fault included (a
    # return fades in over 40 ms, and its first ~15 ms are below -60 dBFS).
    wanted, flowed, _ = uptime_over(blocking + unplaceable)
    uptime = 100.0 * flowed / wanted if wanted else 0.0
    # Outside recoveries: also leaving out each fault's recovery (from its lift to the first
    # sound, which is measured and held to 0.5 s on its own), so this counts the dropouts
    # that no fault explains.
    recovering = [(f["lifted"], f["lifted"] + min(f["recovery"], 0.5) + 0.01) for f in faults]
    wanted_outside, flowed_outside, silences = uptime_over(blocking + unplaceable + recovering)
    uptime_outside = 100.0 * flowed_outside / wanted_outside if wanted_outside else 0.0

    signer_running = 0.0
    states = events.signer
    for (t1, running), (t2, _) in zip(states, states[1:] + [(stop, None)]):
        if running:
            signer_running += max(0.0, min(t2, stop) - max(t1, start))
    signer_uptime = 100.0 * signer_running / (stop - start)

    result = {
        "minutes": MINUTES, "seed": SEED, "faults": len(faults),
        "audio_uptime_percent": round(uptime, 3), "wanted_seconds": round(wanted * slot, 1),
        "audio_uptime_outside_recoveries_percent": round(uptime_outside, 3),
        "recovery_seconds": {kind: {"count": len(values), "max": round(max(values), 3),
                                    "median": round(sorted(values)[len(values) // 2], 3)}
                             for kind, values in sorted(recoveries.items())},
        "signer_uptime_percent": round(signer_uptime, 2),
        "events": events.events, "seq_gaps": len(events.gaps),
        # The longest stretches of wanted time without sound, each after which fault.
        "longest_silences": [
            {"at_s": round(a - start, 2), "seconds": round(e - a, 2),
             "after": max((f for f in faults if f["start"] <= a), key=lambda f: f["start"], default={}).get("type"),
             "next_fault_in_s": round(min((f["start"] for f in faults if f["start"] >= a), default=stop) - e, 2)}
            for a, e in sorted(silences, key=lambda r: r[0] - r[1])[:8]],
        "fault_log": [{"type": f["type"], "at_s": round(f["start"] - start, 2),
                       "lifted_s": round(f["lifted"] - start, 2), "recovery_s": round(f["recovery"], 3)}
                      for f in sorted(faults, key=lambda f: f["start"])],
        # Not a fault the soak injects: WirePlumber itself crashing (restarted, as its unit would be).
        "wireplumber_crashes": len(wireplumber_crashes),
        "daemon_lives": [{"pid": pid, "rss_kB": [first[0], last[0]], "fds": [first[1], last[1]]}
                         for pid, (first, last) in lives.items()],
    }
    print(json.dumps(result, indent=2))
    over = [(f["type"], round(f["recovery"], 3)) for f in faults
            if f["recovery"] > 0.5 and f["type"] != "wireplumber-crash"]
    ok = uptime_outside >= 99.9 and not over and not events.gaps
    if over:
        log(f"recoveries over 0.5 s: {over}")
    if events.gaps:
        log(f"seq gaps: {events.gaps[:10]}")
    manager.systemctl("stop", "soundscaped.service", "soundscaped.socket", check=False)
    manager.stop()
    graph.stop()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
