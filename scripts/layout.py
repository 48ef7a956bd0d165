"""The two steps of scripts/order-file that turn measurements into a code layout.

  layout.py profile MAP PACKAGING CALLGRIND...   write soundscaped.order and soundscaped-unnamed.ld
                                                 (profiles in order of precedence: steady state first)
  layout.py faults MAP PERF_SCRIPT BINARY SCRIPT add the sections page faults name; print how many

MAP is an lld link map (-Map, --no-demangle) of the binary that was measured.
"""
import bisect
import collections
import re
import subprocess
import sys

SCRIPT_END = "  }\n}\nINSERT BEFORE .text;\n"


def code_sections(link_map):
    """The map's code input sections, in link order, as (address, size, name),
    and for each symbol the sections that define it."""
    sections, defined_in, in_text = [], collections.defaultdict(list), False
    for line in open(link_map):
        m = re.match(r"\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s(\s*)(.*)$", line.rstrip("\n"))
        if not m:
            continue
        indent, what = len(m.group(3)), m.group(4)
        if indent == 0:
            in_text = what.startswith(".text")
        elif in_text and indent <= 8:
            sections.append((int(m.group(1), 16), int(m.group(2), 16), what))
        elif in_text and sections:
            defined_in[what].append(sections[-1][2])
    return sections, defined_in


def containing(sections, starts, address):
    """The section (as sorted by address) that holds `address`, or None."""
    i = bisect.bisect_right(starts, address) - 1
    if i >= 0 and address < sections[i][0] + sections[i][1]:
        return sections[i][2]
    return None


def pattern(section):
    """A path-independent input section description: '*/dir/file.o(section)' or '*archive.a:member(section)'."""
    path, member, name = re.match(r"(.*?)(?:\((.*)\))?:\((.*)\)$", section).groups()
    if member:
        return f"*{path.rsplit('/', 1)[-1]}:{member}({name})"
    return "*/" + "/".join(path.split("/")[-2:]) + f"({name})"


def profile(link_map, out_dir, profiles):
    # What callgrind saw run in soundscaped's own binary: functions by name, and
    # code without a symbol (private functions: value witnesses, metadata
    # completion, object destroyers) by address.
    # The profiles come in order of precedence: what the daemon runs once it is
    # up first, then what only startup runs. StartupPages unmaps what startup
    # touched; kept apart, the steady code does not fault startup code back in
    # with it (the kernel maps 64 KB around each fault).
    names, seen, addresses, steady = [], set(), [], set()
    for index, path in enumerate(profiles):
        obj, found = None, set()
        for line in open(path, errors="replace"):
            if line.startswith("ob="):
                obj = line[3:].strip()
            elif line.startswith("fn=") and obj and obj.endswith("/soundscaped.profiled"):
                name = re.sub(r"'\d+$", "", line[3:].strip())   # callgrind's recursion marks
                if name.startswith("0x"):
                    found.add(int(name, 16))
                elif name not in seen:
                    seen.add(name)
                    names.append(name)
                    if index < STEADY_PROFILES:
                        steady.add(name)
        # In object order within a profile, so one object's helpers stay together.
        addresses += sorted(found - set(addresses))

    # The profiled link is in object order, so the map lists each object's
    # sections in their own order.
    sections, defined_in = code_sections(link_map)
    size = {name: length for _, length, name in sections}

    # lld orders whole sections, and applies a name to every local symbol that
    # has it; a name that is also defined inside a large section nothing else
    # needs (the regex engine's, say) would pull that whole section into the hot
    # part, so such names are left out.
    hot = {defined_in[n][0] for n in names if len(defined_in[n]) == 1}
    kept = [n for n in names if defined_in[n] and all(size[s] <= 4096 or s in hot for s in defined_in[n])]
    write_order(f"{out_dir}/soundscaped.order", [n for n in kept if n in steady], [n for n in kept if n not in steady])

    # Sections without a symbol can only be placed by a linker script: those
    # callgrind ran, and those that follow a hot function in its object
    # (callgrind often counts a private helper into the function before it).
    unnamed = lambda section: "(.text..L" in section
    by_address = sorted(sections)
    starts = [start for start, _, _ in by_address]
    chosen = []
    for address in addresses:
        section = containing(by_address, starts, address)
        if section and unnamed(section):
            chosen.append(section)
    hot |= {s for n in kept for s in defined_in[n]}
    for i, (_, _, section) in enumerate(sections):
        if section in hot:
            obj = section.rsplit(":(", 1)[0]
            j = i + 1
            while j < len(sections) and unnamed(sections[j][2]) and sections[j][2].rsplit(":(", 1)[0] == obj:
                chosen.append(sections[j][2])
                j += 1

    lines = list(dict.fromkeys(pattern(s) for s in chosen))
    write_script(f"{out_dir}/soundscaped-unnamed.ld", lines)
    print(f"{len(kept)} of {len(names)} profiled functions listed; {len(lines)} sections without a symbol",
          file=sys.stderr)


# The first two profiles are the daemon at work (cold and warm cache); the rest are startup.
STEADY_PROFILES = 2


def write_order(path, steady, startup):
    """Steady-state functions first, then startup's, each group sorted by name: what
    matters for resident memory is that each group is contiguous, not its inner order,
    and sorted groups make a regeneration's diff the functions that came and went."""
    with open(path, "w") as out:
        out.write("# Generated by scripts/order-file. Steady state (the daemon at work):\n")
        out.writelines(f"{name}\n" for name in sorted(steady))
        out.write("# Startup (released from memory once the daemon is up, see StartupPages):\n")
        out.writelines(f"{name}\n" for name in sorted(startup))


def write_script(path, patterns):
    """The linker script, its patterns sorted for the same reason."""
    with open(path, "w") as script:
        script.write("/* Generated by scripts/order-file: code soundscaped runs that the order file\n"
                     "   cannot name (no symbol, or one that other sections share), placed just\n"
                     "   before the rest. INSERT keeps lld's default layout for everything else.\n"
                     "   Patterns name SwiftPM's object files and the compiler's local labels: a\n"
                     "   stale one matches nothing, which only costs memory. */\n"
                     "SECTIONS {\n  .text.unnamed_hot : {\n")
        script.writelines(f"    {line}\n" for line in sorted(set(patterns)))
        script.write(SCRIPT_END)


def faults(link_map, perf_script, binary, script_path):
    # The code segment's link address minus its file offset.
    delta = 0
    for line in subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[6:-1]:
            delta = int(f[2], 16) - int(f[1], 16)
    sections = sorted(code_sections(link_map)[0])
    starts = [start for start, _, _ in sections]

    # Instruction fetches that faulted on our code, as link addresses.
    mapping, addresses = None, []
    for line in open(perf_script):
        m = re.search(r"MMAP2 .*\[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+) .*\]: r-xp (\S+)$", line)
        if m and mapping is None and m.group(4).endswith("/soundscaped"):
            mapping = tuple(int(x, 16) for x in m.groups()[:3])
        m = re.search(r"address=(0x[0-9a-f]+) ip=0x[0-9a-f]+ error_code=(0x[0-9a-f]+)", line)
        if m and mapping and int(m.group(2), 16) & 0x10:
            start, size, offset = mapping
            address = int(m.group(1), 16)
            if start <= address < start + size:
                addresses.append(address - start + offset + delta)

    script = open(script_path).read()
    existing = [l.strip() for l in script.splitlines() if l.startswith("    ")]
    new_patterns = []
    for address in addresses:
        section = containing(sections, starts, address)
        if section is None or section.endswith(":(.text)"):
            continue                                  # an unsplit object: nothing to move
        # A section, named or not, is placed by the script: a name in the order file
        # would also move every other local symbol that shares it.
        line = pattern(section)
        if line not in script and line not in new_patterns:
            new_patterns.append(line)
    if new_patterns:
        write_script(script_path, existing + new_patterns)
    print(len(new_patterns))


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "profile":
        profile(arguments[0], arguments[1], arguments[2:])
    elif command == "faults":
        faults(*arguments)
    else:
        sys.exit(__doc__)
