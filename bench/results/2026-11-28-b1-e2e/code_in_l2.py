#!/usr/bin/env python3
"""What a sparse kernel loses inside a network, split into its parts. On the GPU machine, one
case's kernel (grid (spatial tiles, channel blocks, ...), not SM-affine), each state timed by
CUDA events around one launch (median of REPS); before every timed launch a one-block spin
of SPIN_US on the stream, so that the launch is queued when its event starts:

- alone:      right after the same launch (code in the SMs' caches and L2, data in L2);
- network:    after EVICT, another case's kernel (a large code, run over every SM: the SMs'
              instruction caches hold its code), a write of FLUSH_MIB (the L2 emptied) and a
              copy of the input (the input in L2, as the layer before leaves it);
- code in L2: as network, then the kernel over one spatial tile per channel block on
              scratch buffers (every channel block's code once, on some SMs) before the
              input copy: the code in L2, the SMs that run the timed launch mostly cold;
- data cold:  as network but without the input copy (the input from DRAM too).

usage: code_in_l2.py CASE_DIR EVICT_CASE_DIR OUT.json [--reps 30] [--flush-mib 256]
       [--spin-us 20]"""
import argparse
import json
import os
import statistics

import cupy as cp

SPIN = r"""
extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t, e;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  e = t + ns;
  while (t < e) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
}
"""


def load(case, timed=True):
    """(module, function, kernel record, input, output, scratch input, scratch output). The
    timed case must not be SM-affine (its prefetch launch runs part of its grid); the evictor
    may be (launched whole, one launch at a time)."""
    k = json.load(open(os.path.join(case, "kernels.json")))["kernels"][0]
    if timed and k["tiling"].get("sm_affine"):
        raise SystemExit("code_in_l2.py: %s is SM-affine (its work comes from a queue)" % case)
    m = cp.cuda.function.Module()
    m.load(open(os.path.join(case, "kernels.cubin"), "rb").read())
    f = m.get_function(k["entry"])
    if k.get("dynamic_shared_bytes", 0):
        drv = cp.cuda.driver
        drv.funcSetAttribute(f.ptr, getattr(drv, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", 8),
                             k["dynamic_shared_bytes"])
    dtype = {"f16": cp.float16, "f32": cp.float32}[k["params"][0].get("dtype", "f32")]
    x = (cp.random.default_rng(1).standard_normal(k["params"][0]["shape"], dtype=cp.float32)
         * 0.1).astype(dtype)
    y = cp.zeros(k["params"][-1]["shape"], dtype=dtype)
    return m, f, k, x, y, cp.zeros_like(x), cp.zeros_like(y)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("evict")
    ap.add_argument("out")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--flush-mib", type=int, default=256)
    ap.add_argument("--spin-us", type=float, default=20)
    a = ap.parse_args()
    m, f, k, x, y, sx, sy = load(a.case)
    em, ef, ek, ex, ey, _, _ = load(a.evict, timed=False)
    grid, block, shared = tuple(k["grid"]), tuple(k["block"]), k.get("dynamic_shared_bytes", 0)
    pgrid = (1,) + grid[1:]
    flush = cp.empty(a.flush_mib << 20, dtype=cp.uint8)
    xcopy = cp.empty_like(x)
    spin = cp.RawKernel(SPIN, "spin")
    s = cp.cuda.Stream(non_blocking=True)
    t0, t1 = cp.cuda.Event(), cp.cuda.Event()

    def run():
        f(grid, block, (x, y), shared_mem=shared)

    def evict():
        ef(tuple(ek["grid"]), tuple(ek["block"]), (ex, ey),
           shared_mem=ek.get("dynamic_shared_bytes", 0))
        flush.fill(1)

    def prefetch():
        f(pgrid, block, (sx, sy), shared_mem=shared)

    def touch_input():
        cp.copyto(xcopy, x)  # reads x through L2

    states = {
        "alone": [run],
        "network": [evict, touch_input],
        "code_in_l2": [evict, prefetch, touch_input],
        "data_cold": [evict],
    }
    res = {"case": a.case, "evict": a.evict, "grid": grid, "prefetch_grid": pgrid,
           "reps": a.reps, "flush_mib": a.flush_mib, "spin_us": a.spin_us}
    for name, before in states.items():
        times = []
        for _ in range(a.reps):
            with s:
                for b in before:
                    b()
                spin((1,), (1,), (cp.uint64(int(a.spin_us * 1000)),))
                t0.record(s)
                run()
                t1.record(s)
            t1.synchronize()
            times.append(cp.cuda.get_elapsed_time(t0, t1) * 1e3)
        res[name + "_us"] = statistics.median(times)
    json.dump(res, open(a.out, "w"), indent=1)
    print("%-28s alone %.2f  network %.2f  code in L2 %.2f  data cold too %.2f us" % (
        os.path.basename(a.case), res["alone_us"], res["network_us"], res["code_in_l2_us"],
        res["data_cold_us"]))


if __name__ == "__main__":
    main()
