#!/usr/bin/env python3
"""End-to-end PyTorch check and timing of immconv.torch, in two phases on two machines.

  # here (MLIR + spconv-translate + ptxas, no GPU): build, prune, compile
  /usr/bin/python3 bench/e2e_torch.py --phase compile --net resnet50 --batch 1 \
      --sparsity 0.9 --seed 1 --out bench/results/e2e-r50
  # on the GPU machine (torch + torchvision + CUDA; no MLIR, no spconv-translate)
  python3 bench/e2e_torch.py --phase run --out bench/results/e2e-r50 [--layers]

The model is torchvision's (weights=None: no download) with weights drawn from numpy
default_rng(seed) in state_dict order (so both machines get the same weights whatever their
torch versions; the compile directory's manifest holds a hash of every folded conv, and the
run phase refuses a model that differs). Every conv's weights are magnitude-pruned per layer
to --sparsity (the floor(p * n) smallest |w| become 0) and rescaled to variance 2 / fan_in;
BN statistics and affine parameters are random, so folding is not the identity. Every conv is
compiled (sparsity_threshold = 0). --save-state-dict also writes DIR/state_dict.pt. DIR keeps
what the run phase needs: e2e-config.json, manifest.json, model.json and model.cubin (or
model.cubin.gz with --gzip); model.ptx and model.mlir are removed unless --keep-intermediates.

Run phase: outputs of the spconv model vs the unmodified model in FP32 with TF32 off
(max relative error per image, relative to that image's max |ref|, the max over the batch),
then end-to-end latency (CUDA events, warm-up, median) of: spconv, PyTorch FP32 (TF32 off),
TF32, FP16 channels-last; cudnn.benchmark on. --layers also times every compiled conv
against its cuDNN original (immconv.torch.benchmark_layers) into DIR/layers.json
(immconv.plots draws it). Result: DIR/e2e.json.
"""
import argparse
import datetime
import gzip
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

CONFIG = "e2e-config.json"
NETS = {"resnet50": "resnet50", "vgg16": "vgg16", "mobilenetv2": "mobilenet_v2"}


class Tiny(nn.Module):
    """A four-conv network for smoke tests of this script (compiles in seconds)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16, bias=False), nn.BatchNorm2d(16),
            nn.ReLU6(inplace=True), nn.Conv2d(16, 32, 1, bias=False), nn.BatchNorm2d(32),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


def build_model(net):
    if net == "tiny":
        return Tiny()
    import torchvision
    return getattr(torchvision.models, NETS[net])(weights=None)


def prune(w, p):
    """The floor(p * n) smallest |w| become 0 (ties by index), as bench/networks.py."""
    flat = w.reshape(-1)
    count = int(np.floor(p * flat.size + 1e-9))
    if count:
        order = np.argsort(np.abs(flat), kind="stable")
        flat[order[:count]] = 0.0
    return w


def randomize(model, sparsity, seed):
    """Deterministic weights from numpy, in state_dict order; convs pruned and rescaled."""
    rng = np.random.default_rng(seed)
    sd = model.state_dict()
    mods = dict(model.named_modules())
    new = {}
    for key, t in sd.items():
        if not t.is_floating_point():
            new[key] = t
            continue
        owner, _, leaf = key.rpartition(".")
        m = mods.get(owner)
        shape = tuple(t.shape)
        if isinstance(m, nn.Conv2d) and leaf == "weight":
            fan_in = int(np.prod(shape[1:]))
            w = prune(rng.standard_normal(shape).astype(np.float32), sparsity)
            ms = float(np.mean(w.astype(np.float64) ** 2))
            if ms > 0:
                w *= np.float32(np.sqrt(2.0 / fan_in / ms))
        elif isinstance(m, nn.BatchNorm2d):
            if leaf in ("weight", "running_var"):
                w = rng.uniform(0.5, 1.5, shape).astype(np.float32)
            else:
                w = (rng.standard_normal(shape) * 0.1).astype(np.float32)
        elif isinstance(m, nn.Linear) and leaf == "weight":
            w = (rng.standard_normal(shape) / np.sqrt(shape[1])).astype(np.float32)
        else:
            w = (rng.standard_normal(shape) * 0.01).astype(np.float32)
        new[key] = torch.from_numpy(w)
    model.load_state_dict(new)
    return model.eval()


def make(cfg):
    model = randomize(build_model(cfg["net"]), cfg["sparsity"], cfg["seed"])
    rng = np.random.default_rng(cfg["seed"] + 1000)
    x = torch.from_numpy(rng.standard_normal((cfg["batch"], 3, cfg["image_size"],
                                              cfg["image_size"])).astype(np.float32))
    return model, x


def git_commit():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                       text=True)
    return r.stdout.strip() or None


def phase_compile(args):
    import immconv.torch as st
    cfg = {"net": args.net, "batch": args.batch, "sparsity": args.sparsity, "seed": args.seed,
           "image_size": args.image_size, "compile_commit": git_commit(),
           "compile_torch": torch.__version__}
    model, x = make(cfg)
    os.makedirs(args.out, exist_ok=True)
    if args.save_state_dict:
        torch.save(model.state_dict(), os.path.join(args.out, "state_dict.pt"))
    t0 = datetime.datetime.now()
    st.compile(model, x, out_dir=args.out, sparsity_threshold=0.0, cache_dir=args.cache_dir,
               jobs=args.jobs, kernel_cache=False)  # DIR self-contained: model.cubin
    cfg["compile_seconds"] = (datetime.datetime.now() - t0).total_seconds()
    if not args.keep_intermediates:
        # The run phase needs the cubin, the sidecar and the manifest only; the PTX and the
        # MLIR (weights as hex) are several times the cubin's size.
        for f in ("model.ptx", "model.mlir"):
            p = os.path.join(args.out, f)
            if os.path.exists(p):
                os.remove(p)
    if args.gzip:
        cubin = os.path.join(args.out, "model.cubin")
        with open(cubin, "rb") as fi, gzip.open(cubin + ".gz", "wb", compresslevel=6) as fo:
            shutil.copyfileobj(fi, fo)
        os.remove(cubin)
    with open(os.path.join(args.out, CONFIG), "w") as f:
        json.dump(cfg, f, indent=1)
    man = json.load(open(os.path.join(args.out, "manifest.json")))
    print("compiled %d convs (%d kept in PyTorch) in %.1f s -> %s"
          % (len(man["layers"]), len(man["kept"]), cfg["compile_seconds"], args.out))
    return 0


def set_tf32(on):
    torch.backends.cudnn.allow_tf32 = on
    torch.backends.cuda.matmul.allow_tf32 = on


def rel_err(out, ref):
    """Max over the batch of each image's max |out - ref| relative to its max |ref|."""
    per_image = ((out - ref).abs().flatten(1).max(1).values
                 / ref.abs().flatten(1).max(1).values.clamp_min(1e-30))
    return float(per_image.max()), per_image


def graph_replay_diff(fn, eager_out):
    """Captures one fn() in a CUDA graph, replays it and returns max |replayed - eager|: the
    compiled kernels must be capturable and give exactly the eager result."""
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = fn()
        graph.replay()
        torch.cuda.synchronize()
        return float((static_out - eager_out).abs().max())


def time_variants(variants, args, graphs):
    """Median ms of each variant (name -> (fn, tf32)); eager launches, or replays of a CUDA
    graph holding one forward pass."""
    from immconv.torch.bench import time_cuda, time_cuda_graph
    times = {}
    for name, (fn, tf32) in variants.items():
        set_tf32(tf32)
        if graphs:
            times[name] = time_cuda_graph(fn, args.warmup, args.repeats)
        else:
            times[name] = time_cuda(fn, args.warmup, args.repeats)
    set_tf32(False)
    return times


def phase_run(args):
    import immconv.torch as st
    cfg = json.load(open(os.path.join(args.out, CONFIG)))
    cubin = os.path.join(args.out, "model.cubin")
    if not os.path.exists(cubin) and os.path.exists(cubin + ".gz"):
        with gzip.open(cubin + ".gz", "rb") as fi, open(cubin, "wb") as fo:
            shutil.copyfileobj(fi, fo)
    model, x = make(cfg)
    sd = os.path.join(args.out, "state_dict.pt")
    if os.path.exists(sd):
        model.load_state_dict(torch.load(sd, map_location="cpu"))
    cm = st.load(model, args.out)
    dev = torch.device("cuda")
    model, cm, x = model.to(dev), cm.to(dev), x.to(dev)
    torch.backends.cudnn.benchmark = True
    set_tf32(False)
    with torch.no_grad():
        ref = model(x)
        out = cm(x)
        torch.cuda.synchronize()
    err, per_image = rel_err(out, ref)
    print("max relative error over the batch: %.3g" % err)
    import copy
    half = copy.deepcopy(model).half().to(memory_format=torch.channels_last)
    xh = x.half().contiguous(memory_format=torch.channels_last)
    variants = {"spconv": (lambda: cm(x), False), "pytorch_fp32": (lambda: model(x), False),
                "pytorch_tf32": (lambda: model(x), True),
                "pytorch_fp16_channels_last": (lambda: half(xh), False)}
    times = time_variants(variants, args, graphs=False)
    times_graph, graph_diff = None, None
    if args.graphs:
        graph_diff = graph_replay_diff(lambda: cm(x), out)
        print("CUDA graph replay vs eager output: max |diff| %.3g" % graph_diff)
        times_graph = time_variants(variants, args, graphs=True)
    layers = None
    if args.layers:
        layers = st.benchmark_layers(cm, x)
        with open(os.path.join(args.out, "layers.json"), "w") as f:
            json.dump(layers, f, indent=1)
    # A replayed graph must give exactly the eager output.
    selection, worst = None, err if not graph_diff else float("inf")
    if args.min_speedup is not None:
        # The measured keep-in-cuDNN policy (immconv.torch.compile(min_speedup=...)): every
        # compiled layer timed against its original from CUDA graphs, the slower ones put back.
        from immconv.torch.pipeline import apply_min_speedup
        res = apply_min_speedup(cm, x, args.min_speedup, graphs=True)
        with torch.no_grad():
            sel_err, _ = rel_err(cm(x), ref)
        sel = {"spconv_selected": variants["spconv"]}
        selection = {"min_speedup": args.min_speedup, "timing": res["timing"],
                     "torch_mode": [r["module"] for r in res["layers"]
                                    if r["decision"] == "torch"],
                     "max_rel_err": sel_err,
                     "time_ms": time_variants(sel, args, graphs=False)["spconv_selected"]}
        if args.graphs:
            selection["time_ms_graph"] = time_variants(sel, args, graphs=True)["spconv_selected"]
        with open(os.path.join(args.out, "layers-graph.json"), "w") as f:
            json.dump(res, f, indent=1)
        print("min_speedup %.2f: %d of %d layers back to PyTorch, max rel err %.3g"
              % (args.min_speedup, len(selection["torch_mode"]), len(res["layers"]), sel_err))
        worst = max(worst, sel_err)
    man = json.load(open(os.path.join(args.out, "manifest.json")))
    rec = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": torch.cuda.get_device_name(dev), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version(), "commit": git_commit(), "config": cfg,
           "convs_compiled": len(man["layers"]), "convs_kept": len(man["kept"]),
           "max_rel_err": err, "per_image_rel_err": [float(v) for v in per_image],
           "time_ms": times, "warmup": args.warmup, "repeats": args.repeats,
           "speedup": {k: v / times["spconv"] for k, v in times.items() if k != "spconv"}}
    if times_graph:
        rec["graph_replay_max_abs_diff"] = graph_diff
        rec["time_ms_graph"] = times_graph
        rec["speedup_graph"] = {k: v / times_graph["spconv"] for k, v in times_graph.items()
                                if k != "spconv"}
    if selection:
        for key in ("time_ms", "time_ms_graph"):
            if key in selection:
                base = rec[key]
                selection["speedup" + key[len("time_ms"):]] = {
                    k: v / selection[key] for k, v in base.items() if k != "spconv"}
        rec["selection"] = selection
    if layers:
        rec["layers_summed_ms"] = layers["totals"]
    with open(os.path.join(args.out, "e2e.json"), "w") as f:
        json.dump(rec, f, indent=1)
    print(json.dumps({k: rec[k] for k in ("device", "max_rel_err", "time_ms", "speedup")}))
    return 0 if worst <= args.tolerance else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--phase", choices=["compile", "run"], required=True)
    ap.add_argument("--out", required=True, metavar="DIR")
    ap.add_argument("--net", choices=sorted(NETS) + ["tiny"], default="resnet50")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--sparsity", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--cache-dir")
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--save-state-dict", action="store_true")
    ap.add_argument("--keep-intermediates", action="store_true",
                    help="keep model.ptx and model.mlir in DIR (removed by default)")
    ap.add_argument("--gzip", action="store_true",
                    help="store the cubin as model.cubin.gz (the run phase unpacks it)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--tolerance", type=float, default=1e-4,
                    help="run phase exits 1 above this max relative error")
    ap.add_argument("--layers", action="store_true", help="also per-layer times (layers.json)")
    ap.add_argument("--graphs", action="store_true",
                    help="also time every variant replayed from a CUDA graph (time_ms_graph)")
    ap.add_argument("--min-speedup", type=float, metavar="X",
                    help="also apply the measured policy (layers below X times their cuDNN "
                         "original, timed from CUDA graphs, go back to PyTorch) and time that "
                         "selection (record 'selection', DIR/layers-graph.json)")
    args = ap.parse_args(argv)
    return phase_compile(args) if args.phase == "compile" else phase_run(args)


if __name__ == "__main__":
    sys.exit(main())
