# shellcheck shell=bash
# The installed README's first steps work for someone who installed the package: the
# first command of its "Using it", as written, succeeds in the user's session and the
# soundscape plays.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only readme` runs it alone.

need_socket
say "The README's first steps"
README=$(grep -E '^/usr/share/doc/soundscaped/README\.md(\.gz)?$' "$FILES") || die "the package installs no README.md"
# The first command line of the first sh block under "## Using it", without its comment or a final &.
# shellcheck disable=SC2016  # awk's, and the backquotes of a Markdown fence
first=$(zcat -f "$README" | awk '
    /^## Using it/ { section = 1 }
    section && /^```sh/ { block = 1; next }
    block && /^```/ { exit }
    block && NF && !/^[[:space:]]*#/ { sub(/[[:space:]]+#.*/, ""); sub(/[[:space:]]*&[[:space:]]*$/, ""); print; exit }')
[ -n "$first" ] || die "$README has no command under \"Using it\""
# As the user types it, in the session: it must return 0, or (a daemon in the foreground) still run after 5 s.
status=0
in_user_manager timeout 5 bash -c "$first" > "$WORK/first-step.log" 2>&1 || status=$?
say "$first: exit status $status"
case $status in
    0 | 124) ;;
    *) die "the README's first step fails for a user of the package: $first: $(cat "$WORK/first-step.log")" ;;
esac
wait_for 15 "the daemon to play after the README's first step" \
    sh -c '/usr/bin/soundscapectl status | grep -Eq "^State +playing$"'
