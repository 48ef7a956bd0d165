# shellcheck shell=bash
# A restart of PipeWire and WirePlumber: the same process plays again.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only pipewire-restart` runs it alone.

need_events
say "A restart of PipeWire and WirePlumber"
mark=$(events_mark)
restart_private_pipewire
set_default_sink speaker
await_event 20 "$mark" resumed state=playing
event_after "$mark" serverLost || die "the daemon did not notice PipeWire's restart"
wait_for 10 "the daemon to play on speaker after the restart" playing_on speaker
audible speaker "After PipeWire's restart"
[ "$(systemctl_user show -p MainPID --value soundscaped.service)" = "$PID" ] \
    || die "the daemon was replaced: it must recover from a PipeWire restart by itself"
