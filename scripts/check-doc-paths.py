#!/usr/bin/env python3
"""Every repository path the documentation names must exist.

The documentation: each tracked *.md file, and the comments in the code and
scripts under Sources/, Tests/, scripts/ and packaging/ (see COMMENT_ROOTS):
Swift and C `//`, `///` and `/* */` (linker scripts and module maps too),
shell and Python `#`, Python docstrings, Lua `--`, man pages' `.\\"`, and the
`#` lines of unit, desktop and config files. Strings and code are not read.

The rule: a word that starts with a top-level directory of the repository
and a slash (`scripts/test`, `Sources/…`, `docs/performance.md`,
`packaging/release/build`) is a path in this repository, whether it stands
in backticks, in prose or as a link target; so is a relative link target
in Markdown (resolved from the Markdown file's own directory). Each must
name a tracked file or directory. Paths on an installed system
(`/usr/share/…`, `~/.config/…`, `$XDG_RUNTIME_DIR/…`, `$ROOT/scripts/…`) do
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
import ast
import fnmatch
import io
import os
import re
import subprocess
import sys
import tokenize

# Where comments are read, besides every Markdown file.
COMMENT_ROOTS = ("Sources/", "Tests/", "scripts/", "packaging/")


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


def words(lines, top, links):
    """(line, kind, word) for each repository path named in `lines`, (number, text) pairs;
    with `links`, Markdown's relative link targets too."""
    prefix = "|".join(re.escape(t) for t in sorted(top, key=len, reverse=True))
    repo_word = re.compile(r"(?<![\w./~$@%{-])((?:" + prefix + r")/[^\s`'\"()\[\]{},;|]*)")
    link = re.compile(r"\]\(([^)\s]+)\)")
    for number, line in lines:
        for match in repo_word.finditer(line):
            yield number, "repo", match.group(1)
        if not links:
            continue
        for match in link.finditer(line):
            target = match.group(1)
            if not re.match(r"^[a-z]+:", target) and not target.startswith("#"):
                yield number, "link", target.split("#", 1)[0]


def clean(word):
    word = re.sub(r"[.,;:!?]+$", "", word)            # sentence punctuation
    word = re.sub(r":\d+(-\d+)?$", "", word)          # file:LINE
    return word


# The comments of a source file, as (line number, text) pairs: one per line a comment covers.

def c_comments(text, nesting):
    """// and /* */ comments, outside "strings" and 'c' (C) or #"raw strings"# (Swift, where
    block comments nest)."""
    out, i, line, n = [], 0, 1, len(text)

    def emit(start, end, first_line):
        for k, part in enumerate(text[start:end].split("\n")):
            out.append((first_line + k, part))

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            emit(i, end, line)
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if nesting and text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            emit(i, j, line)
            line += text.count("\n", i, j)
            i = j
        elif c == '"' or (c == "#" and nesting and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0)) if nesting else 0
            j = i + hashes
            quotes = '"""' if text.startswith('"""', j) else '"'
            close = quotes + "#" * hashes
            j += len(quotes)
            while j < n and not text.startswith(close, j):
                if text[j] == "\\" and (hashes == 0 or text.startswith("\\" + "#" * hashes, j)):
                    j += 1 + hashes
                j += 1
            j = min(n, j + len(close))
            line += text.count("\n", i, j)
            i = j
        elif c == "'" and not nesting:
            j = i + 1
            while j < n and text[j] not in "'\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def shell_comments(text):
    """# comments: a # that begins a word, outside quotes; here-documents are not read."""
    out, quote, heredocs = [], None, []
    lines = text.split("\n")
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        i = 0
        while i < len(line):
            c = line[i]
            if quote == "'":
                if c == "'":
                    quote = None
            elif quote == '"':
                if c == "\\":
                    i += 1
                elif c == '"':
                    quote = None
            elif c == "\\":
                i += 1
            elif c in "'\"":
                quote = c
            elif c == "#" and (i == 0 or line[i - 1] in " \t;&|()<>"):
                out.append((number, line[i:]))
                break
            elif line.startswith("<<", i) and not line.startswith("<<<", i):
                match = re.match(r"<<-?\s*(['\"]?)([A-Za-z_]\w*)\1", line[i:])
                if match:
                    heredocs.append(match.group(2))
            i += 1
        for end in heredocs:
            while number < len(lines) and lines[number].strip() != end:
                number += 1
            number += 1
        heredocs = []
    return out


def python_comments(text):
    """# comments and docstrings (of the module, its classes and functions)."""
    docstrings = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                docstrings.add((first.value.lineno, first.value.col_offset))
    out = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT or (token.type == tokenize.STRING and token.start in docstrings):
            for k, part in enumerate(token.string.split("\n")):
                out.append((token.start[0] + k, part))
    return out


def lua_comments(text):
    """-- comments, --[[ ]] blocks included, outside strings."""
    out, block = [], False
    for number, line in enumerate(text.split("\n"), 1):
        if block:
            out.append((number, line))
            block = "]]" not in line
            continue
        quote, i = None, 0
        while i < len(line):
            c = line[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = None
            elif c in "'\"":
                quote = c
            elif line.startswith("--", i):
                out.append((number, line[i:]))
                block = line.startswith("--[[", i) and "]]" not in line[i:]
                break
            i += 1
    return out


def roff_comments(text):
    """Comment lines (.\\" and '\\") and the \\" comments at the end of a line."""
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        match = re.search(r'(?:^[.\']|(?<!\\)(?:\\\\)*)\\"', line)
        if match:
            out.append((number, line[match.end():]))
    return out


def line_comments(text):
    """Lines that are comments (# or ;) of unit, desktop and config files."""
    return [(n, line) for n, line in enumerate(text.split("\n"), 1) if re.match(r"\s*[#;]", line)]


def comments(path, text):
    """The comments of the file at `path` (its text `text`); [] for a kind of file not read."""
    name = os.path.basename(path)
    extension = os.path.splitext(name)[1]
    first = text.split("\n", 1)[0]
    if extension in (".swift",):
        return c_comments(text, nesting=True)
    if extension in (".c", ".h", ".modulemap", ".ld", ".exports") or name == "libstdc++.so":
        return c_comments(text, nesting=False)
    if extension == ".py" or re.match(r"#!.*python", first):
        return python_comments(text)
    if extension == ".sh" or re.match(r"#!.*[/ ](ba|da)?sh(\s|$)", first) or first.startswith("# shellcheck shell="):
        return shell_comments(text)
    if extension == ".lua":
        return lua_comments(text)
    if re.fullmatch(r"\.[1-9]", extension):
        return roff_comments(text)
    if extension in (".service", ".socket", ".desktop", ".conf", ".allow"):
        return line_comments(text)
    return []


def documents(root, files):
    """(path, (line number, text) pairs, whether Markdown) for each document read."""
    for path in sorted(files):
        markdown = path.endswith(".md")
        if not markdown and not path.startswith(COMMENT_ROOTS):
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as handle:
                text = handle.read()
        except (UnicodeDecodeError, IsADirectoryError):
            continue
        if markdown:
            yield path, enumerate(text.splitlines(), 1), True
        else:
            yield path, comments(path, text), False


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    root = os.path.realpath(root)
    files, directories = tracked(root)
    top = {p.split("/", 1)[0] for p in files if "/" in p}
    allow = allowed_globs(root)
    missing = []
    for document, lines, markdown in documents(root, files):
        for number, kind, word in words(lines, top, links=markdown):
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
