# shellcheck shell=bash
# Every man page renders and lints clean (mandoc -Tlint, man -l) and is ASCII; a
# command's page says what its --help says, character for character (each phrase of
# the help with a character outside ASCII is in the page, rendered by man and by
# mandoc, in C.UTF-8 and in C, with that character or its ASCII spelling: – -, … ...);
# soundscaped.conf(5) lists the keys; and every link between the installed docs
# (README.md, docs/…), every path of the package the docs and pages name, and every
# doc a page names resolves to a file the package installs, compressed or not.
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
    # Outside ASCII a page depends on the reader's locale: groff drops a … in C, mandoc prints <?>.
    if zcat "$page" | LC_ALL=C grep -n '[^[:print:][:space:]]' >&2; then die "$page has characters outside ASCII (above)"; fi
done
MANWIDTH=80 man -l /usr/share/man/man5/soundscaped.conf.5.gz 2>/dev/null | grep -q "signer-command" \
    || die "soundscaped.conf(5) does not list the keys"
# The synopses name what each command takes: no subcommand where it has none (the help
# subcommand swift-argument-parser's dump adds is not one), the daemon's setting flags.
for command in soundscaped soundscaped-desktop soundscapectl; do
    synopsis=$(MANWIDTH=200 man -l "/usr/share/man/man1/$command.1.gz" 2>/dev/null | sed -n '/^SYNOPSIS/,/^DESCRIPTION/p')
    case "$command" in
        soundscapectl) grep -q "subcommand" <<< "$synopsis" || die "$command(1)'s synopsis lost its subcommand: $synopsis" ;;
        *) ! grep -q "subcommand" <<< "$synopsis" || die "$command(1)'s synopsis names a subcommand it has none of: $synopsis" ;;
    esac
    ! MANWIDTH=200 man -l "/usr/share/man/man1/$command.1.gz" 2>/dev/null | grep -q "Show subcommand help information" \
        || die "$command(1) lists swift-argument-parser's help subcommand"
done
grep -q -- "--setting" <<< "$(MANWIDTH=200 man -l /usr/share/man/man1/soundscaped.1.gz 2>/dev/null | sed -n '/^SYNOPSIS/,/^DESCRIPTION/p')" \
    || die "soundscaped(1)'s synopsis does not show the setting flags"
# soundscapectl(1) lists --socket, --version and --help once, as the command's options, not
# again under each subcommand (scripts/install drops those entries: the page says once that
# --socket may stand after the subcommand); its EXIT STATUS is the statuses `soundscapectl
# --help` lists after "Exit status:" (64 among them), not the generic "exits 0 on success".
page=/usr/share/man/man1/soundscapectl.1.gz
rendered=$(LC_ALL=C.UTF-8 MANWIDTH=1000 man -l "$page" 2>/dev/null)
for entry in "--socket path" "--version" "-h, --help"; do
    count=$(grep -cxE "[[:space:]]+$entry" <<< "$rendered" || true)
    [ "$count" = 1 ] || die "soundscapectl(1) lists '$entry' $count times, not once (the subcommands' entries are back?)"
done
statuses=$(/usr/bin/soundscapectl --help | tr '\n' ' ' | sed -e 's/^.*Exit status: //' -e 's/\..*$//' | tr ';' '\n' \
    | sed -n 's/^ *\([0-9][0-9]*\) .*$/\1/p')
grep -qx 64 <<< "$statuses" || die "soundscapectl --help's exit statuses lack 64: $statuses"
exits=$(sed -n '/^EXIT STATUS/,/^[A-Z]/p' <<< "$rendered")
for status in $statuses; do
    grep -qE "^[[:space:]]+${status}[[:space:]]" <<< "$exits" \
        || die "soundscapectl(1)'s EXIT STATUS does not list $status, which --help does: $exits"
done
! grep -q "exits 0 on success" <<< "$rendered" || die "soundscapectl(1) has the generic EXIT STATUS: $exits"
# import and remove are documented with what they take; import-worker, which import runs
# and its help hides, is not there (scripts/install drops it: the generator lists it).
for entry in "import" "remove" "--id id" "--title title" "--credit text" "--replace"; do
    grep -qxE -- "[[:space:]]+$entry([[:space:]].*)?" <<< "$rendered" || die "soundscapectl(1) does not document '$entry'"
done
! grep -q "import-worker" <<< "$rendered" || die "soundscapectl(1) lists import-worker, which is not for people"

# The pages scripts/install generates from a command's help, against that help.
(
    RENDERED=$(mktemp -d)
    trap 'rm -rf "$RENDERED"' EXIT
    WIDE=1000  # no line of a paragraph is broken (or hyphenated) in the renderings
    for command in soundscaped soundscapectl soundscaped-desktop; do
        page=/usr/share/man/man1/$command.1.gz
        for locale in C.UTF-8 C; do
            LC_ALL=$locale MANWIDTH=$WIDE man -l "$page" 2>/dev/null > "$RENDERED/man-$locale"
            zcat "$page" | LC_ALL=$locale mandoc -T"$([ $locale = C ] && echo ascii || echo utf8)" -O width=$WIDE \
                | col -b > "$RENDERED/mandoc-$locale"
        done
        "/usr/bin/$command" --experimental-dump-help > "$RENDERED/help.json"
        python3 - "$command" "$RENDERED/help.json" "$RENDERED"/{man,mandoc}-{C.UTF-8,C} <<'PYTHON' \
            || die "$page lost characters of $command's help (above)"
import json, os, re, subprocess, sys

command, help_file, renderings = sys.argv[1], sys.argv[2], sys.argv[3:]

def strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings(value)

def ascii_spelling(character):
    result = subprocess.run(["iconv", "-f", "UTF-8", "-t", "ASCII//TRANSLIT"], input=character.encode(),
                            capture_output=True, env={"LC_ALL": "C.UTF-8"})
    return result.stdout.decode() if result.returncode == 0 else None

# Each word of the help with a character outside ASCII, with the words either side of it.
phrases = set()
for text in strings(json.load(open(help_file))):
    words = text.split()
    for index, word in enumerate(words):
        if any(ord(c) > 127 for c in word):
            phrases.add(" ".join(words[max(0, index - 1):index + 2]))

# A phrase as a pattern: such a character as itself or its ASCII spelling, any white space between words.
spellings = {}
def pattern(phrase):
    parts = []
    for c in phrase:
        if c == " ":
            parts.append(r"\s+")
        elif ord(c) > 127:
            if c not in spellings:
                spellings[c] = ascii_spelling(c)
            choices = [c] + ([spellings[c]] if spellings[c] else [])
            parts.append("(?:" + "|".join(re.escape(choice) for choice in choices) + ")")
        else:
            parts.append(re.escape(c))
    return re.compile("".join(parts))

lost = 0
for rendering in renderings:
    text = open(rendering, encoding="utf-8", errors="replace").read()
    for phrase in sorted(phrases):
        if not pattern(phrase).search(text):
            print(f"{command} --help says '{phrase}'; its page does not ({os.path.basename(rendering)})", file=sys.stderr)
            lost += 1
if lost:
    sys.exit(1)
print(f"{command}(1): the {len(phrases)} phrases of its help with characters outside ASCII, in all"
      f" {len(renderings)} renderings")
PYTHON
    done
)

# What the installed pages and docs point to, the package has.
say "Links and paths in the installed docs and man pages"
(
    RENDERED=$(mktemp -d)
    trap 'rm -rf "$RENDERED"' EXIT
    while read -r page; do
        MANWIDTH=1000 man -l "$page" 2>/dev/null > "$RENDERED/$(basename "$page" .gz)"
    done < <(grep -E '^/usr/share/man/.*soundscape' "$FILES")
    python3 - "$FILES" "$RENDERED" <<'PYTHON' || die "the package's docs or man pages point to what it does not install (above)"
import gzip, os, re, sys

files = set(open(sys.argv[1]).read().split())
rendered = sys.argv[2]
DOC = "/usr/share/doc/soundscaped"

def shipped(path):
    return path in files or path + ".gz" in files

def read(path):
    return (gzip.open(path, "rt") if path.endswith(".gz") else open(path)).read()

docs = sorted(f for f in files if f.startswith(DOC + "/") and re.search(r"\.md(\.gz)?$", f))
pages = sorted(os.path.join(rendered, name) for name in os.listdir(rendered))
problems = []
links = 0
for doc in docs:
    for target in re.findall(r"\]\(([^)\s]+)\)", read(doc)):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        links += 1
        path = os.path.normpath(os.path.join(os.path.dirname(doc), target.split("#")[0]))
        if not shipped(path):
            problems.append(f"{doc} links to {target}: the package has no {path}")
named = 0
for source in docs + pages:
    text = read(source)
    found = set(re.findall(r"/(?:usr|etc)/[\w./+-]*soundscape[\w./+-]*", text))
    if source in pages:
        # A doc a page names by its place in the source (docs/configuration.md) is under DOC.
        found |= {os.path.join(DOC, path) for path in re.findall(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.md)\b", text)}
    for path in sorted(found):
        named += 1
        if not shipped(os.path.normpath(path.rstrip("."))):
            name = source if source in docs else os.path.basename(source)
            problems.append(f"{name} names {path}: the package has no such file")
for problem in problems:
    print(problem, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"{len(docs)} docs, {len(pages)} man pages: {links} links and {named} paths, all in the package")
PYTHON
)
