#!/usr/bin/env python3
"""Writes a tuning table (docs/design.md, "Tuning table") from measured tiling variants.

usage: bench/tuning_table.py RESULT.json [RESULT.json ...] -o TABLE.json
           [--merge OLD.json] [--margin 0.03] [--nnz-tolerance 0.1] [--commit C] [--sms N]
           [--objective warm|cold_l2] [--base-time fastest|median] [--falls-back-to TABLE]

RESULT.json: what `bench/variants.sh run OUTDIR RESULT.json` writes on the GPU machine
(every case's spconv-bench JSON per repetition). Cases are grouped by the conv they compile
(logical shape, layout, dtype, accumulation; not the pairing, so a variant that changes the
pairing, `--pairing rows`, competes with its conv's other variants; an image-pair case, by its
spconv-bench "layout", is another conv, whose entry says "layout"); the group's `<name>-base`
case is the heuristic's tiling and pairing. A group gets an entry when its fastest case (the
median of its repetitions) that passed the check against cuDNN is faster than the base by more
than --margin (a fraction: timing noise). The entry has the winner's pairing (its
`numerics.pairing`); where that differs from the base's, the entry says "choose_pairing":
true, so that a conv whose op leaves the pairing to the compiler takes it (the heuristic's
pairing would never match the entry otherwise). A group without a base gets no entry, only a
line in the report.

--base-time says which of the base's repetitions the winner must beat: fastest (the
default) or median. A variant's time is the median of its repetitions, but the base is held
at its fastest: a base that ran one slow repetition (a per-process level, another card's
clocks) would otherwise hand an entry to a variant no faster than its own best run, as
layer2.0.downsample's 1.12x was 1.05x against its base's faster run
(bench/results/2026-11-28-batch1-rounds). Holding the status quo at its best is the
conservative side: an entry costs a compile of its own and a kernel nobody reviewed by hand.
median is the rule the tables of 2026-11-28 and before were made with.

An entry matches convs within --nnz-tolerance of the measured nonzero count. --merge keeps
OLD.json's entries for convs not measured here: an old entry goes where a case or a new
entry here has its conv and pairing, and where a new choose_pairing entry has
its conv (whatever the pairing: the new one decides that conv's pairing); a new entry that
replaces a choose_pairing entry of its own pairing stays choose_pairing (its base, compiled
with OLD.json, ran the pairing that entry chose, not the heuristic's); but where the
group's base ran the old entry's own tiling (the cases were compiled with OLD.json) and no new
entry replaces it, the old entry stays: it is what was measured best.

--objective chooses which time decides: warm (the default: spconv-bench's time_ms, replays
that find the kernel's code and data in L2) or cold_l2 (time_ms_cold_l2, from `spconv-bench
--cold-l2`: the L2 emptied before each run, as a layer runs inside a whole network; docs/
benchmarks.md, "Warm and cold"). A cold table says "objective": "cold_l2", and its entries'
sources say "cold L2"; --merge refuses a table chosen by the other objective.

The table's "sms" is the device's SM count: what spconv-bench recorded (its device "sms"),
else --sms, else OLD.json's; spconv-translate's heuristic tiles the convs without an entry for
that many SMs unless --num-sms says otherwise (docs/design.md, "Target GPU").

--falls-back-to names another device's table, written into this one as "falls_back_to" (a
path relative to TABLE.json's directory, kept by --merge): the compiler tries this table's
entries first, then that one's, each naming where it was measured. An H100 table of what was
measured on H100s falls back to the H200 table this way. Such a table also records a group
whose heuristic nothing beat: an entry of the base's tiling (and, in half precision, its
pairing as a choice), so that the fallback's entry, which this device did not find faster,
does not apply.

spconv-translate --tuning-table=TABLE.json (or $SPCONV_TUNING_TABLE) then takes an entry's
tiling for a matching conv. Prints one line per group: the base, the best, and the decision.
"""
import argparse
import datetime
import json
import statistics
import sys

CONV_KEYS = ("N", "C", "H", "W", "K", "R", "S", "stride", "padding", "dilation", "groups")


def conv_text(conv, layout):
    """The conv of a key as text; a layout other than NCHW (an entry's "layout") is part of
    it: an image-pair conv and an NCHW one are different convs, never each other's variant."""
    conv = dict(conv)
    if layout != "nchw":
        conv["layout"] = layout
    return json.dumps(conv, sort_keys=True)


def key_of(r):
    """The conv a case compiles, with its pairing: (conv, dtype, accumulate, pairing)."""
    conv = {k: r["shape"][k] for k in CONV_KEYS}
    num = r.get("numerics") or {}
    dtype = r.get("dtype", "f32")
    return (conv_text(conv, r.get("layout", "nchw")), dtype, num.get("accumulate", "f32"),
            num.get("pairing", "none"))


def as_measured(tiling):
    # An entry from before channel vectors read one channel a load (docs/design.md, "Tuning
    # table"), which is what a sidecar now says as channel_vector 1; one from before loads
    # ahead loaded none ahead (load_ahead 0), one from before dynamic shared memory staged
    # into static shared memory (dynamic_shared false), and one from before cluster splits
    # ran a tile in one block (cluster_split 1).
    defaults = {"channel_vector": 1, "load_ahead": 0, "dynamic_shared": False,
                "cluster_split": 1}
    return dict(defaults, **tiling) if tiling else tiling


def entry_key(e):
    """key_of for a table entry."""
    return (conv_text(e["conv"], e.get("layout", "nchw")), e["dtype"], e["accumulate"],
            e["pairing"])


def passed(r):
    return r.get("status") == "ok" and "contenders" in r


TIME_FIELD = {"warm": "time_ms", "cold_l2": "time_ms_cold_l2"}


def load_cases(paths, objective="warm"):
    """Per case: the median of its repetitions ("ms") and their fastest ("fastest")."""
    field = TIME_FIELD[objective]
    cases = {}
    for path in paths:
        for name, runs in json.load(open(path)).items():
            reps = [runs[k] for k in sorted(runs)]
            if not all(passed(r) for r in reps):
                print("skipped %s: a repetition did not pass its check" % name, file=sys.stderr)
                continue
            if not all(field in r["contenders"]["spconv"] for r in reps):
                print("skipped %s: no %s (spconv-bench --cold-l2 records it)" % (name, field),
                      file=sys.stderr)
                continue
            times = [r["contenders"]["spconv"][field] for r in reps]
            cases[name] = {"ms": statistics.median(times), "fastest": min(times),
                           "result": reps[0], "file": path}
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--merge")
    ap.add_argument("--margin", type=float, default=0.03)
    ap.add_argument("--nnz-tolerance", type=float, default=0.1)
    ap.add_argument("--commit", help="the compiler commit the variants were compiled at "
                    "(default: the results' own, where spconv-bench recorded one)")
    ap.add_argument("--sms", type=int, help="the device's SM count, where the results do not "
                    "record it (spconv-bench before it did)")
    ap.add_argument("--objective", choices=sorted(TIME_FIELD), default="warm",
                    help="which time decides: warm replays (default) or from a cold L2")
    ap.add_argument("--falls-back-to", metavar="TABLE",
                    help="another device's table (a path relative to OUT's directory) whose "
                    "entries serve where this table's match nothing (docs/design.md, "
                    "\"Tuning table\"); --merge keeps the merged table's")
    ap.add_argument("--base-time", choices=["fastest", "median"], default="fastest",
                    help="the base's time a winner must beat: its fastest repetition "
                    "(default) or their median")
    args = ap.parse_args()
    # The objective's word in the report and the entries' sources.
    cold = " cold L2" if args.objective == "cold_l2" else ""

    cases = load_cases(args.results, args.objective)
    devices = {c["result"]["device"]["name"] for c in cases.values()}
    if len(devices) != 1:
        sys.exit("tuning_table.py: the results come from %d devices (%s); one table is for one"
                 % (len(devices), ", ".join(sorted(devices)) or "none"))
    device = devices.pop()
    recorded = {c["result"]["device"].get("sms") for c in cases.values()} - {None}
    if len(recorded) > 1 or (recorded and args.sms and recorded != {args.sms}):
        sys.exit("tuning_table.py: SM counts disagree: results %s, --sms %s"
                 % (sorted(recorded), args.sms))
    sms = recorded.pop() if recorded else args.sms
    # By the conv without its pairing (key_of(...)[:3]): the pairing is one more choice.
    groups = {}
    for name, c in cases.items():
        groups.setdefault(key_of(c["result"])[:3], []).append(name)

    # A table that falls back to another device's records where the heuristic was best too:
    # its entry then shadows the fallback's, which this device did not find faster.
    merged = json.load(open(args.merge)) if args.merge else {"entries": []}
    falls_back_to = args.falls_back_to or merged.get("falls_back_to")
    entries = []
    for key, names in sorted(groups.items(), key=lambda kv: sorted(kv[1])[0]):
        base = [n for n in names if n.endswith("-base")]
        best = min(names, key=lambda n: cases[n]["ms"])
        b = cases[best]
        if not base:
            print("%-40s no base: best %s %.4f ms; no entry"
                  % (",".join(sorted(names)), best, b["ms"]))
            continue
        base_ms = cases[base[0]]["fastest" if args.base_time == "fastest" else "ms"]
        gain = base_ms / b["ms"]
        kept = best == base[0] or b["ms"] > base_ms * (1 - args.margin)
        if kept:
            other = min((n for n in names if n != base[0]), key=lambda n: cases[n]["ms"],
                        default="-")
            print("%-24s heuristic %.4f ms%s kept (best other: %s)%s" % (
                base[0], base_ms, cold, other,
                "; an entry of its tiling shadows %s's" % falls_back_to if falls_back_to else ""))
            if not falls_back_to:
                continue
            # A base compiled with the merged table ran its entry's tiling: that entry,
            # measured best again, stays (below) and already shadows the fallback's.
            r = cases[base[0]]["result"]
            if any(entry_key(e) == key_of(r)
                   and as_measured(e["tiling"]) == as_measured(r["tiling"])
                   for e in merged["entries"]):
                continue
            best, b = base[0], cases[base[0]]
        r = b["result"]
        conv, dtype, accumulate, pairing = key_of(r)
        base_pairing = key_of(cases[base[0]]["result"])[3]
        nnz = r["nnz"]
        tol = args.nnz_tolerance
        conv = json.loads(conv)
        layout = conv.pop("layout", "nchw")
        entry = {
            "conv": conv, "dtype": dtype, "accumulate": accumulate, "pairing": pairing,
        }
        if layout != "nchw":
            entry["layout"] = layout
        # The base's pairing is the heuristic's: another one wins only if the table sets it;
        # a kept heuristic's entry sets its own over any choice of the fallback's.
        if pairing != base_pairing or (kept and dtype != "f32" and pairing != "none"):
            entry["choose_pairing"] = True
        entry.update({
            "nnz": [int(nnz * (1 - tol)), int(nnz * (1 + tol)) + 1],
            "tiling": r["tiling"],
            "source": ("%s (%s): %.4f ms%s, nothing faster by %g%% (best other: %s %.4f ms), "
                       "%s, commit %s" % (
                           best, b["file"], base_ms, cold, args.margin * 100, other,
                           cases[other]["ms"] if other in cases else float("nan"), device,
                           args.commit or r.get("commit", "?"))) if kept else
            "%s (%s): %.4f ms%s, heuristic %.4f ms%s (%s), %s, commit %s" % (
                best, b["file"], b["ms"], cold, base_ms, cold, base[0], device,
                args.commit or r.get("commit", "?")),
        })
        entries.append(entry)
        if kept:
            continue
        print("%-24s heuristic %.4f ms%s -> %s %.4f ms (%.2fx)%s" % (
            base[0], base_ms, cold, best, b["ms"], gain,
            ", pairing %s for %s (choose_pairing)" % (pairing, base_pairing)
            if pairing != base_pairing else ""))

    if args.merge:
        old = json.load(open(args.merge))
        if old.get("device") != device:
            sys.exit("tuning_table.py: %s is for %s, these results for %s"
                     % (args.merge, old.get("device"), device))
        if old.get("objective", "warm") != args.objective:
            sys.exit("tuning_table.py: %s was chosen by %s time, these by %s: one table, one "
                     "objective" % (args.merge, old.get("objective", "warm"), args.objective))
        if sms and old.get("sms") and old["sms"] != sms:
            sys.exit("tuning_table.py: %s is for %d SMs, these results for %d"
                     % (args.merge, old["sms"], sms))
        sms = sms or old.get("sms")
        # An entry is identified by its conv and pairing; a new choose_pairing entry also
        # replaces every older entry of its conv, whose pairing it has just re-decided (two
        # choose_pairing entries of one conv would not load).
        new = {entry_key(e) for e in entries}
        measured = {key_of(c["result"]) for c in cases.values()}
        chosen = {entry_key(e)[:3] for e in entries if e.get("choose_pairing")}
        # A base compiled with this table ran the old entry's tiling: where nothing beat it,
        # the old entry is what was measured best, and stays.
        base_tiling = {key_of(c["result"]): c["result"]["tiling"]
                       for n, c in cases.items() if n.endswith("-base")}

        def stays(e):
            k = entry_key(e)
            if k in new or k[:3] in chosen:
                return False
            if k in measured and as_measured(base_tiling.get(k)) != as_measured(e["tiling"]):
                return False
            if k in measured:
                print("%-24s kept from %s: the base ran its tiling" % (
                    e["source"].split(" ")[0], args.merge))
            return True
        # A base compiled with OLD.json ran the pairing an old choose_pairing entry chose,
        # so a winner of that pairing matches the base's pairing without being the
        # heuristic's: it keeps the choice, or the conv would fall back to the heuristic's
        # pairing and never meet the entry.
        old_chosen = {entry_key(e) for e in old["entries"] if e.get("choose_pairing")}
        for i, e in enumerate(entries):
            if entry_key(e) in old_chosen and not e.get("choose_pairing"):
                entries[i] = {k: v for k, v in e.items() if k not in ("nnz", "tiling", "source")}
                entries[i]["choose_pairing"] = True
                entries[i].update((k, e[k]) for k in ("nnz", "tiling", "source"))
                print("%-24s choose_pairing kept from %s (pairing %s)" % (
                    e["source"].split(" ")[0], args.merge, e["pairing"]))
        entries = [e for e in old["entries"] if stays(e)] + entries
    table = {"format": "spconv-tuning-table", "version": 1, "device": device}
    if sms:
        table["sms"] = sms
    if falls_back_to:
        table["falls_back_to"] = falls_back_to
    if args.objective != "warm":
        table["objective"] = args.objective
    table.update({
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "results": args.results, "margin": args.margin, "base_time": args.base_time,
        "nnz_tolerance": args.nnz_tolerance, "entries": entries})
    with open(args.out, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    print("%d entries -> %s" % (len(entries), args.out))


if __name__ == "__main__":
    main()
