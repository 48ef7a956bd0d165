"""The soak's faults: each is injected, then lifted, and the time audio may not
flow is recorded as a blocking window. Used by scripts/soak.d/soak.py (see there)."""
import os
import random
import signal
import subprocess
import threading
import time

import soak_signer
from soak_graph import ENV, WORK, daemon_status, log, now, wait_for

KINDS = ["pipewire-kill", "pipewire-stop", "sink-loss", "default-switch", "call",
         "daemon-kill", "daemon-stop", "signer-kill"]


class Storm:
    """Injects the faults and keeps what they did: `faults` (type, start, lifted)
    and `blocking` (start, end): the windows in which audio may not flow."""

    def __init__(self, graph, manager, recorders, bunker=None):
        self.bunker = bunker
        self.graph = graph
        self.manager = manager
        self.recorders = recorders
        self.faults = []
        self.blocking = []
        self.wireplumber_crashes = []
        self.current_default = "speaker"

    def recorders_back(self, after):
        return all(r.last_block > after for r in self.recorders)

    def inject(self, kind):
        """Injects one fault of `kind` and returns once it is lifted."""
        t0 = now()
        fault = {"type": kind, "start": t0}
        try:
            getattr(self, kind.replace("-", "_"))(fault)
        except Exception as error:
            log(f"{kind}: {error}")
            fault.setdefault("lifted", now())
            self.blocking.append((fault["start"], fault["lifted"]))
        self.faults.append(fault)
        log(f"{kind} (lifted after {fault['lifted'] - fault['start']:.2f} s)")

    def pipewire_kill(self, fault):
        self.graph.kill9()
        time.sleep(1)
        self.graph.start()
        self.current_default = "speaker"
        # A recorder that came up before its sink was made again waits unlinked
        # (node.dont-reconnect): start each anew, now that the sinks are there.
        for recorder in self.recorders:
            recorder.restart()
        lifted = now()
        wait_for("the recorders after the server's return", lambda: self.recorders_back(lifted), timeout=20)
        fault["lifted"] = now()
        self.blocking.append((fault["start"], fault["lifted"]))

    def pipewire_stop(self, fault):
        self.graph.signal_pipewire(signal.SIGSTOP)
        time.sleep(random.uniform(1, 4))
        self.graph.signal_pipewire(signal.SIGCONT)
        fault["lifted"] = now()
        self.blocking.append((fault["start"], fault["lifted"]))

    def sink_loss(self, fault):
        # Like unplugging: the sink goes, and WirePlumber picks the other one as default.
        # (Setting the configured default to the other sink first, then destroying this
        # one within a second, makes WirePlumber 0.4.13 segfault about 5 s later: its bug,
        # not a fault worth soaking; `watch_wireplumber` would count it.)
        route = daemon_status().get("route") or self.current_default
        fault["start"] = self.graph.destroy_sink(route)
        fault["lifted"] = fault["start"]
        fault["sink"] = route
        threading.Thread(target=self.sink_return, args=(route,), daemon=True).start()

    def sink_return(self, sink):
        """5 s after a sink-loss, the sink comes back (plugged in again)."""
        time.sleep(5)
        try:
            back = now()
            self.graph.create_sink(sink)
            recorder = next(r for r in self.recorders if r.sink == sink)
            recorder.restart()
            # Plugged back in: WirePlumber makes it the default again (it is the
            # configured one) and our stream moves there; that move is a recovery too,
            # measured once this sink's recorder runs again (before, a move there
            # could not be heard, so that time is left out, as a fault's is).
            wait_for(f"the {sink} recorder", lambda: recorder.last_block > back, timeout=10)
            lifted = now()
            self.blocking.append((back, lifted))
            self.faults.append({"type": "sink-return", "start": back, "lifted": lifted, "sink": sink})
        except Exception as error:
            log(f"recreating {sink}: {error}")

    def default_switch(self, fault):
        self.current_default = "headset" if self.current_default == "speaker" else "speaker"
        self.graph.set_default(self.current_default)
        fault["lifted"] = now()

    def call(self, fault):
        call = subprocess.Popen(["pw-play", "--media-role=Communication", "--target", "phone",
                                 os.path.join(WORK, "call.wav")], env=ENV,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(random.uniform(2, 5))
        call.kill()
        call.wait()
        fault["lifted"] = now()
        self.blocking.append((fault["start"], fault["lifted"]))

    def daemon_kill(self, fault):
        # The sink it played to, which the new process resumes on. The report splits the
        # kills by it for reading, not for a known difference: on seed 3636 the per-sink
        # medians swapped places between runs of one build (docs/performance.md).
        # A daemon that does not answer is killed all the same, on a sink unknown.
        try:
            fault["sink"] = daemon_status().get("route")
        except (subprocess.SubprocessError, ValueError, AttributeError):
            fault["sink"] = None
        pid = self.manager.main_pid()
        os.kill(pid, signal.SIGKILL)
        started = {}

        def restarted():
            new, at = self.manager.daemon()
            if new in (None, pid):
                return False
            started["at"] = at
            return True
        wait_for("systemd to restart soundscaped", restarted, timeout=20, interval=0.01)
        # Lifted when systemd started the new process (its exec, to the microsecond), not
        # when this loop noticed it, a systemctl round trip or more later (reported beside it).
        fault["noticed"] = now()
        fault["lifted"] = started["at"] if started.get("at") and fault["start"] < started["at"] <= fault["noticed"] else fault["noticed"]
        self.blocking.append((fault["start"], fault["lifted"]))

    def daemon_stop(self, fault):
        pid = self.manager.main_pid()
        os.kill(pid, signal.SIGSTOP)
        time.sleep(random.uniform(1, 5))
        os.kill(pid, signal.SIGCONT)
        fault["lifted"] = now()
        self.blocking.append((fault["start"], fault["lifted"]))

    def signer_kill(self, fault):
        try:
            pid = (daemon_status().get("signer") or {}).get("pid")
        except Exception:
            pid = None
        if pid:
            os.kill(pid, signal.SIGKILL)
        fault["lifted"] = now()

    def signer_stop(self, fault):
        # Signing is down until the daemon has restored it; the soundscape is not wanted
        # meanwhile (the cue's check is soak_signer's), nor at full level while it fades
        # back in over the crossfade after signerRestored, by design (docs/signer.md).
        soak_signer.signer_stop(fault)
        self.blocking.append((fault["start"], fault["lifted"] + soak_signer.CROSSFADE))

    def relay_loss(self, fault):
        soak_signer.relay_loss(self.bunker, fault)
        self.blocking.append((fault["start"], fault["lifted"] + soak_signer.CROSSFADE))

    def watch_wireplumber(self):
        """Not a fault the soak injects: WirePlumber itself crashing. It is restarted, as its
        user unit would be, and counted; the time until it is back is left out."""
        code = self.graph.wireplumber_exit()
        if code is None:
            return
        log(f"wireplumber exited ({code}); restarting it, as its user unit would")
        crash = {"type": "wireplumber-crash", "code": code, "start": now() - 0.5}
        try:
            self.graph.start_wireplumber()
        except Exception as error:
            log(f"wireplumber restart: {error}")
        crash["lifted"] = now()
        self.wireplumber_crashes.append(crash)
        self.blocking.append((crash["start"], crash["lifted"]))
