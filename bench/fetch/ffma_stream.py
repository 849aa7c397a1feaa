#!/usr/bin/env python3
"""What bounds instruction fetch of spconv-like code: straight-line FMAs with immediate
weights, 16 bytes of SASS each, executed once per block (docs/design.md, "Instruction fetch").

Writes PTX kernels made of such FMAs and times them on the GPU, one property varied at a
time from a baseline where every block runs the same L FMAs in order:

  --copies K        K different bodies (different weights); block b runs body b % K, so the
                    blocks sharing an SM run different code, as spconv's channel blocks do
  --loads-every N   a shared-memory load feeding the next FMAs every N FMAs (spconv: one per
                    (c, r, s), feeding block-k x density FMAs: every 3-6)
  --barrier-every N bar.sync every N FMAs (spconv: one per staged chunk, 1-3 K FMAs)
  --segments S      the body as S segments; warp w runs segments w, w+1, ... (mod S), so the
                    warps of a block fetch different code at any time

Every kernel's result is checked against a host reference before it is timed (median of 5
launches). Needs cupy (the GPU machine has it); --ptx writes the PTX and stops.
A batch-1 kernel runs its code once per SM, from L2, with a few warps: `--waves 1` with
1-4 blocks per SM and `--launches N` (N launches back to back between two events, their
mean; code warm in L2 as in a graph replay) time that regime ("Instruction fetch in one
pass", docs/tuning-log.md).
usage: ffma_stream.py [--fmas L] [--threads T] [--blocks-per-sm B] [--waves W]
                      [--launches N] [--variant NAME:K:N:M:S ...] [--json OUT]
"""
import argparse, json, os, struct, sys, tempfile

ACCS = 32


def weight(copy, i):
    # Distinct weights per copy and FMA, exactly representable.
    return 1.0 + ((i * 7 + copy * 131) % 1021) / 1024.0


def f32hex(x):
    return "0f%08X" % struct.unpack("<I", struct.pack("<f", x))[0]


def body(copy, first, last, loads_every, barrier_every):
    out = []
    for i in range(first, last):
        if barrier_every and i % barrier_every == 0 and i:
            out.append("  bar.sync 0;")
        if loads_every and i % loads_every == 0:
            # the next FMAs' input from shared memory (a small table every thread reads)
            out.append("  ld.shared.f32 %%x%d, [%%rs + %d];" % (i // loads_every % 4, 4 * (i % 64)))
        a = i % ACCS
        out.append("  fma.rn.f32 %%acc%d, %%x%d, %s, %%acc%d;" % (
            a, (i // loads_every % 4) if loads_every else i % 4, f32hex(weight(copy, i)), a))
    return out


def kernel(name, v, fmas, threads, min_blocks):
    lines = [
        ".visible .entry %s(.param .u64 out_param)" % name,
        ".maxntid %d, 1, 1" % threads,
        ".minnctapersm %d" % min_blocks,
        "{",
        "  .reg .pred %p<4>;",
        "  .reg .b32 %r<16>;",
        "  .reg .b32 %rs;",
        "  .reg .b64 %rd<8>;",
        "  .reg .f32 %x<4>;",
        "  .reg .f32 %acc<{}>;".format(ACCS),
        "  .shared .align 4 .f32 table[64];",
        "  mov.u32 %r1, %tid.x;",
        "  mov.u32 %r2, %ctaid.x;",
        "  mov.u32 %r3, %ntid.x;",
        "  mad.lo.u32 %r4, %r2, %r3, %r1;",
        "  mov.u32 %rs, table;",
        # table[j] = j / 64 (thread j < 64 writes it), then x0..x3 from tid
        "  setp.lt.u32 %p2, %r1, 64;",
        "  cvt.rn.f32.u32 %x0, %r1;",
        "  mul.f32 %x1, %x0, 0f3C800000;",
        "  shl.b32 %r8, %r1, 2;",
        "  add.u32 %r8, %rs, %r8;",
        "  @%p2 st.shared.f32 [%r8], %x1;",
        "  bar.sync 0;",
        "  mul.f32 %x0, %x0, 0f3A800000;",
        "  add.f32 %x1, %x0, 0f3F000000;",
        "  add.f32 %x2, %x0, 0f3E800000;",
        "  add.f32 %x3, %x0, 0f3E000000;",
    ]
    lines += ["  mov.f32 %%acc%d, 0f00000000;" % a for a in range(ACCS)]
    copies, segs = v["copies"], v["segments"]
    if copies > 1:
        lines += ["  rem.u32 %%r9, %%r2, %d;" % copies,
                  "$copies: .branchtargets " + ", ".join("$copy%d" % c for c in range(copies)) + ";",
                  "  brx.idx.uni %r9, $copies;"]
    for c in range(copies):
        if copies > 1:
            lines.append("$copy%d:" % c)
        if segs == 1:
            lines += body(c, 0, fmas, v["loads_every"], v["barrier_every"])
        else:
            per = fmas // segs
            lines += ["  shr.u32 %r5, %r1, 5;", "  mov.u32 %r6, 0;", "$loop%d:" % c,
                      "  add.u32 %r7, %r5, %r6;", "  rem.u32 %%r7, %%r7, %d;" % segs,
                      "$targets%d: .branchtargets " % c +
                      ", ".join("$seg%d_%d" % (c, s) for s in range(segs)) + ";",
                      "  brx.idx.uni %%r7, $targets%d;" % c]
            for s in range(segs):
                lines.append("$seg%d_%d:" % (c, s))
                lines += body(c, s * per, (s + 1) * per, v["loads_every"], 0)
                lines.append("  bra.uni $next%d;" % c)
            lines += ["$next%d:" % c, "  add.u32 %r6, %r6, 1;",
                      "  setp.lt.u32 %%p1, %%r6, %d;" % segs, "  @%%p1 bra.uni $loop%d;" % c]
        if copies > 1:
            lines.append("  bra.uni $done;")
    if copies > 1:
        lines.append("$done:")
    for a in range(1, ACCS):
        lines.append("  add.f32 %%acc0, %%acc0, %%acc%d;" % a)
    lines += ["  ld.param.u64 %rd1, [out_param];", "  cvta.to.global.u64 %rd2, %rd1;",
              "  mul.wide.u32 %rd3, %r4, 4;", "  add.u64 %rd4, %rd2, %rd3;",
              "  st.global.f32 [%rd4], %acc0;", "  ret;", "}"]
    return "\n".join(lines)


def reference(v, fmas, tid, block):
    """What thread `tid` of block `block` stores (float64 sum; the kernel rounds per FMA)."""
    x = [tid / 1024.0, tid / 1024.0 + 0.5, tid / 1024.0 + 0.25, tid / 1024.0 + 0.125]
    copy = block % v["copies"]
    total = 0.0
    for i in range(fmas // v["segments"] * v["segments"]):
        n = v["loads_every"]
        if n:
            # loaded at FMA i - i % n from table[(i - i % n) % 64] = that / 64
            xi = ((i - i % n) % 64) / 64.0
        else:
            xi = x[i % 4]
        total += xi * weight(copy, i)
    return total


def parse_variant(text):
    name, copies, loads, barrier, segs = text.split(":")
    return {"name": name, "copies": int(copies), "loads_every": int(loads),
            "barrier_every": int(barrier), "segments": int(segs)}


DEFAULT = ["base:1:0:0:1", "copies2:2:0:0:1", "copies4:4:0:0:1", "copies8:8:0:0:1",
           "loads4:1:4:0:1", "loads4-copies4:4:4:0:1", "barrier1536:1:0:1536:1",
           "rotate4:1:0:0:4"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fmas", type=int, default=16384)
    ap.add_argument("--threads", type=int, default=128)
    ap.add_argument("--blocks-per-sm", type=int, default=8)
    ap.add_argument("--waves", type=int, default=8)
    ap.add_argument("--launches", type=int, default=1,
                    help="launches timed back to back between two events (their mean)")
    ap.add_argument("--variant", nargs="+", default=DEFAULT,
                    help="NAME:COPIES:LOADS_EVERY:BARRIER_EVERY:SEGMENTS (0 = none)")
    ap.add_argument("--ptx", help="write the PTX here and stop (no GPU needed)")
    ap.add_argument("--json")
    args = ap.parse_args()
    variants = [parse_variant(t) for t in args.variant]
    text = "\n".join([".version 8.0", ".target sm_90", ".address_size 64", ""] +
                     [kernel("k_" + v["name"].replace("-", "_"), v, args.fmas, args.threads,
                             args.blocks_per_sm) for v in variants]) + "\n"
    if args.ptx:
        open(args.ptx, "w").write(text)
        return 0
    import cupy as cp
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        return run(cp, cp.RawModule(path=path), variants, args)
    finally:
        os.unlink(path)  # cupy loads the module lazily, at the first get_function


def run(cp, mod, variants, args):
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    blocks = sms * args.blocks_per_sm * args.waves
    results = []
    for v in variants:
        fn = mod.get_function("k_" + v["name"].replace("-", "_"))
        out = cp.zeros(blocks * args.threads, dtype=cp.float32)
        fn((blocks,), (args.threads,), (out,))
        cp.cuda.Device().synchronize()
        host = out.get()
        ok = True
        for block, tid in ((0, 0), (1, 5), (blocks - 1, args.threads - 1), (3, 64)):
            ref = reference(v, args.fmas, tid, block)
            got = float(host[block * args.threads + tid])
            ok = ok and abs(got - ref) <= 1e-4 * max(1.0, abs(ref))
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        times = []
        for _ in range(5):
            start.record()
            for _ in range(args.launches):
                fn((blocks,), (args.threads,), (out,))
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop) / args.launches)
        ms = sorted(times)[2]
        ffma = blocks * args.threads // 32 * args.fmas
        r = dict(v, ms=ms, checked=bool(ok), fmas=args.fmas, blocks=blocks,
                 threads=args.threads, blocks_per_sm=args.blocks_per_sm, waves=args.waves,
                 launches=args.launches, warp_ffma_per_ns=ffma / (ms * 1e6),
                 # the distinct SASS (16 bytes a FMA) a wave puts on an SM, per ns of the
                 # kernel: the fetch rate if each SM fetches it once a wave
                 code_bytes_per_ns_per_sm=16 * args.fmas * min(v["copies"], args.blocks_per_sm)
                 * args.waves / (ms * 1e6))
        results.append(r)
        print("%-16s %.4f ms, %6.1f warp FFMA per ns, %5.1f code B per ns an SM, %s" % (
            v["name"], ms, r["warp_ffma_per_ns"], r["code_bytes_per_ns_per_sm"],
            "ok" if ok else "WRONG"))
    if args.json:
        json.dump({"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                   "results": results}, open(args.json, "w"), indent=1)
    return 0 if all(r["checked"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
