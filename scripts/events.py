#!/usr/bin/env python3
"""The daemon's events, as `soundscapectl events --json` writes them (one JSON object a
line), read from stdin by the shell checks (scripts/check-package).

  events.py after REASON [KEY=VALUE...]
      exits 0 if an event has that reason and those values (each compared as text,
      as str() writes it), 1 if none has
"""
import json
import sys


def after(reason, *pairs):
    wanted = dict(pair.split("=", 1) for pair in pairs)
    for line in sys.stdin:
        event = json.loads(line)
        if event.get("reason") == reason and all(str(event.get(k)) == v for k, v in wanted.items()):
            return 0
    return 1


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "after":
        sys.exit(__doc__)
    sys.exit(after(*sys.argv[2:]))
