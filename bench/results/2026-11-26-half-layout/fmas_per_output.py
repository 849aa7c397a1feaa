#!/usr/bin/env python3
"""Per FP16 layer of the runs in history/78a405d (every conv compiled, before the half rule): FMAs per output (nnz / K) and whether the kernel
beat the layer kept channels-last by the policy's 5% margin (`spconv` * 1.05 <= its
`kept_channels_last`). K comes from the kernels' sidecars in the kernel cache the runs used
(.cache/carry-half2, not in git); the result is fmas_per_output.txt."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "..", "..", "..", ".cache", "carry-half2", "units")
UNITS = {"resnet50-b64": "617f2023da2f86a83549d118", "resnet50-b1": "07c7e803b3971413e079852a",
         "mobilenetv2-b64": "a463299d1d5fe9ad4a146044", "vgg16-b64": "26b0a1f96a4c2105a40abd56"}
rows = []
for net, unit in UNITS.items():
    with open(os.path.join(CACHE, unit, "model.json")) as f:
        ks = {k["entry"]: k["conv"]["K"] for k in json.load(f)["kernels"]}
    with open(os.path.join(HERE, "history", "78a405d", "%s-f16-default.json" % net)) as f:
        layers = json.load(f)["variants"]["immconv_explicit"]["measured"]["layers"]
    for l in layers:
        fpo = l["nnz"] / ks[l["entry"]]
        rows.append((net, l["layer"], fpo, l["spconv"] * 1.05 <= l["kept_channels_last"]))
for thr in (32, 64, 128):
    lo = [r for r in rows if r[2] <= thr]
    hi = [r for r in rows if r[2] > thr]
    print("FMAs per output <= %3d: kernel wins %2d of %3d; above: %2d of %3d"
          % (thr, sum(r[3] for r in lo), len(lo), sum(r[3] for r in hi), len(hi)))
print("largest FMAs per output where the kernel wins: %.1f (%s %s)"
      % max((r[2], r[0], r[1]) for r in rows if r[3]))
