#!/usr/bin/env python3
"""One line per case of a bench/variants.sh round: every repetition's kernel time (ms), the
best, and its status. usage: summarize_round.py ROUND.json"""
import json
import sys

for name, runs in json.load(open(sys.argv[1])).items():
    ms = [r["contenders"]["spconv"]["time_ms"] for r in runs.values() if "contenders" in r]
    st = sorted({str(r.get("status")) for r in runs.values()})
    print("%-24s best %s  reps %s  %s" % (name, "%.5f" % min(ms) if ms else "-",
                                          " ".join("%.5f" % m for m in ms), ",".join(st)))
