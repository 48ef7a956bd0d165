# shellcheck shell=bash
# Signers under the packaged units: six as docs/signer.md configures them, one
# speaking sd_notify, and signer-crash-limit = 0.
#
# docs/signer.md's blocks are taken from the page by scripts/doc-config.py, with
# this machine's paths:
# - a bifrost-rs host (signer-stop-signal = SIGINT) is stopped cleanly;
# - a signer reading a passphrase on stdin (signer-stdin = file:) gets it;
# - igloo-server's status endpoint with the built-in HTTP check (signer-health-url,
#   signer-health-json): healthy, unhealthy and down while isConnected is false,
#   restored after;
# - igloo-server's credentials from signer-env-file: both reach it, a changed
#   file reaches the next start, and neither is in the log, events or status;
# - a passphrase from a real GNOME Keyring (secret-tool lookup) on the signer's
#   stdin, in no argument or environment; with the keyring locked, a failed
#   start named in the log, signing down (the cue), and retries;
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

say "igloo-server's credentials from signer-env-file"
# sha16 TEXT: the first 16 hex digits of TEXT's SHA-256, as the stand-ins report them.
sha16() { printf %s "$1" | sha256sum | cut -c1-16; }
group="bfgroup1-check-$RANDOM$RANDOM" share="bfshare1 check $RANDOM$RANDOM"
printf '%s\n' "# check-package" "GROUP_CRED=$group" "SHARE_CRED=\"$share\"" > "$WORK/signers/credentials.env"
chmod 600 "$WORK/signers/credentials.env"
use_config igloo-server-env-file /usr/local/bin/igloo-server \
    "/usr/bin/python3 $FIXTURES/signers/igloo-server.py --port $port --disconnected-if $WORK/signers/igloo-disconnected --credentials-from-env" \
    127.0.0.1:8002 "127.0.0.1:$port" /home/me/.config/igloo-server/credentials.env "$WORK/signers/credentials.env"
mark=$(events_mark)
ctl play >/dev/null
await_event 10 "$mark" signerStarted
igloo_credentials() { curl -fsS "http://127.0.0.1:$port/api/status" | python3 -c 'import json, sys; c = json.load(sys.stdin)["credentials"]; print(c["GROUP_CRED"], c["SHARE_CRED"])'; }
igloo_has() { [ "$(igloo_credentials)" = "$(sha16 "$1") $(sha16 "$2")" ]; }
wait_for 10 "igloo-server to report the env file's credentials" igloo_has "$group" "$share"
igloo_healthy() { [ "$(signer_field health)" = healthy ]; }
wait_for 10 "igloo-server's health check to pass" igloo_healthy
# Read at every start: a new SHARE_CRED reaches the next instance without a reload.
new_share="bfshare1-rotated-$RANDOM$RANDOM"
printf '%s\n' "GROUP_CRED=$group" "SHARE_CRED=$new_share" > "$WORK/signers/credentials.env"
mark=$(events_mark)
kill "$(signer_field pid)"
await_event 10 "$mark" signerStarted
wait_for 10 "the next start to read the env file anew" igloo_has "$group" "$new_share"
for secret in "$group" "$share" "$new_share"; do
    ! grep -qF "$secret" "$WORK/daemon.log" "$EVENTS" || die "a credential is in the daemon's log or its events"
    ! ctl status --json | grep -qF "$secret" || die "a credential is in soundscapectl status --json"
done
say "  the signer got both (SHA-256 from its status endpoint); neither is in the log, the events or the status"

say "A passphrase from the desktop keyring (GNOME Keyring, secret-tool)"
# A real gnome-keyring-daemon on the session's bus, its login keyring in the check's home,
# unlocked with a known password (as a desktop login does); a control directory of its
# own, apart from any the user manager's gnome-keyring-daemon.socket holds.
keyring_password="keyring-$RANDOM$RANDOM" passphrase="keyring passphrase $RANDOM$RANDOM"
mkdir -p "$WORK/keyring"
start_keyring() {
    # shellcheck disable=SC2086  # $1: the options, or none
    printf '%s' "$keyring_password" | DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus \
        gnome-keyring-daemon --foreground --replace --components=secrets --control-directory="$WORK/keyring" $1 \
        > "$WORK/keyring/daemon.log" 2>&1 &
    KEYRING=$!
    BACKGROUND+=("$KEYRING")
    wait_for 10 "gnome-keyring-daemon on the bus" busctl --user --address="unix:path=$XDG_RUNTIME_DIR/bus" status org.freedesktop.secrets
}
start_keyring --unlock
printf '%s' "$passphrase" | DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus \
    secret-tool store --label='my-signer passphrase' service my-signer || die "secret-tool could not store the passphrase"
use_config keyring-passphrase /usr/local/bin/my-signer "/usr/bin/python3 $FIXTURES/signers/passphrase-signer.py"
mark=$(events_mark)
ctl play >/dev/null
await_event 10 "$mark" signerStatus "message=unlocked (passphrase sha256 $(sha16 "$passphrase"))"
group_of_signer=$(ps -o pgid= -p "$(signer_field pid)" | tr -d ' ')
for pid in $(pgrep -g "$group_of_signer"); do
    ! grep -qF "$passphrase" "/proc/$pid/cmdline" "/proc/$pid/environ" 2>/dev/null \
        || die "the passphrase is in the arguments or environment of $(tr '\0' ' ' < "/proc/$pid/cmdline")"
done
say "  the signer read the keyring's passphrase on stdin; no argument or environment in its group holds it"
# After an autologin the login keyring stays locked: with no prompt possible the lookup fails.
kill "$KEYRING"
wait "$KEYRING" 2>/dev/null || true
ctl stop >/dev/null
# The same block, with a short grace (down is news in 2 s) and a slower first retry.
TIMINGS=("signer-start-grace = 2" "signer-restart-delay = 0.5")
use_config keyring-passphrase /usr/local/bin/my-signer "/usr/bin/python3 $FIXTURES/signers/passphrase-signer.py"
start_keyring ""
mark=$(events_mark)
ctl play >/dev/null
await_event 10 "$mark" signerExited "message=exited with status 1"
grep -q "stderr: no passphrase from the keyring (locked?)" "$WORK/daemon.log" \
    || die "a locked keyring's failed start is not named in the log"
await_event 10 "$mark" signerDown
await_event 10 "$mark" signerRestarting
ctl status --json | grep -q '"signerDown"' || die "signing is down but the status has no signerDown interruption"
! grep -qF "$passphrase" "$WORK/daemon.log" "$EVENTS" || die "the passphrase is in the daemon's log or its events"
say "  locked: the start fails (named in the log), signing is down, the cue plays, and it is retried"
kill "$KEYRING"
ctl stop >/dev/null

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
