#!/usr/bin/env python3
"""ResNet-50's stem max pool over image pairs at batch 64, FP16, once eagerly and once
compiled (carry.ip_max_pool2d), for ncu: the compile and warm-up run first, then an NVTX
range "profiled" holds one call of each. device. usage: ncu ... ncu_pool.py"""
import os

import torch
import torch.nn as nn
from immconv.torch import carry
from immconv.torch.module import to_image_pairs

pool = nn.MaxPool2d(3, 2, 1)
p = to_image_pairs(torch.randn(64, 64, 112, 112, device="cuda").half())
for _ in range(3):
    carry.ip_max_pool2d(p, pool)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("profiled")
carry.ip_max_pool2d(p, pool)  # compiled (fastcopy.py)
os.environ["IMMCONV_COMPILED_COPIES"] = "0"
carry.ip_max_pool2d(p, pool)  # eager: PyTorch's pool over two channels stored channels-last
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
