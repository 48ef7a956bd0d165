#!/usr/bin/env python3
"""A stand-in signer host for soundscaped's end-to-end tests.

It records what the daemon sends it and misbehaves on demand, like a real
signer might. Everything goes into $FIXTURE_DIR:
  <pid>.events   every stdin line, as received
  <pid>.env      SOUNDSCAPED_SOCKET and the working directory
  <pid>.child    pid of a grandchild, when started with --child
  <pid>.stdin    with --read-all: everything on stdin, written once it reached end of file
  <pid>.signal   with --record-signals: the name of the stop signal it got
  control        a FIFO; write a command line to it:
                   crash CODE   exit at once with CODE
                   hang         stop heartbeating and watchdog pings (and keep running)
                   quit         exit 0
                   notify TEXT  send TEXT (a literal \n separates fields) to $NOTIFY_SOCKET
                                with python3-sdnotify, as a signer using it would
                   run ARGS     run the command ARGS (e.g. systemd-notify --ready) and wait for it
                   flood N      send N datagrams STATUS=flood I as fast as it can, then STATUS=flood done
Options: --heartbeat SECONDS (print "heartbeat" that often), --ignore-term
(survive SIGTERM), --child (start a grandchild `sleep` in our process group),
--no-read (never read stdin), --crash-at-start CODE (exit immediately),
--read-all (read stdin to its end, e.g. a passphrase file), --record-signals (record
SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 or SIGUSR2, then exit 0), --watchdog (send
WATCHDOG=1 every quarter of $WATCHDOG_USEC), --probe-sandbox (try what a sandbox may
refuse and write <pid>.sandbox: `wx=ok|denied inet=ok|denied unix=ok|denied`), --die-by
SIGNAL (kill itself with SIGNAL at once, as a runtime that crashes at start).
"""
import os
import shlex
import signal
import subprocess
import sys
import threading
import time

args = sys.argv[1:]
directory = os.environ["FIXTURE_DIR"]
pid = os.getpid()


def option(name, default=None):
    if name in args:
        index = args.index(name)
        return args[index + 1] if index + 1 < len(args) and not args[index + 1].startswith("--") else True
    return default


if option("--die-by") is not None:
    os.kill(pid, getattr(signal, option("--die-by")))

if option("--crash-at-start") is not None:
    print(f"fixture {pid} crashing at start", flush=True)
    sys.exit(int(option("--crash-at-start")))

# Written under another name and renamed: a test that waits for the file to appear reads it whole.
environment_file = os.path.join(directory, f"{pid}.env")
with open(environment_file + ".part", "w") as f:
    f.write(f"SOUNDSCAPED_SOCKET={os.environ.get('SOUNDSCAPED_SOCKET', '')}\n")
    f.write(f"CWD={os.getcwd()}\n")
    f.write(f"PGID={os.getpgrp()}\n")
    f.write(f"FIXTURE_EXTRA={os.environ.get('FIXTURE_EXTRA', '')}\n")
    f.write(f"NOTIFY_SOCKET={os.environ.get('NOTIFY_SOCKET', '')}\n")
    f.write(f"WATCHDOG_USEC={os.environ.get('WATCHDOG_USEC', '')}\n")
os.rename(environment_file + ".part", environment_file)

if option("--probe-sandbox"):
    import errno
    import mmap
    import socket

    def attempt(action):
        try:
            action()
            return "ok"
        except OSError as error:
            return "denied" if error.errno in (errno.EPERM, errno.EACCES, errno.EAFNOSUPPORT) else f"error {error.errno}"

    results = {
        # What a JIT does: a page both writable and executable.
        "wx": attempt(lambda: mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC).close()),
        "inet": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()),
        "unix": attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()),
    }
    with open(os.path.join(directory, f"{pid}.sandbox.tmp"), "w") as f:
        f.write(" ".join(f"{key}={value}" for key, value in results.items()))
    os.rename(os.path.join(directory, f"{pid}.sandbox.tmp"), os.path.join(directory, f"{pid}.sandbox"))

if option("--ignore-term"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

if option("--record-signals"):
    def record(number, frame):
        with open(os.path.join(directory, f"{pid}.signal"), "w") as f:
            f.write(signal.Signals(number).name)
        os._exit(0)

    for stop in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(stop, record)

if option("--read-all"):
    data = sys.stdin.buffer.read()  # returns at end of file only
    with open(os.path.join(directory, f"{pid}.stdin.tmp"), "wb") as f:
        f.write(data)
    os.rename(os.path.join(directory, f"{pid}.stdin.tmp"), os.path.join(directory, f"{pid}.stdin"))

notifier = None
if os.environ.get("NOTIFY_SOCKET"):
    import sdnotify  # python3-sdnotify, as a real signer would use it

    notifier = sdnotify.SystemdNotifier(debug=True)

if option("--child"):
    child = subprocess.Popen(["sleep", "1000"])
    with open(os.path.join(directory, f"{pid}.child"), "w") as f:
        f.write(str(child.pid))

print(f"fixture signer {pid} started", flush=True)
print(f"fixture signer {pid} says hello on stderr", file=sys.stderr, flush=True)

heartbeating = threading.Event()
if option("--heartbeat"):
    heartbeating.set()
    interval = float(option("--heartbeat"))

    def beat():
        while True:
            if heartbeating.is_set():
                print("heartbeat", flush=True)
            time.sleep(interval)

    threading.Thread(target=beat, daemon=True).start()

if option("--watchdog"):
    heartbeating.set()
    period = int(os.environ["WATCHDOG_USEC"]) / 4 / 1_000_000

    def ping():
        while True:
            if heartbeating.is_set():
                notifier.notify("WATCHDOG=1")
            time.sleep(period)

    threading.Thread(target=ping, daemon=True).start()


def read_events():
    with open(os.path.join(directory, f"{pid}.events"), "a") as out:
        for line in sys.stdin:
            out.write(line)
            out.flush()


if not option("--no-read") and not option("--read-all"):
    threading.Thread(target=read_events, daemon=True).start()

control = os.path.join(directory, "control")
while True:
    try:
        with open(control) as fifo:  # blocks until a test writes a command
            for line in fifo:
                words = line.split()
                if not words:
                    continue
                if words[0] == "crash":
                    print(f"fixture {pid} crashing with {words[1]}", flush=True)
                    os._exit(int(words[1]))
                if words[0] == "hang":
                    heartbeating.clear()
                if words[0] == "quit":
                    sys.exit(0)
                if words[0] == "notify":
                    notifier.notify(line.split(" ", 1)[1].rstrip("\n").replace("\\n", "\n"))
                if words[0] == "flood":
                    for i in range(int(words[1])):
                        notifier.notify(f"STATUS=flood {i}")
                    notifier.notify("STATUS=flood done")
                if words[0] == "run":
                    subprocess.run(shlex.split(line)[1:])
    except FileNotFoundError:
        time.sleep(0.05)  # the test has not made the FIFO yet
