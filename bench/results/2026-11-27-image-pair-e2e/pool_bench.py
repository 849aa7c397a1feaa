#!/usr/bin/env python3
"""ResNet-50's stem max pool and head pool at batch 64, FP16, each way immconv.torch could run
them on image pairs, against PyTorch's NCHW and channels-last; CUDA graphs (immconv.torch's
time_cuda_graph, 20 calls a replay, median of 20). device. usage: pool_bench.py OUT.json"""
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from immconv.torch import carry
from immconv.torch.bench import time_cuda_graph
from immconv.torch.module import from_image_pairs, to_image_pairs

t = lambda fn: time_cuda_graph(fn, 5, 20, calls=20)  # noqa: E731
x = torch.randn(64, 64, 112, 112, device="cuda", dtype=torch.float16)
xcl, xp = x.contiguous(memory_format=torch.channels_last), to_image_pairs(x)
pool = nn.MaxPool2d(3, 2, 1)
ref = F.max_pool2d(x, 3, 2, 1)
assert torch.equal(from_image_pairs(carry.ip_max_pool2d(xp, pool)), ref)
h = torch.randn(64, 2048, 7, 7, device="cuda", dtype=torch.float16)
hp = to_image_pairs(h)
head = nn.AdaptiveAvgPool2d(1)
out = {"device": torch.cuda.get_device_name(), "max_pool_ms": {
    "nchw": t(lambda: F.max_pool2d(x, 3, 2, 1)),
    "channels_last": t(lambda: F.max_pool2d(xcl, 3, 2, 1)),
    "pairs_channels_last_planes": t(lambda: carry.ip_max_pool2d(xp, pool)),
    "pairs_max_pool3d": t(lambda: F.max_pool3d(xp, (3, 3, 1), (2, 2, 1), (1, 1, 0)))},
    "head_pool_ms": {"nchw": t(lambda: head(h)),
                     "pairs_mean": t(lambda: carry.ip_adaptive_avg_pool2d(hp, head))},
    "conversion_ms": {"to_image_pairs_stem": t(lambda: to_image_pairs(x)),
                      "from_image_pairs_stem": t(lambda: from_image_pairs(xp)),
                      "to_channels_last_stem": t(lambda: x.contiguous(
                          memory_format=torch.channels_last))}}
print(json.dumps(out, indent=1))
json.dump(out, open(sys.argv[1], "w"), indent=1)
