# shellcheck shell=bash
# A JavaScript signer under the packaged units, with no drop-in: Node.js (the
# machine's, else Debian's nodejs) runs the tests' JS signer, which does real JIT
# work, while the soundscape plays; the daemon's own W^X stands (every thread but
# its signer spawner runs under one more seccomp filter); and with
# signer-memory-deny-write-execute = true the same signer dies at start, named in
# status and events with what to change. Runs on Debian 13 too (no signers stage there).
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only jit-signer` runs it alone.

need_playing
need_events
say "A JavaScript signer (Node.js, JIT) under the packaged units"
NODE=$(command -v node || command -v nodejs) || die "no Node.js: install nodejs"
say "Node.js: $NODE $("$NODE" --version)"
JS_DIR=$WORK/js-signer
CONFIG=$XDG_CONFIG_HOME/soundscaped/soundscaped.conf
mkdir -p "$JS_DIR" "$(dirname "$CONFIG")"
js_config() {
    printf '%s\n' "signer-command = $NODE $ROOT/Tests/EndToEndTests/Fixtures/signers/js-signer.mjs" \
        "signer-env = FIXTURE_DIR=$JS_DIR" "signer-crash-limit = 1" "$@" > "$CONFIG"
}
js_config
ctl stop >/dev/null
systemctl_user reload soundscaped.service || die "the daemon refused the JS signer's config: $(tail -3 "$WORK/daemon.log")"
mark=$(events_mark)
ctl play >/dev/null
await_event 10 "$mark" signerStarted
js_pid=$(ctl status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["signer"]["pid"])')
wait_for 30 "the JS signer ($js_pid) to finish its JIT work" test -e "$JS_DIR/$js_pid.js"
[ "$(ctl status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["signer"]["state"])')" = running ] \
    || die "the JS signer is not running after its JIT work"
audible speaker "Playing, with a Node.js signer"
PID=$(systemctl_user show -p MainPID --value soundscaped.service)
python3 - "$PID" <<'PY' || die "the daemon's own W^X does not stand"
import os, sys
pid = sys.argv[1]
threads = []
for task in os.listdir(f"/proc/{pid}/task"):
    fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/task/{task}/status") if ":" in line)
    threads.append((fields["Name"].strip(), int(fields["Seccomp_filters"])))
spawner = [filters for name, filters in threads if name == "soundscaped-spw"]
others = [(name, filters) for name, filters in threads if name != "soundscaped-spw"]
assert len(spawner) == 1, threads
assert others and all(filters == spawner[0] + 1 for _, filters in others), threads
print(f"  {len(others)} threads under the unit's filters and the daemon's W^X ({spawner[0] + 1}); the spawner without it ({spawner[0]})")
PY

say "The same signer under signer-memory-deny-write-execute = true dies at start, named"
js_config "signer-memory-deny-write-execute = true"
ctl stop >/dev/null
systemctl_user reload soundscaped.service || die "the daemon refused signer-memory-deny-write-execute"
mark=$(events_mark)
ctl play >/dev/null
await_event 20 "$mark" signerFailed
last=$(ctl status --json | python3 -c 'import json, sys; s = json.load(sys.stdin)["signer"]; print(s.get("lastExitSignal"), s["lastExit"])')
case $last in
    "SIGTRAP "*"a JIT runtime"*|"SIGSEGV "*"a JIT runtime"*) say "  status: $last" ;;
    *) die "the crash under W^X is not named: $last" ;;
esac
ctl status | grep -q 'SIGTRAP\|SIGSEGV' || die "soundscapectl status does not name the signal"
rm -f "$CONFIG"
ctl stop >/dev/null
systemctl_user reload soundscaped.service || die "the daemon refused an empty config"
