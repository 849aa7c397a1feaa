#!/usr/bin/env python3
"""The pools over image pairs (immconv.torch.carry: ip_max_pool2d, ip_adaptive_avg_pool2d)
eager against torch.compile'd, beside PyTorch's pools on the same tensor in channels-last and
NCHW, at ResNet-50's batch-64 FP16 shapes (the stem's 3x3/2 max pool, the head's global
mean); compiled checked against eager (max: bit-equal; mean: an ulp), timed from CUDA
graphs; device. usage: pool_bench.py OUT.json"""
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from immconv.torch import carry, fastcopy
from immconv.torch.bench import time_cuda_graph
from immconv.torch.module import from_image_pairs, to_image_pairs

cases = [("stem_max_pool", (64, 64, 112, 112), nn.MaxPool2d(3, 2, 1)),
         ("head_mean", (64, 2048, 7, 7), nn.AdaptiveAvgPool2d(1))]
out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": []}
for name, shape, pool in cases:
    x = torch.randn(shape, device="cuda").half()
    xcl = x.contiguous(memory_format=torch.channels_last)
    p = to_image_pairs(x)
    ip = carry.ip_max_pool2d if isinstance(pool, nn.MaxPool2d) else \
        carry.ip_adaptive_avg_pool2d
    with torch.no_grad():
        enabled = fastcopy._enabled
        fastcopy._enabled = lambda: False
        ref = ip(p, pool)
        te = time_cuda_graph(lambda: ip(p, pool), 10, 50)
        fastcopy._enabled = enabled
        got = ip(p, pool)
        tc = time_cuda_graph(lambda: ip(p, pool), 10, 50)
        tcl = time_cuda_graph(lambda: pool(xcl), 10, 50)
        tn = time_cuda_graph(lambda: pool(x), 10, 50)
        dense = pool(x)
    equal = torch.equal(ref, got)
    err = (ref.float() - got.float()).abs().max().item()
    got_nchw = from_image_pairs(got) if got.dim() == 5 else got
    err_dense = (dense.float() - got_nchw.float()).abs().max().item()
    row = {"case": name, "shape": list(shape), "pairs_eager_ms": te, "pairs_compiled_ms": tc,
           "channels_last_ms": tcl, "nchw_ms": tn, "equal": equal,
           "max_abs_diff_eager": err, "max_abs_diff_dense": err_dense,
           "compiled": bool(fastcopy._COMPILED) and not fastcopy._FAILED}
    out["rows"].append(row)
    print("%-14s pairs eager %.4f compiled %.4f (%.2fx) | CL %.4f NCHW %.4f | equal %s "
          "diff %.2g dense diff %.2g" % (name, te, tc, te / tc, tcl, tn, equal, err, err_dense),
          flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
