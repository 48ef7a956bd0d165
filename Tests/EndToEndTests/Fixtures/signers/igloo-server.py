#!/usr/bin/env python3
"""Stands in for igloo-server where it matters to soundscaped: its status
endpoint, which answers 200 even while its relays are down.

    igloo-server.py --port PORT --disconnected-if FILE

Serves `GET /api/status` on 127.0.0.1:PORT (igloo-server's default is 8002) as
`{"health": {"isConnected": true, ...}, ...}`, with isConnected false while
FILE exists (a test's switch for "a relay dropped"), and 404 for anything else.
Runs until SIGTERM.
"""
import argparse
import http.server
import json
import os
import signal
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=8002)
parser.add_argument("--disconnected-if", required=True)
arguments = parser.parse_args()


class Status(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/api/status":
            self.send_error(404)
            return
        connected = not os.path.exists(arguments.disconnected_if)
        body = json.dumps({"status": "running", "health": {"isConnected": connected, "relays": 3 if connected else 0}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass  # one line per probe would flood the daemon's log


server = http.server.HTTPServer(("127.0.0.1", arguments.port), Status)
signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
print(f"igloo-server stand-in on 127.0.0.1:{arguments.port}", flush=True)
server.serve_forever()
