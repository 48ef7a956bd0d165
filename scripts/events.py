#!/usr/bin/env python3
"""The daemon's events, as `soundscapectl events --json` writes them (one JSON object a
line), for the shell checks (scripts/check-package) and, imported, the Python ones
(scripts/check-bunker.py, the soak).

Event reasons are never taken on trust: every name a check looks for is checked
against the reasons the daemon itself declares (`soundscaped --print-settings
--json`'s `events`, made from the enum the IDL's `Event.reason` is made from), and an
unknown one fails the check at once, naming it, so a renamed event cannot leave a
check waiting for something that will never come.

  events.py after REASON [KEY=VALUE...]
      exits 0 if an event read from stdin has that reason and those values (each
      compared as text, as str() writes it), 1 if none has, 2 if the daemon knows no
      such reason
  events.py known REASON...
      exits 0 if the daemon knows every REASON, 2 naming those it does not
  events.py reasons
      prints the daemon's event reasons, one a line
  events.py causes
      prints the daemon's interruption causes, one a line

Interruption causes (a status's `interruptions`, an `interrupted` event's `cause`) are
checked the same way, against `--print-settings --json`'s `events.causes` (`Causes`).

The daemon asked is $SOUNDSCAPED when set, else `soundscaped` on PATH (the installed
one, for scripts/check-package); the soak passes its release build's. A caller that
polls may ask once and pass the answer on in $SOUNDSCAPED_EVENT_REASONS (`events.py
reasons`, as scripts/check-package's await_event does).
"""
import json
import os
import subprocess
import sys


class Declared:
    """The names a soundscaped binary declares under `events.KEY` of its `--print-settings
    --json`; `declared("signerDown")` returns the name, or exits (status 2) naming it when
    the daemon has no such one."""

    key, what, cached = "reasons", "event reason", "SOUNDSCAPED_EVENT_REASONS"

    def __init__(self, soundscaped=None):
        binary = soundscaped or os.environ.get("SOUNDSCAPED") or "soundscaped"
        self.binary = binary
        if not soundscaped and self.cached and os.environ.get(self.cached):
            self.names = frozenset(os.environ[self.cached].split())
            return
        try:
            out = subprocess.run([binary, "--print-settings", "--json"], check=True, capture_output=True, text=True).stdout
            self.names = frozenset(json.loads(out)["events"][self.key])
        except (OSError, subprocess.CalledProcessError, ValueError, KeyError) as error:
            sys.stderr.write(f"events.py: cannot read the {self.what}s of {binary} --print-settings --json: {error}\n")
            sys.exit(2)

    def __call__(self, *names):
        unknown = [name for name in names if name not in self.names]
        if unknown:
            sys.stderr.write(f"events.py: {binary_name(self.binary)} has no {self.what} {', '.join(map(repr, unknown))}"
                             f" (it has: {', '.join(sorted(self.names))})\n")
            sys.exit(2)
        return names[0] if len(names) == 1 else names


class Reasons(Declared):
    """The event reasons (`events.reasons`, from the enum the IDL's `Event.reason` is made from)."""


class Causes(Declared):
    """The interruption causes (`events.causes`: a status's `interruptions`, an event's `cause`)."""

    key, what, cached = "causes", "interruption cause", None


def binary_name(binary):
    return os.path.basename(binary)


def after(lines, reason, *pairs):
    wanted = dict(pair.split("=", 1) for pair in pairs)
    for line in lines:
        event = json.loads(line)
        if event.get("reason") == reason and all(str(event.get(k)) == v for k, v in wanted.items()):
            return 0
    return 1


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "after":
        sys.exit(after(sys.stdin, Reasons()(sys.argv[2]), *sys.argv[3:]))
    if len(sys.argv) >= 3 and sys.argv[1] == "known":
        Reasons()(*sys.argv[2:])
        sys.exit(0)
    if sys.argv[1:] == ["reasons"]:
        print("\n".join(sorted(Reasons().names)))
        sys.exit(0)
    if sys.argv[1:] == ["causes"]:
        print("\n".join(sorted(Causes().names)))
        sys.exit(0)
    sys.exit(__doc__)
