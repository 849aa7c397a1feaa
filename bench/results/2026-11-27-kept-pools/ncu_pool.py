#!/usr/bin/env python3
"""VGG-16's second max pool at batch 64, FP16, channels-last (as a kept conv gives it), once
through carry.max_pool2d (compiled) and once as PyTorch's eager nn.MaxPool2d, for ncu: the
compile and warm-up run first, then an NVTX range "profiled" holds one call of each.
device. usage: ncu ... ncu_pool.py"""
import torch
import torch.nn as nn
from immconv.torch import carry

pool = nn.MaxPool2d(2, 2)
x = torch.randn(64, 128, 112, 112, device="cuda").half().contiguous(
    memory_format=torch.channels_last)
with torch.no_grad():
    for _ in range(3):
        carry.max_pool2d(x, pool)
        pool(x)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("profiled")
    carry.max_pool2d(x, pool)  # compiled (fastcopy.py)
    pool(x)  # eager: PyTorch's channels-last pool, with its int64 indices
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
