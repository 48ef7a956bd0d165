# shellcheck shell=bash
# The desktop companion's unit: playerctl sees the soundscape Playing with its
# title, and after the daemon is killed with SIGKILL and restarted by systemd,
# the same companion shows it again.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only desktop` runs it alone.

need_playing
say "The desktop companion under the user manager"
[ "$(systemctl_user is-enabled soundscaped-desktop.service)" = enabled ] \
    || die "soundscaped-desktop.service is not enabled for graphical sessions"
# A graphical session would have put the session bus into the manager's environment.
systemctl_user set-environment "DBUS_SESSION_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS"
systemctl_user start soundscaped-desktop.service
wait_for 10 "playerctl to see soundscaped Playing" mpris_is Playing status
wait_for 5 "the media controls to show Ocean waves" mpris_is "Ocean waves" metadata title
COMPANION=$(systemctl_user show -p MainPID --value soundscaped-desktop.service)
say "kill -9 the daemon (pid $PID); systemd restarts it"
kill -KILL "$PID"
wait_for 10 "the companion to notice the daemon is gone" mpris_is Stopped status
restarted() { local p; p=$(systemctl_user show -p MainPID --value soundscaped.service); [ "$p" != 0 ] && [ "$p" != "$PID" ]; }
wait_for 20 "systemd to restart the daemon" restarted
wait_for 15 "the companion to show the restarted daemon Playing" mpris_is Playing status
wait_for 5 "the media controls to show Ocean waves after the restart" mpris_is "Ocean waves" metadata title
[ "$(systemctl_user show -p MainPID --value soundscaped-desktop.service)" = "$COMPANION" ] \
    || die "the companion did not survive the daemon's restart"
[ "$(systemctl_user show -p NRestarts --value soundscaped-desktop.service)" = 0 ] || die "the companion was restarted"
