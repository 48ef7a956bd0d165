# shellcheck shell=bash
# A switch of the default sink moves the soundscape there, and back.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only default-sink` runs it alone.

need_events
say "A switch of the default sink is followed"
mark=$(events_mark)
set_default_sink headset
await_event 10 "$mark" routeChanged route=headset cause=newDefault
audible headset "On the new default"
silent speaker || die "the old default still gets audio"
mark=$(events_mark)
set_default_sink speaker
await_event 10 "$mark" routeChanged route=speaker cause=newDefault
audible speaker "Back on the first default"
