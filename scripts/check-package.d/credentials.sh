# shellcheck shell=bash
# signer-credential = NAME passes on a credential soundscaped.service was given
# (LoadCredential= in a drop-in) to the signer, under the packaged units: as a
# regular user's manager runs them, and as root's does here.
#
# - A regular user's systemd user manager (a user made for the check, its own
#   cgroup and a tmpfs runtime directory, as logind would give it; scripts/user-manager.sh's
#   account manager, TestSupport's SystemdUserManager): the daemon
#   gets $CREDENTIALS_DIRECTORY with the credential, and the signer (the tests'
#   secrets-signer.py) finds it in a $CREDENTIALS_DIRECTORY of its own beside the
#   control socket (0500, the file 0400, the same SHA-256), which is removed when
#   the signer stops. systemd 252 (Debian 12) and 257 (Debian 13) both fill it.
# - Root's user manager, as the other stages run it (started outside a booted
#   systemd, in a mount namespace of its own), fills no user unit's credentials
#   on either: systemd-run --user with LoadCredential= shows what it does, and
#   then the daemon, given the drop-in, refuses signer-credential = pass on a
#   reload, naming $CREDENTIALS_DIRECTORY and the credential.
# Runs on Debian 13 too.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only credentials` runs it alone.

say "signer-credential = pass: a credential of soundscaped.service, passed on to the signer"
CRED_FIXTURE=$ROOT/Tests/EndToEndTests/Fixtures/signers/secrets-signer.py
CRED_SECRET="unit-credential-$RANDOM$RANDOM"
CRED_DIGEST="sha256:$(printf %s "$CRED_SECRET" | sha256sum | cut -c1-16)"

# The check under a regular user's manager (scripts/user-manager.sh's account manager),
# for a user made for it; TEARDOWN takes the user and its files away.
CRED_USER=soundscaped-check
CRED_DIR=$(mktemp -d)
chmod 755 "$CRED_DIR"
credentials_teardown() {
    ! id "$CRED_USER" >/dev/null 2>&1 || userdel "$CRED_USER" 2>/dev/null || true
    rm -rf "$CRED_DIR"
}
TEARDOWN+=(credentials_teardown)
id "$CRED_USER" >/dev/null 2>&1 || useradd --system --no-create-home --home-dir "$CRED_DIR/home" --shell /usr/sbin/nologin "$CRED_USER"
mkdir -p "$CRED_DIR/home/.config/soundscaped" "$CRED_DIR/home/.config/systemd/user/soundscaped.service.d" "$CRED_DIR/records"
# Its own copy of the fixture: the checkout may not be readable by other users.
cp "$CRED_FIXTURE" "$CRED_DIR/secrets-signer.py"
chmod 644 "$CRED_DIR/secrets-signer.py"
# No PipeWire or WirePlumber for it (soundscaped.service Wants= PipeWire): nothing here may
# touch a sound device. The daemon runs without sound, and a session still runs its signer.
for unit in pipewire.service pipewire.socket pipewire-pulse.service pipewire-pulse.socket wireplumber.service; do
    ln -s /dev/null "$CRED_DIR/home/.config/systemd/user/$unit"
done
printf '%s' "$CRED_SECRET" > "$CRED_DIR/home/pass"
chmod 600 "$CRED_DIR/home/pass"
printf '[Service]\nLoadCredential=pass:%s\n' "$CRED_DIR/home/pass" \
    > "$CRED_DIR/home/.config/systemd/user/soundscaped.service.d/credential.conf"
printf '%s\n' "signer-command = /usr/bin/python3 $CRED_DIR/secrets-signer.py --credential pass" \
    "signer-credential = pass" "signer-env = FIXTURE_DIR=$CRED_DIR/records" > "$CRED_DIR/home/.config/soundscaped/soundscaped.conf"
chown -R "$CRED_USER:" "$CRED_DIR/home" "$CRED_DIR/records"
need_session   # the graph, whose soundscape-bench starts the user's manager too
env -i PATH=/usr/bin:/bin HOME="$CRED_DIR/home" XDG_RUNTIME_DIR="$CRED_DIR/runtime" \
    SOUNDSCAPE_TEST_GRAPH="$SOUNDSCAPE_TEST_GRAPH" env -0 > "$CRED_DIR/manager.env"
start_account_manager "$CRED_USER" "$CRED_DIR/manager.env" \
    || die "$CRED_USER's user manager did not start: $(tail -5 "$PRIVATE_GRAPH_DIR/logs/user-manager-$CRED_USER.log")"
CRED_MANAGER_LOG=$PRIVATE_GRAPH_DIR/logs/user-manager-$CRED_USER.log

# credentials_as_user: the check itself, in a subshell (its die ends only it).
credentials_as_user() (
    set -euo pipefail
    local runtime=$CRED_DIR/runtime record directory
    say "A regular user's manager: $(as_account systemctl --version | head -1)"
    as_account systemctl --user start soundscaped.socket
    as_account timeout 10 /usr/bin/soundscapectl play >/dev/null 2>&1 || true
    signer_pid() { as_account /usr/bin/soundscapectl status --json | python3 -c 'import json, sys; print((json.load(sys.stdin)["signer"] or {}).get("pid") or "")'; }
    wait_for 15 "the signer to record its credential" sh -c "ls '$CRED_DIR/records' | grep -q '\\.secrets\$'" \
        || die "the signer recorded nothing; daemon: $(as_account systemctl --user status soundscaped.service 2>&1 | tail -5)"
    record=$(cat "$CRED_DIR/records/$(signer_pid).secrets")
    grep -qx "credential pass $CRED_DIGEST mode 0400" <<< "$record" || die "the signer did not get the unit's credential: $record"
    directory=$(sed -n 's/^directory \(.*\) mode 0500$/\1/p' <<< "$record")
    [[ $directory == "$runtime/soundscaped/control.sock.signer-"*".credentials" ]] \
        || die "the signer's \$CREDENTIALS_DIRECTORY is not its own, 0500, beside the socket: $record"
    as_account test -d "$directory" || die "the signer's credentials directory is not there while it runs"
    say "  the signer found the unit's credential (same SHA-256, 0400) in its own $directory (0500)"
    as_account /usr/bin/soundscapectl stop >/dev/null
    # shellcheck disable=SC2317  # run by wait_for
    credentials_gone() { ! as_account test -e "$directory"; }
    wait_for 10 "the signer's credentials directory to be removed when it stopped" credentials_gone
    ! as_account grep -rq "$CRED_SECRET" "$runtime/soundscaped" || die "the secret is in the runtime directory"
    ! grep -q "$CRED_SECRET" "$CRED_MANAGER_LOG" || die "the secret is in the user manager's log"
    as_account systemctl --user stop soundscaped.service soundscaped.socket
)
credentials_as_user || die "signer-credential = pass under a regular user's manager failed"
stop_account_manager
credentials_teardown

say "Root's user manager here: what systemd-run --user gives a unit's LoadCredential="
need_playing
printf '%s' "$CRED_SECRET" > "$WORK/pass"
chmod 600 "$WORK/pass"
# shellcheck disable=SC2016  # expanded by the unit's sh
probe=$(in_user_manager systemd-run --user --wait --pipe -q -p "LoadCredential=pass:$WORK/pass" \
    sh -c 'test -r "$CREDENTIALS_DIRECTORY/pass" && echo filled || echo "empty ($CREDENTIALS_DIRECTORY)"' 2>&1 || true)
say "  $probe"
DROPIN=$XDG_CONFIG_HOME/systemd/user/soundscaped.service.d/credential.conf
mkdir -p "$(dirname "$DROPIN")" "$XDG_CONFIG_HOME/soundscaped"
printf '[Service]\nLoadCredential=pass:%s\n' "$WORK/pass" > "$DROPIN"
systemctl_user daemon-reload
systemctl_user restart soundscaped.service
printf '%s\n' "signer-command = /usr/bin/python3 $CRED_FIXTURE --credential pass" "signer-credential = pass" \
    "signer-env = FIXTURE_DIR=$WORK" > "$XDG_CONFIG_HOME/soundscaped/soundscaped.conf"
if [ "$probe" = filled ]; then
    systemctl_user reload soundscaped.service || die "the daemon refused signer-credential = pass: $(tail -3 "$WORK/daemon.log")"
else
    ! systemctl_user reload soundscaped.service 2>/dev/null || die "signer-credential = pass was taken without the credential"
    message=$(grep "reload.*refused" "$WORK/daemon.log" | tail -1)
    grep -q "signer-credential pass: soundscaped was given no credential 'pass' (\$CREDENTIALS_DIRECTORY, .*, does not have it" \
        <<< "$message" || die "the refused reload does not name the missing credential: $message"
    say "  the daemon refuses it, named: ${message#*refused, the old settings stay: }"
fi
! grep -q "$CRED_SECRET" "$WORK/daemon.log" || die "the secret is in the daemon's log"
rm "$DROPIN" "$XDG_CONFIG_HOME/soundscaped/soundscaped.conf"
systemctl_user daemon-reload
systemctl_user restart soundscaped.service
# shellcheck disable=SC2034  # PID: the stages after read it
PID=$(systemctl_user show -p MainPID --value soundscaped.service)
ctl play >/dev/null
# The restart ended the events' subscription: the stages after follow them anew.
[ -z "$FOLLOWING" ] || follow_events
