#!/usr/bin/env python3
"""Summarises the ptxas runs bench/ptxas/time-ptxas.sh logged: units, PTX instructions
(and FMAs, shared loads), summed process seconds, the rate per process second with its
quartiles over the units, and the slowest units.

    python3 bench/ptxas/units.py LOGDIR [--top N]
"""
import argparse
import collections
import os
import re
import statistics
import sys


def opcode(line: str) -> str:
    if line.startswith("@"):
        line = line.split(None, 1)[1]
    return line.split()[0].split(".")[0]


def count(path: str):
    ops = collections.Counter()
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if line.endswith(";") and not line.startswith((".", "//")):
                ops[opcode(line)] += 1
    return ops


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logdir")
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args()
    rows = []
    with open(os.path.join(args.logdir, "log")) as f:
        for line in f:
            path, seconds, rc = line.split()[:3]
            if not path.endswith(".ptx") and os.path.exists(path + ".ptx"):
                path += ".ptx"  # logs of the first version of the wrapper
            if rc != "0" or not os.path.exists(path):
                continue
            ops = count(path)
            rows.append((float(seconds), sum(ops.values()), ops["fma"], ops["ld"], path))
    if not rows:
        print("no assembled units logged", file=sys.stderr)
        return 1
    seconds = sum(r[0] for r in rows)
    instructions = sum(r[1] for r in rows)
    print(f"units {len(rows)}, PTX instructions {instructions} (fma {sum(r[2] for r in rows)}, "
          f"ld {sum(r[3] for r in rows)}), ptxas process seconds {seconds:.1f}, "
          f"{instructions / seconds:.0f} instructions per process second")
    rates = [r[1] / r[0] for r in rows if r[0] > 0.05]
    if len(rates) >= 4:
        q = statistics.quantiles(rates, n=4)
        print("rate quartiles over units: " + " / ".join(f"{x:.0f}" for x in q))
    for r in sorted(rows, reverse=True)[: args.top]:
        print(f"  {r[0]:.2f} s  {r[1]} instructions  {r[1] / max(r[0], 1e-3):.0f}/s  {os.path.basename(r[4])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
