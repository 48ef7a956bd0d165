#!/usr/bin/env python3
"""Stands in for a bifrost-rs host (igloo-shell's daemon and the like) where it
matters to soundscaped: how it stops.

    bifrost-host.py --config FILE

A bifrost-rs host shuts down cleanly only on SIGINT (its Ctrl-C handler saves
its state). Any other stop signal kills it mid-flight, and its next start finds
a "dirty restart" marker. So: on SIGINT it says so and exits 0; on SIGTERM,
SIGHUP, SIGQUIT, SIGUSR1 or SIGUSR2 it leaves FILE.dirty (naming the signal)
and exits 1. At start it reports a marker a previous run left. It reads no
stdin and runs until stopped.
"""
import argparse
import os
import signal
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--config", required=True)
marker = parser.parse_args().config + ".dirty"

if os.path.exists(marker):
    with open(marker) as f:
        print(f"dirty restart: the last run was stopped by {f.read().strip()}, not shut down", flush=True)
print(f"bifrost host {os.getpid()} running", flush=True)


def clean(number, frame):
    print("SIGINT: shutting down cleanly", flush=True)
    os._exit(0)


def dirty(number, frame):
    name = signal.Signals(number).name
    with open(marker, "w") as f:
        f.write(name + "\n")
    print(f"{name}: stopped without a clean shutdown", file=sys.stderr, flush=True)
    os._exit(1)


signal.signal(signal.SIGINT, clean)
for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
    signal.signal(number, dirty)
while True:
    signal.pause()
