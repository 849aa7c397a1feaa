#!/usr/bin/env python3
"""Sums a network run (bench/run_network.sh OUTDIR): per-conv times of spconv and the
baselines from each spconv-bench JSON, and the totals. Prints JSON on stdout.

A conv counts as checked only if spconv-bench compared it with cuDNN FP32 and it was within
tolerance; totals include every conv that has a time (a failed check is reported, not
hidden). Usage: network_summary.py OUTDIR
"""
import glob
import json
import os
import sys


def main():
    out = sys.argv[1]
    layers = []
    for path in sorted(glob.glob(os.path.join(out, "[0-9][0-9]-*.json"))):
        r = json.load(open(path))
        c = r.get("contenders", {})
        t = {k: (c.get(k) or {}).get("time_ms") for k in ("spconv", "cudnn_fp32", "cudnn_tf32", "cusparse")}
        ok = r.get("status") == "ok" and (r.get("errors", {}).get("spconv", {}).get("within_tolerance") is True)
        row = {"layer": r.get("layer"), "entry": r.get("entry"), "status": r.get("status"),
               "checked_ok": ok, "max_rel_err": r.get("max_rel_err"), "nnz": r.get("nnz"),
               "shape": r.get("shape"), "tiling": r.get("tiling"),
               "registers": (r.get("kernel_attributes") or {}).get("registers"),
               "cudnn_fp32_algo": (c.get("cudnn_fp32") or {}).get("algo")}
        row.update(t)
        row["x_fp32"] = t["cudnn_fp32"] / t["spconv"] if t["spconv"] and t["cudnn_fp32"] else 0
        row["x_tf32"] = t["cudnn_tf32"] / t["spconv"] if t["spconv"] and t["cudnn_tf32"] else 0
        layers.append(row)
    totals = {}
    for k in ("spconv", "cudnn_fp32", "cudnn_tf32", "cusparse"):
        vals = [l[k] for l in layers if l[k] is not None]
        totals[k] = sum(vals) if len(vals) == len(layers) and vals else None
    first = json.load(open(sorted(glob.glob(os.path.join(out, "[0-9][0-9]-*.json")))[0])) if layers else {}
    json.dump({"convs": len(layers), "checked_ok": sum(l["checked_ok"] for l in layers),
               "device": first.get("device"), "commit": first.get("commit"),
               "totals": totals, "layers": layers}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
