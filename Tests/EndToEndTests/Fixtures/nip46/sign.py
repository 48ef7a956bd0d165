#!/usr/bin/env python3
"""A NIP-46 client that asks a bunker for signatures: nostr-sdk's NostrConnect.

One shot (a signer health command):

    sign.py --uri BUNKER_URI [--timeout SECONDS]

asks the bunker for its user's public key, then to sign a kind-1 event, and
checks the signature. Exit status 0 if and only if a valid signature by that
key came back within the timeout (default 2 s, counted from the start); its
one stdout line is then `signs as <key>` (the same line every time: the daemon
makes it the signer's status line). Otherwise it exits 1 and says why on stderr.

A loop (a NIP-46 app that keeps asking, for a soak):

    sign.py --uri BUNKER_URI --every SECONDS --duration SECONDS [--timeout SECONDS] [--log FILE]

sends one sign request every SECONDS on a fixed schedule (a slow answer does
not delay the next request), each with its own timeout, for DURATION seconds
(or until SIGTERM or SIGINT), then waits for the last answers and exits 0.
Each request becomes one JSON line (on stdout, or appended to FILE), written
when it is settled:

    {"seq": 7, "sent": 1718000000.123, "mono": 5234.567, "ok": true, "ms": 14.2, "error": null}

`sent` is the wall clock (time.time()) and `mono` CLOCK_MONOTONIC
(time.monotonic()) when it was sent, `ms` how long the answer took. It speaks
through one NostrConnect client, as an app would; while the bunker is away its
requests time out, and answers resume when it is back. After a request that got
no answer the next one goes through a new client (a new connection to the
relay), as an app that retries would: nostr-sdk's own reconnection to a relay
that went away waits 10 s or more. A last line
`{"summary": {"sent": N, "answered": M}}` closes the log. Needs nostr-sdk==0.37.0.
"""
import argparse
import asyncio
import datetime
import json
import signal
import sys
import time

from nostr_sdk import EventBuilder, Keys, NostrConnect, NostrConnectUri


def connect(uri, timeout):
    return NostrConnect(NostrConnectUri.parse(uri), Keys.generate(), datetime.timedelta(seconds=timeout), None)


async def sign_once(client, note):
    """Signs `note` through the bunker; returns the signer's public key (hex) or raises."""
    user = await client.get_public_key()
    event = await client.sign_event(EventBuilder.text_note(note).build(user))
    if not event.verify():
        raise ValueError("the signature does not verify")
    if event.author().to_hex() != user.to_hex():
        raise ValueError(f"signed by {event.author().to_hex()}, not by {user.to_hex()}")
    return user.to_hex()


def describe(error):
    if isinstance(error, asyncio.TimeoutError):
        return "no answer in time"
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


async def one_shot(arguments):
    client = connect(arguments.uri, arguments.timeout)
    started = time.monotonic()
    try:
        user = await asyncio.wait_for(sign_once(client, "soundscaped health check"), arguments.timeout)
    except Exception as error:  # noqa: BLE001 - every failure is an unhealthy answer
        print(f"no signature from the bunker within {arguments.timeout:g} s: {describe(error)}", file=sys.stderr)
        return 1
    print(f"signs as {user[:16]}")
    print(f"signed in {(time.monotonic() - started) * 1000:.0f} ms", file=sys.stderr)
    return 0


async def loop(arguments):
    stop = asyncio.Event()
    running = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        running.add_signal_handler(number, stop.set)
    out = open(arguments.log, "a") if arguments.log else sys.stdout
    clients = [connect(arguments.uri, arguments.timeout)]
    counts = {"sent": 0, "answered": 0}

    async def request(seq):
        client = clients[0]
        sent, mono = time.time(), time.monotonic()
        record = {"seq": seq, "sent": round(sent, 3), "mono": round(mono, 3), "ok": False, "ms": None, "error": None}
        try:
            await asyncio.wait_for(sign_once(client, f"soak request {seq}"), arguments.timeout)
            record["ok"] = True
            record["ms"] = round((time.monotonic() - mono) * 1000, 1)
            counts["answered"] += 1
        except Exception as error:  # noqa: BLE001 - recorded, and the loop goes on
            record["error"] = describe(error)
            if clients[0] is client:
                clients[0] = connect(arguments.uri, arguments.timeout)
        out.write(json.dumps(record) + "\n")
        out.flush()

    start = time.monotonic()
    pending = set()
    seq = 0
    while not stop.is_set() and time.monotonic() - start < arguments.duration:
        task = asyncio.ensure_future(request(seq))
        pending.add(task)
        task.add_done_callback(pending.discard)
        counts["sent"] += 1
        seq += 1
        next_tick = start + seq * arguments.every
        try:
            await asyncio.wait_for(stop.wait(), max(0.0, next_tick - time.monotonic()))
        except asyncio.TimeoutError:
            pass
    if pending:
        await asyncio.wait(pending)
    out.write(json.dumps({"summary": counts}) + "\n")
    out.flush()
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--uri", required=True, help="the bunker's bunker:// URI")
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds a request may take (default 2)")
    parser.add_argument("--every", type=float, help="loop: seconds between requests")
    parser.add_argument("--duration", type=float, help="loop: seconds to keep asking")
    parser.add_argument("--log", help="loop: append the JSON lines to this file (default stdout)")
    arguments = parser.parse_args()
    if arguments.timeout <= 0:
        parser.error("--timeout must be positive")
    if (arguments.every is None) != (arguments.duration is None):
        parser.error("--every and --duration go together")
    if arguments.every is not None and (arguments.every <= 0 or arguments.duration <= 0):
        parser.error("--every and --duration must be positive")
    sys.exit(asyncio.run(loop(arguments) if arguments.every is not None else one_shot(arguments)))


if __name__ == "__main__":
    main()
