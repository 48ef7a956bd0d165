#!/usr/bin/env python3
"""Stands in for a signer that takes its secrets as a systemd unit would give
them: variables in its environment (EnvironmentFile=) and files in
$CREDENTIALS_DIRECTORY (LoadCredential=).

    secrets-signer.py --env NAME... --credential NAME...

Writes $FIXTURE_DIR/<pid>.secrets, a line each, never a value:
  env NAME sha256:<16 hex>
  credential NAME sha256:<16 hex> mode 0400
  directory PATH mode 0500
then says `STATUS=secrets: N present` on $NOTIFY_SOCKET and runs until SIGTERM.
Without a variable or credential it needs, it says which on stderr and exits 1.
"""
import hashlib
import os
import signal
import socket
import sys

names = {"--env": [], "--credential": []}
current = None
for argument in sys.argv[1:]:
    if argument in names:
        current = names[argument]
    elif current is not None:
        current.append(argument)


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


lines = []
for name in names["--env"]:
    if name not in os.environ:
        sys.exit(f"missing the variable {name}")
    lines.append(f"env {name} {digest(os.environ[name].encode())}")
directory = os.environ.get("CREDENTIALS_DIRECTORY")
if names["--credential"]:
    if not directory:
        sys.exit("no $CREDENTIALS_DIRECTORY")
    lines.append(f"directory {directory} mode {os.stat(directory).st_mode & 0o777:04o}")
for name in names["--credential"]:
    path = os.path.join(directory, name)
    if not os.path.exists(path):
        sys.exit(f"missing the credential {name}")
    with open(path, "rb") as f:
        lines.append(f"credential {name} {digest(f.read())} mode {os.stat(path).st_mode & 0o777:04o}")

record = os.path.join(os.environ["FIXTURE_DIR"], f"{os.getpid()}.secrets")
with open(record + ".part", "w") as f:
    f.write("\n".join(lines) + "\n")
os.rename(record + ".part", record)
print(f"secrets signer {os.getpid()}: {len(lines)} present", flush=True)
if os.environ.get("NOTIFY_SOCKET"):
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.sendto(f"STATUS=secrets: {len(lines)} present".encode(), os.environ["NOTIFY_SOCKET"])
signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
while True:
    signal.pause()
