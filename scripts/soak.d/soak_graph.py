"""The soak's world: its environment, a private PipeWire graph it can kill and
start again, and a real systemd user manager that runs the packaged units (both
TestSupport's, through `soundscape-bench graph`).
Used by scripts/soak.d/soak.py (see there)."""
import json
import os
import shutil
import subprocess
import sys
import threading
import time

# The checkout (this file is scripts/soak.d/soak_graph.py).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RELEASE_BIN = os.environ["RELEASE_BIN"]
WORK = os.environ["SOAK_DIR"]
CTL = os.path.join(RELEASE_BIN, "soundscapectl")
# `sink-sound`: what a sink carries (soundscape, cue or silence), for the bunker's figures.
BENCH = os.path.join(RELEASE_BIN, "soundscape-bench")
# The event reasons and interruption causes the soak looks for, each checked against those
# the daemon under test declares (scripts/events.py): `REASON("signerDown")` is the name,
# or the soak's end; `CAUSE("signerDown")` likewise for a status's interruptions.
sys.path.append(os.path.join(ROOT, "scripts"))
from events import Causes, Reasons  # noqa: E402  (after the path it is found on)
REASON = Reasons(os.path.join(RELEASE_BIN, "soundscaped"))
CAUSE = Causes(os.path.join(RELEASE_BIN, "soundscaped"))
# The sinks music may play to; "phone" takes the calls.
SINKS = ["speaker", "headset"]


def daemon_settings():
    """The daemon's own values, asked of the binary under test (`soundscaped --print-settings
    --json`: every setting's default, and the player's timings), so the soak never restates them."""
    out = subprocess.run([os.path.join(RELEASE_BIN, "soundscaped"), "--print-settings", "--json"],
                         check=True, capture_output=True, text=True).stdout
    document = json.loads(out)
    return {entry["key"]: entry.get("default") for entry in document["settings"]}, document["player"]


def log(text):
    print(f"[soak {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def now():
    """CLOCK_MONOTONIC, the clock every time of the soak is on (systemd's *Monotonic properties too)."""
    return time.monotonic()


# The soak's environment: a home of its own; the graph's runtime directory and bus are
# added once it runs (Graph).
ENV = dict(os.environ)
ENV.update({
    "HOME": os.path.join(WORK, "home"),
    "XDG_CONFIG_HOME": os.path.join(WORK, "home/.config"),
    "XDG_STATE_HOME": os.path.join(WORK, "home/.local/state"),
    "XDG_CACHE_HOME": os.path.join(WORK, "home/.cache"),
    "XDG_DATA_HOME": os.path.join(WORK, "home/.local/share"),
})
for variable in ("PIPEWIRE_RUNTIME_DIR", "PIPEWIRE_REMOTE", "SOUNDSCAPED_SOCKET", "XDG_RUNTIME_DIR",
                 "DBUS_SESSION_BUS_ADDRESS"):
    ENV.pop(variable, None)


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


def daemon_status():
    return json.loads(run([CTL, "status", "--json"]).stdout)


class Graph:
    """The tests' private graph (TestSupport's PipeWireGraph, kept away from hardware) with
    the speaker, headset and phone sinks, driven through `soundscape-bench graph` (its
    --help lists the commands), which also starts the user manager. Once it runs, ENV
    joins it."""

    def __init__(self):
        self.lock = threading.Lock()
        self.process = subprocess.Popen(
            [BENCH, "graph", "--no-hardware", os.path.join(ROOT, "scripts/no-hardware/wireplumber")]
            + [word for sink in SINKS + ["phone"] for word in ("--sink", sink)],
            env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
        for line in self.process.stdout:
            line = line.rstrip("\n")
            if line == "ready":
                break
            key, equals, value = line.partition("=")
            if not equals:
                raise RuntimeError(f"the graph did not start: {line}")
            ENV[key] = value
        else:
            raise RuntimeError("the graph did not start (soundscape-bench graph ended)")
        self.directory = ENV["XDG_RUNTIME_DIR"]
        self.set_default("speaker")

    def command(self, *words):
        """One command; its answer's value ('' for a bare ok). Raises on an error."""
        with self.lock:
            self.process.stdin.write(" ".join(words) + "\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline().rstrip("\n")
        if answer == "ok" or answer.startswith("ok "):
            return answer[3:]
        raise RuntimeError(f"graph {' '.join(words)}: {answer or 'soundscape-bench graph ended'}")

    def start(self):
        """After kill9: the servers back, every sink there, speaker the default."""
        self.command("restart")
        for sink in SINKS + ["phone"]:
            self.create_sink(sink)
        self.set_default("speaker")

    def create_sink(self, name):
        self.command("sink", name)

    def destroy_sink(self, name):
        """When it was destroyed (time.monotonic()'s clock)."""
        return float(self.command("destroy", name))

    def set_default(self, name):
        self.command("default", name)

    def kill9(self):
        self.command("kill", "wireplumber", "KILL")
        self.command("kill", "pipewire", "KILL")

    def signal_pipewire(self, sig):
        self.command("kill", "pipewire", sig.name)

    def wireplumber_exit(self):
        """None while wireplumber runs, else its exit code (128 + a signal)."""
        status = self.command("status", "wireplumber")
        return None if status == "running" else int(status.split()[-1])

    def start_wireplumber(self):
        self.command("restart", "wireplumber")

    def stop(self):
        """Stops the graph, its logs kept in WORK/logs/graph (SOAK_KEEP keeps WORK)."""
        shutil.copytree(os.path.join(self.directory, "logs"), os.path.join(WORK, "logs/graph"), dirs_exist_ok=True)
        try:
            self.command("stop")
        except (RuntimeError, OSError):
            pass
        self.process.wait(timeout=30)


class UserManager:
    """A real systemd user manager (TestSupport's SystemdUserManager, started by the
    graph's soundscape-bench) with ENV as its environment."""

    def __init__(self, graph):
        self.graph = graph
        environment = os.path.join(WORK, "user-manager.env")
        with open(environment, "w") as out:
            out.write("".join(f"{key}={value}\0" for key, value in ENV.items()))
        self.pid = int(graph.command("user-manager", environment))

    def systemctl(self, *args, check=True):
        return run(["nsenter", "-t", str(self.pid), "-m", "--root", "--wd", "--", "systemctl", "--user", *args],
                   check=check)

    def daemon(self):
        """(MainPID, when systemd started that process on CLOCK_MONOTONIC), or (None, None)."""
        result = self.systemctl("show", "-p", "MainPID", "-p", "ExecMainStartTimestampMonotonic",
                                "soundscaped.service", check=False)
        values = dict(line.split("=", 1) for line in (result.stdout or "").splitlines() if "=" in line)
        pid = int(values.get("MainPID") or 0)
        started = int(values.get("ExecMainStartTimestampMonotonic") or 0)
        return (pid, started / 1e6) if pid else (None, None)

    def main_pid(self):
        return self.daemon()[0]

    def stop(self):
        self.graph.command("stop-user-manager")
