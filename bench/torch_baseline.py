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
cuDNN does not look at the values) in FP32 with TF32 off and with TF32 on, cudnn.benchmark on,
each replayed from a CUDA graph of 20 calls (device time per call, like spconv-bench's
timing), median of --repeats replays. Output: per-layer rows with spconv (from the
results), torch_cudnn_fp32/tf32 (ms) and the ratios, totals and geomeans per input file.
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
    if row.get(name) is not None:
        return row[name]
    return (row.get("times_ms") or {}).get(name)


def summarize(rows):
    timed = [r for r in rows if r["spconv"]]
    summary = {k: sum(r[k] for r in timed) for k in
               ("spconv", "torch_cudnn_fp32", "torch_cudnn_tf32", "cudnn_best_fp32")}
    summary["cudnn_legacy_fp32"] = sum(r["cudnn_legacy_fp32"] or 0 for r in timed)
    summary["layers"] = len(timed)
    summary["sum_x_torch_fp32"] = (summary["torch_cudnn_fp32"] / summary["spconv"]
                                   if summary["spconv"] else 0.0)
    summary["geomean_x_torch_fp32"] = geomean([r["x_torch_fp32"] for r in timed])
    summary["geomean_x_torch_tf32"] = geomean([r["x_torch_tf32"] for r in timed])
    summary["layers_below_1x_torch_fp32"] = sum(r["x_torch_fp32"] < 1 for r in timed)
    summary["sum_x_best_fp32"] = (summary["cudnn_best_fp32"] / summary["spconv"]
                                  if summary["spconv"] else 0.0)
    summary["geomean_x_best_fp32"] = geomean([r["x_best_fp32"] for r in timed])
    summary["layers_below_1x_best_fp32"] = sum(r["x_best_fp32"] < 1 for r in timed)
    return summary


def conv_fn(shape, torch, F):
    """A closure running the conv (+ bias, activation) of `shape` on random CUDA tensors."""
    s = shape
    g = s.get("groups", 1)
    x = torch.randn(s["N"], s["C"], s["H"], s["W"], device="cuda")
    w = torch.randn(s["K"], s["C"] // g, s["R"], s["S"], device="cuda")
    b = torch.randn(s["K"], device="cuda") if s.get("has_bias") else None
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
    ap.add_argument("--reuse", metavar="BASELINE.json",
                    help="take the PyTorch times from an earlier output of this script for the "
                         "same results files (no GPU needed): re-joins and re-summarizes")
    args = ap.parse_args(argv)

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
                for mode in ("torch_cudnn_fp32", "torch_cudnn_tf32"):
                    rec[mode] = old[mode]
            else:
                fn = conv_fn(row["shape"], torch, F)
                for mode, tf32 in (("torch_cudnn_fp32", False), ("torch_cudnn_tf32", True)):
                    torch.backends.cudnn.allow_tf32 = tf32
                    rec[mode] = time_cuda_graph(fn, args.warmup, args.repeats, calls=20)
                torch.backends.cudnn.allow_tf32 = False
                torch.cuda.empty_cache()
            # The fairest FP32 baseline is the faster of the two ways into cuDNN.
            rec["cudnn_best_fp32"] = min(v for v in (rec["torch_cudnn_fp32"],
                                                      rec["cudnn_legacy_fp32"]) if v)
            if rec["spconv"]:
                rec["x_best_fp32"] = rec["cudnn_best_fp32"] / rec["spconv"]
                rec["x_torch_fp32"] = rec["torch_cudnn_fp32"] / rec["spconv"]
                rec["x_torch_tf32"] = rec["torch_cudnn_tf32"] / rec["spconv"]
            rows.append(rec)
        summary = summarize(rows)
        files.append({"results": path, "summary": summary, "layers": rows})
        print("%s: %d layers, spconv %.3f ms, torch cuDNN FP32 %.3f ms (legacy best %.3f): "
              "sum %.2fx, geomean %.2fx, %d below 1x; vs the faster of the two per layer: "
              "sum %.2fx, geomean %.2fx, %d below 1x" % (
                  path, summary["layers"], summary["spconv"], summary["torch_cudnn_fp32"],
                  summary["cudnn_legacy_fp32"], summary["sum_x_torch_fp32"],
                  summary["geomean_x_torch_fp32"], summary["layers_below_1x_torch_fp32"],
                  summary["sum_x_best_fp32"], summary["geomean_x_best_fp32"],
                  summary["layers_below_1x_best_fp32"]))
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
           "files": files}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
