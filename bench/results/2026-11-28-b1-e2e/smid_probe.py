#!/usr/bin/env python3
"""Does a process's level on alexnet-conv2 at batch 1 (bench/results/2026-11-28-batch1-rounds,
call 8: one of four levels per process, steady within it) follow the SMs its blocks land on?
On the GPU machine, in one process: times the case's kernel from a CUDA graph (LAUNCHES
launches, ROUNDS rounds), then launches a probe kernel with the case's grid, block and
dynamic shared memory whose blocks record %smid (each block spins ~20 us so that all are
resident at once, as the case's one wave is). The probe asks for --probe-shared bytes of
dynamic shared memory (default 120000: one block an SM, as the case's 126 registers a thread
at 512 threads allow), since its own few registers would fit three. Run it in several
processes and compare.

usage: smid_probe.py CASE_DIR OUT.json [--rounds 3] [--launches 200]"""
import argparse
import json
import os

import cupy as cp

PROBE = r"""
extern "C" __global__ void probe(unsigned *smid, unsigned long long *t0) {
  extern __shared__ unsigned char pad[];
  if (threadIdx.x == 0) {
    unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    smid[b] = s; t0[b] = t; pad[0] = (unsigned char)s;
    unsigned long long e = t + 20000;
    while (t < e) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  }
  __syncthreads();
}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--launches", type=int, default=200)
    ap.add_argument("--probe-shared", type=int, default=120000)
    a = ap.parse_args()
    k = json.load(open(os.path.join(a.case, "kernels.json")))["kernels"][0]
    drv = cp.cuda.driver
    attr = getattr(drv, "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", 8)
    m = cp.cuda.function.Module()
    m.load(open(os.path.join(a.case, "kernels.cubin"), "rb").read())
    f = m.get_function(k["entry"])
    shared = k.get("dynamic_shared_bytes", 0)
    if shared:
        drv.funcSetAttribute(f.ptr, attr, shared)
    dtype = {"f16": cp.float16, "f32": cp.float32}[k["params"][0].get("dtype", "f32")]
    x = (cp.random.default_rng(1).standard_normal(k["params"][0]["shape"], dtype=cp.float32)
         * 0.1).astype(dtype)
    y = cp.zeros(k["params"][-1]["shape"], dtype=dtype)
    grid, block = tuple(k["grid"]), tuple(k["block"])
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        for _ in range(a.launches):
            f(grid, block, (x, y), shared_mem=shared)
        graph = stream.end_capture()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(a.rounds):
        graph.launch(stream)
        start.record(stream)
        graph.launch(stream)
        stop.record(stream)
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / a.launches)
    probe = cp.RawKernel(PROBE, "probe")
    pshared = max(shared, a.probe_shared)
    probe.max_dynamic_shared_size_bytes = pshared
    n = grid[0] * grid[1] * grid[2]
    placements = []
    for _ in range(3):
        smid = cp.zeros(n, dtype=cp.uint32)
        t0 = cp.zeros(n, dtype=cp.uint64)
        with stream:
            probe(grid, block, (smid, t0), shared_mem=pshared)
        stream.synchronize()
        placements.append([int(s) for s in smid.get()])
    rec = {"case": a.case, "grid": grid, "block": block, "dynamic_shared_bytes": shared, "probe_shared_bytes": pshared,
           "kernel_ms": times, "smid_by_block": placements,
           "sms_used": sorted(set(placements[0])),
           "same_placement_each_probe": all(p == placements[0] for p in placements)}
    json.dump(rec, open(a.out, "w"), indent=1)
    print("kernel %.5f ms (rounds %s); %d blocks on %d SMs; SMs %s; probes agree: %s" % (
        min(times), ["%.5f" % t for t in times], n, len(rec["sms_used"]),
        rec["sms_used"][:8] + ["..."], rec["same_placement_each_probe"]))


if __name__ == "__main__":
    main()
