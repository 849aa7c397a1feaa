#!/usr/bin/env python3
"""Sums a network run (bench/run_network.sh OUTDIR): per-conv times of spconv and the
baselines from each spconv-bench JSON, and the totals. Prints JSON on stdout.

A conv counts as checked only if spconv-bench compared it with cuDNN FP32 and it was within
tolerance (a half-precision kernel: within its stated bound against the FP32 reference);
totals include every conv that has a time (a failed check is reported, not hidden). A half
network's rows and totals also carry `best_cudnn_half`, the faster of legacy cuDNN in the
half type NCHW and NHWC (spconv-bench). Where spconv-bench ran with --cold-l2, rows and
totals also carry `spconv_cold_l2` and `best_cudnn_half_cold_l2`: the same from a cold L2, as
the layer runs inside the network (docs/benchmarks.md, "Warm and cold").
Usage: network_summary.py OUTDIR
"""
import glob
import json
import os
import sys


CONTENDERS = ("spconv", "cudnn_fp32", "cudnn_tf32", "cusparse", "cudnn_fp16_nchw",
              "cudnn_fp16_nhwc", "cudnn_bf16_nchw", "cudnn_bf16_nhwc")


def main():
    out = sys.argv[1]
    layers = []
    for path in sorted(glob.glob(os.path.join(out, "[0-9][0-9]-*.json"))):
        r = json.load(open(path))
        c = r.get("contenders", {})
        t = {k: (c.get(k) or {}).get("time_ms") for k in CONTENDERS}
        t["best_cudnn_half"] = (r.get("best_cudnn_half") or {}).get("time_ms")
        cold = r.get("cold_l2") or {}
        t["spconv_cold_l2"] = cold.get("spconv")
        t["best_cudnn_half_cold_l2"] = (cold.get("best_cudnn_half") or {}).get("time_ms")
        check = r.get("errors", {}).get("spconv", {})
        half = r.get("dtype", "f32") != "f32"
        ok = r.get("status") == "ok" and check.get("within_bound" if half else "within_tolerance") is True
        row = {"layer": r.get("layer"), "entry": r.get("entry"), "status": r.get("status"),
               "checked_ok": ok, "max_rel_err": r.get("max_rel_err"), "nnz": r.get("nnz"),
               "shape": r.get("shape"), "tiling": r.get("tiling"), "dtype": r.get("dtype", "f32"),
               "registers": (r.get("kernel_attributes") or {}).get("registers"),
               "cudnn_fp32_algo": (c.get("cudnn_fp32") or {}).get("algo")}
        row.update(t)
        row["x_fp32"] = t["cudnn_fp32"] / t["spconv"] if t["spconv"] and t["cudnn_fp32"] else 0
        row["x_tf32"] = t["cudnn_tf32"] / t["spconv"] if t["spconv"] and t["cudnn_tf32"] else 0
        if half:
            b = t["best_cudnn_half"]
            row["x_best_half"] = b / t["spconv"] if t["spconv"] and b else 0
        layers.append(row)
    totals = {}
    for k in CONTENDERS + ("best_cudnn_half", "spconv_cold_l2", "best_cudnn_half_cold_l2"):
        vals = [l[k] for l in layers if l[k] is not None]
        totals[k] = sum(vals) if len(vals) == len(layers) and vals else None
    first = json.load(open(sorted(glob.glob(os.path.join(out, "[0-9][0-9]-*.json")))[0])) if layers else {}
    json.dump({"convs": len(layers), "checked_ok": sum(l["checked_ok"] for l in layers),
               "device": first.get("device"), "commit": first.get("commit"),
               "totals": totals, "layers": layers}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
