#!/usr/bin/env python3
"""cuDNN through PyTorch as a second baseline for recorded spconv-bench results.

spconv-bench's "cuDNN FP32 (best algo)" is the best of cuDNN's legacy
cudnnFindConvolutionForwardAlgorithm (8 algorithms). PyTorch reaches cuDNN 9 through its
frontend/graph API (more engines, split-K kernels for small grids), and with
cudnn.benchmark on it times them and keeps the fastest: on small grids (ResNet-50's 14x14 and
7x7 layers at batch 1) that is up to 5x faster than the legacy best. A user comparing with
"cuDNN" runs PyTorch, so every speed claim is also made against this baseline.

For every layer of one or more recorded results (bench/results/*: a spconv-bench network run,
`{"run": {"layers": [...]}}`, or a suite run, `{"cases": [...]}`; each row holds `shape` and
the spconv time), on the GPU machine:

  python3 bench/torch_baseline.py RESULTS.json [...] --out OUT.json

times F.conv2d (+ bias, + ReLU/ReLU6 as the spconv kernel fuses them; random dense weights:
cuDNN does not look at the values) in FP32 with TF32 off and with TF32 on (NCHW), and in FP16
and BF16 (the model.half() / .to(torch.bfloat16) a deployment runs: input, weights and bias in
that type, channels-last input and weights), cudnn.benchmark on, each replayed from a CUDA
graph of 20 calls (device time per call, like spconv-bench's timing), median of --repeats
replays. --modes picks which (default all four). Output: per-layer rows with spconv (from the
results), torch_cudnn_fp32/tf32/fp16/bf16 (ms) and the ratios, totals and geomeans per input
file. For a half-precision spconv result (its JSON's "dtype" is f16 or bf16), the row also
holds cudnn_best_half, the faster of PyTorch in that type (channels-last) and spconv-bench's
best_cudnn_half (legacy cuDNN in that type, NCHW or NHWC), and x_best_half against it: issue
27's "cuDNN FP16".
"""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


def rows_of(doc):
    if "run" in doc and "layers" in doc["run"]:
        return doc["run"]["layers"]
    if "cases" in doc:
        return doc["cases"]
    if "layers" in doc:
        return doc["layers"]
    raise SystemExit("no layers/cases in the results file")


def timed_ms(row, name):
    """A contender's time in ms from a network-run row (`spconv`) or a suite case
    (`times_ms.spconv`)."""
    if isinstance(row.get(name), (int, float)):
        return row[name]
    # (a spconv-bench report's top-level "best_cudnn_half" is an object: its time is in
    # times_ms)
    return (row.get("times_ms") or {}).get(name)


# mode -> (torch dtype name, TF32 allowed, channels-last)
MODES = {"torch_cudnn_fp32": ("float32", False, False),
         "torch_cudnn_tf32": ("float32", True, False),
         "torch_cudnn_fp16": ("float16", False, True),
         "torch_cudnn_bf16": ("bfloat16", False, True)}
HALF_MODE = {"f16": "torch_cudnn_fp16", "bf16": "torch_cudnn_bf16"}


def summarize(rows):
    timed = [r for r in rows if r["spconv"]]
    summary = summarize_fp32(timed)
    for mode in ("torch_cudnn_fp16", "torch_cudnn_bf16"):
        have = [r for r in timed if r.get(mode)]
        if have:
            key = mode[len("torch_cudnn_"):]
            summary[mode] = sum(r[mode] for r in have)
            summary["geomean_x_torch_" + key] = geomean([r[mode] / r["spconv"] for r in have])
    half = [r for r in timed if r.get("cudnn_best_half")]
    if half:
        summary["half_layers"] = len(half)
        summary["cudnn_best_half"] = sum(r["cudnn_best_half"] for r in half)
        summary["sum_x_best_half"] = (summary["cudnn_best_half"] /
                                      sum(r["spconv"] for r in half))
        summary["geomean_x_best_half"] = geomean([r["x_best_half"] for r in half])
        summary["layers_below_1x_best_half"] = sum(r["x_best_half"] < 1 for r in half)
    return summary


def summarize_fp32(timed):
    summary = {k: sum(r.get(k) or 0 for r in timed) for k in
               ("spconv", "torch_cudnn_fp32", "torch_cudnn_tf32", "cudnn_best_fp32")}
    summary["cudnn_legacy_fp32"] = sum(r["cudnn_legacy_fp32"] or 0 for r in timed)
    summary["layers"] = len(timed)
    summary["sum_x_torch_fp32"] = (summary["torch_cudnn_fp32"] / summary["spconv"]
                                   if summary["spconv"] else 0.0)
    summary["geomean_x_torch_fp32"] = geomean([r.get("x_torch_fp32", 0) for r in timed])
    summary["geomean_x_torch_tf32"] = geomean([r.get("x_torch_tf32", 0) for r in timed])
    summary["layers_below_1x_torch_fp32"] = sum(0 < r.get("x_torch_fp32", 0) < 1 for r in timed)
    summary["sum_x_best_fp32"] = (summary["cudnn_best_fp32"] / summary["spconv"]
                                  if summary["spconv"] else 0.0)
    summary["geomean_x_best_fp32"] = geomean([r.get("x_best_fp32", 0) for r in timed])
    summary["layers_below_1x_best_fp32"] = sum(0 < r.get("x_best_fp32", 0) < 1 for r in timed)
    return summary


def conv_fn(shape, torch, F, dtype="float32", channels_last=False):
    """A closure running the conv (+ bias, activation) of `shape` on random CUDA tensors of
    `dtype`; channels_last stores input and weights NHWC (torch.channels_last)."""
    s = shape
    g = s.get("groups", 1)
    dt = getattr(torch, dtype)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    x = torch.randn(s["N"], s["C"], s["H"], s["W"], device="cuda").to(dtype=dt,
                                                                       memory_format=fmt)
    w = torch.randn(s["K"], s["C"] // g, s["R"], s["S"], device="cuda").to(dtype=dt,
                                                                           memory_format=fmt)
    b = torch.randn(s["K"], device="cuda").to(dt) if s.get("has_bias") else None
    t, l, bo, r = s["padding"]
    if (t, l) != (bo, r):
        # Asymmetric padding: an explicit pad, as spconv-bench's cuDNN contender does.
        pad = (l, r, t, bo)
        padding = (0, 0)
    else:
        pad, padding = None, (t, l)
    act = s.get("activation", "none")

    def run():
        xi = F.pad(x, pad) if pad else x
        y = F.conv2d(xi, w, b, tuple(s["stride"]), padding, tuple(s["dilation"]), g)
        if act == "relu":
            y = F.relu(y)
        elif act == "relu6":
            y = F.relu6(y)
        return y

    out = run()
    if tuple(out.shape) != (s["N"], s["K"], s["P"], s["Q"]):
        raise SystemExit("shape %s: PyTorch computes %s" % (s, list(out.shape)))
    return run


def geomean(v):
    v = [a for a in v if a > 0]
    return math.exp(sum(math.log(a) for a in v) / len(v)) if v else 0.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--modes", default=",".join(m[len("torch_cudnn_"):] for m in MODES),
                    help="comma-separated subset of fp32,tf32,fp16,bf16 (default: all)")
    ap.add_argument("--reuse", metavar="BASELINE.json",
                    help="take the PyTorch times from an earlier output of this script for the "
                         "same results files (no GPU needed): re-joins and re-summarizes")
    args = ap.parse_args(argv)
    modes = ["torch_cudnn_" + m for m in args.modes.split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise SystemExit("unknown --modes: %s" % ", ".join(bad))

    reuse = json.load(open(args.reuse)) if args.reuse else None
    if reuse:
        torch = F = time_cuda_graph = None
    else:
        import torch
        import torch.nn.functional as F
        from immconv.torch.bench import time_cuda_graph
        torch.backends.cudnn.benchmark = True
    files = []
    for fi, path in enumerate(args.results):
        doc = json.load(open(path))
        rows = []
        for row in rows_of(doc):
            if row.get("status", "ok") != "ok" or "shape" not in row:
                continue
            rec = {"layer": row.get("layer"), "sparsity": row.get("sparsity"),
                   "shape": row["shape"], "spconv": timed_ms(row, "spconv"),
                   "cudnn_legacy_fp32": timed_ms(row, "cudnn_fp32")}
            if reuse:
                old = reuse["files"][fi]["layers"][len(rows)]
                if old["shape"] != row["shape"]:
                    raise SystemExit("%s: row %d differs from --reuse" % (path, len(rows)))
                for mode in modes:
                    rec[mode] = old.get(mode)
            else:
                for mode in modes:
                    dtype, tf32, channels_last = MODES[mode]
                    fn = conv_fn(row["shape"], torch, F, dtype, channels_last)
                    torch.backends.cudnn.allow_tf32 = tf32
                    rec[mode] = time_cuda_graph(fn, args.warmup, args.repeats, calls=20)
                    del fn
                    torch.backends.cudnn.allow_tf32 = False
                    torch.cuda.empty_cache()
            # The fairest FP32 baseline is the faster of the two ways into cuDNN.
            fp32 = [v for v in (rec.get("torch_cudnn_fp32"), rec["cudnn_legacy_fp32"]) if v]
            rec["cudnn_best_fp32"] = min(fp32) if fp32 else None
            # A half spconv kernel: the faster of PyTorch in its type and the legacy best.
            dtype = row.get("dtype", "f32")
            if dtype in HALF_MODE:
                rec["dtype"] = dtype
                rec["cudnn_legacy_best_half"] = timed_ms(row, "best_cudnn_half")
                half = [v for v in (rec.get(HALF_MODE[dtype]), rec["cudnn_legacy_best_half"])
                        if v]
                rec["cudnn_best_half"] = min(half) if half else None
            if rec["spconv"]:
                for key, mode in (("x_best_fp32", "cudnn_best_fp32"),
                                  ("x_torch_fp32", "torch_cudnn_fp32"),
                                  ("x_torch_tf32", "torch_cudnn_tf32"),
                                  ("x_torch_fp16", "torch_cudnn_fp16"),
                                  ("x_torch_bf16", "torch_cudnn_bf16"),
                                  ("x_best_half", "cudnn_best_half")):
                    if rec.get(mode):
                        rec[key] = rec[mode] / rec["spconv"]
            rows.append(rec)
        summary = summarize(rows)
        files.append({"results": path, "summary": summary, "layers": rows})
        if "torch_cudnn_fp32" not in modes:
            print("%s: %d layers, spconv %.3f ms (PyTorch FP32 not timed: --modes)" % (
                path, summary["layers"], summary["spconv"]))
        else:
            print("%s: %d layers, spconv %.3f ms, torch cuDNN FP32 %.3f ms (legacy best %.3f): "
                  "sum %.2fx, geomean %.2fx, %d below 1x; vs the faster of the two per layer: "
                  "sum %.2fx, geomean %.2fx, %d below 1x" % (
                      path, summary["layers"], summary["spconv"], summary["torch_cudnn_fp32"],
                      summary["cudnn_legacy_fp32"], summary["sum_x_torch_fp32"],
                      summary["geomean_x_torch_fp32"], summary["layers_below_1x_torch_fp32"],
                      summary["sum_x_best_fp32"], summary["geomean_x_best_fp32"],
                      summary["layers_below_1x_best_fp32"]))
        for mode in ("torch_cudnn_fp16", "torch_cudnn_bf16"):
            if mode in summary:
                print("  %s: %.3f ms, geomean x %.2f" % (
                    mode, summary[mode], summary["geomean_x_torch_" + mode[len("torch_cudnn_"):]]))
        if "cudnn_best_half" in summary:
            print("  half kernels (%d layers) vs the faster of PyTorch half channels-last and "
                  "legacy cuDNN half: sum %.2fx, geomean %.2fx, %d below 1x" % (
                      summary["half_layers"], summary["sum_x_best_half"],
                      summary["geomean_x_best_half"], summary["layers_below_1x_best_half"]))
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or None
    if reuse:
        meta = {k: reuse[k] for k in ("date", "device", "torch", "cudnn", "commit")}
        meta["rejoined_from"] = args.reuse
    else:
        meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds"),
                "device": torch.cuda.get_device_name(), "torch": torch.__version__,
                "cudnn": torch.backends.cudnn.version(), "commit": commit}
    out = {"what": "cuDNN through PyTorch (cudnn.benchmark, CUDA-graph timing) for recorded "
                   "spconv results", "tool": "bench/torch_baseline.py", **meta,
           "modes": {m: {"dtype": MODES[m][0], "tf32": MODES[m][1],
                         "channels_last": MODES[m][2]} for m in modes},
           "files": files}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
