# shellcheck shell=bash
# Every man page renders and lints clean (mandoc -Tlint, man -l), and
# soundscaped.conf(5) lists the keys.
#
# A stage of scripts/check-package, which sources it and defines what it calls;
# `scripts/check-package --only man-pages` runs it alone.

say "Man pages"
for page in /usr/share/man/man1/soundscaped.1.gz /usr/share/man/man1/soundscapectl.1.gz \
            /usr/share/man/man1/soundscaped-desktop.1.gz /usr/share/man/man5/soundscaped.conf.5.gz; do
    zcat "$page" | mandoc -Tlint -Werror >/dev/null || die "$page: mandoc finds errors"
    out=$(MANWIDTH=80 man -l "$page" 2>&1 >/dev/null) || die "man -l $page failed: $out"
    [ -z "$out" ] || die "man -l $page warns: $out"
    [ "$(MANWIDTH=80 man -l "$page" 2>/dev/null | wc -l)" -gt 20 ] || die "$page renders almost nothing"
done
MANWIDTH=80 man -l /usr/share/man/man5/soundscaped.conf.5.gz 2>/dev/null | grep -q "signer-command" \
    || die "soundscaped.conf(5) does not list the keys"
