#!/usr/bin/env python3
"""Per-layer table of this run: heuristic and tuned spconv times against the faster of legacy
cuDNN FP16 and PyTorch FP16 channels-last, each ratio from its own case's run (torch-fp16.json
holds both suites' rows); geomeans per batch."""
import json
import math
import os

here = os.path.dirname(os.path.abspath(__file__))
t = json.load(open(os.path.join(here, "torch-fp16.json")))
heur = {(r["layer"], r["shape"]["N"]): r for r in t["files"][0]["layers"]}
tuned = {(r["layer"], r["shape"]["N"]): r for r in t["files"][1]["layers"]}
print("| layer | N | heuristic (ms) | tuned (ms) | legacy cuDNN FP16 | PyTorch FP16 CL "
      "| x best, heuristic | x best, tuned |")
print("|---|---|---|---|---|---|---|---|")
for n in (1, 64):
    gh, gt, below = [], [], []
    for (layer, b), h in sorted(heur.items()):
        if b != n:
            continue
        u = tuned.get((layer, b), h)
        xt = u["x_best_half"]
        gh.append(h["x_best_half"])
        gt.append(xt)
        if xt < 0.8:
            below.append("%s %.2f" % (layer, xt))
        print("| %s | %d | %.4f | %s | %.4f | %.4f | %.2f | %.2f |" % (
            layer, n, h["spconv"], "%.4f" % u["spconv"] if u is not h else "=",
            u["cudnn_legacy_best_half"], u["torch_cudnn_fp16"], h["x_best_half"], xt))
    geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))  # noqa: E731
    print("\nN=%d geomean heuristic %.2fx, tuned %.2fx; below 0.8x (tuned): %s\n"
          % (n, geo(gh), geo(gt), ", ".join(below) or "none"))
