#!/usr/bin/env python3
"""A local Nostr relay for the NIP-46 tests, on 127.0.0.1.

    relay.py URL_FILE [PORT]

Starts the relay on PORT (default: a free port; a soak that kills the relay starts
it again where its clients look for it), writes its URL (ws://127.0.0.1:PORT) to
URL_FILE once it accepts connections (written whole: a reader never sees half a
URL), and runs until SIGTERM or SIGINT, then exits 0.

It does what NIP-46 needs of a relay (NIP-01's EVENT, REQ, CLOSE, OK and EOSE):
every event whose id and signature verify is answered OK and forwarded to each
subscription that matches it; nothing is stored (NIP-46's kind 24133 is
ephemeral). The Nostr parts are nostr-sdk's (Event.verify, Filter.match_event);
the WebSocket server is the `websockets` package. Both are pinned in
scripts/lib.sh.

Why not nostr-sdk's MockRelay, which the first NIP-46 checks used: it takes no
settings, and its built-in limit of 60 events a minute per connection is below
what one bunker publishes for an app that asks every second (an answer each,
and three for every health check): the relay refuses the bunker's answers with
"rate-limited", and nostr-sdk 0.37.0's remote signer then ends
("event/s not published"). Real relays set their own limits; a test relay must
not be the thing that fails.
"""
import asyncio
import http
import json
import logging
import os
import signal
import sys

from nostr_sdk import Event, Filter
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed, InvalidStatus


class Relay:
    """Each connection's subscriptions, and its own queue of messages to send, which a
    writer task of its own drains: a connection that stops reading (a SIGSTOPped bunker)
    holds up only its own messages, never the relay."""

    def __init__(self):
        self.subscriptions = {}  # connection -> {subscription id: [Filter]}
        self.outboxes = {}  # connection -> asyncio.Queue of messages

    def send(self, connection, message):
        outbox = self.outboxes.get(connection)
        if outbox is not None:
            outbox.put_nowait(json.dumps(message))

    async def write(self, connection, outbox):
        try:
            while True:
                await connection.send(await outbox.get())
        except ConnectionClosed:
            pass

    async def handle(self, connection):
        self.subscriptions[connection] = {}
        outbox = self.outboxes[connection] = asyncio.Queue()
        writer = asyncio.create_task(self.write(connection, outbox))
        try:
            async for text in connection:
                self.receive(connection, text)
        except ConnectionClosed:
            pass
        finally:
            del self.subscriptions[connection]
            del self.outboxes[connection]
            writer.cancel()

    def receive(self, connection, text):
        try:
            message = json.loads(text)
            verb = message[0]
        except (ValueError, IndexError, KeyError, TypeError):
            self.send(connection, ["NOTICE", "invalid: not a JSON array"])
            return
        if verb == "EVENT" and len(message) == 2:
            self.publish(connection, message[1])
        elif verb == "REQ" and len(message) >= 3:
            try:
                filters = [Filter.from_json(json.dumps(f)) for f in message[2:]]
            except Exception as error:  # noqa: BLE001 - nostr-sdk's parse error, answered
                self.send(connection, ["CLOSED", message[1], f"invalid: {error}"])
                return
            self.subscriptions[connection][message[1]] = filters
            self.send(connection, ["EOSE", message[1]])  # nothing stored
        elif verb == "CLOSE" and len(message) == 2:
            self.subscriptions[connection].pop(message[1], None)
        else:
            self.send(connection, ["NOTICE", f"unsupported: {verb}"])

    def publish(self, connection, raw):
        try:
            event = Event.from_json(json.dumps(raw))
            valid = event.verify()
        except Exception:  # noqa: BLE001 - a malformed event is refused, not fatal
            event, valid = None, False
        event_id = raw.get("id", "") if isinstance(raw, dict) else ""
        self.send(connection, ["OK", event_id, valid, "" if valid else "invalid: bad id or signature"])
        if not valid:
            return
        for other, subscriptions in list(self.subscriptions.items()):
            for subscription, filters in list(subscriptions.items()):
                if any(f.match_event(event) for f in filters):
                    self.send(other, ["EVENT", subscription, raw])


def information(connection, request):
    """A plain HTTP request (nostr-sdk asks for the NIP-11 document before it connects):
    answered with this relay's document, not a failed WebSocket handshake."""
    if request.headers.get("Upgrade", "").lower() == "websocket":
        return None
    response = connection.respond(http.HTTPStatus.OK, json.dumps({"name": "soundscaped's test relay",
                                                                  "supported_nips": [1, 46]}) + "\n")
    response.headers["Content-Type"] = "application/nostr+json"
    response.headers["Access-Control-Allow-Origin"] = "*"
    return response


class AnsweredOverHTTP(logging.Filter):
    """websockets logs every request answered without an upgrade as a failed handshake;
    the NIP-11 answers above are not failures."""

    def filter(self, record):
        return not (record.exc_info and isinstance(record.exc_info[1], InvalidStatus))


async def main(url_file, port):
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    relay = Relay()
    logging.basicConfig(format="relay: %(message)s")
    logger = logging.getLogger("relay")
    logger.addFilter(AnsweredOverHTTP())
    async with serve(relay.handle, "127.0.0.1", port, process_request=information, logger=logger) as server:
        port = server.sockets[0].getsockname()[1]
        url = f"ws://127.0.0.1:{port}"
        with open(url_file + ".tmp", "w") as f:
            f.write(url + "\n")
        os.rename(url_file + ".tmp", url_file)
        print(f"relay listening on {url}", flush=True)
        await stop.wait()
    print("relay stopped", flush=True)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or len(sys.argv) == 3 and not sys.argv[2].isdigit():
        sys.exit("usage: relay.py URL_FILE [PORT]")
    asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 0))
