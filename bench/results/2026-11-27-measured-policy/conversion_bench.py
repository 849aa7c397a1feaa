#!/usr/bin/env python3
"""Image-pair conversions (immconv.torch.module: to_image_pairs, from_image_pairs to NCHW and
channels-last) eager against torch.compile'd (Inductor's tiled pointwise kernels), at
ResNet-50's batch-64 FP16 shapes; checked bit-equal, timed from CUDA graphs; device.
usage: conversion_bench.py OUT.json"""
import json
import sys

import torch
from immconv.torch.bench import time_cuda_graph
from immconv.torch.module import from_image_pairs, to_image_pairs

shapes = [(64, 64, 112, 112), (64, 256, 56, 56), (64, 128, 56, 56), (64, 512, 28, 28),
          (64, 256, 28, 28), (64, 1024, 14, 14), (64, 2048, 7, 7)]
cases = {
    "from_pairs_nchw": (lambda p: from_image_pairs(p), True),
    "from_pairs_cl": (lambda p: from_image_pairs(p, "channels_last"), True),
    "to_pairs_from_nchw": (lambda x: to_image_pairs(x), False),
    "to_pairs_from_cl": (lambda x: to_image_pairs(x), "cl"),
}
out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": []}
for shape in shapes:
    x = torch.randn(shape, device="cuda").half()
    xcl = x.contiguous(memory_format=torch.channels_last)
    p = to_image_pairs(x)
    for name, (fn, pairs_in) in cases.items():
        arg = p if pairs_in is True else xcl if pairs_in == "cl" else x
        comp = torch.compile(fn, dynamic=False)
        with torch.no_grad():
            ref, got = fn(arg), comp(arg)
        same = torch.equal(ref, got) and ref.stride() == got.stride()
        te = time_cuda_graph(lambda: fn(arg), 10, 50)
        tc = time_cuda_graph(lambda: comp(arg), 10, 50)
        mb = 2 * x.numel() * 2 / 1e6
        row = {"shape": list(shape), "case": name, "eager_ms": te, "compiled_ms": tc,
               "equal": same, "gb_per_s_eager": mb / te, "gb_per_s_compiled": mb / tc}
        out["rows"].append(row)
        print("%-22s %-20s eager %.4f compiled %.4f (%.2fx) equal %s" % (
            shape, name, te, tc, te / tc, same), flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
