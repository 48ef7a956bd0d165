"""The soak's figures, from what was recorded: recoveries, audio uptime (strict,
and outside recoveries) and where the strict figure's losses went, the longest
silences, and the verdict. Used by scripts/soak.d/soak.py (see there)."""
import bisect
from statistics import median_high

SLOT = 0.01
# What the recorders cannot place (see `unplaceable`).
GUARD = 0.1
PASS_PERCENT = 99.9
MAX_RECOVERY = 0.5
RSS_GROWTH_LIMIT_KB = 2048


def merged(windows):
    """`windows` as disjoint, sorted [start, end] pairs."""
    out = []
    for s, e in sorted(windows):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


class Analysis:
    def __init__(self, timeline, faults, blocking, start, stop):
        self.faults = faults
        self.blocking = blocking
        self.start = start
        self.stop = stop
        self.audible = sorted(t for t, loud in timeline if loud)
        self.audible_slots = set(int((t - start) / SLOT) for t in self.audible)
        self.measure_recoveries()

    def first_audible_after(self, t):
        i = bisect.bisect_left(self.audible, t)
        return self.audible[i] if i < len(self.audible) else None

    def measure_recoveries(self):
        """Per fault: from its lift to the first audible 10 ms."""
        self.recoveries = {}
        for fault in self.faults:
            first = self.first_audible_after(fault["lifted"])
            recovery = (first - fault["lifted"]) if first is not None else float("inf")
            # A block arrives once its 10 ms were recorded: the sound began up to 10 ms earlier.
            fault["recovery"] = max(0.0, recovery - SLOT)
            self.recoveries.setdefault(fault["type"], []).append(fault["recovery"])

    def silent_slots(self, windows):
        """(wanted slots, slots with sound, silent stretches [start, end)) outside `windows`."""
        blocked = merged(windows)
        wanted = flowed = 0
        silences = []
        t, b = self.start, 0
        while t < self.stop:
            while b < len(blocked) and blocked[b][1] < t:
                b += 1
            if not (b < len(blocked) and blocked[b][0] <= t):
                wanted += 1
                index = int((t - self.start) / SLOT)
                if index in self.audible_slots or index + 1 in self.audible_slots:
                    flowed += 1
                elif silences and abs(silences[-1][1] - t) < SLOT / 2:
                    silences[-1][1] = t + SLOT
                else:
                    silences.append([t, t + SLOT])
            t += SLOT
        return wanted, flowed, silences

    def unplaceable(self):
        """What the recorders cannot place: their blocks are laid end to end from the previous
        read, which tolerates 80 ms of arrival jitter (Recorder.run), so the last blocks before
        the graph or the daemon stops may be stamped up to 80 ms early, and a silence that ends
        exactly where a fault begins appears (audio cannot stop before the fault does). The
        0.1 s before each blocking fault, and at the recording's two ends, are therefore neither
        wanted nor counted. The same holds before a sink-loss, for the recorder of the sink
        being destroyed: it loses the sink's last graph cycle or two (43 ms each at our
        quantum), and nothing the daemon does can stop the sound before the sink goes (in the
        30-minute soak of 2026-11-25, seven of the eight longest silences outside recoveries,
        0.03-0.09 s, ended within 0.02 s of a sink-loss's start)."""
        return ([(s - GUARD, s) for s, _ in self.blocking]
                + [(f["start"] - GUARD, f["start"]) for f in self.faults if f["type"] == "sink-loss"]
                + [(self.start, self.start + GUARD), (self.stop - GUARD, self.stop)])

    def recovering(self):
        """Each fault's recovery window: from its lift to its first sound (held to 0.5 s)."""
        return [(f["lifted"], f["lifted"] + min(f["recovery"], MAX_RECOVERY) + SLOT, f["type"]) for f in self.faults]

    def uptimes(self):
        # Strict: every wanted moment counts, the recoveries after each fault included (a
        # return fades in over 40 ms, and its first ~15 ms are below -60 dBFS).
        wanted, flowed, strict_silences = self.silent_slots(self.blocking + self.unplaceable())
        # Outside recoveries: also leaving out each fault's recovery (measured and held to
        # 0.5 s on its own), so this counts the dropouts that no fault explains.
        windows = [(s, e) for s, e, _ in self.recovering()]
        wanted_outside, flowed_outside, silences = self.silent_slots(self.blocking + self.unplaceable() + windows)
        self.silences = silences
        self.strict_loss = self.attribute(strict_silences)
        return {
            "audio_uptime_percent": round(100.0 * flowed / wanted if wanted else 0.0, 3),
            "wanted_seconds": round(wanted * SLOT, 1),
            "audio_uptime_outside_recoveries_percent":
                round(100.0 * flowed_outside / wanted_outside if wanted_outside else 0.0, 3),
            "strict_loss_seconds": round((wanted - flowed) * SLOT, 2),
        }

    def attribute(self, silences):
        """The strict figure's lost seconds, by what they followed: the recovery of a fault
        type, or nothing (a dropout outside every recovery)."""
        windows = sorted(self.recovering())
        loss = {}
        for a, e in silences:
            t = a
            while t < e - SLOT / 2:
                cause = next((kind for s, w, kind in windows if s <= t < w), "outside recoveries")
                loss[cause] = loss.get(cause, 0.0) + SLOT
                t += SLOT
        return {kind: round(seconds, 2) for kind, seconds in sorted(loss.items(), key=lambda kv: -kv[1])}

    def recovery_summary(self):
        return {kind: {"count": len(values), "max": round(max(values), 3),
                       "median": round(median_high(values), 3),
                       "total": round(sum(v for v in values if v != float("inf")), 3)}
                for kind, values in sorted(self.recoveries.items())}

    def longest_silences(self, count=8):
        """The longest stretches of wanted time without sound outside recoveries, each after which fault."""
        return [
            {"at_s": round(a - self.start, 2), "seconds": round(e - a, 2),
             "after": max((f for f in self.faults if f["start"] <= a), key=lambda f: f["start"], default={}).get("type"),
             "next_fault_in_s": round(min((f["start"] for f in self.faults if f["start"] >= a), default=self.stop) - e, 2)}
            for a, e in sorted(self.silences, key=lambda r: r[0] - r[1])[:count]]

    def fault_log(self):
        """Each fault; for a daemon-kill also how long after the new process started the soak
        noticed it (the lift of earlier soaks, which measured recoveries from there)."""
        return [dict({"type": f["type"], "at_s": round(f["start"] - self.start, 2),
                      "lifted_s": round(f["lifted"] - self.start, 2), "recovery_s": round(f["recovery"], 3)},
                     **({"noticed_after_s": round(f["noticed"] - f["lifted"], 3)} if "noticed" in f else {}),
                     **({"sink": f["sink"]} if f.get("sink") else {}))
                for f in sorted(self.faults, key=lambda f: f["start"])]

    def daemon_kills_by_sink(self):
        """A killed daemon's new process to sound, per sink it resumed on: (count, median)."""
        by_sink = {}
        for f in self.faults:
            if f["type"] == "daemon-kill":
                by_sink.setdefault(f.get("sink") or "?", []).append(f["recovery"])
        return {sink: {"count": len(v), "median": round(median_high(v), 3)} for sink, v in sorted(by_sink.items())}

    def signer_uptime(self, states):
        running = 0.0
        for (t1, up), (t2, _) in zip(states, states[1:] + [(self.stop, None)]):
            if up:
                running += max(0.0, min(t2, self.stop) - max(t1, self.start))
        return round(100.0 * running / (self.stop - self.start), 2)


def verdict(result, faults, gaps, lives):
    """What failed, in words; empty when the soak passed: audio flowed at least 99.9 % of
    the time it should, recoveries included; no recovery took over 0.5 s; no event went
    missing; and no daemon life that lasted over a minute ended with RSS more than 2 MB
    above its first minute's."""
    problems = []
    if result["audio_uptime_percent"] < PASS_PERCENT:
        problems.append(f"strict audio uptime {result['audio_uptime_percent']} % < {PASS_PERCENT} %")
    over = [(f["type"], round(f["recovery"], 3)) for f in faults
            if f["recovery"] > MAX_RECOVERY and f["type"] != "wireplumber-crash"]
    if over:
        problems.append(f"recoveries over {MAX_RECOVERY} s: {over}")
    if gaps:
        problems.append(f"seq gaps: {gaps[:10]}")
    grown = [(life["pid"], life["rss_growth_kB"]) for life in lives
             if life["longer_than_a_minute"] and life["rss_growth_kB"] > RSS_GROWTH_LIMIT_KB]
    if grown:
        problems.append(f"daemon lives whose RSS grew over {RSS_GROWTH_LIMIT_KB} kB after their first minute: {grown}")
    return problems
