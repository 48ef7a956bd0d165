#!/usr/bin/env python3
"""Prints a config block of the docs, as the docs show it, for a check to run.

    doc-config.py DOC NAME [FROM TO]...

The block is the ```ini fence right after the line `<!-- tested: NAME -->` in
DOC. Each pair FROM TO replaces FROM by TO (the paths and addresses of the machine
the check runs on: a program's path, a relay's address); FROM must be in the
block, so a docs change that drops it fails the check instead of passing
untested. Nothing else is touched.
"""
import sys


def block(text, name):
    marker = f"<!-- tested: {name} -->"
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip() == marker]
    if len(starts) != 1:
        raise SystemExit(f"doc-config: {len(starts)} lines '{marker}' (want exactly one)")
    rest = lines[starts[0] + 1:]
    if not rest or rest[0].strip() != "```ini":
        raise SystemExit(f"doc-config: '{marker}' is not followed by a ```ini block")
    try:
        end = rest.index("```", 1)
    except ValueError:
        raise SystemExit(f"doc-config: the {name} block is not closed") from None
    return "\n".join(rest[1:end]) + "\n"


def main():
    if len(sys.argv) < 3 or len(sys.argv) % 2 == 0:
        raise SystemExit("usage: doc-config.py DOC NAME [FROM TO]...")
    document, name = sys.argv[1], sys.argv[2]
    with open(document, encoding="utf-8") as f:
        config = block(f.read(), name)
    for old, new in zip(sys.argv[3::2], sys.argv[4::2]):
        if not old:
            raise SystemExit("doc-config: an empty FROM")
        if old not in config:
            raise SystemExit(f"doc-config: {document}'s {name} block no longer contains '{old}'")
        config = config.replace(old, new)
    sys.stdout.write(config)


if __name__ == "__main__":
    main()
