#!/usr/bin/env python3
"""torch.compile(backend="immconv") against the explicit immconv.torch.compile, and the
default policy's floor, in two phases on two machines, sharing one immconv kernel cache.

  # here (spconv-translate + ptxas, torch without dynamo): fill the kernel cache
  /usr/bin/python3 bench/torch_backend.py --phase compile --cache C --net resnet50 \
      --batch 1 --sparsity 0.9 --policy all
  /usr/bin/python3 bench/torch_backend.py --phase compile --cache C --net resnet50 \
      --batch 64 --sparsity 0.5 --policy default
  # on the GPU machine (torch 2 with dynamo; no spconv-translate: every kernel from C)
  python3 bench/torch_backend.py --phase run --cache C --net resnet50 --batch 1 \
      --sparsity 0.9 --policy all --backend --out OUT/r50-b1-p0.9.json
  python3 bench/torch_backend.py --phase run --cache C --net resnet50 --batch 64 \
      --sparsity 0.5 --policy default --out OUT/r50-b64-p0.5.json

Models and weights are bench/e2e_torch.py's (torchvision, seeded numpy weights, every conv
magnitude-pruned to --sparsity), so both machines build the same convs and the cache keys
match. --policy all compiles every conv (sparsity_threshold=0, no measurement); --policy
default uses the defaults (the rule, then on CUDA the measured keep-or-compile decision).

Half precision (--dtype f16|bf16, --accumulate half|f32): the model is converted
(model.half() / .to(torch.bfloat16)) before compiling; the run phase adds PyTorch in that
dtype, channels-last (`pytorch_fp16_channels_last`, tensor cores, cudnn.benchmark), which is
then the baseline of `speedup_vs_...`; every error is against the FP32 model on the same
input, and the run passes if ours is at most --error-factor (2) x PyTorch's half error:

  /usr/bin/python3 bench/torch_backend.py --phase compile --cache C --net resnet50 \
      --batch 64 --sparsity 0.9 --policy all --dtype f16
  python3 bench/torch_backend.py --phase run --cache C --net resnet50 --batch 64 \
      --sparsity 0.9 --policy all --dtype f16 --out OUT/r50-b64-f16.json

Run phase, FP32 with TF32 off, cudnn.benchmark on, CUDA graphs (one forward per replay,
warm-up, median; bench/e2e_torch.py's timing): PyTorch (FP32 models also with TF32 on,
`pytorch_tf32`: PyTorch's default for convs), the explicit API, and with --backend
torch.compile(model, backend="immconv", options=<the same policy>) and the same model through
torch.export + immconv.torch.compile. Each output is checked against PyTorch FP32 (max over
the batch of max |out - ref| / max |ref| per image, bound --tolerance). Result JSON: --out.
"""
import argparse
import datetime
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import torch  # noqa: E402

import e2e_torch  # noqa: E402


def utc_now():
    """The wall clock in UTC, ISO 8601 to the millisecond (what timed_utc records)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def policy_options(policy):
    if policy == "all":
        return {"sparsity_threshold": 0.0, "min_speedup": None}
    return {}


HALF = {"f16": torch.float16, "bf16": torch.bfloat16}


def config(args):
    cfg = {"net": args.net, "batch": args.batch, "sparsity": args.sparsity, "seed": args.seed,
           "image_size": 224}
    if args.dtype != "f32":
        cfg["dtype"] = args.dtype
    if args.input_scale != 1.0:
        cfg["input_scale"] = args.input_scale
    return cfg


def compile_options(args):
    opts = {"accumulate": args.accumulate, "layout": args.layout} if args.dtype != "f32" \
        else {}
    if args.compiler_arg:
        opts["compiler_args"] = list(args.compiler_arg)
    return opts


def make(args):
    """e2e_torch's FP32 model and input; with --dtype f16/bf16 also converted copies
    (model.half() / .to(torch.bfloat16): what is compiled)."""
    cfg = config(args)
    model, x = e2e_torch.make({k: v for k, v in cfg.items() if k not in ("dtype",
                                                                         "input_scale")})
    x = x * args.input_scale
    if args.dtype == "f32":
        return model, x, model, x
    import copy
    return model, x, copy.deepcopy(model).to(HALF[args.dtype]), x.to(HALF[args.dtype])


def tag(args):
    t = "%s-b%d-p%s-%s" % (args.net, args.batch, args.sparsity, args.policy)
    if args.dtype != "f32":
        t += "-%s-acc%s" % (args.dtype, args.accumulate)
    if args.dtype != "f32" and args.layout != "image_pairs":
        t += "-" + args.layout
    return t


def phase_compile(args):
    import immconv.torch as it
    _, _, model, x = make(args)
    t0 = time.time()
    out_dir = os.path.join(args.cache, "explicit-" + tag(args))
    it.compile(model, x, out_dir=out_dir, kernel_cache=args.cache, jobs=args.jobs,
               progress=True, **policy_options(args.policy), **compile_options(args))
    man = json.load(open(os.path.join(out_dir, "manifest.json")))
    # the run phase compiles again from the cache; the directory itself is not needed there
    for f in os.listdir(out_dir):
        os.remove(os.path.join(out_dir, f))
    os.rmdir(out_dir)
    rec = {"config": config(args), "policy": args.policy, "compile_seconds": time.time() - t0,
           "convs_compiled": len(man["layers"]), "convs_kept": len(man["kept"]),
           "kept": man["kept"],
           # half convs the default rule does not compile, rewritten to run fused (no kernel)
           "convs_fused_without_kernel": len(man.get("fused", ())),
           "commit": e2e_torch.git_commit(), "torch": torch.__version__}
    with open(os.path.join(args.cache, "compile-%s.json" % tag(args)), "w") as f:
        json.dump(rec, f, indent=1)
    print("compiled %d convs (%d kept, %d fused without a kernel) in %.1f s"
          % (rec["convs_compiled"], rec["convs_kept"], rec["convs_fused_without_kernel"],
             rec["compile_seconds"]))
    return 0


def count_modes(model):
    from immconv.torch import SpconvConv2d
    mods = [m for m in model.modules() if isinstance(m, SpconvConv2d)]
    out = {"compiled": sum(m.kernel is not None for m in mods),
           "spconv": sum(m.mode != "torch" for m in mods)}
    if any(m.kernel is None for m in mods):  # the half rule's layers: fused, no kernel
        out["fused_without_kernel"] = sum(m.kernel is None for m in mods)
    return out


def phase_run(args):
    import immconv.torch as it
    from immconv.torch.bench import time_cuda_graph
    from immconv.torch import fastcopy
    import tempfile
    cfg = config(args)
    model32, x32, model, x = make(args)
    dev = torch.device("cuda")
    model32, x32, model, x = model32.to(dev), x32.to(dev), model.to(dev), x.to(dev)
    torch.backends.cudnn.benchmark = True
    e2e_torch.set_tf32(False)
    opts = dict(policy_options(args.policy), **compile_options(args))
    if args.keep_missing:
        # convs whose kernels the carried cache lacks stay in PyTorch (no compiler there)
        from immconv.torch import kcache, pipeline
        layers, _ = pipeline.plan(model, x, opts.get("sparsity_threshold", "auto"),
                                  accumulate=opts.get("accumulate", "half"),
                                  layout=opts.get("layout", "image_pairs"))
        cache = kcache.KernelCache(args.cache)
        extra = tuple(opts.get("compiler_args", ()))
        missing = sorted(l["module"] for l in layers if not l.get("fused_only") and
                         cache.entry(kcache.layer_key(l["_spec"], extra)) is None)
        opts["keep"] = set(missing)
        print("not in the kernel cache, kept in PyTorch: %s" % missing, flush=True)
    rec = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "device": torch.cuda.get_device_name(dev), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version(),
           # the device's copy of the tree may carry stale git metadata: IMMCONV_COMMIT wins
           "commit": os.environ.get("IMMCONV_COMMIT") or e2e_torch.git_commit(),
           "config": cfg, "policy": args.policy,
           "options": {k: sorted(v) if isinstance(v, set) else v for k, v in opts.items()}, "warmup": args.warmup,
           "repeats": args.repeats, "timing": "cuda-graph, one forward per replay, median",
           "variants": {}}
    with torch.no_grad():
        ref = model32(x32).float()
    variants = {}

    def add(name, fn, build_s, info=None):
        calls = fastcopy.stats()
        with torch.no_grad():
            out = fn()
            torch.cuda.synchronize()
            err, _ = e2e_torch.rel_err(out.float(), ref)
        variants[name] = fn
        rec["variants"][name] = dict(info or {}, max_rel_err=err, build_seconds=build_s)
        # how this forward ran immconv's layout conversions and pools over pairs: compiled
        # or eager (fastcopy.py); none for PyTorch's own models
        after = fastcopy.stats()
        rec["variants"][name]["layout_op_calls"] = {k: after[k] - calls[k] for k in calls}
        print("%s: max rel err %.3g (build %.1f s) %s" % (name, err, build_s, info or ""),
              flush=True)

    add("pytorch_fp32", lambda: model32(x32), 0.0)
    baseline = "pytorch_fp32"
    if args.dtype == "f32":
        # PyTorch's default for FP32 convs: TF32 tensor cores. The flags are read when an op
        # is dispatched, so a CUDA graph captured inside this call keeps TF32 kernels.
        def tf32():
            e2e_torch.set_tf32(True)
            try:
                return model32(x32)
            finally:
                e2e_torch.set_tf32(False)
        add("pytorch_tf32", tf32, 0.0)
    if args.dtype != "f32":
        # PyTorch as a half-precision deployment runs: the same model.half() (bfloat16),
        # channels-last, cudnn.benchmark (tensor cores)
        import copy
        cl = copy.deepcopy(model).to(memory_format=torch.channels_last)
        xcl = x.contiguous(memory_format=torch.channels_last)
        baseline = "pytorch_%s_channels_last" % {"f16": "fp16", "bf16": "bf16"}[args.dtype]
        add(baseline, lambda: cl(xcl), 0.0)
        if args.inductor:
            # a fused dense baseline: the same channels-last model through torch.compile's
            # default backend (Inductor: BN folded, elementwise ops fused), reported beside
            # the eager baseline
            t0 = time.time()
            ind = torch.compile(cl)
            with torch.no_grad():
                ind(xcl)
            add(baseline + "_inductor", lambda: ind(xcl), time.time() - t0)
    rec["baseline"] = baseline
    t0 = time.time()
    cm = it.compile(model, x, out_dir=tempfile.mkdtemp(), kernel_cache=args.cache,
                    progress=False, **opts)
    add("immconv_explicit", lambda: cm(x), time.time() - t0, count_modes(cm))
    if getattr(cm, "spconv_measurements", None):
        # the measured keep-or-compile decision's per-layer times (--policy default)
        rec["variants"]["immconv_explicit"]["measured"] = cm.spconv_measurements
    if args.dtype != "f32":
        # The ablation: the same compiled model with every conv kept channels-last (cuDNN,
        # BN folded, ReLU and add-ReLU fused; layout.py), no sparse kernel. What the fusion
        # alone gives; the sparse kernels' own share is its time over immconv_explicit's.
        import copy
        from immconv.torch import carry
        dense = copy.deepcopy(cm)
        rows = {r["module"]: r for r in
                (getattr(cm, "spconv_measurements", None) or {}).get("layers", ())}
        mods = {n: m for n, m in dense.named_modules() if isinstance(m, it.SpconvConv2d)}
        for n, m in mods.items():  # each the faster way measured (the folded one if none)
            m.keep_in_torch("channels_last", rows.get(n, {}).get("kept_channels_last_impl"))
        carry.carry(dense)  # no kernel runs: no image pairs between the layers
        add("immconv_all_kept_channels_last", lambda: dense(x), 0.0, count_modes(dense))
    if args.backend:
        from immconv.torch.dynamo import immconv_backend
        torch._dynamo.reset()
        os.environ["IMMCONV_CACHE_DIR"] = args.cache
        t0 = time.time()
        cmodel = torch.compile(model, backend="immconv", options=opts)
        with torch.no_grad():
            cmodel(x)
        try:
            rec["backend_registered_by_entry_point"] = "immconv" in \
                torch._dynamo.list_backends(exclude_tags=())
        except Exception as e:  # noqa: BLE001 - recorded, not fatal
            rec["backend_registered_by_entry_point"] = repr(e)
        stats = immconv_backend.stats()
        add("torch_compile_immconv", lambda: cmodel(x), time.time() - t0, stats)
        t0 = time.time()
        ep = torch.export.export(model, (x,))
        em = it.compile(ep, (x,), out_dir=tempfile.mkdtemp(), kernel_cache=args.cache,
                        progress=False, **opts)
        add("torch_export_immconv", lambda: em(x), time.time() - t0, count_modes(em))
        if args.reshape_batch:
            # a new input shape compiles again (its kernels must be in the cache: compiled
            # here with --batch RESHAPE_BATCH), and gives PyTorch's result
            cfg2 = dict(cfg, batch=args.reshape_batch)
            cfg2.pop("dtype", None)
            cfg2.pop("input_scale", None)
            _, x2 = e2e_torch.make(cfg2)
            x2 = (x2 * args.input_scale).to(dev)
            before = immconv_backend.stats()["compiles"]
            with torch.no_grad():
                ref2 = model32(x2).float()
                x2 = x2.to(x.dtype)
                out2 = cmodel(x2).float()
                torch.cuda.synchronize()
            err2, _ = e2e_torch.rel_err(out2, ref2)
            rec["reshape"] = {"batch": args.reshape_batch, "max_rel_err": err2,
                              "backend_compiles_for_it": immconv_backend.stats()["compiles"]
                              - before}
            print("new shape: %s" % rec["reshape"], flush=True)
        rec["backend_stats"] = immconv_backend.stats()
    times = {}
    for name, fn in variants.items():
        # When each variant's timing ran, in UTC to the millisecond: a clock trace taken
        # beside the run (nvidia-smi) is joined to it by bench/clock_phases.py, so that a
        # time can say what clock and power state it ran at.
        start = utc_now()
        times[name] = time_cuda_graph(fn, args.warmup, args.repeats)
        rec["variants"][name]["timed_utc"] = [start, utc_now()]
        print("%s: %.4f ms" % (name, times[name]), flush=True)
    for name in variants:
        rec["variants"][name]["time_ms_graph"] = times[name]
        rec["variants"][name]["speedup_vs_pytorch_fp32"] = times["pytorch_fp32"] / times[name]
        if baseline != "pytorch_fp32":
            rec["variants"][name]["speedup_vs_" + baseline] = times[baseline] / times[name]
    if "torch_compile_immconv" in times:
        rec["backend_over_explicit_time"] = (times["torch_compile_immconv"]
                                             / times["immconv_explicit"])
    ours = [v["max_rel_err"] for k, v in rec["variants"].items() if not k.startswith("pytorch")]
    worst = max(ours + [rec.get("reshape", {}).get("max_rel_err", 0.0)])
    if baseline == "pytorch_fp32":
        rec["tolerance"] = args.tolerance
    else:
        # the accuracy floor: at most --error-factor x PyTorch's own half-precision
        # error against FP32 on the same input
        rec["baseline_max_rel_err"] = rec["variants"][baseline]["max_rel_err"]
        rec["error_factor"] = args.error_factor
        rec["tolerance"] = args.error_factor * rec["baseline_max_rel_err"]
        rec["max_rel_err_over_baseline"] = {
            k: v["max_rel_err"] / rec["baseline_max_rel_err"]
            for k, v in rec["variants"].items() if k != "pytorch_fp32"}
    rec["within_tolerance"] = worst <= rec["tolerance"]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(rec, f, indent=1)
    return 0 if rec["within_tolerance"] else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--phase", choices=["compile", "run"], required=True)
    ap.add_argument("--cache", required=True, help="the immconv kernel cache directory")
    ap.add_argument("--net", choices=sorted(e2e_torch.NETS) + ["tiny"], default="resnet50")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--sparsity", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--policy", choices=["all", "default"], default="default")
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32",
                    help="compile model.half() / model.to(torch.bfloat16) (run phase: against "
                         "PyTorch in that dtype, channels-last; errors against FP32)")
    ap.add_argument("--accumulate", choices=["half", "f32"], default="half",
                    help="with --dtype f16/bf16: immconv.torch.compile(accumulate=...)")
    ap.add_argument("--layout", choices=["nchw", "image_pairs"], default="image_pairs",
                    help="with --dtype f16/bf16: immconv.torch.compile(layout=...): half "
                         "kernels in the image-pair layout (the default, where the batch is "
                         "even), carried through the graph, or NCHW")
    ap.add_argument("--backend", action="store_true",
                    help="also torch.compile(backend='immconv') and torch.export")
    ap.add_argument("--reshape-batch", type=int, metavar="N",
                    help="with --backend: then call the compiled model at batch N")
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--inductor", action="store_true",
                    help="half precision: also time the channels-last model through "
                         "torch.compile's default backend (a fused dense baseline)")
    ap.add_argument("--input-scale", type=float, default=1.0,
                    help="multiply the input by this (every variant, the FP32 reference too): "
                         "e2e_torch's ResNet-50 at p = 0.9 reaches 1.1e5 in layer4 on its "
                         "unit-variance input, past float16's 65504")
    ap.add_argument("--keep-missing", action="store_true",
                    help="run phase: convs the kernel cache lacks stay in PyTorch")
    ap.add_argument("--compiler-arg", action="append", metavar="FLAG",
                    help="extra spconv-translate flag (immconv.torch.compile(compiler_args=)); "
                         "part of the kernel cache key, so give it to the run phase too")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--tolerance", type=float, default=1e-4,
                    help="FP32: the largest max relative error accepted")
    ap.add_argument("--error-factor", type=float, default=2.0,
                    help="f16/bf16: the largest error accepted, as a multiple of PyTorch's in "
                         "that dtype (channels-last) against FP32")
    ap.add_argument("--out", help="result JSON (run phase)")
    args = ap.parse_args(argv)
    return phase_compile(args) if args.phase == "compile" else phase_run(args)


if __name__ == "__main__":
    sys.exit(main())
