#!/usr/bin/env python3
"""The release build's code layout: the committed profile, the linker script made from it, and the
probe that makes a fresh profile (packaging/release/build, packaging/release/profile, scripts/check-layout).

  layout.py script PROFILE OUT --bin DIR [--toolchain DIR]
                                         the linker script that places PROFILE's sections first
  layout.py record BINARY PLAIN_MAP LAYOUT_DIR PROFILE --bin DIR [--toolchain DIR]
                                         right after the link (PLAIN_MAP: the map of the same link without the
                                         layout): check that BINARY's hot code is exactly PROFILE's sections of
                                         this link; write down its build ID, hot size and the profile's hash in
                                         LAYOUT_DIR/layout.json
  layout.py verify BINARY LAYOUT_DIR PROFILE
                                         BINARY is the binary recorded there, linked with this PROFILE
  layout.py build-id BINARY              BINARY's GNU build ID
  layout.py readahead-knob FILE          the sysfs file that sets read-ahead for FILE's disk, if writable
  layout.py evict BINARY                 drop BINARY from the page cache; print how many of its code pages stay
  layout.py snapshot PID BINARY OUT [--cached]
                                         which code pages of BINARY process PID maps now (and with --cached,
                                         which the page cache holds), as link addresses (JSON)
  layout.py profile PROBE_MAP OUT RUN_DIR... --bin DIR [--toolchain DIR]
                                         the profile of the probe runs whose snapshots the RUN_DIRs hold
                                         (profile.json, and kept.json when coarse): the sections that ran
  layout.py compare COMMITTED FRESH MAP --bin DIR [--toolchain DIR] [--limit-kb N]
                                         what COMMITTED misses of what FRESH says runs, and what that costs
                                         in the binary MAP describes; exit status 0 when it misses nothing,
                                         3 when what it misses costs at most N KB (default 256), 2 over it

A profile (packaging/release/layout.profile is the committed one) names code sections, not pages or
addresses: "[steady]" (what the daemon runs once it is up) then "[startup]" (what only its startup
runs), each a sorted list of object files, each followed by its sorted sections, one a line, indented
with a tab. An object file is named the way the link map names it, with the two folders that differ
between checkouts and machines written as @bin (the release build's folder) and @toolchain (the Swift
toolchain's root). Nothing in it depends on the checkout's path, a timestamp or the order of a set, so
the same profile gives the same linker script and the same link, byte for byte, wherever it is built.

A fresh profile comes from the probe: soundscaped linked with every code section on a page of its own
(packaging/release/probe.ld), so that a resident page names one section; PROBE_MAP is its link map.
A run's profile.json comes from a probe run whose page cache held none of the probe at the start
and whose read-ahead was off: the pages cached at the end are then exactly the pages that ran
(startup and steady state), and the pages still mapped at the end are what ran since the daemon
released its startup pages (StartupPages), and the cached pages fault-around mapped beside them.
Without those conditions (no root, or a file system without its own read-ahead setting), the kernel
maps 64 KB around each page run and read-ahead fills the cache: the sets are then supersets;
kept.json, a second run with --keep-startup-pages, gives the set of everything that ran. That
profile is coarser, not wrong.

--toolchain defaults to the root of the swift on PATH.
"""
import argparse
import bisect
import ctypes
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")
FAULT_AROUND = 64 * 1024   # the kernel maps this much around a page fault in a file (fault_around_bytes)
GROUPS = ("steady", "startup")


# --- The probe run: which pages ran ---------------------------------------------------------------

def code_segment(binary):
    """The executable PT_LOAD segment: (file offset, file size, link address - file offset)."""
    with open(binary, "rb") as f:
        header = f.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2:
            sys.exit(f"layout: {binary} is not a 64-bit ELF file")
        phoff, = struct.unpack_from("<Q", header, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", header, 0x36)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from("<IIQQQQQQ", table, i * phentsize)
        if p_type == 1 and p_flags & 1:
            return p_offset, p_filesz, p_vaddr - p_offset
    sys.exit(f"layout: {binary} has no code segment")


def cached_pages(binary):
    """File offsets of BINARY's pages that the page cache holds (mincore on a mapping of it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    fd = os.open(binary, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        address = libc.mmap(None, size, 1, 1, fd, 0)   # PROT_READ, MAP_SHARED: maps, reads nothing
        if address in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), f"mmap {binary}")
    finally:
        os.close(fd)
    count = (size + PAGE - 1) // PAGE
    vector = ctypes.create_string_buffer(count)
    result = libc.mincore(ctypes.c_void_p(address), size, vector)
    error = ctypes.get_errno()
    libc.munmap(ctypes.c_void_p(address), size)
    if result != 0:
        raise OSError(error, f"mincore {binary}")
    return [i * PAGE for i, byte in enumerate(vector.raw) if byte & 1]


def mapped_pages(pid, binary):
    """File offsets of BINARY's code pages that process PID has in its page tables (/proc/PID/pagemap)."""
    real, offsets = os.path.realpath(binary), []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) < 6 or fields[5].rstrip("\n") != real or "x" not in fields[1]:
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            pagemap.seek(start // PAGE * 8)
            entries = pagemap.read((end - start) // PAGE * 8)
            base = int(fields[2], 16)
            offsets += [base + i * PAGE for i, (entry,) in enumerate(struct.iter_unpack("<Q", entries)) if entry >> 63]
    if not offsets:
        sys.exit(f"layout: process {pid} maps no code of {real}")
    return offsets


def in_code(binary, offsets):
    """File offsets inside the code segment, as link addresses."""
    start, size, delta = code_segment(binary)
    return sorted(o + delta for o in offsets if start <= o < start + size)


def readahead_knob(path):
    """/sys/class/bdi/MAJ:MIN/read_ahead_kb of the disk PATH is on (a partition's is its disk's)."""
    dev = os.stat(path).st_dev
    name = f"{os.major(dev)}:{os.minor(dev)}"
    candidates = [f"/sys/class/bdi/{name}/read_ahead_kb"]
    block = f"/sys/dev/block/{name}"
    if os.path.exists(os.path.join(block, "partition")):
        parent = open(os.path.join(os.path.realpath(os.path.join(block, "..")), "dev")).read().strip()
        candidates.append(f"/sys/class/bdi/{parent}/read_ahead_kb")
    for knob in candidates:
        if os.path.exists(knob) and os.access(knob, os.W_OK):
            return knob
    return None


# --- Link maps --------------------------------------------------------------------------------------

def read_map(link_map):
    """The map's code: ({output section: (address, size)}, [(address, size, alignment, name, output section)])
    with the input sections in link order. A name is 'path:(section)' or 'archive(member):(section)'."""
    outputs, inputs, current = {}, [], None
    line_re = re.compile(r"\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+(\d+) (\s*)(.*)$")
    with open(link_map) as lines:
        for line in lines:
            m = line_re.match(line.rstrip("\n"))
            if not m:
                continue
            indent, what = len(m.group(4)), m.group(5)
            if indent == 0:
                current = what if what.startswith(".text") else None
                if current:
                    outputs[current] = (int(m.group(1), 16), int(m.group(2), 16))
            elif current and indent == 8:
                inputs.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3)), what, current))
    return outputs, inputs


def split(name):
    """'/path/a.o:(sec)' or '/path/lib.a(member.o):(sec)' as (object file, section)."""
    m = re.match(r"(.*?):\((.*)\)$", name)
    if not m:
        return None, None
    return m.group(1), m.group(2)


def file_pattern(path):
    """An object file as a linker script names it: an archive member as 'archive:member'."""
    m = re.match(r"(.*?)\((.*)\)$", path)
    return f"{m.group(1)}:{m.group(2)}" if m else path


class Places:
    """The two folders a profile names by a token: the release build's and the toolchain's."""

    def __init__(self, bin_dir, toolchain):
        # The build's folder as SwiftPM names it in the link; the toolchain's as the driver finds itself.
        self.prefixes = [("@bin/", bin_dir.rstrip("/") + "/"), ("@toolchain/", os.path.realpath(toolchain) + "/")]

    def relative(self, path):
        for token, prefix in self.prefixes:
            if path.startswith(prefix):
                return token + path[len(prefix):]
        return path

    def absolute(self, path):
        for token, prefix in self.prefixes:
            if path.startswith(token):
                return prefix + path[len(token):]
        return path


def placeable(path, section):
    """What a quoted linker script pattern can name exactly: a real file, no quote or backslash."""
    return path.startswith(("/", "@")) and not any(c in path + section for c in '"\\\n\t')


# --- Profiles -----------------------------------------------------------------------------------------

def read_profile(path):
    """{group: set of (object file, section)}."""
    profile, group, current = {g: set() for g in GROUPS}, None, None
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]") and line[1:-1] in GROUPS:
                group, current = line[1:-1], None
            elif line.startswith("\t") and group and current:
                profile[group].add((current, line[1:]))
            elif not line.startswith("\t") and group:
                current = line
            else:
                sys.exit(f"layout: {path}:{number}: not a profile line: {line!r}")
    profile["startup"] -= profile["steady"]
    return profile


PROFILE_HEADER = """\
# The code layout of the release soundscaped: the code sections packaging/release/build places
# first, what the daemon runs once it is up ([steady]), then what only its startup runs ([startup]).
# Made by `scripts/check-layout --update` from a run of the release daemon through a day of use on a
# private graph (packaging/release/profile); CI (scripts/check-layout) profiles every build afresh and
# fails when this no longer covers what runs (docs/performance.md, "Code layout"). Not edited by hand.
# Object files as the link map names them: @bin is the release build's folder, @toolchain the Swift
# toolchain's root. Sorted, so a regeneration's diff is what came and went.
"""


def write_profile(profile, out):
    with open(out, "w", encoding="utf-8") as f:
        f.write(PROFILE_HEADER)
        for group in GROUPS:
            f.write(f"[{group}]\n")
            files = {}
            for path, section in profile[group]:
                files.setdefault(path, []).append(section)
            for path in sorted(files):
                f.write(path + "\n")
                f.writelines(f"\t{section}\n" for section in sorted(files[path]))


def touched(sections, addresses):
    """Names of the sections a page at one of ADDRESSES overlaps (ADDRESSES sorted)."""
    names = set()
    for start, size, _, name, _ in sections:
        i = bisect.bisect_left(addresses, start - PAGE + 1)
        if size and i < len(addresses) and addresses[i] < start + size:
            names.add(name)
    return names


def run_sets(probe, run_dir):
    """(steady, everything) of one probe run: the section names its snapshots' pages hold."""
    shot = json.load(open(os.path.join(run_dir, "profile.json")))
    steady = touched(probe, shot["mapped"])
    if shot["cached"] is not None:
        everything = touched(probe, shot["cached"])
    else:
        everything = touched(probe, json.load(open(os.path.join(run_dir, "kept.json")))["mapped"])
    return steady, everything | steady, shot["cached"] is not None


def make_profile(probe_map, out, run_dirs, places):
    """The profile of one or more probe runs: what ran in any (steady if it was steady in any). What
    one run maps once the daemon is up varies a little with timing (docs/performance.md): the union
    of a few runs is what a regeneration commits, so that the next one changes little."""
    _, probe = read_map(probe_map)
    steady, everything, precise = set(), set(), True
    for run_dir in run_dirs:
        run_steady, run_everything, run_precise = run_sets(probe, run_dir)
        steady, everything, precise = steady | run_steady, everything | run_everything, precise and run_precise
    profile = {g: set() for g in GROUPS}
    for name in everything:
        path, section = split(name)
        if path is None:
            continue
        entry = (places.relative(path), section)
        if placeable(*entry):
            profile["steady" if name in steady else "startup"].add(entry)
    if not profile["steady"]:
        sys.exit(f"layout: the probe runs {' '.join(run_dirs)} name no code section of the probe: no profile")
    write_profile(profile, out)
    print(f"profile ({'precise' if precise else 'coarse'}, {len(run_dirs)} run{'s' * (len(run_dirs) > 1)}): "
          f"steady state {len(profile['steady'])} sections, startup {len(profile['startup'])}", file=sys.stderr)


def profile_hash(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


# --- The linker script ----------------------------------------------------------------------------------

def script_lines(profile):
    """The linker script's lines: (group, object file, sections), steady then startup, files sorted."""
    lines = []
    for group in GROUPS:
        files = {}
        for path, section in profile[group]:
            files.setdefault(path, set()).add(section)
        lines += [(group, path, files[path]) for path in sorted(files)]
    return lines


def script(profile_path, out, places):
    """One line per object file: lld places what a line names in the link's input order, line after
    line. Every name is quoted, so it is matched exactly, spaces and all (code without a symbol, such
    as value witnesses and metadata completion, is placed as exactly as a named function). The paths
    are this build's; nothing else in the script varies."""
    lines = [f'    "{file_pattern(places.absolute(path))}"({" ".join(chr(34) + s + chr(34) for s in sorted(sections))})\n'
             for _, path, sections in script_lines(read_profile(profile_path))]
    with open(out, "w") as f:
        f.write("/* Made by packaging/release/build from the committed profile, packaging/release/layout.profile\n"
                "   (scripts/layout.py): the code the daemon runs once it is up, then the code only its startup\n"
                "   runs, then everything else (lld's default layout, which INSERT keeps). */\n"
                "SECTIONS {\n  .text.hot : {\n")
        f.writelines(lines)
        f.write("  }\n}\nINSERT BEFORE .text;\n")


# --- Checking a link against its profile ------------------------------------------------------------------

def build_id(binary):
    """The GNU build ID note (lld hashes the output: the same inputs and layout give the same ID)."""
    out = subprocess.run(["readelf", "-n", binary], capture_output=True, text=True, check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


def hot_section_size(binary):
    out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 6 and fields[1] == ".text.hot":
            return int(fields[5], 16)
    return 0


def placement(profile, inputs, places):
    """The hot part as lld lays out the script made from PROFILE, given the link's input sections in
    link order (a map of the same link without the layout): line after line (one a file, in the
    script's order), the sections a line names in input order. Per group, the input sections placed,
    and the hot part's size."""
    by_file = {}
    for index, (_, size, align, name, _) in enumerate(inputs):
        path, section = split(name)
        by_file.setdefault(path, []).append((index, section, size, align, name))
    placed, size = {g: [] for g in GROUPS}, 0
    for group, path, sections in script_lines(profile):
        for _, section, length, align, name in by_file.get(places.absolute(path), []):
            if section in sections:
                size = (size + align - 1) // align * align + length
                placed[group].append((name, length))
    return placed, size


def describe(summary):
    part = lambda g: f"{summary[g]['sections']} sections, {summary[g]['bytes'] / 1024:.0f} KB"
    text = (f"code layout: steady state {part('steady')}; startup {part('startup')}; "
            f"of {summary['code_bytes'] / 1048576:.1f} MB of code")
    if summary["absent"]:
        text += f"; {summary['absent']} sections of the profile are not in this link"
    return text


def record(binary, plain_map, layout_dir, profile_path, places):
    """BINARY was just linked with the layout of PROFILE; PLAIN_MAP is the map of the same link without
    it. Its hot part must be exactly as large as the profile's sections in this link add up to, laid
    out as lld does: then it holds them, and nothing else."""
    _, inputs = read_map(plain_map)
    profile = read_profile(profile_path)
    placed, size = placement(profile, inputs, places)
    if hot_section_size(binary) != size:
        print(f"error: {binary}: its hot code is {hot_section_size(binary)} bytes, the profile's sections in this "
              f"link are {size}: the link did not apply packaging/release/build's layout", file=sys.stderr)
        return 1
    count = sum(len(placed[g]) for g in GROUPS)
    summary = {
        "steady": {"sections": len(placed["steady"]), "bytes": sum(n for _, n in placed["steady"])},
        "startup": {"sections": len(placed["startup"]), "bytes": sum(n for _, n in placed["startup"])},
        "absent": max(sum(len(profile[g]) for g in GROUPS) - count, 0),
        "code_bytes": sum(s for _, s, _, _, _ in inputs),
        "hot_size": size,
        "profile_sha256": profile_hash(profile_path),
        "build_id": build_id(binary),
    }
    json.dump(summary, open(os.path.join(layout_dir, "layout.json"), "w"), indent=1, sort_keys=True)
    print(describe(summary) + f"; {binary} is linked with it", file=sys.stderr)
    return 0


def verify(binary, layout_dir, profile_path):
    path = os.path.join(layout_dir, "layout.json")
    if not os.path.exists(path):
        print(f"error: no code layout in {layout_dir}: packaging/release/build makes one", file=sys.stderr)
        return 1
    summary = json.load(open(path))
    if summary["profile_sha256"] != profile_hash(profile_path):
        print(f"error: {binary} was linked with another profile than {profile_path}: "
              "build it with packaging/release/build", file=sys.stderr)
        return 1
    identity, size = build_id(binary), hot_section_size(binary)
    if identity != summary["build_id"] or size != summary["hot_size"]:
        print(f"error: {binary} (build ID {identity}) is not the binary this layout was made for "
              f"({summary['build_id']}): build it with packaging/release/build", file=sys.stderr)
        return 1
    print(describe(summary) + f"; {binary} is linked with it")
    return 0


# --- A fresh profile against the committed one ---------------------------------------------------------

def windows(spans):
    """The fault-around windows (64 KB, aligned) that code at these (address, size) spans lies in."""
    return {w for start, size in spans for w in range(start // FAULT_AROUND, (start + max(size, 1) - 1) // FAULT_AROUND + 1)}


def compare(committed_path, fresh_path, link_map, places, limit_kb):
    """What the committed profile misses of what a fresh run of this build says runs, in the binary the
    committed profile laid out (MAP: its link map). Code the daemon runs outside the hot part brings
    its 64 KB window in (fault-around): the windows such code lies in, beyond those the hot part fills
    anyway, are what the staleness costs. An estimate, deterministic for a given pair of profiles;
    scripts/bench memory --fresh measures it. Held to the limit: code that runs and is not in the
    profile at all (what a code change does: a new or renamed function). Reported: steady code in the
    profile's startup part, which a single run's timing moves by tens of sections."""
    committed, fresh = read_profile(committed_path), read_profile(fresh_path)
    outputs, inputs = read_map(link_map)
    by_name = {name: (address, size) for address, size, _, name, _ in inputs}
    everything = lambda p: p["steady"] | p["startup"]
    name = lambda entry: f"{places.absolute(entry[0])}:({entry[1]})"
    spans = lambda entries: [by_name[name(e)] for e in entries if name(e) in by_name]

    hot_start, hot_size = outputs.get(".text.hot", (0, 0))
    steady_windows = windows(spans(committed["steady"]))         # resident once the daemon is up
    hot_windows = windows([(hot_start, hot_size)]) if hot_size else set()   # resident at the peak
    missed_steady = fresh["steady"] - committed["steady"]
    missed = everything(fresh) - everything(committed)
    absent = {e for e in everything(committed) if name(e) not in by_name}
    unused = everything(committed) - everything(fresh) - absent
    steady_extra = windows(spans(missed_steady)) - steady_windows
    peak_extra = windows(spans(missed)) - hot_windows
    kb = lambda ws: len(ws) * FAULT_AROUND // 1024
    summary = {
        "committed": len(everything(committed)), "fresh": len(everything(fresh)), "fresh_steady": len(fresh["steady"]),
        "missed": len(missed), "missed_steady": len(missed_steady),
        "missed_kb": round(sum(size for _, size in spans(missed)) / 1024),
        "unused": len(unused), "absent": len(absent),
        "steady_cost_kb": kb(steady_extra), "peak_cost_kb": kb(peak_extra), "limit_kb": limit_kb,
    }
    print("the committed profile names {committed} sections; a fresh run of this build ran {fresh} ({fresh_steady} once up)\n"
          "  run, and not in the profile: {missed} sections, {missed_kb} KB of code; estimated cost at the peak "
          "{peak_cost_kb} KB (the 64 KB windows they bring in outside the hot part; the limit is {limit_kb} KB)\n"
          "  run once up, and not in the profile's steady part: {missed_steady} sections; estimated cost once up "
          "{steady_cost_kb} KB (which sections a single run maps once up varies with timing: reported, not held "
          "to the limit)\n"
          "  in the profile, not run now: {unused}; not in this link (renamed or gone): {absent}".format(**summary))
    if summary["peak_cost_kb"] > limit_kb:
        return 2
    return 3 if missed or missed_steady else 0


# --- Command line -----------------------------------------------------------------------------------------

def toolchain():
    """The root of the Swift toolchain on PATH (/opt/swift for /opt/swift/usr/bin/swift)."""
    swift = shutil.which("swift")
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(swift)))) if swift else "/"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    places = argparse.ArgumentParser(add_help=False)
    places.add_argument("--bin", required=True)
    places.add_argument("--toolchain", default=toolchain(), help="default: the root of the swift on PATH")
    c = commands.add_parser("script", parents=[places])
    c.add_argument("profile"), c.add_argument("out")
    c = commands.add_parser("record", parents=[places])
    c.add_argument("binary"), c.add_argument("map"), c.add_argument("layout_dir"), c.add_argument("profile")
    c = commands.add_parser("verify")
    c.add_argument("binary"), c.add_argument("layout_dir"), c.add_argument("profile")
    c = commands.add_parser("build-id")
    c.add_argument("binary")
    c = commands.add_parser("readahead-knob")
    c.add_argument("file")
    c = commands.add_parser("evict")
    c.add_argument("binary")
    c = commands.add_parser("snapshot")
    c.add_argument("pid", type=int), c.add_argument("binary"), c.add_argument("out")
    c.add_argument("--cached", action="store_true")
    c = commands.add_parser("profile", parents=[places])
    c.add_argument("probe_map"), c.add_argument("out"), c.add_argument("runs", nargs="+", metavar="RUN_DIR")
    c = commands.add_parser("compare", parents=[places])
    c.add_argument("committed"), c.add_argument("fresh"), c.add_argument("map")
    c.add_argument("--limit-kb", type=int, default=256)
    args = parser.parse_args()

    if args.command == "script":
        script(args.profile, args.out, Places(args.bin, args.toolchain))
    elif args.command == "record":
        return record(args.binary, args.map, args.layout_dir, args.profile, Places(args.bin, args.toolchain))
    elif args.command == "verify":
        return verify(args.binary, args.layout_dir, args.profile)
    elif args.command == "build-id":
        print(build_id(args.binary))
    elif args.command == "readahead-knob":
        knob = readahead_knob(args.file)
        if knob:
            print(knob)
    elif args.command == "evict":
        fd = os.open(args.binary, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
        print(len(in_code(args.binary, cached_pages(args.binary))))
    elif args.command == "snapshot":
        mapped = in_code(args.binary, mapped_pages(args.pid, args.binary))
        cached = in_code(args.binary, cached_pages(args.binary)) if args.cached else None
        json.dump({"mapped": mapped, "cached": cached}, open(args.out, "w"))
    elif args.command == "profile":
        make_profile(args.probe_map, args.out, args.runs, Places(args.bin, args.toolchain))
    elif args.command == "compare":
        return compare(args.committed, args.fresh, args.map, Places(args.bin, args.toolchain), args.limit_kb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
