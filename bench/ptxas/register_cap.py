#!/usr/bin/env python3
"""The register cap ptxas gives an entry for its .maxntid and .minnctapersm, against the
cap spconv-translate gives the kernel's .func pieces (lib/Target/PtxKernels.cpp,
maxRegistersFor). nvlink refuses an entry that calls a function allowed more registers
than the entry, so the two must agree.

Each probe is an entry that keeps 300 loaded values live at once: ptxas must spill, and
reports the cap as its register count (`ptxas -v`). The model: sm_90's 64K registers are
four sub-partitions of 16K; a block's warps are spread over them; the cap is 16384 / (32 x
the warps on the fullest sub-partition), in steps of 8, at most 255. The whole-SM division
(65536 / (threads x blocks)) that the pieces used before 094f17c is printed beside it.

    python3 bench/ptxas/register_cap.py            # exits 1 if the model misses a case
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

CASES = [(128, 4), (72, 4), (448, 1), (288, 1), (96, 2), (160, 3), (320, 2), (64, 8),
         (192, 2), (384, 1), (1024, 1), (224, 2), (96, 5)]


def spilling_entry(threads: int, blocks: int, live: int = 300) -> str:
    lines = [".version 7.8", ".target sm_90", ".address_size 64",
             ".visible .entry probe(.param .u64 p)", f".maxntid {threads}, 1, 1",
             f".minnctapersm {blocks}", "{", f".reg .f32 %f<{2 * live + 4}>;", ".reg .b64 %rd<4>;",
             "ld.param.u64 %rd1, [p];", "cvta.to.global.u64 %rd2, %rd1;"]
    # Volatile loads keep their order, and the sum reads them last-loaded first: every
    # value is live when the first FMA runs.
    lines += [f"ld.global.volatile.f32 %f{i}, [%rd2+{4 * i}];" for i in range(live)]
    acc = live
    lines.append(f"mov.f32 %f{acc}, 0f00000000;")
    for i in range(live):
        v = live - 1 - i
        lines.append(f"fma.rn.f32 %f{acc + 1}, %f{v}, %f{v}, %f{acc};")
        acc += 1
    lines += [f"st.global.f32 [%rd2], %f{acc};", "ret;", "}"]
    return "\n".join(lines) + "\n"


def model(threads: int, blocks: int) -> int:
    warps = (threads + 31) // 32 * blocks
    fullest = -(-warps // 4)
    return max(16, min(255, 16384 // (fullest * 32) // 8 * 8))


def whole_sm(threads: int, blocks: int) -> int:
    return max(16, min(255, 65536 // ((threads + 31) // 32 * 32 * blocks) // 8 * 8))


def main() -> int:
    ptxas = os.environ.get("SPCONV_PTXAS") or shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    misses = 0
    with tempfile.TemporaryDirectory(prefix="spconv-regcap-") as tmp:
        src, obj = os.path.join(tmp, "p.ptx"), os.path.join(tmp, "p.o")
        print("threads blocks  ptxas  model  whole-SM")
        for threads, blocks in CASES:
            with open(src, "w") as f:
                f.write(spilling_entry(threads, blocks))
            out = subprocess.run([ptxas, "-arch=sm_90", "-O3", "-v", src, "-o", obj],
                                 capture_output=True, text=True, check=True).stderr
            used = int(re.search(r"Used (\d+) registers", out).group(1))
            ok = used == model(threads, blocks)
            misses += not ok
            print(f"{threads:7d} {blocks:6d} {used:6d} {model(threads, blocks):6d} {whole_sm(threads, blocks):9d}"
                  + ("" if ok else "  <- model differs"))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
