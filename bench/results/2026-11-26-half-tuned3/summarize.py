#!/usr/bin/env python3
"""Per-layer table of this run: spconv FP16 against the faster of legacy cuDNN FP16 and
PyTorch FP16 channels-last, each ratio from its own case's run; geomeans per batch.
usage: summarize.py [DIR]   (DIR holding torch-fp16.json; default: this script's folder)"""
import json
import math
import os
import sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rows = {(r["layer"], r["shape"]["N"]): r
        for r in json.load(open(os.path.join(here, "torch-fp16.json")))["files"][0]["layers"]}
geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))  # noqa: E731
print("| layer | N | spconv (ms) | legacy cuDNN FP16 | PyTorch FP16 CL | x best |")
print("|---|---|---|---|---|---|")
for n in (1, 64):
    xs, below = [], []
    for (layer, b), r in sorted(rows.items()):
        if b != n:
            continue
        xs.append(r["x_best_half"])
        if r["x_best_half"] < 0.8:
            below.append("%s %.2f" % (layer, r["x_best_half"]))
        print("| %s | %d | %.4f | %.4f | %.4f | %.2f |" % (
            layer, n, r["spconv"], r["cudnn_legacy_best_half"], r["torch_cudnn_fp16"],
            r["x_best_half"]))
    if xs:  # a run of one batch has no rows of the other
        print("\nN=%d geomean %.2fx; below 0.8x: %s\n" % (n, geo(xs), ", ".join(below) or "none"))
