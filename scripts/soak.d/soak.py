#!/usr/bin/env python3
"""The soak: soundscaped as a systemd user service with a signer host, on a
private PipeWire graph, under random faults for MINUTES, measured at the sinks.

Run through scripts/soak, which builds the release and sets up the environment
(this script starts its own graph, through soundscape-bench graph as
scripts/lib.sh does, and kills and restarts its servers, one of the faults). The parts, beside it in scripts/soak.d/: soak_graph.py (the graph and
the user manager), soak_faults.py (the faults), soak_measure.py (what is
recorded while it runs), soak_report.py (the figures).

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
  signer-stop     (--bunker only) SIGSTOP of the bunker; lifted at signerRestored
  relay-loss      (--bunker only) the relay killed for 10-20 s; lifted at signerRestored
                  (both in soak_signer.py)

With --bunker the signer is a real NIP-46 bunker, configured as docs/signer.md's
tested nip46-bunker block, and a NIP-46 app asks it for a signature every second
through the storm; the per-fault table of answered requests and the check that
the cue, not the soundscape, was at the sink while signing was down are in
soak_signer.py.

Measured:
  audio uptime    the share of the time audio should flow (no fault that forbids it
                  in effect) that it did flow, at either music sink (RMS > -60 dBFS per 10 ms);
                  strict (the pass line: every recovery's silence counts), and outside
                  recoveries (each fault's lift to its first sound left out too: that is the
                  recovery, measured on its own), which counts the dropouts no fault explains;
                  the 0.1 s before each blocking fault and each sink-loss is left out of both,
                  as the recorders cannot place audio that finely there (soak_report.py);
                  the strict figure's losses are attributed to the recovery they fell in
  recovery        per fault: from the moment the fault is lifted (server back with its
                  sinks, SIGCONT sent, call ended, the new daemon process started by systemd,
                  sink gone or default moved) to the first audible 10 ms
  signer uptime   the share of time the signer host was running
  signing         (--bunker) per fault type: the share of sign requests answered and
                  the longest time signing was down; per stretch of signing down, the
                  cue at the sink and not the soundscape past its detection time
  seq gaps        events missing between consecutive events of one subscription
  RSS, fds        of the daemon, per life: at the end of its first minute and at its end
  load            the machine's 1-minute load average through the soak
"""
import json
import os
import random
import sys
import threading
import time

import soak_signer
from soak_faults import KINDS, Storm
from soak_graph import CTL, ROOT, SINKS, WORK, Graph, UserManager, daemon_status, log, now, run, wait_for
from soak_measure import EventFollower, Load, Lives, Recorder
from soak_report import Analysis, verdict

MINUTES = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
SEED = int(os.environ.get("SOAK_SEED", str(int(time.time()))))
# scripts/soak --bunker: the Python that has nostr-sdk 0.37.0 (scripts/lib.sh's TEST_VENV).
BUNKER_PYTHON = os.environ.get("SOAK_BUNKER_PYTHON")
# SOAK_FAULTS=daemon-kill,call: only these kinds (to measure one recovery, or compare two
# daemons on it); SOAK_DAEMON=PATH: that soundscaped instead of the release build's (an
# older build, say), under the same units, graph and storm.
ONLY = [kind for kind in os.environ.get("SOAK_FAULTS", "").split(",") if kind]
DAEMON = os.environ.get("SOAK_DAEMON")


def install_units(config):
    """The packaged units, run from the release build, with `config` as the config file."""
    for path in ("home/.config/systemd/user", "home/.config/soundscaped", "logs"):
        os.makedirs(os.path.join(WORK, path), exist_ok=True)
    units = os.path.join(WORK, "home/.config/systemd/user")
    release_bin = os.environ["RELEASE_BIN"]
    for unit in ("soundscaped.socket", "soundscaped.service"):
        text = open(os.path.join(ROOT, "packaging", unit)).read()
        if DAEMON:
            text = text.replace("ExecStart=/usr/bin/soundscaped", "ExecStart=" + os.path.abspath(DAEMON))
        text = text.replace("/usr/bin/", release_bin + "/")
        open(os.path.join(units, unit), "w").write(text)
    # The daemon's log, for when a figure needs explaining (the manager has no journal here).
    os.makedirs(os.path.join(units, "soundscaped.service.d"), exist_ok=True)
    open(os.path.join(units, "soundscaped.service.d/log.conf"), "w").write(
        f"[Service]\nStandardError=append:{WORK}/logs/daemon.log\n")
    open(os.path.join(WORK, "home/.config/soundscaped/soundscaped.conf"), "w").write(config)


def example_signer_config():
    """Without --bunker: the example signer host, fed events on stdin."""
    signer = os.path.join(ROOT, "packaging/examples/example-signer")
    return f"signer-command = {signer}\nsigner-stdin = events\nsigner-liveness-timeout = 30\n"


def fault_kinds(bunker):
    """The kinds the storm draws from: all of them, or SOAK_FAULTS's, each one checked."""
    kinds = KINDS + (soak_signer.SIGNER_FAULTS if bunker else [])
    unknown = [kind for kind in ONLY if kind not in kinds]
    if unknown:
        sys.exit(f"SOAK_FAULTS: no such fault {', '.join(unknown)} (the kinds: {', '.join(kinds)})")
    return ONLY or kinds


def main():
    random.seed(SEED)
    bunker = soak_signer.Bunker(BUNKER_PYTHON) if BUNKER_PYTHON else None
    kinds = fault_kinds(bunker)
    install_units(bunker.config() if bunker else example_signer_config())
    graph = Graph()
    manager = UserManager(graph)
    manager.systemctl("daemon-reload")
    manager.systemctl("start", "soundscaped.socket")
    run([CTL, "volume", "60"])
    run([CTL, "play"], timeout=20)
    wait_for("the first signer host", lambda: (daemon_status().get("signer") or {}).get("pid") is not None)
    if bunker:
        wait_for("the bunker's first passing health check",
                 lambda: (daemon_status().get("signer") or {}).get("health") == "healthy", timeout=30)
        bunker.start_app(MINUTES * 60 + 30)
        wait_for("the NIP-46 app's first answered request", lambda: any(r["ok"] for r in bunker.requests()), timeout=20)

    timeline, sounds, lock = [], [], threading.Lock()
    recorders = [Recorder(sink, timeline, lock, sounds if bunker else None) for sink in SINKS]
    for recorder in recorders:
        recorder.start()
    events = EventFollower()
    events.start()
    wait_for("the recorders", lambda: all(r.last_block > 0 for r in recorders))

    storm = Storm(graph, manager, recorders, bunker)
    lives, load = Lives(), Load()

    def sample():
        storm.watch_wireplumber()
        pid, started = manager.daemon()
        if pid:
            lives.sample(pid, started)
        load.sample()

    start = now()
    end = start + MINUTES * 60
    log(f"soaking for {MINUTES} minutes (seed {SEED})")
    next_fault = now() + random.uniform(10, 25)
    while now() < end:
        sample()
        if now() < next_fault:
            time.sleep(0.5)
            continue
        storm.inject(random.choice(kinds))
        next_fault = now() + random.uniform(10, 25)

    # The last fault may have been lifted a moment ago: keep listening a while, so its
    # recovery is measured rather than counted as never having come.
    settle = now() + 3
    while now() < settle:
        sample()
        time.sleep(0.5)
    stop = now()
    faults = storm.faults + storm.wireplumber_crashes
    for recorder in recorders:
        recorder.stop()
    events.stop()
    sample()
    if bunker:
        bunker.stop()

    blocking = list(storm.blocking)
    if bunker:
        # While the daemon says signing is down the soundscape is not wanted (the cue is);
        # whether it said so truthfully is checked against the app (soak_signer.false_alarms).
        declared = soak_signer.declared_down(events.verdicts, stop)
        blocking += [(a, b + soak_signer.CROSSFADE) for a, b in declared]
    with lock:
        analysis = Analysis(list(timeline), faults, blocking, start, stop)
    result = {"minutes": MINUTES, "seed": SEED, "faults": len(faults)}
    if ONLY or DAEMON:
        result.update({"only": ONLY or None, "daemon": DAEMON})
    result.update(analysis.uptimes())
    result.update({
        "strict_loss_by_cause_seconds": analysis.strict_loss,
        "recovery_seconds": analysis.recovery_summary(),
        "daemon_kill_by_sink": analysis.daemon_kills_by_sink(),
        "signer_uptime_percent": analysis.signer_uptime(events.signer),
        "events": events.events, "seq_gaps": len(events.gaps),
        "longest_silences": analysis.longest_silences(),
        "fault_log": analysis.fault_log(),
        "wireplumber_crashes": len(storm.wireplumber_crashes),
        "daemon_lives": lives.report(),
        "load_average": load.report(),
    })
    problems = verdict(result, faults, events.gaps, result["daemon_lives"])
    if bunker:
        with lock:
            table, checks = soak_signer.signing_report(bunker.requests(), faults, list(sounds), start, stop)
        lies = soak_signer.false_alarms(declared, bunker.requests())
        result["signing_per_fault"] = table
        result["signing_down_stretches"] = checks
        result["signer_down_declared"] = [{"at_s": round(a - start, 2), "seconds": round(b - a, 2)} for a, b in declared]
        soak_signer.log_table(table)
        problems += soak_signer.signing_problems(table, checks, lies)
    print(json.dumps(result, indent=2))
    for problem in problems:
        log(problem)
    manager.systemctl("stop", "soundscaped.service", "soundscaped.socket", check=False)
    manager.stop()
    graph.stop()
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
