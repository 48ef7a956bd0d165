"""The soak's world: its environment, a private PipeWire graph it can kill and
start again, and a real systemd user manager that runs the packaged units.
Used by scripts/soak.d/soak.py (see there)."""
import json
import os
import signal
import subprocess
import sys
import time

# The checkout (this file is scripts/soak.d/soak_graph.py).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RELEASE_BIN = os.environ["RELEASE_BIN"]
WORK = os.environ["SOAK_DIR"]
RUNTIME = os.path.join(WORK, "runtime")
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


def daemon_status():
    return json.loads(run([CTL, "status", "--json"]).stdout)


class Graph:
    """dbus-daemon, pipewire and wireplumber in RUNTIME, with the speaker, headset and phone sinks."""

    def __init__(self):
        self.dbus = None
        self.pipewire = None
        self.wireplumber = None
        self.logs = os.path.join(WORK, "logs")
        os.makedirs(self.logs, exist_ok=True)

    def spawn(self, name, args):
        out = open(os.path.join(self.logs, f"{name}.log"), "a")
        return subprocess.Popen(args, env=ENV, stdout=out, stderr=out, start_new_session=True)

    def start(self, first=False):
        if first:
            self.dbus = self.spawn("dbus", ["dbus-daemon", "--session", f"--address={ENV['DBUS_SESSION_BUS_ADDRESS']}",
                                            "--nofork", "--nopidfile"])
            wait_for("the private D-Bus", lambda: os.path.exists(f"{RUNTIME}/bus"))
        self.pipewire = self.spawn("pipewire", ["pipewire"])
        wait_for("pipewire", lambda: run(["pw-cli", "info", "0"], check=False, timeout=3).returncode == 0)
        self.start_wireplumber()
        for sink in SINKS + ["phone"]:
            self.create_sink(sink)
        self.set_default("speaker")

    def start_wireplumber(self):
        self.wireplumber = self.spawn("wireplumber", ["wireplumber"])
        wait_for("wireplumber's default metadata",
                 lambda: 'metadata.name = "default"' in run(["pw-cli", "ls", "Metadata"], check=False, timeout=3).stdout)

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
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
