#!/usr/bin/env python3
"""Each sparse kernel's time inside a ResNet-50 `.half()` forward at batch 1 (every conv
compiled, NCHW), from torch.profiler (CUPTI sees the driver-API launches by their entry
names), against the same kernel timed alone by the policy (`--policy default`'s per-layer
`spconv`, warm CUDA-graph replays). With --cudnn, the same for PyTorch FP16 channels-last
(cudnn.benchmark): each conv's kernels inside the plain `.half()` model's forward (a
record_function range around each Conv2d, summed over the kernels it launched) against the
policy's `cudnn_fp16_channels_last` time of that conv alone. Device.
usage: in_network.py CACHE POLICY.json OUT.json [--cudnn] [--batch N] [--layout L]
                     [--net NET] [--forwards-only]
(ResNet-50, batch 1 and nchw unless said; POLICY.json from a --policy default run of that batch and
layout). --forwards-only runs the forwards without torch.profiler and writes nothing, for
ncu to profile a kernel inside the network (ncu and torch.profiler do not share a process;
POLICY.json and OUT.json are then not read or written)."""
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

cache, policy_json, out = sys.argv[1:4]
rest = sys.argv[4:]
CUDNN = "--cudnn" in rest
BATCH = int(rest[rest.index("--batch") + 1]) if "--batch" in rest else 1
LAYOUT = rest[rest.index("--layout") + 1] if "--layout" in rest else "nchw"
NET = rest[rest.index("--net") + 1] if "--net" in rest else "resnet50"
ns = type("A", (), dict(net=NET, batch=BATCH, sparsity=0.9, seed=1, dtype="f16",
                        accumulate="half", input_scale=0.1, layout=LAYOUT, compiler_arg=None,
                        policy="all"))()
_, _, model, x = torch_backend.make(ns)
model, x = model.cuda(), x.cuda()
if CUDNN:
    torch.backends.cudnn.benchmark = True
    cm = model.to(memory_format=torch.channels_last)
    x = x.contiguous(memory_format=torch.channels_last)
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
    for name, mod in cm.named_modules():
        if isinstance(mod, torch.nn.Conv2d):
            mod.register_forward_pre_hook(enter(name))
            mod.register_forward_hook(leave(name))
else:
    opts = dict(torch_backend.policy_options("all"), **torch_backend.compile_options(ns))
    cm = it.compile(model, x, out_dir=tempfile.mkdtemp(), kernel_cache=cache, progress=False,
                    **opts)
FORWARDS = 20
if "--forwards-only" in rest:
    with torch.no_grad():
        for _ in range(5 + FORWARDS):
            cm(x)
        torch.cuda.synchronize()
    sys.exit(0)
with torch.no_grad():
    for _ in range(5):
        cm(x)
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CUDA]
    if CUDNN:  # the record_function ranges are CPU events
        acts.append(torch.profiler.ProfilerActivity.CPU)
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(FORWARDS):
            cm(x)
        torch.cuda.synchronize()
in_net = {}
if CUDNN:
    # every range's kernels (its CPU descendants' device time), by layer
    for e in prof.events():
        if e.name.startswith("conv:"):
            r = in_net.setdefault(e.name[5:], {"count": 0, "us": 0.0})
            r["count"] += 1
            r["us"] += getattr(e, "device_time_total", None) or e.cuda_time_total
    for r in in_net.values():
        r["us_each"] = r["us"] / r["count"]
for e in [] if CUDNN else prof.key_averages():
    if e.key.startswith("spconv_conv2d_"):
        total = getattr(e, "device_time_total", None)
        if total is None:
            total = e.cuda_time_total
        in_net[e.key] = {"count": e.count, "us_each": total / e.count}
# the policy's isolated (warm) time of each layer's kernel, by entry name
measured = json.load(open(policy_json))["variants"]["immconv_explicit"]["measured"]
if isinstance(measured, str):
    import ast
    measured = ast.literal_eval(measured)
rows = []
for layer in measured["layers"]:
    k = layer["module"] if CUDNN else layer.get("entry")
    alone = layer.get("cudnn_fp16_channels_last" if CUDNN else "spconv")
    if not k or k not in in_net or alone is None:
        continue
    rows.append({"layer": layer["layer"], "entry": k, "alone_us": alone * 1e3,
                 "in_network_us": in_net[k]["us_each"],
                 "kept_channels_last_us": layer.get("kept_channels_last", 0) * 1e3})
s_alone = sum(r["alone_us"] for r in rows)
s_net = sum(r["in_network_us"] for r in rows)
for r in rows:
    print("%-24s alone %6.2f us  in network %6.2f us  (%.2fx)  cuDNN CL folded alone %6.2f us"
          % (r["layer"], r["alone_us"], r["in_network_us"], r["in_network_us"] / r["alone_us"],
             r["kept_channels_last_us"]))
print("sum over %d kernels: alone %.1f us, in network %.1f us (%.2fx)"
      % (len(rows), s_alone, s_net, s_net / s_alone))
json.dump({"device": torch.cuda.get_device_name(), "forwards": FORWARDS, "net": NET,
           "batch": BATCH,
           "layout": LAYOUT,
           "kernels": "cudnn_fp16_channels_last" if CUDNN else "spconv", "rows": rows,
           "sum_alone_us": s_alone, "sum_in_network_us": s_net}, open(out, "w"), indent=1)
