#!/usr/bin/env python3
"""usage: compile_table.py CASES_DIR [SPARSITY]

Markdown table of compile times and peak memory (from bench/compile_case.sh's case.json) for
every case at SPARSITY (default 0.9): cold = empty template cache, warm = a second weight
pattern of the same shape against the filled cache. Standard library only.
"""
import glob
import json
import os
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    sp = float(sys.argv[2]) if len(sys.argv) == 3 else 0.9
    rows = []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "case.json"))):
        c = json.load(open(path))
        if abs(c["sparsity"] - sp) > 1e-9:
            continue
        k = c["compile"]
        cold, warm = k["cold"], k.get("warm")
        rows.append((c["layer"], c["batch"], cold["lower_and_fold"], cold["nvptx"],
                     k["cold_to_ptx_s"], cold["ptxas"], k["cold_total_s"],
                     k.get("warm_to_ptx_s"), warm and warm["ptxas"], k.get("warm_total_s"),
                     k["cold_to_ptx_s"] / k["warm_to_ptx_s"] if warm else None,
                     k["cold_peak_rss_mb"]))
    print("| layer | N | cold lower+fold s | cold NVPTX s | cold to PTX s | cold ptxas s | "
          "cold total s | warm to PTX s | warm ptxas s | warm total s | cold/warm to PTX | "
          "peak MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    f = lambda v: "-" if v is None else ("%.3f" % v if v < 0.1 else "%.2f" % v)
    for r in rows:
        print("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |" % (
            r[0], r[1], f(r[2]), f(r[3]), f(r[4]), f(r[5]), f(r[6]), f(r[7]), f(r[8]),
            f(r[9]), "-" if r[10] is None else "%.0fx" % r[10], r[11]))


if __name__ == "__main__":
    main()
