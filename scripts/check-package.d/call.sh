# shellcheck shell=bash
# A Communication stream (a call, on the phone sink) silences the soundscape at
# the sink, and the call's end brings it back.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only call` runs it alone.

need_events
say "A Communication stream pauses the soundscape, and its end resumes it"
wav tone "$WORK/call.wav"
mark=$(events_mark)
pw-play --media-role=Communication --target phone "$WORK/call.wav" &
CALL=$!
BACKGROUND+=("$CALL")
await_event 10 "$mark" interrupted cause=communicationStream state=interrupted
wait_for 5 "the soundscape to go silent at the speaker during the call" silent speaker
kill -0 "$CALL" 2>/dev/null || die "the call ended before the check did"
mark=$(events_mark)
kill -TERM "$CALL"
await_event 10 "$mark" resumed state=playing
audible speaker "After the call"
