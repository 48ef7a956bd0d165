#!/usr/bin/env python3
"""Every repository path the Markdown files name must exist.

The rule: in each tracked *.md file, a word that starts with a top-level
directory of the repository and a slash (`scripts/test`, `Sources/…`,
`docs/performance.md`, `packaging/release/build`) is a path in this
repository, whether it stands in backticks, in prose or as a link target;
so is a relative link target (resolved from the Markdown file's own
directory). Each must name a tracked file or directory. Paths on an
installed system (`/usr/share/…`, `~/.config/…`, `$XDG_RUNTIME_DIR/…`) do
not start with a top-level directory and are not checked; neither are
names without a directory (`Player.swift`).

Within a word: a trailing `:LINE` or `:LINE-LINE` is dropped; `*`, `?` and
a `<placeholder>` match any characters within one path component; `...`
and `…` at the end stand for anything below.

A path the documents may name without it being in git (a file a build
makes) goes in scripts/check-doc-paths.allow, one glob a line, with a
comment saying why.

Usage: scripts/check-doc-paths.py [REPOSITORY]   (default: this one)
"""
import fnmatch
import os
import re
import subprocess
import sys


def tracked(root):
    files = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                           capture_output=True).stdout.decode().split("\0")
    files = [f for f in files if f]
    directories = {os.path.dirname(f) for f in files}
    for directory in list(directories):
        while directory:
            directory = os.path.dirname(directory)
            directories.add(directory)
    directories.discard("")
    return set(files), directories


def allowed_globs(root):
    path = os.path.join(root, "scripts", "check-doc-paths.allow")
    globs = []
    with open(path, encoding="utf-8") as allow:
        for line in allow:
            line = line.split("#", 1)[0].strip()
            if line:
                globs.append(line)
    return globs


def as_pattern(word):
    """The word as an fnmatch pattern (None when it has no wildcard)."""
    word = re.sub(r"(\.\.\.|…)$", "*", word)
    word = re.sub(r"<[^>/]*>", "*", word)
    return word if any(c in word for c in "*?[") else None


def exists(path, files, directories):
    path = path.rstrip("/")
    pattern = as_pattern(path)
    if pattern is None:
        return path in files or path in directories
    # A pattern matches within path components, and `dir/*` may name anything below dir.
    regex = re.compile(fnmatch.translate(pattern).replace(".*", "[^/]*"))
    below = re.compile(fnmatch.translate(pattern))
    return any(regex.match(p) or (pattern.endswith("*") and below.match(p)) for p in files | directories)


def words(text, top):
    """(line, word) for each repository path a Markdown text names."""
    prefix = "|".join(re.escape(t) for t in sorted(top, key=len, reverse=True))
    repo_word = re.compile(r"(?<![\w./~$@%{-])((?:" + prefix + r")/[^\s`'\"()\[\]{},;|]*)")
    link = re.compile(r"\]\(([^)\s]+)\)")
    for number, line in enumerate(text.splitlines(), 1):
        for match in repo_word.finditer(line):
            yield number, "repo", match.group(1)
        for match in link.finditer(line):
            target = match.group(1)
            if not re.match(r"^[a-z]+:", target) and not target.startswith("#"):
                yield number, "link", target.split("#", 1)[0]


def clean(word):
    word = re.sub(r"[.,;:!?]+$", "", word)            # sentence punctuation
    word = re.sub(r":\d+(-\d+)?$", "", word)          # file:LINE
    return word


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    root = os.path.realpath(root)
    files, directories = tracked(root)
    top = {p.split("/", 1)[0] for p in files if "/" in p}
    allow = allowed_globs(root)
    missing = []
    for document in sorted(f for f in files if f.endswith(".md")):
        with open(os.path.join(root, document), encoding="utf-8") as handle:
            text = handle.read()
        for number, kind, word in words(text, top):
            path = clean(word)
            if kind == "link":
                path = os.path.normpath(os.path.join(os.path.dirname(document), path))
            if not path or path.startswith("..") or any(fnmatch.fnmatch(path, glob) for glob in allow):
                continue
            entry = f"{document}:{number}: {path}"
            if entry not in missing and not exists(path, files, directories):
                missing.append(entry)
    for line in missing:
        print(line)
    if missing:
        print(f"{len(missing)} path(s) named in the documentation do not exist (see scripts/check-doc-paths.py)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
