# shellcheck shell=bash
# `systemctl --user reload soundscaped` keeps it playing, same process, and a
# refused config file fails the reload and changes nothing.
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
if systemctl_user reload soundscaped.service 2>/dev/null; then die "a reload of an invalid file succeeded"; fi
[ "$(systemctl_user is-active soundscaped.service)" = active ] || die "a refused reload stopped the service"
# A file that does not parse would also stop the next start (the desktop stage's restart): take it away.
rm "$XDG_CONFIG_HOME/soundscaped/soundscaped.conf"
