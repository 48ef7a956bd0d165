#!/usr/bin/env python3
"""Stands in for igloo-server where it matters to soundscaped: its status
endpoint, which answers 200 even while its relays are down.

    igloo-server.py --port PORT --disconnected-if FILE [--credentials-from-env]

Serves `GET /api/status` on 127.0.0.1:PORT (igloo-server's default is 8002) as
`{"health": {"isConnected": true, ...}, ...}`, with isConnected false while
FILE exists (a test's switch for "a relay dropped"), and 404 for anything else.
Runs until SIGTERM.

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
import signal
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=8002)
parser.add_argument("--disconnected-if", required=True)
parser.add_argument("--credentials-from-env", action="store_true")
arguments = parser.parse_args()

credentials = {}
if arguments.credentials_from_env:
    for name in ("GROUP_CRED", "SHARE_CRED"):
        if not os.environ.get(name):
            sys.exit(f"igloo-server: {name} is not set (headless mode needs GROUP_CRED and SHARE_CRED)")
        credentials[name] = hashlib.sha256(os.environ[name].encode()).hexdigest()[:16]


class Status(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/api/status":
            self.send_error(404)
            return
        connected = not os.path.exists(arguments.disconnected_if)
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


server = http.server.HTTPServer(("127.0.0.1", arguments.port), Status)
signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
print(f"igloo-server stand-in on 127.0.0.1:{arguments.port}" + (", credentials: GROUP_CRED, SHARE_CRED" if credentials else ""), flush=True)
server.serve_forever()
