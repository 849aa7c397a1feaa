"""Builds what `bench/variants.sh run` writes (RESULT.json) from launch sidecars, with made-up
times, so that bench/tuning_table.py can be tested without a GPU.

usage: fake-variants.py OUT.json DEVICE NAME=SIDECAR.json:MS[:STATUS] ...
"""
import json
import sys

out, device, cases = sys.argv[1], sys.argv[2], sys.argv[3:]
result = {}
for case in cases:
    name, rest = case.split("=", 1)
    parts = rest.split(":")
    sidecar, ms = parts[0], float(parts[1])
    status = parts[2] if len(parts) > 2 else "ok"
    k = json.load(open(sidecar))["kernels"][0]
    r = {"status": status, "shape": k["conv"], "tiling": k["tiling"], "nnz": k["weights_nnz"],
         "device": {"name": device}, "commit": "test",
         "contenders": {"spconv": {"time_ms": ms}}}
    layout = k["params"][0].get("layout", "nchw")
    if layout != "nchw":
        r["layout"] = layout  # as spconv-bench reports it
    if "numerics" in k:
        r["dtype"] = k["numerics"]["dtype"]
        r["numerics"] = k["numerics"]
    result[name] = {"run1": r, "run2": dict(r, contenders={"spconv": {"time_ms": ms * 1.01}})}
json.dump(result, open(out, "w"))
