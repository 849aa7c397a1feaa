#!/usr/bin/env python3
"""Which sparse kernels pay inside ResNet-50 FP16 at batch 64 (image pairs), and does the
measured policy's per-layer model say so? On the GPU machine, from a carried kernel cache:

1. the model compiled with the default (measured) policy, as bench/torch_backend.py does;
2. end to end from CUDA graphs, in alternating rounds, every candidate the policy timed and
   the stage prefixes: every layer with a kernel compiled up to the end of a stage (the stem;
   + layer1; + layer2; + layer3; all), the rest kept channels-last. Each plan's output is
   checked against the FP32 model first;
3. torch.profiler over forwards of the every-layer-kept plan and of the all-kernels plan:
   each conv's device time inside the network (its SpconvConv2d call, kernels and
   in-module conversions summed) against the policy's time of the layer alone.

The input is scaled by 0.1, as bench/torch_backend.py's runs are (--input-scale 0.1): at
1.0 the FP16 models overflow, PyTorch's too, and no output can be checked (call 8 ran so).

usage: plans.py CACHE OUT.json [--batch 64] [--layout image_pairs]"""
import copy
import json
import os
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import torch  # noqa: E402
import e2e_torch  # noqa: E402
import torch_backend  # noqa: E402
import immconv.torch as it  # noqa: E402
from immconv.torch import layout as L  # noqa: E402
from immconv.torch.bench import time_cuda_graph  # noqa: E402

cache, out = sys.argv[1:3]
rest = sys.argv[3:]
BATCH = int(rest[rest.index("--batch") + 1]) if "--batch" in rest else 64
LAYOUT = rest[rest.index("--layout") + 1] if "--layout" in rest else "image_pairs"
ns = type("A", (), dict(net="resnet50", batch=BATCH, sparsity=0.9, seed=1, dtype="f16",
                        accumulate="half", input_scale=0.1, layout=LAYOUT, compiler_arg=None,
                        policy="default"))()
model32, x32, model, x = torch_backend.make(ns)
model32, x32, model, x = model32.cuda(), x32.cuda(), model.cuda(), x.cuda()
torch.backends.cudnn.benchmark = True
e2e_torch.set_tf32(False)
with torch.no_grad():
    ref = model32(x32).float()
    cl = copy.deepcopy(model).to(memory_format=torch.channels_last)
    base_err, _ = e2e_torch.rel_err(cl(x.contiguous(memory_format=torch.channels_last)).float(),
                                    ref)
opts = dict(torch_backend.policy_options("default"), **torch_backend.compile_options(ns))
cm = it.compile(model, x, out_dir=tempfile.mkdtemp(), kernel_cache=cache, progress=False,
                **opts)
meas = cm.spconv_measurements
rows = {r["module"]: r for r in meas["layers"]}
report = meas["layout"]
modules = dict(cm.named_modules())


def decision(spconv):
    """Kernels on `spconv` (where the layer has one), every other layer kept channels-last."""
    return {n: L.SPCONV if n in spconv and r.get("spconv") is not None else
            (L.TORCH_CL if L.TORCH_CL in L.options(r) else L.TORCH) for n, r in rows.items()}


plans = {}
for name, c in report.get("candidates", {}).items():
    plans[name] = {n: L.SPCONV if n in c["spconv"] else
                   (L.TORCH_CL if n in c["channels_last"] else L.TORCH) for n in rows}
stages = ["conv1", "layer1", "layer2", "layer3", "layer4"]
for i, s in enumerate(stages):
    keep = tuple(stages[:i + 1])
    plans["prefix_" + s] = decision({n for n in rows if n.split(".")[0] in keep})
chosen = report.get("chosen")
print("policy chose %s; plans: %s" % (chosen, list(plans)), flush=True)

res = {"device": torch.cuda.get_device_name(), "batch": BATCH, "layout": LAYOUT,
       "policy_chosen": chosen, "policy_end_to_end_ms": report.get("end_to_end_ms"),
       "baseline_max_rel_err": base_err, "plans": {}}
with torch.no_grad():
    for name, d in plans.items():
        L.apply(modules, d, rows, cm)
        err, _ = e2e_torch.rel_err(cm(x).float(), ref)
        res["plans"][name] = {"kernels": sorted(n for n, v in d.items() if v == L.SPCONV),
                              "max_rel_err": err, "within_2x_baseline": err <= 2 * base_err,
                              "modelled_ms": L.total(rows, report["producers"],
                                                     report["observed"], d,
                                                     [tuple(j) for j in report["junctions"]]),
                              "rounds_ms": []}
    for r in range(4):
        for name in (list(plans) if r % 2 == 0 else list(plans)[::-1]):
            L.apply(modules, plans[name], rows, cm)
            res["plans"][name]["rounds_ms"].append(time_cuda_graph(lambda: cm(x), 10, 30))
for name, p in res["plans"].items():
    p["ms"] = statistics.mean(p["rounds_ms"])
    print("%-16s %2d kernels  %.4f ms (modelled %.4f)  err %.2g" % (
        name, len(p["kernels"]), p["ms"], p["modelled_ms"], p["max_rel_err"]), flush=True)

# each conv's device time inside the forward, in the all-kept and all-kernels plans
ranges = {}


def enter(name):
    def hook(mod, inp):
        ranges[name] = torch.profiler.record_function("conv:" + name)
        ranges[name].__enter__()
    return hook


def leave(name):
    def hook(mod, inp, outp):
        ranges.pop(name).__exit__(None, None, None)
    return hook


handles = []
for n in rows:
    handles += [modules[n].register_forward_pre_hook(enter(n)),
                modules[n].register_forward_hook(leave(n))]
res["in_network"] = {}
for name in ("all_kept", "prefix_layer4"):
    if name not in plans:
        continue
    L.apply(modules, plans[name], rows, cm)
    with torch.no_grad():
        for _ in range(5):
            cm(x)
        torch.cuda.synchronize()
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            for _ in range(10):
                cm(x)
            torch.cuda.synchronize()
    per = {}
    for e in prof.events():
        if e.name.startswith("conv:"):
            t = getattr(e, "device_time_total", None)
            per.setdefault(e.name[5:], []).append(t if t is not None else e.cuda_time_total)
    table = []
    for n, r in rows.items():
        opt = plans[name][n]
        alone = L.options(r)[opt] if opt != L.SPCONV else r["spconv"]
        if n in per:
            table.append({"layer": n, "option": opt, "alone_us": alone * 1e3,
                          "in_network_us": statistics.mean(per[n])})
    res["in_network"][name] = table
    sa = sum(t["alone_us"] for t in table)
    sn = sum(t["in_network_us"] for t in table)
    print("%s: %d convs, alone %.1f us, in network %.1f us" % (name, len(table), sa, sn))
    for t in table:
        print("  %-22s %-20s alone %7.1f  in network %7.1f" % (
            t["layer"], t["option"], t["alone_us"], t["in_network_us"]))
for h in handles:
    h.remove()
json.dump(res, open(out, "w"), indent=1)
