#!/usr/bin/env python3
"""Per-op CUDA time of ResNet-50 `.half()` through immconv.torch (every conv compiled), one
forward, torch.profiler; device. usage: ops_profile.py CACHE LAYOUT OUT.txt"""
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import torch  # noqa: E402
import torch_backend  # noqa: E402
import immconv.torch as it  # noqa: E402

cache, layout, out = sys.argv[1:4]
ns = type("A", (), dict(net="resnet50", batch=64, sparsity=0.9, seed=1, dtype="f16",
                        accumulate="half", input_scale=0.1, layout=layout, compiler_arg=None,
                        policy="all"))()
_, _, model, x = torch_backend.make(ns)
model, x = model.cuda(), x.cuda()
opts = dict(torch_backend.policy_options("all"), **torch_backend.compile_options(ns))
cm = it.compile(model, x, out_dir=tempfile.mkdtemp(), kernel_cache=cache, progress=False, **opts)
with torch.no_grad():
    for _ in range(3):
        cm(x)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            cm(x)
        torch.cuda.synchronize()
with open(out, "w") as f:
    f.write(str(cm.code) + "\n")
    f.write(prof.key_averages().table(sort_by="cuda_time_total", row_limit=40))
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))
