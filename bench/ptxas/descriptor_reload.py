#!/usr/bin/env python3
"""When ptxas reloads the global-memory descriptor before every load.

On sm_90 every LDG names a memory descriptor in a uniform register pair
(`LDG.E R4, desc[UR30][R14.64+0x6e4]`). In straight-line code ptxas loads it once. In a
function whose code branches to per-block regions at every chunk (`brx.idx.uni` on a
%ctaid-derived index, or a chain of `bra.uni`: the dispatch of shared staging, docs/design.md)
and has a `bar.sync` after them, ptxas keeps the descriptor in ordinary registers and moves it
back with two `R2UR`s before nearly every LDG: the SASS grows by ~1.6 instructions per load and
ptxas takes longer. Dispatching once per block (each block's regions contiguous) or dropping
the barrier avoids it. spconv's direct-input kernels were stamped the first way until the
fix in docs/compile-time.md ("Direct inputs"); this reproduces the effect on synthetic code.

Writes four `.func` variants (chunks x blocks regions of global loads feeding FMAs into 8
accumulators), assembles each as spconv-translate does (`ptxas -c -arch=sm_90 -O3
--maxrregcount=128`) and prints the SASS instruction count (.text bytes / 16, read with
readelf) against the PTX loads + FMAs, and ptxas's wall time.

    python3 bench/ptxas/descriptor_reload.py [--chunks 20 --blocks 5 --loads 16]
"""
import argparse
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time


def variant(chunks: int, blocks: int, loads: int, dispatch_per_chunk: bool, barrier: bool,
            accumulators: int = 8, seed: int = 1) -> str:
    rng = random.Random(seed)
    out = [".version 7.8", ".target sm_90", ".address_size 64",
           ".visible .func piece(.param .b64 p0, .param .b64 p1)", ".noreturn", "{",
           " .reg .b32 %r<100000>;", f" .reg .b32 %a<{accumulators}>;", " .reg .b64 %rd<10>;",
           " ld.param.b64 %rd3, [p0]; cvta.to.global.u64 %rd4, %rd3;",
           " ld.param.b64 %rd5, [p1]; cvta.to.global.u64 %rd1, %rd5;",
           " mov.u32 %r2, %tid.x; mul.wide.u32 %rd6, %r2, 4; add.s64 %rd2, %rd4, %rd6;",
           " mov.u32 %r3, %ctaid.y;"]
    out += [f" mov.b32 %a{k}, 0f00000000;" for k in range(accumulators)]
    reg = 100

    def chunk(c: int) -> None:
        nonlocal reg
        for i in range(loads):
            out.append(f" ld.global.b32 %r{reg}, [%rd2+{(c * loads + i) * 196}];")
            for k in rng.sample(range(accumulators), 2 if rng.random() < 0.4 else 1):
                w = struct.unpack("<I", struct.pack("<f", rng.uniform(-2, 2)))[0]
                out.append(f" fma.rn.f32 %a{k}, %r{reg}, 0f{w:08X}, %a{k};")
            reg += 1

    def dispatch(tag: str) -> None:
        out.append(f"$T{tag}: .branchtargets " +
                   ", ".join(f"$B{tag}_{b}" for b in range(blocks)) + ";")
        out.append(f" brx.idx.uni %r3, $T{tag};")

    if dispatch_per_chunk:
        for c in range(chunks):
            dispatch(str(c))
            for b in range(blocks):
                out.append(f"$B{c}_{b}:")
                chunk(c)
                out.append(f" bra.uni $J{c};")
            out.append(f"$J{c}:")
    else:
        dispatch("all")
        for b in range(blocks):
            out.append(f"$Ball_{b}:")
            for c in range(chunks):
                chunk(c)
            out.append(" bra.uni $J;")
        out.append("$J:")
    if barrier:
        out.append(" bar.sync 0;")
    out.append(" add.s64 %rd7, %rd1, %rd6;")
    out += [f" st.global.b32 [%rd7+{k * 12544}], %a{k};" for k in range(accumulators)]
    out += [" exit;", "}", ""]
    return "\n".join(out)


def sass_instructions(obj: str) -> int:
    sections = subprocess.run(["readelf", "-S", "-W", obj], capture_output=True, text=True,
                              check=True).stdout
    size = 0
    for line in sections.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1].startswith(".text"):
            size += int(fields[5], 16)
    return size // 16


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=20)
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--loads", type=int, default=16, help="global loads per chunk and block")
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas")
    args = ap.parse_args()
    if not os.path.exists(args.ptxas) or not shutil.which("readelf"):
        print("descriptor_reload.py: needs ptxas and readelf", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        print("dispatch          barrier  PTX ld+fma  SASS   SASS-(ld+fma)  ptxas s")
        for per_chunk in (True, False):
            for barrier in (False, True):
                text = variant(args.chunks, args.blocks, args.loads, per_chunk, barrier)
                src, obj = os.path.join(tmp, "v.ptx"), os.path.join(tmp, "v.o")
                with open(src, "w") as f:
                    f.write(text)
                start = time.monotonic()
                subprocess.run([args.ptxas, "-c", "-arch=sm_90", "-O3", "--maxrregcount=128",
                                src, "-o", obj], check=True)
                seconds = time.monotonic() - start
                body = sum(1 for l in text.splitlines()
                           if l.startswith((" ld.global", " fma.rn")))
                sass = sass_instructions(obj)
                print(f"{'per chunk' if per_chunk else 'once per block':17} "
                      f"{'yes' if barrier else 'no':8} {body:10d}  {sass:5d}  {sass - body:13d}"
                      f"  {seconds:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
