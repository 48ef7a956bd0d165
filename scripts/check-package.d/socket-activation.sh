# shellcheck shell=bash
# The first `soundscapectl play` socket-activates /usr/bin/soundscaped, which
# plays a built-in soundscape from /usr/share, recorded at the sink.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only socket-activation` runs it alone.

need_socket
say "Socket activation"
# The first client starts the daemon, and its reply waits until the sound flows.
ctl play | grep -q "^Playing ocean-waves" || die "the first play did not reply 'Playing'"
[ "$(systemctl_user is-active soundscaped.service)" = active ] || die "soundscapectl play did not start the service"
wait_for 15 "the packaged daemon to play" sh -c '/usr/bin/soundscapectl status | grep -Eq "^State +playing$"'
ctl list --json | grep -q '"path":"/usr/share/soundscaped/soundscapes/ocean-waves.opus"' \
    || die "the built-in soundscapes are not the ones in /usr/share"
PID=$(systemctl_user show -p MainPID --value soundscaped.service)
audible speaker "Playing"
# The figures a user's system monitor shows (docs/performance.md): the cgroup's charge
# (page cache included, when the manager may account memory) and the process's own.
say "Playing: MemoryCurrent=$(systemctl_user show -p MemoryCurrent --value soundscaped.service)," \
    "$(grep -E '^(Rss|Pss):' "/proc/$PID/smaps_rollup" | tr -s ' ' | tr '\n' ' ')"
