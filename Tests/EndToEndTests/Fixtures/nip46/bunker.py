#!/usr/bin/env python3
"""A real NIP-46 remote signer ("bunker"): nostr-sdk's NostrConnectRemoteSigner.

    bunker.py keys FILE                                   new keys into FILE (mode 0600)
    bunker.py uri   --keys FILE --relay URL [--secret S]  print its bunker:// URI
    bunker.py serve --keys FILE --relay URL [--secret S]  sign for clients until stopped

FILE holds the bunker's two secret keys as JSON: `signer`, the key it speaks
NIP-46 with, and `user`, the key it signs events with. They stay the same
across restarts, so a restarted bunker is the same bunker to its clients.
`serve` connects to the relay, answers every request (connect, get_public_key,
sign_event …) with approval, logs one line per request on stdout, and exits 0
on SIGTERM or SIGINT. It reads nothing on stdin (soundscaped runs it with
`signer-stdin = null`). Needs nostr-sdk==0.37.0, the last release with
NostrConnectRemoteSigner.
"""
import argparse
import asyncio
import json
import os
import signal
import sys

from nostr_sdk import Keys, NostrConnectKeys, NostrConnectRemoteSigner, NostrConnectSignerActions, SecretKey


def load_keys(path):
    with open(path) as f:
        stored = json.load(f)
    return (Keys(SecretKey.parse(stored["signer"])), Keys(SecretKey.parse(stored["user"])))


def make_signer(arguments):
    signer_keys, user_keys = load_keys(arguments.keys)
    return NostrConnectRemoteSigner(NostrConnectKeys(signer=signer_keys, user=user_keys), [arguments.relay],
                                    arguments.secret, None)


def new_keys(path):
    stored = {"signer": Keys.generate().secret_key().to_hex(), "user": Keys.generate().secret_key().to_hex()}
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as f:
        json.dump(stored, f)
        f.write("\n")


class ApproveAll(NostrConnectSignerActions):
    """Approves every request, saying which on stdout (the daemon's log)."""

    def approve(self, request):
        print(f"approved {str(request).split('(')[0]}", flush=True)
        return True


async def serve(arguments):
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    signer = make_signer(arguments)
    print(f"bunker for user {load_keys(arguments.keys)[1].public_key().to_hex()} on {arguments.relay}", flush=True)
    serving = asyncio.ensure_future(signer.serve(ApproveAll()))
    stopped = asyncio.ensure_future(stop.wait())
    done, _ = await asyncio.wait([serving, stopped], return_when=asyncio.FIRST_COMPLETED)
    if serving in done:
        serving.result()  # raises what ended it
        sys.exit("bunker: serving ended by itself")
    print("bunker stopping", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    keys = commands.add_parser("keys")
    keys.add_argument("file")
    for name in ("uri", "serve"):
        command = commands.add_parser(name)
        command.add_argument("--keys", required=True)
        command.add_argument("--relay", required=True)
        command.add_argument("--secret")
    arguments = parser.parse_args()
    if arguments.command == "keys":
        new_keys(arguments.file)
    elif arguments.command == "uri":
        print(make_signer(arguments).bunker_uri())
    else:
        asyncio.run(serve(arguments))


if __name__ == "__main__":
    main()
