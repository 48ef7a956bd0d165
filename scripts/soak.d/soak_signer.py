"""The soak with a real signer (`scripts/soak --bunker`): a NIP-46 bunker
(nostr-sdk 0.37.0's NostrConnectRemoteSigner, Tests/EndToEndTests/Fixtures/nip46)
on a local relay is the daemon's signer, configured as docs/signer.md's tested
`nip46-bunker` block says, and a NIP-46 app (sign.py's loop) asks it for a
signature every second through the whole storm. Used by scripts/soak.d/soak.py.

What it adds to the soak, two faults:
  signer-stop SIGSTOP of the bunker. Its health check (itself a sign request)
              fails, the cue replaces the soundscape (signerDown), the daemon
              stops it (SIGTERM, then SIGCONT) and starts a new one; lifted at
              signerRestored. A restart cures it, so signing is down for about
              the detection time only
  relay-loss  the relay is killed for 10-20 s, then started again on its port:
              the bunker lives but cannot sign (the silent failure), restarts do
              not help, and signing stays down until the relay is back; lifted
              at signerRestored
  in both, the time until signerRestored is not time the soundscape is wanted. So is
  any time the daemon itself declares signing down (its signerDown … signerRestored
  events), whatever the fault: a signer killed while its restart backoff has grown past
  the start grace is down, and the cue plays. Such a window is checked against the
  app: one in which every request was answered is a cue that lied, and fails the run.
  And:
  per fault   the sign requests sent while it was in effect (from its start, less
              the requests' timeout, as one sent just before it is caught by it,
              to the next fault's): the share answered, and the longest time
              signing was down (from the first unanswered request's sending to the
              next answered one's)
  the cue     each stretch in which signing was down, from its detection time on
              (see DETECTION), had no soundscape at either sink, and the cue at
              the route's sink once it was a cue period long; a call or a server
              away excuse that time (nothing plays into a call)
"""
import json
import os
import random
import signal
import subprocess
import time

from soak_graph import CAUSE, ENV, REASON, ROOT, WORK, daemon_settings, daemon_status, log, now, wait_for

NIP46 = os.path.join(ROOT, "Tests/EndToEndTests/Fixtures/nip46")
# The health check's timings, as scripts/check-package's: a check every 2 s, each at
# most 2 s, 2 failures in a row: a hung bunker is noticed within 2 × 2 + 2 = 6 s.
INTERVAL, RETRIES, TIMEOUT = 2.0, 2, 2.0
TIMINGS = [f"signer-health-interval = {INTERVAL:g}", f"signer-health-retries = {RETRIES}",
           f"signer-health-timeout = {TIMEOUT:g}", "signer-restart-delay = 1", "signer-stop-timeout = 2"]
# The daemon's values, from the daemon: signer-start-grace's default (a signer not running
# and ready this long is down), the switch's crossfade, and the signer-down cue's period (its
# chime repeats once a loop).
_DEFAULTS, _PLAYER = daemon_settings()
START_GRACE = float(_DEFAULTS["signer-start-grace"])
# How long, at most, signing may be down before the sound must say so: a hung bunker within
# interval × retries + timeout, a bunker that is gone (killed, or with its daemon) within the
# start grace (a restart back within it is not worth a cue); then the crossfade and one
# of the app's request periods (the app learns it a request later than the daemon).
CROSSFADE = _PLAYER["crossfadeSeconds"]
REQUEST_EVERY = 1.0
REQUEST_TIMEOUT = 2.0
DETECTION = {"signer-stop": INTERVAL * RETRIES + TIMEOUT, "relay-loss": INTERVAL * RETRIES + TIMEOUT}
SIGNER_FAULTS = ["signer-stop", "relay-loss"]
CUE_PERIOD = _PLAYER["signerDownCue"]["seconds"]
# The faults that touch only the audio: they must cost no sign request.
AUDIO_ONLY = ["pipewire-kill", "pipewire-stop", "sink-loss", "sink-return", "default-switch", "call",
              "wireplumber-crash"]


def detection(kind):
    return DETECTION.get(kind, START_GRACE) + CROSSFADE + REQUEST_EVERY


class Bunker:
    """The relay, the bunker's keys and URI, the daemon's config, and the app's sign loop."""

    def __init__(self, python):
        self.python = python
        self.dir = os.path.join(WORK, "nip46")
        os.makedirs(self.dir, exist_ok=True)
        self.log_file = os.path.join(self.dir, "requests.jsonl")
        self.relay = None
        self.app = None

    def start_relay(self, port=0):
        """Starts the relay (on `port`, or a free one); returns its URL."""
        url_file = os.path.join(self.dir, "relay-url")
        if os.path.exists(url_file):
            os.unlink(url_file)
        self.relay = subprocess.Popen([self.python, os.path.join(NIP46, "relay.py"), url_file, str(port)],
                                      stdout=open(os.path.join(self.dir, "relay.log"), "a"), stderr=subprocess.STDOUT)
        wait_for("the NIP-46 relay", lambda: os.path.getsize(url_file) > 0, timeout=15)
        return open(url_file).read().strip()

    def config(self):
        """Starts the relay; returns the config file's text: docs/signer.md's nip46-bunker
        block with this machine's paths, then the soak's health timings."""
        relay = self.start_relay()
        self.port = int(relay.rsplit(":", 1)[1])
        keys = os.path.join(self.dir, "keys.json")
        subprocess.run([self.python, os.path.join(NIP46, "bunker.py"), "keys", keys], check=True, timeout=30)
        self.uri = subprocess.run([self.python, os.path.join(NIP46, "bunker.py"), "uri", "--keys", keys, "--relay", relay,
                                   "--secret", "CHANGE-ME"], check=True, timeout=30, capture_output=True,
                                  text=True).stdout.strip()
        pubkey = self.uri.removeprefix("bunker://").split("?")[0]
        block = subprocess.run(
            ["python3", os.path.join(ROOT, "scripts/doc-config.py"), os.path.join(ROOT, "docs/signer.md"), "nip46-bunker",
             "/opt/nip46/venv/bin/python3", self.python, "/opt/nip46/", NIP46 + "/",
             "/home/me/.config/nip46/keys.json", keys, "wss://relay.example", relay, "BUNKER-PUBKEY", pubkey],
            check=True, timeout=30, capture_output=True, text=True).stdout
        return block + "# the soak's timings\n" + "".join(line + "\n" for line in TIMINGS)

    def start_app(self, seconds):
        """The NIP-46 app: a sign request every second for `seconds`, each logged as it settles."""
        self.app = subprocess.Popen(
            [self.python, os.path.join(NIP46, "sign.py"), "--uri", self.uri, "--every", f"{REQUEST_EVERY:g}",
             "--duration", f"{seconds:.0f}", "--timeout", f"{REQUEST_TIMEOUT:g}", "--log", self.log_file],
            env=ENV, stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "app.log"), "w"))

    def stop(self):
        """Ends the app (its last answers are awaited and logged) and the relay."""
        if self.app and self.app.poll() is None:
            self.app.send_signal(signal.SIGTERM)
            try:
                self.app.wait(timeout=REQUEST_TIMEOUT + 5)
            except subprocess.TimeoutExpired:
                self.app.kill()
        if self.relay and self.relay.poll() is None:
            self.relay.terminate()
            self.relay.wait(timeout=10)

    def requests(self):
        """The app's requests, in the order sent: {seq, mono, ok, ms, error}."""
        out = []
        if os.path.exists(self.log_file):
            for line in open(self.log_file):
                record = json.loads(line)
                if "seq" in record:
                    out.append(record)
        return sorted(out, key=lambda r: r["seq"])


def signing_down():
    """Whether the daemon says signing is down now (status lists signerDown)."""
    return CAUSE("signerDown") in (daemon_status().get("interruptions") or [])


def signer_stop(fault):
    """The fault: SIGSTOP of the bunker; lifted once the daemon has restored it (the cue
    between is what the soak checks), at most 40 s later."""
    pid = (daemon_status().get("signer") or {}).get("pid")
    if not pid:
        raise RuntimeError("no signer instance to stop")
    os.kill(pid, signal.SIGSTOP)
    fault["pid"] = pid
    try:
        wait_for("signerDown after the SIGSTOP", signing_down, timeout=20, interval=0.1)
        fault["down_after_s"] = round(now() - fault["start"], 2)
        wait_for("signerRestored", lambda: not signing_down(), timeout=40, interval=0.05)
    finally:
        # The daemon stops a stopped instance and sends SIGCONT; if it did not, leave no
        # process frozen behind.
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    fault["lifted"] = now()


def relay_loss(bunker, fault):
    """The fault: the relay killed for 10-20 s, then started again on its port; lifted
    once the daemon has restored the signer, at most 90 s after its return."""
    bunker.relay.kill()
    bunker.relay.wait()
    time.sleep(random.uniform(10, 20))
    bunker.start_relay(bunker.port)
    fault["relay_back_after_s"] = round(now() - fault["start"], 2)
    wait_for("signerRestored after the relay's return", lambda: not signing_down(), timeout=90, interval=0.05)
    fault["lifted"] = now()


def declared_down(verdicts, stop):
    """The daemon's own signerDown … signerRestored windows, from its events."""
    windows, since = [], None
    for t, reason in verdicts:
        if reason == REASON("signerDown") and since is None:
            since = t
        elif reason == REASON("signerRestored") and since is not None:
            windows.append((since, t))
            since = None
    if since is not None:
        windows.append((since, stop))
    return windows


def false_alarms(declared, requests):
    """Windows in which the daemon said signing was down while the app's every request
    was answered: a cue that lied. The window's last request period and timeout are left
    out (the daemon learns of a return at its next passing check, up to an interval late)."""
    wrong = []
    for a, b in declared:
        inside = [r for r in requests if a <= r["mono"] < b - REQUEST_EVERY - REQUEST_TIMEOUT]
        if inside and all(r["ok"] for r in inside):
            wrong.append({"from": round(a, 2), "seconds": round(b - a, 2), "answered": len(inside)})
    return wrong


def down_stretches(requests, stop):
    """Where signing was down, as (start, end): from the first unanswered request's
    sending to the next answered one's (or the end)."""
    stretches, begun = [], None
    for record in requests:
        if not record["ok"] and begun is None:
            begun = record["mono"]
        elif record["ok"] and begun is not None:
            stretches.append((begun, record["mono"]))
            begun = None
    if begun is not None:
        stretches.append((begun, stop))
    return stretches


def fault_at(faults, t):
    """The fault in effect at `t`: the last one that began before it (a request is caught
    by a fault that begins within its timeout), or None before the first."""
    begun = [f for f in faults if f["start"] - REQUEST_TIMEOUT <= t]
    return max(begun, key=lambda f: f["start"]) if begun else None


# The faults in effect during which nothing can or may play (a call, the server or the
# daemon away or frozen): time in them is left out of the cue's check.
SILENCING = ["pipewire-kill", "pipewire-stop", "call", "daemon-kill", "daemon-stop", "wireplumber-crash"]


def signing_report(requests, faults, sounds, start, stop):
    """The per-fault table and the cue's check. `sounds`: (t, kind) of every 100 ms at
    either sink (`soundscape-bench sink-sound`'s kinds: TestSupport's CueClassifier)."""
    blocking = [(f["start"], f["lifted"]) for f in faults if f["type"] in SILENCING]
    faults = sorted((f for f in faults if f["type"] != "sink-return"), key=lambda f: f["start"])
    table = {}
    for record in requests:
        if not (start <= record["mono"] < stop):
            continue
        fault = fault_at(faults, record["mono"])
        row = table.setdefault(fault["type"] if fault else "(before the first fault)",
                               {"faults": 0, "sent": 0, "answered": 0, "longest_down_s": 0.0})
        row["sent"] += 1
        row["answered"] += 1 if record["ok"] else 0
    for fault in faults:
        if fault["type"] in table:
            table[fault["type"]]["faults"] += 1
    stretches = down_stretches([r for r in requests if start <= r["mono"] < stop], stop)
    checks = []
    for a, b in stretches:
        fault = fault_at(faults, a)
        kind = fault["type"] if fault else "(before the first fault)"
        row = table.setdefault(kind, {"faults": 0, "sent": 0, "answered": 0, "longest_down_s": 0.0})
        row["longest_down_s"] = round(max(row["longest_down_s"], b - a), 2)
        checks.append(cue_check(kind, a, b, sounds, blocking))
    for row in table.values():
        row["answered_percent"] = round(100.0 * row["answered"] / row["sent"], 2) if row["sent"] else None
    return table, checks


def cue_check(kind, a, b, sounds, blocking):
    """One stretch of signing down: from its detection time to a request period before
    it ended, no soundscape at either sink, and the cue once that is a cue period long;
    time in `blocking` windows is left out (a call: nothing plays)."""
    due, until = a + detection(kind), b - REQUEST_EVERY
    check = {"after": kind, "down_s": round(b - a, 2), "checked_s": round(max(0.0, until - due), 2),
             "soundscape_windows": 0, "cue_windows": 0, "ok": True}
    if until <= due:
        return check  # over before the sound had to say so
    def blocked(t):
        return any(s <= t <= e for s, e in blocking)
    for t, what in sounds:
        if due <= t < until and not blocked(t):
            if what == "soundscape":
                check["soundscape_windows"] += 1
            elif what == "cue":
                check["cue_windows"] += 1
    wanted_cue = until - due >= CUE_PERIOD + 0.5 and not any(s < until and e > due for s, e in blocking)
    check["ok"] = check["soundscape_windows"] == 0 and (check["cue_windows"] > 0 or not wanted_cue)
    return check


def signing_problems(table, checks, lies):
    """The soak's pass line for signing: audio-only faults cost no sign request, every
    stretch of signing down had the cue and not the soundscape past its detection time,
    and the daemon never said signing was down while it was not."""
    problems = []
    if lies:
        problems.append(f"signerDown while the app's every sign request was answered: {lies[:5]}")
    costly = {kind: row["sent"] - row["answered"] for kind, row in table.items()
              if kind in AUDIO_ONLY and row["answered"] < row["sent"]}
    if costly:
        problems.append(f"faults that touch only the audio cost sign requests: {costly}")
    wrong = [c for c in checks if not c["ok"]]
    if wrong:
        problems.append(f"signing was down without the cue at the sink (or with the soundscape): {wrong[:5]}")
    return problems


def log_table(table):
    for kind, row in sorted(table.items()):
        log(f"signing during {kind}: {row['answered']}/{row['sent']} answered, longest down {row['longest_down_s']} s")
