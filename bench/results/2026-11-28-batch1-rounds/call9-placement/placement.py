#!/usr/bin/env python3
"""Is alexnet-conv2's per-process level (call8-bimodal) set by where its code or its buffers
land? On the GPU machine: loads one case's cubin MODULES times into one process (each load
places the code anew) and allocates BUFFERS input/output pairs, then times every
(module, buffers) combination, interleaved over ROUNDS rounds, by CUDA events around LAUNCHES
launches captured in a CUDA graph and replayed. If the code's placement sets the level, the modules differ and the
buffers do not; if the buffers' placement does, the reverse.

usage: placement.py CASE_DIR OUT.json [--modules 6] [--buffers 4] [--rounds 5] [--launches 200]
(CASE_DIR: kernels.json + kernels.cubin of a one-kernel case, as bench/compile_suite.sh writes)
"""
import argparse
import json
import os

import cupy as cp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("out")
    ap.add_argument("--modules", type=int, default=6)
    ap.add_argument("--buffers", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--launches", type=int, default=200)
    a = ap.parse_args()
    k = json.load(open(os.path.join(a.case, "kernels.json")))["kernels"][0]
    image = open(os.path.join(a.case, "kernels.cubin"), "rb").read()
    funcs = []
    for _ in range(a.modules):
        m = cp.cuda.function.Module()
        m.load(image)
        f = m.get_function(k["entry"])
        if k.get("dynamic_shared_bytes", 0):
            # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (8): past 48 KiB, as spconv-bench does
            drv = cp.cuda.driver
            drv.funcSetAttribute(f.ptr, getattr(drv, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", 8),
                                 k["dynamic_shared_bytes"])
        funcs.append((m, f))
    dtype = {"f16": cp.float16, "f32": cp.float32}[k["params"][0].get("dtype", "f32")]
    rng = cp.random.default_rng(1)
    bufs = []
    for _ in range(a.buffers):
        x = (rng.standard_normal(k["params"][0]["shape"], dtype=cp.float32) * 0.1).astype(dtype)
        y = cp.zeros(k["params"][-1]["shape"], dtype=dtype)
        pad = cp.empty(1 << 20, dtype=cp.uint8)  # moves the next pair's addresses along
        bufs.append((x, y, pad))
    grid, block = tuple(k["grid"]), tuple(k["block"])
    shared = k.get("dynamic_shared_bytes", 0)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    stream = cp.cuda.Stream(non_blocking=True)
    times = {}
    ref = None
    for r in range(a.rounds):
        for mi, (_, f) in enumerate(funcs):
            for bi, (x, y, _) in enumerate(bufs):
                # The launches replayed from a CUDA graph, as spconv-bench times them: no
                # host launch gaps between kernels.
                with stream:
                    for _ in range(10):
                        f(grid, block, (x, y), shared_mem=shared, stream=stream)
                    stream.begin_capture()
                    for _ in range(a.launches):
                        f(grid, block, (x, y), shared_mem=shared, stream=stream)
                    graph = stream.end_capture()
                    graph.launch(stream)
                    start.record(stream)
                    graph.launch(stream)
                    stop.record(stream)
                stop.synchronize()
                us = cp.cuda.get_elapsed_time(start, stop) * 1000.0 / a.launches
                times.setdefault("m%d-b%d" % (mi, bi), []).append(us)
                if bi == 0:
                    out = cp.asnumpy(y)
                    ref = out if ref is None else ref
                    assert (out == ref).all(), "module %d gave other outputs" % mi
    summary = {key: min(v) for key, v in times.items()}
    dev = cp.cuda.runtime.getDeviceProperties(0)
    json.dump({"case": a.case, "entry": k["entry"], "device": dev["name"].decode(),
               "launches": a.launches, "rounds": a.rounds, "times_us": times,
               "min_us": summary}, open(a.out, "w"), indent=1)
    for mi in range(a.modules):
        print("module %d: %s" % (mi, " ".join("%.2f" % summary["m%d-b%d" % (mi, bi)]
                                             for bi in range(a.buffers))))


if __name__ == "__main__":
    main()
