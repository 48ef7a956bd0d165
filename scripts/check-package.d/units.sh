# shellcheck shell=bash
# The installed units pass `systemd-analyze --user verify`; the package enabled
# soundscaped.socket, which starts, and nothing runs the service before a client asks.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only units` runs it alone.

need_session
say "systemd-analyze --user verify"
# verify checks what the units run, too: it must find /usr/bin/soundscaped. Any complaint fails.
out=$(in_user_manager systemd-analyze --user verify /usr/lib/systemd/user/soundscaped.socket \
      /usr/lib/systemd/user/soundscaped.service /usr/lib/systemd/user/soundscaped-desktop.service 2>&1) \
    || die "systemd-analyze --user verify failed: $out"
[ -z "$out" ] || die "systemd-analyze --user verify complains: $out"
# Each unit names its man pages, which `systemctl --user help UNIT` opens.
for unit in soundscaped.socket soundscaped.service soundscaped-desktop.service; do
    docs=$(systemctl_user show -p Documentation --value "$unit")
    case "$docs" in *man:soundscaped*) ;; *) die "$unit names no man page in Documentation=: $docs" ;; esac
done
systemctl_user daemon-reload
[ "$(systemctl_user is-enabled soundscaped.socket)" = enabled ] || die "soundscaped.socket is not enabled"
systemctl_user start soundscaped.socket
[ "$(systemctl_user is-active soundscaped.service || true)" != active ] || die "the service ran before anyone asked"
# shellcheck disable=SC2034  # need_socket reads it: the socket is started
SOCKET_STARTED=1
