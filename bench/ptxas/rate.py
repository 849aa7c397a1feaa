#!/usr/bin/env python3
"""How fast ptxas assembles the technique's floor: FMAs with immediate weights.

Every nonzero weight is one `fma.rn.f32 %f, %f, 0fXXXXXXXX, %f` in the PTX, so a compile
of a pruned network cannot cost ptxas less than its nonzeros at ptxas's rate for such
FMAs. This writes a kernel of nothing else (16 shared loads, then FMAS FMAs with random
immediates into 32 accumulator chains, a bar.sync every 500 FMAs as the kernels' chunks
have), assembles it as spconv-translate does (`ptxas -c -arch=CHIP -O3`), and prints the
rate, median of --repeat runs, one process at a time. docs/compile-time.md uses it for the
lower bound on a warm (re-pruned) compile.

    python3 bench/ptxas/rate.py                       # 2000 8000 16000 FMAs at -O3
    python3 bench/ptxas/rate.py --fmas 2000 --opt 0   # ptxas -O0
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def fma_kernel(fmas: int, seed: int = 1, accumulators: int = 32, region: int = 500) -> str:
    rng = random.Random(seed)
    lines = [".version 7.8", ".target sm_90", ".address_size 64",
             ".shared .align 4 .b8 tile[16384];",
             ".visible .entry fmas(.param .u64 out)", "{",
             ".reg .b32 %r<8>;", ".reg .b64 %rd<8>;", "@@FREGS@@",
             "mov.u32 %r1, %tid.x;", "shl.b32 %r2, %r1, 2;", "mov.u32 %r3, tile;",
             "add.u32 %r4, %r3, %r2;"]
    lines += [f"mov.f32 %f{a}, 0f00000000;" for a in range(accumulators)]
    chain = list(range(accumulators))
    next_reg = accumulators
    inputs = []
    for i in range(16):
        lines.append(f"ld.shared.f32 %f{next_reg}, [%r4+{4 * i}];")
        inputs.append(next_reg)
        next_reg += 1
    for i in range(fmas):
        if i and i % region == 0:
            lines.append("bar.sync 0;")
        a = rng.randrange(accumulators)
        weight = rng.getrandbits(30)  # a finite, nonzero float's bits
        lines.append(f"fma.rn.f32 %f{next_reg}, %f{rng.choice(inputs)}, 0f{weight:08X}, %f{chain[a]};")
        chain[a] = next_reg
        next_reg += 1
    lines += ["ld.param.u64 %rd1, [out];", "cvta.to.global.u64 %rd2, %rd1;"]
    lines += [f"st.global.f32 [%rd2+{4 * a}], %f{chain[a]};" for a in range(accumulators)]
    lines += ["ret;", "}"]
    return "\n".join(lines).replace("@@FREGS@@", f".reg .f32 %f<{next_reg + 1}>;") + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fmas", type=int, nargs="+", default=[2000, 8000, 16000])
    ap.add_argument("--opt", default="3", help="ptxas -O level (default 3, as spconv-translate)")
    ap.add_argument("--chip", default="sm_90")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ptxas", default=os.environ.get("SPCONV_PTXAS") or shutil.which("ptxas")
                    or "/usr/local/cuda/bin/ptxas")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="spconv-ptxas-rate-") as tmp:
        ptx, obj = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.o")
        for n in args.fmas:
            with open(ptx, "w") as f:
                f.write(fma_kernel(n))
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                subprocess.run([args.ptxas, "-c", f"-arch={args.chip}", f"-O{args.opt}", ptx, "-o", obj],
                               check=True)
                times.append(time.perf_counter() - start)
            t = statistics.median(times)
            rows.append({"fmas": n, "opt": args.opt, "seconds": round(t, 4), "fmas_per_second": round(n / t)})
            print(f"{n:7d} FMAs  -O{args.opt}  {t:7.3f} s  {n / t:9.0f} FMAs/s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ptxas": args.ptxas, "chip": args.chip, "repeat": args.repeat,
                       "cores": os.cpu_count(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
