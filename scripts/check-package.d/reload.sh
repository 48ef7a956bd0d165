# shellcheck shell=bash
# `systemctl --user reload soundscaped` keeps it playing, same process, and a
# refused config file fails the reload and changes nothing: systemctl says only
# that the job failed (the docs quote it), the unit's log and `soundscapectl
# reload` name the line.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only reload` runs it alone.

need_playing
say "systemctl --user reload soundscaped"
systemctl_user reload soundscaped.service
[ "$(systemctl_user show -p MainPID --value soundscaped.service)" = "$PID" ] || die "the reload replaced the daemon"
ctl status | grep -Eq "^State +playing$" || die "not playing after the reload"
audible speaker "After the reload"
# A refused file fails the reload, and changes nothing.
mkdir -p "$XDG_CONFIG_HOME/soundscaped"
printf 'no-such-key = 1\n' > "$XDG_CONFIG_HOME/soundscaped/soundscaped.conf"
if refused=$(systemctl_user reload soundscaped.service 2>&1); then die "a reload of an invalid file succeeded"; fi
[ "$(systemctl_user is-active soundscaped.service)" = active ] || die "a refused reload stopped the service"
# What docs/systemd.md says the user sees: systemctl names no line, the unit's log (journalctl
# --user -u soundscaped; here its StandardError file) does, and `soundscapectl reload` prints it.
echo "systemctl --user reload, refused: $refused"
[[ "$refused" == "Job for soundscaped.service failed."* ]] || die "systemctl said: $refused"
named="soundscaped.conf: line 1: unknown key 'no-such-key'"
[[ "$refused" != *"$named"* ]] || die "systemctl names the line now: docs/systemd.md says it does not"
grep -F "soundscapectl: the config file was refused; the daemon keeps its settings: " "$WORK/daemon.log" \
    | grep -qF "$named" || die "the unit's log does not name the line (ExecReload's soundscapectl)"
grep -F "refused, the old settings stay: " "$WORK/daemon.log" | grep -qF "$named" \
    || die "the daemon's log does not name the line"
printed=$(ctl reload 2>&1) && die "soundscapectl reload of an invalid file succeeded"
[[ "$printed" == *"$named"* ]] || die "soundscapectl reload does not name the line: $printed"
# The installed docs quote what systemctl printed.
for doc in /usr/share/doc/soundscaped/docs/systemd.md /usr/share/doc/soundscaped/docs/configuration.md \
           /usr/share/man/man5/soundscaped.conf.5.gz; do
    case $doc in *.gz) text=$(MANWIDTH=1000 man -l "$doc" 2>/dev/null) ;; *) text=$(cat "$doc") ;; esac
    tr -s '[:space:]' ' ' <<< "$text" | grep -qF "${refused%%$'\n'*}" || die "$doc does not quote systemctl's: ${refused%%$'\n'*}"
done
# A file that does not parse would also stop the next start (the desktop stage's restart): take it away.
rm "$XDG_CONFIG_HOME/soundscaped/soundscaped.conf"
