"""Builds what `bench/variants.sh run` writes (RESULT.json) from launch sidecars, with made-up
times, so that bench/tuning_table.py can be tested without a GPU.

usage: fake-variants.py OUT.json DEVICE NAME=SIDECAR.json:MS[@COLD_MS][:STATUS] ...
(COLD_MS: the time from a cold L2, spconv-bench --cold-l2's time_ms_cold_l2.) Two
repetitions, MS and MS * 1.01; MS may instead list every repetition's time, MS1/MS2/...
"""
import json
import sys



def timing(ms, cold):
    t = {"time_ms": ms}
    if cold is not None:
        t["time_ms_cold_l2"] = cold
    return t


out, device, cases = sys.argv[1], sys.argv[2], sys.argv[3:]
result = {}
for case in cases:
    name, rest = case.split("=", 1)
    parts = rest.split(":")
    sidecar, times = parts[0], parts[1].split("@")
    reps = [float(t) for t in times[0].split("/")]
    ms = reps[0]
    cold = float(times[1]) if len(times) > 1 else None
    status = parts[2] if len(parts) > 2 else "ok"
    k = json.load(open(sidecar))["kernels"][0]
    r = {"status": status, "shape": k["conv"], "tiling": k["tiling"], "nnz": k["weights_nnz"],
         "device": {"name": device}, "commit": "test",
         "contenders": {"spconv": timing(ms, cold)}}
    layout = k["params"][0].get("layout", "nchw")
    if layout != "nchw":
        r["layout"] = layout  # as spconv-bench reports it
    if "numerics" in k:
        r["dtype"] = k["numerics"]["dtype"]
        r["numerics"] = k["numerics"]
    if len(reps) == 1:
        reps.append(ms * 1.01)
    result[name] = {"run%d" % (i + 1): dict(r, contenders={
        "spconv": timing(t, cold and cold * t / ms)}) for i, t in enumerate(reps)}
json.dump(result, open(out, "w"))
