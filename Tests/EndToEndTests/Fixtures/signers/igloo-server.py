#!/usr/bin/env python3
"""Stands in for igloo-server where it matters to soundscaped: its status
endpoint, which answers 200 even while its relays are down.

    igloo-server.py --port PORT [--disconnected-if FILE] [--mode-file FILE] [--requests FILE]
                    [--credentials-from-env]

Serves `GET /api/status` on 127.0.0.1:PORT (igloo-server's default is 8002) as
`{"health": {"isConnected": true, ...}, ...}`, with isConnected false while
FILE exists (a test's switch for "a relay dropped"), and 404 for anything else.
Runs until SIGTERM.

For the tests of the built-in HTTP check, the words in --mode-file (read at each
request; absent or empty: `true`) choose the answer instead:
- `true`, `false`: 200 with isConnected so;
- `500`: an HTTP error;
- `garbage`: 200 with a body that is not JSON;
- `hang`: nothing, until the client closes the connection, which is then noted
  by writing `closed` into the file named `<mode-file>.hung`.
--requests appends a line per request (the benchmark counts the checks with it).

With --credentials-from-env it needs GROUP_CRED and SHARE_CRED in its
environment, as igloo-server run headless does: without one it names it on
stderr and exits 1; with both, /api/status has `"credentials"`, each one's
SHA-256 (16 hex digits), never a value.
"""
import argparse
import hashlib
import http.server
import json
import os
import select
import signal
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=8002)
parser.add_argument("--disconnected-if")
parser.add_argument("--mode-file")
parser.add_argument("--requests")
parser.add_argument("--credentials-from-env", action="store_true")
arguments = parser.parse_args()

credentials = {}
if arguments.credentials_from_env:
    for name in ("GROUP_CRED", "SHARE_CRED"):
        if not os.environ.get(name):
            sys.exit(f"igloo-server: {name} is not set (headless mode needs GROUP_CRED and SHARE_CRED)")
        credentials[name] = hashlib.sha256(os.environ[name].encode()).hexdigest()[:16]


def mode():
    if arguments.mode_file:
        try:
            with open(arguments.mode_file, encoding="utf-8") as f:
                return f.read().strip() or "true"
        except FileNotFoundError:
            return "true"
    if arguments.disconnected_if and os.path.exists(arguments.disconnected_if):
        return "false"
    return "true"


class Status(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if arguments.requests:
            with open(arguments.requests, "a", encoding="utf-8") as f:
                f.write(f"{time.monotonic()}\n")
        if self.path != "/api/status":
            self.send_error(404)
            return
        answer = mode()
        if answer == "hang":
            # Holds the request until the client gives up and closes its end.
            while True:
                readable, _, _ = select.select([self.connection], [], [], 0.05)
                if readable and not self.connection.recv(1):
                    with open(arguments.mode_file + ".hung", "w", encoding="utf-8") as f:
                        f.write("closed\n")
                    return
        if answer == "500":
            self.send_error(500)
            return
        if answer == "garbage":
            body = b"<html>it is not JSON</html>"
        else:
            connected = answer == "true"
            status = {"status": "running", "health": {"isConnected": connected, "relays": 3 if connected else 0}}
            if credentials:
                status["credentials"] = credentials
            body = json.dumps(status).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass  # one line per probe would flood the daemon's log


# Threads: a hanging request must not hold up the next one.
server = http.server.ThreadingHTTPServer(("127.0.0.1", arguments.port), Status)
server.daemon_threads = True
signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
print(f"igloo-server stand-in on 127.0.0.1:{arguments.port}" + (", credentials: GROUP_CRED, SHARE_CRED" if credentials else ""), flush=True)
server.serve_forever()
