#!/usr/bin/env python3
"""Does a kernel whose code was just run elsewhere in L2 get its warm time back? On the GPU
machine, one case's kernel (a grid of (spatial tiles, channel blocks, ...), not SM-affine):
- warm: launched right after itself;
- cold: after writing FLUSH_MIB of memory (4x the L2), so its code and data come from DRAM;
- prefetched: cold, then a "code prefetch" launch of the same kernel over one spatial tile
  per channel block (grid x = 1: every channel block's code runs once) that reads and
  writes scratch buffers, then the timed launch;
- prefetch alone: the cold prefetch launch's own time.
Each the median of REPS, by CUDA events around the one timed launch.

usage: code_prefetch.py CASE_DIR OUT.json [--reps 30] [--flush-mib 256]"""
import argparse
import json
import os
import statistics

import cupy as cp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("out")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--flush-mib", type=int, default=256)
    a = ap.parse_args()
    k = json.load(open(os.path.join(a.case, "kernels.json")))["kernels"][0]
    if k["tiling"].get("sm_affine"):
        raise SystemExit("code_prefetch.py: an SM-affine kernel takes its work from a queue")
    drv = cp.cuda.driver
    m = cp.cuda.function.Module()
    m.load(open(os.path.join(a.case, "kernels.cubin"), "rb").read())
    f = m.get_function(k["entry"])
    shared = k.get("dynamic_shared_bytes", 0)
    if shared:
        drv.funcSetAttribute(f.ptr, getattr(drv, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", 8),
                             shared)
    dtype = {"f16": cp.float16, "f32": cp.float32}[k["params"][0].get("dtype", "f32")]
    rng = cp.random.default_rng(1)
    x = (rng.standard_normal(k["params"][0]["shape"], dtype=cp.float32) * 0.1).astype(dtype)
    y = cp.zeros(k["params"][-1]["shape"], dtype=dtype)
    sx, sy = cp.zeros_like(x), cp.zeros_like(y)
    flush = cp.empty(a.flush_mib << 20, dtype=cp.uint8)
    grid, block = tuple(k["grid"]), tuple(k["block"])
    pgrid = (1,) + grid[1:]
    s = cp.cuda.Stream(non_blocking=True)
    t0, t1 = cp.cuda.Event(), cp.cuda.Event()

    def timed(before, launch):
        out = []
        for _ in range(a.reps):
            with s:
                before()
                t0.record(s)
                launch()
                t1.record(s)
            t1.synchronize()
            out.append(cp.cuda.get_elapsed_time(t0, t1) * 1e3)
        return statistics.median(out)

    def run():
        f(grid, block, (x, y), shared_mem=shared)

    def prefetch():
        f(pgrid, block, (sx, sy), shared_mem=shared)

    def cold():
        flush.fill(1)

    def cold_prefetch():
        flush.fill(1)
        prefetch()
    res = {"case": a.case, "grid": grid, "prefetch_grid": pgrid, "reps": a.reps,
           "flush_mib": a.flush_mib,
           "warm_us": timed(run, run),
           "cold_us": timed(cold, run),
           "prefetched_us": timed(cold_prefetch, run),
           "prefetch_alone_cold_us": timed(cold, prefetch)}
    json.dump(res, open(a.out, "w"), indent=1)
    print("%-40s warm %.2f  cold %.2f  prefetched %.2f  prefetch launch cold %.2f us" % (
        os.path.basename(a.case), res["warm_us"], res["cold_us"], res["prefetched_us"],
        res["prefetch_alone_cold_us"]))


if __name__ == "__main__":
    main()
