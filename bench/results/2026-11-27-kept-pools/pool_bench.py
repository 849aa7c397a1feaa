#!/usr/bin/env python3
"""The max pools of VGG-16 and ResNet-50's stem at batch 64, FP16, channels-last (as a kept
layer gives them) and NCHW: PyTorch's eager nn.MaxPool2d against carry.max_pool2d (compiled
by torch.compile), checked bit-equal and of the same strides, timed from CUDA graphs;
device. usage: pool_bench.py OUT.json"""
import json
import sys

import torch
import torch.nn as nn
from immconv.torch import carry, fastcopy
from immconv.torch.bench import time_cuda_graph

cases = [("resnet50_stem", (64, 64, 112, 112), nn.MaxPool2d(3, 2, 1)),
         ("vgg16_pool1", (64, 64, 224, 224), nn.MaxPool2d(2, 2)),
         ("vgg16_pool2", (64, 128, 112, 112), nn.MaxPool2d(2, 2)),
         ("vgg16_pool3", (64, 256, 56, 56), nn.MaxPool2d(2, 2)),
         ("vgg16_pool4", (64, 512, 28, 28), nn.MaxPool2d(2, 2)),
         ("vgg16_pool5", (64, 512, 14, 14), nn.MaxPool2d(2, 2))]
out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": []}
for name, shape, pool in cases:
    x = torch.randn(shape, device="cuda").half()
    for fmt, t in (("channels_last", x.contiguous(memory_format=torch.channels_last)),
                   ("nchw", x)):
        with torch.no_grad():
            ref = pool(t)
            got = carry.max_pool2d(t, pool)
            te = time_cuda_graph(lambda: pool(t), 10, 50)
            tc = time_cuda_graph(lambda: carry.max_pool2d(t, pool), 10, 50)
        row = {"case": name, "shape": list(shape), "layout": fmt, "eager_ms": te,
               "compiled_ms": tc, "equal": torch.equal(ref, got),
               "same_strides": ref.stride() == got.stride(),
               "compiled": bool(fastcopy._COMPILED) and not fastcopy._FAILED}
        out["rows"].append(row)
        print("%-14s %-13s eager %.4f compiled %.4f (%.2fx) equal %s strides %s"
              % (name, fmt, te, tc, te / tc, row["equal"], row["same_strides"]), flush=True)
out["calls"] = fastcopy.stats()
json.dump(out, open(sys.argv[1], "w"), indent=1)
