#!/usr/bin/env python3
"""The alexnet-conv2 batch-1 entry that bench/tuning_table.py would write from calls 7 and 9
(H100), put in a copy of the H200 table in place of that conv's entry: a what-if table for
paper10, not tuning/nvidia-h200.json (one table, one device).
usage: whatif_table.py OUT.json   (from the repository root)"""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
reps = {}
for call, rename in (("call7/round", {}), ("call9/round62", {"r61-a2b1-bk6": "a2b1-bk6"})):
    for name, runs in json.load(open(os.path.join(here, call, "round.json"))).items():
        name = rename.get(name, name)
        # the table's tiling is the base; clusters and the split variant stay out
        if name in ("a2b1-table", "a2b1-bk6"):
            name = name.replace("-table", "-base")
            for k, v in runs.items():
                reps.setdefault(name, {})[call.split("/")[0] + "-" + k] = v
with tempfile.TemporaryDirectory() as tmp:
    cases, table = os.path.join(tmp, "a2b1.json"), os.path.join(tmp, "table.json")
    json.dump(reps, open(cases, "w"))
    subprocess.run([sys.executable, "bench/tuning_table.py", cases, "-o", table,
                    "--commit", "2d44773"], check=True)
    new = json.load(open(table))["entries"][0]
old = json.load(open("tuning/nvidia-h200.json"))
same = ("conv", "dtype", "accumulate", "pairing", "layout")
old["entries"] = [e for e in old["entries"] if any(e.get(k) != new.get(k) for k in same)]
new["source"] = "what-if, not the H200 table: " + new["source"]
old["entries"].append(new)
json.dump(old, open(sys.argv[1], "w"), indent=1)
print("%d entries -> %s" % (len(old["entries"]), sys.argv[1]))
