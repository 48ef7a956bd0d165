#!/usr/bin/env python3
"""A local Nostr relay for the NIP-46 tests: nostr-sdk's MockRelay, on 127.0.0.1.

    relay.py URL_FILE

Starts the relay (it picks a free port), writes its URL (ws://127.0.0.1:PORT) to
URL_FILE once it accepts connections (written whole: a reader never sees half a
URL), and runs until SIGTERM or SIGINT, then exits 0. The relay forwards every
event to the subscriptions that match it, which is all NIP-46 needs: the bunker
and its clients meet there. Needs nostr-sdk==0.37.0 (the last release with
MockRelay).
"""
import asyncio
import os
import signal
import sys

from nostr_sdk import MockRelay


async def main(url_file):
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    relay = await MockRelay.run()
    url = relay.url()
    with open(url_file + ".tmp", "w") as f:
        f.write(url + "\n")
    os.rename(url_file + ".tmp", url_file)
    print(f"relay listening on {url}", flush=True)
    await stop.wait()
    relay.shutdown()
    print("relay stopped", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: relay.py URL_FILE")
    asyncio.run(main(sys.argv[1]))
