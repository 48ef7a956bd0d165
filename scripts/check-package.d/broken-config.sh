# shellcheck shell=bash
# A broken config under the packaged units: every soundscapectl command answers at
# once (within 10 s) with exit status 1 and the daemon's own message (the file, the
# line); the service stays up, not restarted every 2 s; a value out of range and a
# passphrase file others may read are answered the same way; and once mended (the
# passphrase file made private: no config file changes), the next command waits while
# the daemon starts again with it, in the same process, and is served, with no
# `systemctl reset-failed`.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only broken-config` runs it alone.

need_playing
say "A broken config under the packaged units"
CONFIG=$XDG_CONFIG_HOME/soundscaped/soundscaped.conf
mkdir -p "$(dirname "$CONFIG")"
# refused COMMAND MESSAGE: soundscapectl COMMAND exits 1 within 10 s, saying MESSAGE.
refused() {
    local started=$SECONDS output status=0
    output=$(timeout 20 /usr/bin/soundscapectl "$1" 2>&1) || status=$?
    [ "$status" = 1 ] || die "soundscapectl $1 with a broken config: exit status $status, not 1: $output"
    [ $((SECONDS - started)) -lt 10 ] || die "soundscapectl $1 took $((SECONDS - started)) s"
    grep -qF -- "$2" <<< "$output" || die "soundscapectl $1 did not say '$2': $output"
}
printf '# mine\nsigner-comand = /bin/true\n' > "$CONFIG"
systemctl_user stop soundscaped.service
refused play "soundscaped.conf: line 2: unknown key 'signer-comand' (did you mean 'signer-command'?)"
for command in status list volume; do refused "$command" "line 2: unknown key 'signer-comand'"; done
[ "$(systemctl_user show -p ActiveState --value soundscaped.service)" = active ] \
    || die "the service is not active with a broken config: $(systemctl_user show -p ActiveState,SubState,Result --value soundscaped.service | tr '\n' ' ')"
[ "$(systemctl_user show -p NRestarts --value soundscaped.service)" = 0 ] || die "the service was restarted"
unconfigured=$(systemctl_user show -p MainPID --value soundscaped.service)
systemctl_user show -p StatusText --value soundscaped.service | grep -q "^Not configured: .*line 2: unknown key" \
    || die "systemctl status does not say what is wrong: $(systemctl_user show -p StatusText --value soundscaped.service)"
say "  answered at once, exit 1, the line named; active, not restarted; systemctl status says it"

printf 'cache-size = 99999999\n' > "$CONFIG"
refused status "line 1: cache-size expects a whole number from 0 to 1048576, got '99999999'"
passphrase=$WORK/passphrase
printf 'secret\n' > "$passphrase"
chmod 0644 "$passphrase"
printf 'signer-command = /bin/sh -c "exec sleep 1000"\nsigner-stdin = file:%s\n' "$passphrase" > "$CONFIG"
refused status "line 2: signer-stdin file:$passphrase: its group or others have access (mode 0644); chmod 600 it"
refused reload "line 2: signer-stdin file:$passphrase"
[ "$(systemctl_user show -p MainPID --value soundscaped.service)" = "$unconfigured" ] || die "the daemon was restarted"

say "Mended while the CLI waits"
chmod 0600 "$passphrase"
ctl play | grep -q '^Playing' || die "play after the mend did not play"
[ "$(systemctl_user show -p MainPID --value soundscaped.service)" = "$unconfigured" ] \
    || die "the mended daemon is another process (it should start again in place)"
[ "$(systemctl_user show -p NRestarts --value soundscaped.service)" = 0 ] || die "systemd restarted the service"
[ "$(systemctl_user show -p ActiveState --value soundscaped.service)" = active ] || die "the service is not active after the mend"
wait_for 10 "the signer the mended config names to run" \
    sh -c '/usr/bin/soundscapectl status --json | grep -q "\"state\":\"running\""'
audible speaker "Playing after the mend"
say "  same process ($unconfigured), playing, no reset-failed"
rm -f "$CONFIG" "$passphrase"
systemctl_user reload soundscaped.service || die "reload without a config file failed"
# shellcheck disable=SC2034  # PID: the stages after this one (need_playing) read it
PID=$unconfigured
