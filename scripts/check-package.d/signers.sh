# shellcheck shell=bash
# Signers under the packaged units: four as docs/signer.md configures them, one
# speaking sd_notify, and signer-crash-limit = 0.
#
# docs/signer.md's blocks are taken from the page by scripts/doc-config.py, with
# this machine's paths:
# - a bifrost-rs host (signer-stop-signal = SIGINT) is stopped cleanly;
# - a signer reading a passphrase on stdin (signer-stdin = file:) gets it;
# - igloo-server's status endpoint with the built-in HTTP check (signer-health-url,
#   signer-health-json): healthy, unhealthy and down while isConnected is false,
#   restored after;
# - a real NIP-46 bunker (nostr-sdk 0.37.0) signs for a NIP-46 app while the
#   soundscape plays; SIGSTOPped, its health check (a sign request) fails, the
#   cue replaces the soundscape at the sink, it is restarted, and signing and
#   the soundscape come back (scripts/check-bunker.py, which prints the timings);
# and, with the tests' fixture signer: sd_notify through python3-sdnotify (starting
# until READY=1, its own NOTIFY_SOCKET and WATCHDOG_USEC, STATUS= in soundscapectl
# status and playerctl metadata, hung when WATCHDOG=1 stops) and
# signer-crash-limit = 0 (an 11th start after 10 quick failures).
# --no-signers leaves it out (scripts/check-package-debian13 says why).
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only signers` runs it alone.

need_playing
need_companion
say "Signers, as docs/signer.md configures them"
FIXTURES=$ROOT/Tests/EndToEndTests/Fixtures
CONFIG=$XDG_CONFIG_HOME/soundscaped/soundscaped.conf
mkdir -p "$(dirname "$CONFIG")" "$WORK/signers"
follow_events
# use_config NAME [FROM TO]...: ends the session, makes docs/signer.md's NAME block (with
# this machine's paths: each FROM replaced by its TO) the config file, followed by the
# TIMINGS lines (short health timings, so the checks take seconds), and reloads, as a
# user who edited the file would; the next play starts the signer the block configures.
use_config() {
    ctl stop >/dev/null
    { python3 scripts/doc-config.py docs/signer.md "$@" && printf '%s\n' "# check-package's timings" "${TIMINGS[@]}"; } \
        > "$CONFIG" || die "docs/signer.md's $1 block could not be taken"
    systemctl_user reload soundscaped.service || die "the daemon refused docs/signer.md's $1 block: $(tail -3 "$WORK/daemon.log")"
}
# event_message MARK REASON: the message of the first event with that reason after line MARK.
event_message() {
    tail -n +"$(($1 + 1))" "$EVENTS" | python3 -c '
import json, sys
print(next((e.get("message") for e in map(json.loads, sys.stdin) if e.get("reason") == sys.argv[1]), ""))' "$2"
}
signer_field() { ctl status --json | python3 -c 'import json, sys; print((json.load(sys.stdin)["signer"] or {}).get(sys.argv[1]))' "$1"; }

say "A bifrost-rs host: signer-stop-signal = SIGINT stops it cleanly"
TIMINGS=()
use_config bifrost-host /usr/local/bin/bifrost-host "/usr/bin/python3 $FIXTURES/signers/bifrost-host.py" \
    /home/me/.config/bifrost/host.toml "$WORK/signers/host.toml"
mark=$(events_mark)
ctl play >/dev/null
await_event 10 "$mark" signerStarted
mark=$(events_mark)
ctl stop >/dev/null
await_event 10 "$mark" signerStopped
event_after "$mark" signerStopped "message=exited with status 0" \
    || die "the bifrost-rs host did not exit cleanly: $(event_message "$mark" signerStopped)"
[ ! -e "$WORK/signers/host.toml.dirty" ] || die "the bifrost-rs host left a dirty-restart marker: $(cat "$WORK/signers/host.toml.dirty")"

say "A signer reading its passphrase on stdin: signer-stdin = file:"
printf 'correct horse battery staple\n' > "$WORK/signers/passphrase"
chmod 600 "$WORK/signers/passphrase"
digest=$(printf 'correct horse battery staple' | sha256sum | cut -c1-16)
use_config passphrase-stdin /usr/local/bin/my-signer "/usr/bin/python3 $FIXTURES/signers/passphrase-signer.py" \
    /home/me/.config/my-signer/passphrase "$WORK/signers/passphrase"
mark=$(events_mark)
ctl play >/dev/null
await_event 10 "$mark" signerStatus "message=unlocked (passphrase sha256 $digest)"

say "igloo-server's status endpoint with the built-in HTTP check (/health/isConnected == true)"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
TIMINGS=("signer-health-interval = 0.5" "signer-health-retries = 2" "signer-health-timeout = 2" "signer-restart-delay = 0.2")
use_config igloo-server /usr/local/bin/igloo-server \
    "/usr/bin/python3 $FIXTURES/signers/igloo-server.py --port $port --disconnected-if $WORK/signers/igloo-disconnected" \
    127.0.0.1:8002 "127.0.0.1:$port"
mark=$(events_mark)
ctl play >/dev/null
await_event 10 "$mark" signerStatus "message=/health/isConnected is true"
[ "$(signer_field health)" = healthy ] || die "igloo-server's check passed but the signer is $(signer_field health)"
mark=$(events_mark)
touch "$WORK/signers/igloo-disconnected"   # 200, with "isConnected": false
await_event 10 "$mark" signerUnhealthy "message=2 failed health checks in a row: /health/isConnected is false, not true"
await_event 5 "$mark" signerDown message=unhealthy
health=$(ctl health 2>&1) && die "soundscapectl health passes while signing is down: $health"
grep -q "FAIL signerAlive: signing is down (unhealthy)" <<< "$health" || die "soundscapectl health does not say signing is down: $health"
mark=$(events_mark)
rm "$WORK/signers/igloo-disconnected"
await_event 10 "$mark" signerHealthy
await_event 5 "$mark" signerRestored

say "A signer speaking sd_notify (python3-sdnotify): READY=1, STATUS= and WATCHDOG=1 under the unit"
# The tests' fixture signer (Tests/EndToEndTests/Fixtures/fixture-signer.py), which
# speaks sd_notify through python3-sdnotify as a signer using it would, and takes
# commands on a FIFO. Under the packaged unit the daemon's own NOTIFY_SOCKET and
# WATCHDOG_USEC (its service's) must not reach the signer: it gets its own.
FIXTURE_DIR=$WORK/signers/notify
mkdir -p "$FIXTURE_DIR"
mkfifo "$FIXTURE_DIR/control"
# fixture COMMAND: one command line to the fixture signer (bounded: it must be reading).
# shellcheck disable=SC2016  # the inner shell expands them
fixture() { timeout 5 sh -c 'printf "%s\n" "$1" > "$2"' sh "$1" "$FIXTURE_DIR/control" || die "the fixture signer took no command"; }
ctl stop >/dev/null
printf '%s\n' "signer-command = /bin/sh -c 'FIXTURE_DIR=$FIXTURE_DIR exec /usr/bin/python3 $FIXTURES/fixture-signer.py --watchdog'" \
    "signer-type = notify" "signer-stdin = null" "signer-liveness-timeout = 2" "signer-start-grace = 30" \
    "signer-restart-delay = 0.2" "signer-stop-timeout = 1" > "$CONFIG"
systemctl_user reload soundscaped.service || die "the daemon refused the notify signer's config: $(tail -3 "$WORK/daemon.log")"
mark=$(events_mark)
ctl play >/dev/null
await_event 10 "$mark" signerStarted
[ "$(signer_field state)" = starting ] || die "a notify signer is $(signer_field state) before READY=1, not starting"
pid=$(signer_field pid)
wait_for 5 "the fixture signer to write its environment" test -s "$FIXTURE_DIR/$pid.env"
grep -q '^NOTIFY_SOCKET=/.*\.signer-[0-9]*\.notify$' "$FIXTURE_DIR/$pid.env" \
    || die "the signer's NOTIFY_SOCKET is not its own: $(grep NOTIFY_SOCKET "$FIXTURE_DIR/$pid.env")"
grep -qx "WATCHDOG_USEC=2000000" "$FIXTURE_DIR/$pid.env" \
    || die "the signer's WATCHDOG_USEC is not signer-liveness-timeout's: $(grep WATCHDOG_USEC "$FIXTURE_DIR/$pid.env")"
mark=$(events_mark)
fixture 'notify READY=1\nSTATUS=3/3 relays'
await_event 10 "$mark" signerReady
[ "$(signer_field state)" = running ] || die "after READY=1 the signer is $(signer_field state), not running"
await_event 5 "$mark" signerStatus "message=3/3 relays"
ctl status | grep -q "Signer says 3/3 relays" || die "soundscapectl status does not show the STATUS= line: $(ctl status)"
name=$(signer_field name)
wait_for 5 "playerctl metadata to show the signer's STATUS= line" mpris_is "$name: 3/3 relays" metadata artist
mark=$(events_mark)
fixture hang   # its WATCHDOG=1 pings stop
await_event 10 "$mark" signerHung
await_event 10 "$mark" signerStarted
[ "$(signer_field pid)" != "$pid" ] || die "the hung signer was not replaced"

say "signer-crash-limit = 0: still restarting after 10 quick failures"
ctl stop >/dev/null
printf '%s\n' "signer-command = /bin/sh -c 'FIXTURE_DIR=$FIXTURE_DIR exec /usr/bin/python3 $FIXTURES/fixture-signer.py --crash-at-start 3'" \
    "signer-crash-limit = 0" "signer-restart-delay = 0.05" "signer-restart-max-delay = 0.2" > "$CONFIG"
systemctl_user reload soundscaped.service || die "the daemon refused signer-crash-limit = 0: $(tail -3 "$WORK/daemon.log")"
mark=$(events_mark)
ctl play >/dev/null
eleventh() { [ "$(tail -n +"$((mark + 1))" "$EVENTS" | grep -c '"reason":"signerStarted"')" -ge 11 ]; }
wait_for 20 "the signer's 11th start" eleventh
! event_after "$mark" signerFailed || die "signer-crash-limit = 0 gave up: signerFailed"
ctl stop >/dev/null

say "A NIP-46 bunker (nostr-sdk 0.37.0), SIGSTOPped while the soundscape plays"
"$TEST_VENV/bin/python3" "$FIXTURES/nip46/relay.py" "$WORK/signers/relay-url" > "$WORK/signers/relay.log" 2>&1 &
BACKGROUND+=($!)
wait_for 10 "the NIP-46 relay" test -s "$WORK/signers/relay-url"
relay=$(cat "$WORK/signers/relay-url")
"$TEST_VENV/bin/python3" "$FIXTURES/nip46/bunker.py" keys "$WORK/signers/keys.json"
uri=$("$TEST_VENV/bin/python3" "$FIXTURES/nip46/bunker.py" uri --keys "$WORK/signers/keys.json" --relay "$relay" \
      --secret CHANGE-ME)
pubkey=${uri#bunker://}; pubkey=${pubkey%%\?*}
# A check every 2 s, each at most 2 s (Python needs ~0.3 s to load nostr-sdk), 2 in a
# row failing: the SIGSTOP is noticed within interval × retries + timeout = 6 s.
TIMINGS=("signer-health-interval = 2" "signer-health-retries = 2" "signer-health-timeout = 2"
         "signer-restart-delay = 1" "signer-stop-timeout = 2")
use_config nip46-bunker /opt/nip46/venv/bin/python3 "$TEST_VENV/bin/python3" /opt/nip46/ "$FIXTURES/nip46/" \
    /home/me/.config/nip46/keys.json "$WORK/signers/keys.json" wss://relay.example "$relay" BUNKER-PUBKEY "$pubkey"
mark=$(events_mark)
ctl play >/dev/null
await_event 10 "$mark" signerStarted
python3 scripts/check-bunker.py --python "$TEST_VENV/bin/python3" --sign "$FIXTURES/nip46/sign.py" --uri "$uri" \
    --sink speaker --interval 2 --retries 2 --timeout 2
ctl stop >/dev/null
