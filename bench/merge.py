#!/usr/bin/env python3
"""usage: merge.py RESULTS_DIR SUITE_JSON

Merges the per-case spconv-bench JSON files in RESULTS_DIR into one suite file:
{"cases": [...], "summary": {"total", "ok", "failed"}}. Standard library only.
"""
import glob
import json
import os
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rdir, dest = sys.argv[1:]
    cases = []
    for path in sorted(glob.glob(os.path.join(rdir, "*.json"))):
        if os.path.abspath(path) == os.path.abspath(dest):
            continue
        try:
            r = json.load(open(path))
        except ValueError as e:
            r = {"status": "unreadable", "error": str(e)}
        if r.get("tool", "spconv-bench") != "spconv-bench":
            continue
        r["case"] = os.path.splitext(os.path.basename(path))[0]
        cases.append(r)
    ok = sum(1 for c in cases if c.get("status") == "ok")
    suite = {"format": "spconv-bench-suite", "version": 1,
             "summary": {"total": len(cases), "ok": ok, "failed": len(cases) - ok},
             "cases": cases}
    with open(dest, "w") as f:
        json.dump(suite, f, indent=2)


if __name__ == "__main__":
    main()
