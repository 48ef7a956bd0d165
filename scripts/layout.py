#!/usr/bin/env python3
"""The release build's code layout, made from the commit being built (packaging/release/build).

  layout.py readahead-knob FILE          the sysfs file that sets read-ahead for FILE's disk, if writable
  layout.py evict BINARY                 drop BINARY from the page cache; print how many of its code pages stay
  layout.py snapshot PID BINARY OUT      which code pages of BINARY process PID maps now, and which the page
                                         cache holds (JSON, as link addresses)
  layout.py script PROBE_MAP PLAIN_MAP OUT_DIR SNAPSHOT [KEPT_SNAPSHOT]
                                         write OUT_DIR/soundscaped.ld (the layout) and OUT_DIR/layout.json
  layout.py placeholder OUT              a linker script that places nothing (before the first layout)
  layout.py verify BINARY LAYOUT_DIR [--record]
                                         check that BINARY was linked with that layout and print what it holds;
                                         --record (the build, right after the link) writes down BINARY's build ID

PROBE_MAP is the link map (lld -Map) of the probe: soundscaped linked with every code section
on a page of its own (packaging/release/probe.ld), so that a resident page names one section.
PLAIN_MAP is the map of the same link without a layout, which has each section's own alignment.

SNAPSHOT comes from a probe run whose page cache held none of the probe at the start and whose
read-ahead was off: the pages cached at the end are then exactly the pages that ran (startup and
steady state), and the pages still mapped at the end are what ran since the daemon released its
startup pages (StartupPages). Without those conditions (no root, or a file system without its
own read-ahead setting), the kernel maps 64 KB around each page run (fault-around) and read-ahead
fills the cache: the sets are then supersets; KEPT_SNAPSHOT, a second run with
--keep-startup-pages, gives the set of everything that ran. That layout is coarser, not wrong.
"""
import bisect
import ctypes
import json
import os
import re
import struct
import subprocess
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")
PLACEHOLDER = "SECTIONS {\n  .text.hot : { }\n}\nINSERT BEFORE .text;\n"


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


def code_sections(link_map):
    """The map's code input sections in link order: (address, size, alignment, name)."""
    sections, in_text = [], False
    line_re = re.compile(r"\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+(\d+) (\s*)(.*)$")
    with open(link_map) as lines:
        for line in lines:
            m = line_re.match(line.rstrip("\n"))
            if not m:
                continue
            indent, what = len(m.group(4)), m.group(5)
            if indent == 0:
                in_text = what.startswith(".text")
            elif in_text and indent == 8:
                sections.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3)), what))
    return sections


def touched(sections, addresses):
    """Names of the sections a page at one of ADDRESSES overlaps (ADDRESSES sorted)."""
    names = set()
    for start, size, _, name in sections:
        i = bisect.bisect_left(addresses, start - PAGE + 1)
        if size and i < len(addresses) and addresses[i] < start + size:
            names.add(name)
    return names


def split(name):
    """'/path/a.o:(sec)' or '/path/lib.a(member.o):(sec)' as (linker script file pattern, section)."""
    m = re.match(r"(.*?)(?:\((.*)\))?:\((.*)\)$", name)
    path, member, section = m.groups()
    return (f"{path}:{member}" if member else path), section


def quotable(name):
    return '"' not in name and "\\" not in name


def script(probe_map, plain_map, out_dir, snapshot, kept=None):
    probe = code_sections(probe_map)
    shot = json.load(open(snapshot))
    steady = touched(probe, shot["mapped"])
    if shot["cached"] is not None:
        mode, everything = "precise", touched(probe, shot["cached"])
    else:
        mode, everything = "coarse", touched(probe, json.load(open(kept))["mapped"])
    everything |= steady
    # The plain link has the same input sections, in the same order, with their own alignment.
    plain = code_sections(plain_map)
    groups = ([s for s in plain if s[3] in steady], [s for s in plain if s[3] in everything and s[3] not in steady])
    if not groups[0]:
        sys.exit(f"layout: the profile {snapshot} names no code section of the link: nothing to lay out")
    unplaceable = [s for group in groups for s in group if not quotable(s[3])]
    groups = tuple([s for s in group if quotable(s[3])] for group in groups)

    # One line per run of sections from one file; lld places what a line matches in input order,
    # which is the plain link's order, so the hot part's size can be worked out here and checked
    # against the binary (verify). Every name is quoted: matched exactly, spaces and all.
    lines, hot_size = [], 0
    for group in groups:
        for _, size, align, name in group:
            hot_size = (hot_size + align - 1) // align * align + size
            path, section = split(name)
            if lines and lines[-1][0] == path:
                lines[-1][1].append(section)
            else:
                lines.append((path, [section]))
    with open(os.path.join(out_dir, "soundscaped.ld"), "w") as out:
        out.write("/* Made by packaging/release/build from a run of this very build (scripts/layout.py):\n"
                  "   the code the daemon runs once it is up, then the code only its startup runs, then\n"
                  "   everything else (lld's default layout, which INSERT keeps). */\n"
                  "SECTIONS {\n  .text.hot : {\n")
        out.writelines(f'    "{path}"({" ".join(chr(34) + s + chr(34) for s in sections)})\n'
                       for path, sections in lines)
        out.write("  }\n}\nINSERT BEFORE .text;\n")
    summary = {
        "mode": mode,
        "steady": {"sections": len(groups[0]), "bytes": sum(s[1] for s in groups[0])},
        "startup": {"sections": len(groups[1]), "bytes": sum(s[1] for s in groups[1])},
        "code_bytes": sum(s[1] for s in plain),
        "unplaceable": [s[3] for s in unplaceable],
        "hot_size": hot_size,
        "build_id": None,
    }
    json.dump(summary, open(os.path.join(out_dir, "layout.json"), "w"), indent=1)
    print(describe(summary), file=sys.stderr)


def describe(summary):
    kb = lambda part: f"{summary[part]['sections']} sections, {summary[part]['bytes'] / 1024:.0f} KB"
    return (f"code layout ({summary['mode']}): steady state {kb('steady')}; startup {kb('startup')}; "
            f"of {summary['code_bytes'] / 1048576:.1f} MB of code")


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


def verify(binary, layout_dir, record):
    path = os.path.join(layout_dir, "layout.json")
    if not os.path.exists(path):
        print(f"error: no code layout in {layout_dir}: packaging/release/build makes one", file=sys.stderr)
        return 1
    summary = json.load(open(path))
    size, identity = hot_section_size(binary), build_id(binary)
    if size != summary["hot_size"]:
        print(f"error: {binary}: its hot code is {size} bytes, the layout places {summary['hot_size']}: "
              "the link did not apply packaging/release/build's layout", file=sys.stderr)
        return 1
    if record:
        summary["build_id"] = identity
        json.dump(summary, open(path, "w"), indent=1)
    elif identity != summary["build_id"]:
        print(f"error: {binary} (build ID {identity}) is not the binary this layout was made for "
              f"({summary['build_id']}): build it with packaging/release/build", file=sys.stderr)
        return 1
    print(describe(summary) + f"; {binary} is linked with it")
    if summary["unplaceable"]:
        print(f"note: {len(summary['unplaceable'])} sections with a quote in their name stay where they are")
    return 0


def main(command, arguments):
    if command == "readahead-knob":
        knob = readahead_knob(arguments[0])
        if knob:
            print(knob)
    elif command == "evict":
        fd = os.open(arguments[0], os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
        print(len(in_code(arguments[0], cached_pages(arguments[0]))))
    elif command == "snapshot":
        pid, binary, out = int(arguments[0]), arguments[1], arguments[2]
        mapped = in_code(binary, mapped_pages(pid, binary))
        cached = in_code(binary, cached_pages(binary)) if "--cached" in arguments else None
        json.dump({"mapped": mapped, "cached": cached}, open(out, "w"))
    elif command == "script":
        script(*arguments)
    elif command == "placeholder":
        with open(arguments[0], "w") as out:
            out.write(PLACEHOLDER)
    elif command == "verify":
        return verify(arguments[0], arguments[1], "--record" in arguments)
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
