#!/usr/bin/env python3
"""The measured policy's end-to-end candidates (layout.decide: "layouts", "nchw_only",
"all_kept"), each re-applied to one compiled ResNet-50 `.half()` and profiled per op
(torch.profiler, CUDA time over 5 forwards) and timed from a CUDA graph; device.
Explains a gap between a candidate's modelled and measured time.
usage: candidate_profile.py CACHE LAYOUT BATCH OUTDIR"""
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import torch  # noqa: E402
import torch_backend  # noqa: E402
import immconv.torch as it  # noqa: E402
from immconv.torch import layout as L  # noqa: E402
from immconv.torch.bench import time_cuda_graph  # noqa: E402

cache, layout, batch, outdir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
ns = type("A", (), dict(net="resnet50", batch=batch, sparsity=0.9, seed=1, dtype="f16",
                        accumulate="half", input_scale=0.1, layout=layout, compiler_arg=None,
                        policy="default"))()
_, _, model, x = torch_backend.make(ns)
model, x = model.cuda(), x.cuda()
torch.backends.cudnn.benchmark = True
opts = dict(torch_backend.policy_options("default"), **torch_backend.compile_options(ns))
cm = it.compile(model, x, out_dir=tempfile.mkdtemp(), kernel_cache=cache, progress=False,
                **opts)
meas = cm.spconv_measurements
rows = {r["module"]: r for r in meas["layers"]}
report = meas["layout"]
mods = dict(cm.named_modules())
summary = {"modelled_ms": report.get("modelled_ms"), "policy_end_to_end_ms":
           report.get("end_to_end_ms"), "chosen": report.get("chosen"), "candidates": {}}
for name, cand in report.get("candidates", {}).items():
    decision = {n: L.SPCONV if n in cand["spconv"] else
                L.TORCH_CL if n in cand["channels_last"] else L.TORCH for n in rows}
    L.apply(mods, decision, rows, cm)
    plain = {n: dict(r, _margin=1.0) for n, r in rows.items()}
    modelled = L.total(plain, report["producers"], report["observed"], decision,
                       [tuple(j) for j in report["junctions"]])
    with torch.no_grad():
        for _ in range(3):
            cm(x)
        torch.cuda.synchronize()
        t = time_cuda_graph(lambda: cm(x), 10, 50)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                cm(x)
            torch.cuda.synchronize()
    kernels = {}
    for e in prof.key_averages():
        us = getattr(e, "device_time_total", None)
        if us is None:
            us = e.cuda_time_total
        if us > 0:
            kernels[e.key] = {"ms_per_forward": us / 5e3, "calls_per_forward": e.count / 5}
    summary["candidates"][name] = {"graph_ms": t, "modelled_convs_ms": modelled,
                                   "spconv": len(cand["spconv"]), "kernels": kernels}
    with open(os.path.join(outdir, "profile-%s.txt" % name), "w") as f:
        f.write(str(cm.code) + "\n")
        f.write(prof.key_averages().table(sort_by="cuda_time_total", row_limit=60))
    print("%s: graph %.4f ms, modelled convs %.4f ms, %d kernels" %
          (name, t, modelled, len(cand["spconv"])), flush=True)
with open(os.path.join(outdir, "candidates-b%d.json" % batch), "w") as f:
    json.dump({"measured": meas, "profile": summary}, f, indent=1)
