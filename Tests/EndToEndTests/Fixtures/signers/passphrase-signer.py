#!/usr/bin/env python3
"""Stands in for a signer that reads its passphrase on stdin (nsecbunkerd,
igloo-shell's daemon) where it matters to soundscaped: what it reads there.

    passphrase-signer.py --daemon

It reads stdin to its end: the first line is the passphrase, and nothing may
follow it (a stream of JSON event lines is no passphrase). Then it unlocks,
which it tells through $NOTIFY_SOCKET as its status line,
`unlocked (passphrase sha256 <first 16 hex digits>)`, and runs until stopped.
Without a passphrase, or with more than one line, it says why and exits 1.
"""
import hashlib
import os
import signal
import socket
import sys

data = sys.stdin.buffer.read()  # returns at end of file only
lines = data.decode("utf-8", "replace").splitlines()
if not lines or not lines[0]:
    sys.exit("no passphrase on stdin")
if len(lines) > 1 or lines[0].startswith("{"):
    sys.exit(f"stdin is not a passphrase ({len(lines)} lines, starting {lines[0][:20]!r})")
digest = hashlib.sha256(lines[0].encode()).hexdigest()[:16]
print(f"unlocked with a {len(lines[0])}-character passphrase; stdin at its end", flush=True)
if os.environ.get("NOTIFY_SOCKET"):
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.sendto(f"STATUS=unlocked (passphrase sha256 {digest})".encode(), os.environ["NOTIFY_SOCKET"])
signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
while True:
    signal.pause()
