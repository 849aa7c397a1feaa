#!/usr/bin/env python3
"""Altered copies of a compiled case, to bound what its staging costs.

usage: bench/speed_of_light.py CASE_DIR OUT_DIR [--variants V,...] [--keep-ptx]
                               [--ptxas PTXAS] [--arch sm_90]

CASE_DIR is a case as spconv-translate writes it with its PTX kept (kernels.json,
kernels.ptx, weights.bin [, bias.bin]). For each variant below, OUT_DIR/NAME gets the
sidecar, the weights and a cubin assembled from the altered PTX as spconv-translate
assembles it: ptxas -O3 -c on each piece of a kernel split by the code budget, the entry
that dispatches to them in a unit of its own, nvlink (assembled as one module instead, a
piece-split kernel runs up to 10% slower). The unaltered PTX is assembled the same way as
"as-is", the variants' like-for-like base:

  as-is     the PTX unaltered
  no-loads  every global load replaced by a move of zero, every cp.async removed: staging
            still computes its addresses, selects, packs and stores to shared memory, and
            the block still waits at its barriers (what the loads' latency costs)
  no-bars   every bar.sync replaced by bar.warp.sync: the warps no longer wait for each
            other (what waiting for the block costs). A barrier also fences ptxas's
            scheduling: with none, it hoists a chunk's shared loads above the FMAs and
            spills kilobytes; the warp barrier keeps that fence and costs little
  no-stage  every store to shared memory and cp.async removed, bar.sync as in no-bars:
            nothing is staged (ptxas then drops the loads and address arithmetic that
            fed the stores); the FMAs read whatever shared memory holds. The bound for any
            staging scheme: a kernel whose staging cost nothing would run this fast

Their outputs are wrong by construction, so they are timed with `spconv-bench --unverified`
(docs/tuning-log.md, "Speed of light without staging"). Meant for kernels without bias or
residual loads, which no-loads would also remove.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

LOAD = re.compile(r"^(\s*)ld\.global(?:\.nc)?(?:\.[a-z0-9:_]+)*?\.(v[24]\.)?([bsuf])(8|16|32|64)\s+"
                  r"(\{[^}]*\}|%\w+)\s*,\s*\[[^\]]*\]\s*;")
CP_ASYNC = re.compile(r"^\s*cp\.async\.(ca|cg)\.shared")
ST_SHARED = re.compile(r"^\s*st\.shared")
BAR = re.compile(r"^\s*bar\.sync\b|^\s*barrier\.sync\b")


def zero_load(line):
    """`ld.global... %r, [a];` -> `mov.bN %r, 0;` (each element of a vector load)."""
    m = LOAD.match(line)
    if not m:
        return None
    indent, bits, dests = m.group(1), m.group(4), m.group(5)
    regs = [r.strip() for r in dests.strip("{}").split(",")]
    width = "b8" if bits == "8" else "b" + bits
    if width == "b8":
        raise ValueError("8-bit global load, not handled: " + line.strip())
    return "\n".join(f"{indent}mov.{width} \t{r}, 0;" for r in regs)


def alter(ptx, variant):
    out, counts = [], {"loads": 0, "cp_async": 0, "st_shared": 0, "bar_sync": 0}
    for line in ptx.splitlines():
        if variant in ("no-loads",):
            z = zero_load(line)
            if z is not None:
                counts["loads"] += 1
                out.append(z)
                continue
        if variant in ("no-loads", "no-stage") and CP_ASYNC.match(line):
            counts["cp_async"] += 1
            continue
        if variant == "no-stage" and ST_SHARED.match(line):
            counts["st_shared"] += 1
            continue
        if variant in ("no-bars", "no-stage") and BAR.match(line):
            counts["bar_sync"] += 1
            out.append("\tbar.warp.sync \t-1;")
            continue
        out.append(line)
    return "\n".join(out) + "\n", counts


def units(ptx):
    """The PTX split as spconv-translate hands it to ptxas (PtxKernelAssembly.cpp): a unit
    per `.func` piece, declaring the module's shared variables `.extern`, and the entry's
    unit, defining them and declaring the pieces. A kernel without pieces is one unit."""
    lines = ptx.splitlines()
    starts = [i for i, l in enumerate(lines) if re.match(r"^\.visible \.(func|entry)", l)]
    head = lines[:starts[0]]
    header = [l for l in head if l.startswith((".version", ".target", ".address_size"))]
    module = [l for l in head if l.startswith((".visible", ".global", ".extern"))]
    funcs = [lines[a:b] for a, b in zip(starts, starts[1:] + [len(lines)])]
    pieces = [f for f in funcs if f[0].startswith(".visible .func")]
    if not pieces:
        return [ptx]
    # Dynamic shared memory (`.extern .shared ... []`, --dynamic-shared) is declared in every
    # unit as it stands.
    externs = [".extern " + l[len(".visible "):] for l in module if l.startswith(".visible .shared")]
    externs += [l for l in module if l.startswith(".extern .shared")]
    out = ["\n".join(header + externs + f) + "\n" for f in pieces]
    declarations = []
    for f in pieces:
        signature = f[:f.index(")") + 1]
        declarations += [signature[0].replace(".visible", ".extern", 1)] + signature[1:] + [".noreturn;"]
    entry = [f for f in funcs if f[0].startswith(".visible .entry")]
    out.append("\n".join(header + module + declarations + sum(entry, [])) + "\n")
    return out


def register_cap(ptx):
    """--maxrregcount for the pieces: the cap ptxas derives for the entry from .maxntid and
    .minnctapersm, which nvlink enforces on the functions it calls (maxRegistersFor in
    lib/Target/PtxKernels.cpp). None where the entry sets no .minnctapersm."""
    ntid = re.search(r"^\.maxntid (\d+), (\d+), (\d+)", ptx, re.M)
    blocks = re.search(r"^\.minnctapersm (\d+)", ptx, re.M)
    if not ntid or not blocks:
        return None
    threads = int(ntid.group(1)) * int(ntid.group(2)) * int(ntid.group(3))
    warps = (threads + 31) // 32 * int(blocks.group(1))
    fullest = (warps + 3) // 4
    return min(max(16384 // (fullest * 32) // 8 * 8, 16), 255)


def assemble(ptx, cubin, ptxas, arch):
    """ptxas -O3 on each unit, nvlink into CUBIN; returns (the most registers a unit's
    ptxas reported, bytes spilled)."""
    nvlink = os.path.join(os.path.dirname(ptxas), "nvlink")
    cap = register_cap(ptx)
    with tempfile.TemporaryDirectory() as tmp:
        objs, log = [], ""
        parts = units(ptx)
        for i, text in enumerate(parts):
            src, obj = os.path.join(tmp, f"u{i}.ptx"), os.path.join(tmp, f"u{i}.o")
            with open(src, "w") as f:
                f.write(text)
            cmd = [ptxas, f"-arch={arch}", "-O3", "-v", src, "-o", obj]
            if len(parts) > 1:
                cmd.insert(1, "-c")
                if cap and i < len(parts) - 1:  # a piece; the entry has its directives
                    cmd.insert(2, f"--maxrregcount={cap}")
            log += subprocess.run(cmd, check=True, capture_output=True, text=True).stderr
            objs.append(obj)
        if len(parts) > 1:
            subprocess.run([nvlink, f"-arch={arch}", *objs, "-o", cubin], check=True)
        else:
            shutil.copy(objs[0], cubin)
    regs = re.findall(r"Used (\d+) registers", log)
    spills = sum(int(n) for n in re.findall(r"(\d+) bytes spill stores", log))
    return (max(map(int, regs)) if regs else None), spills


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("case")
    ap.add_argument("out")
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--variants", default="as-is,no-loads,no-bars,no-stage")
    ap.add_argument("--keep-ptx", action="store_true",
                    help="also write each variant's PTX (OUT_DIR/NAME/kernels.ptx)")
    args = ap.parse_args()
    ptx_path = os.path.join(args.case, "kernels.ptx")
    if not os.path.exists(ptx_path):
        sys.exit(f"speed_of_light.py: {ptx_path} missing (compile the case keeping its PTX)")
    ptx = open(ptx_path).read()
    for variant in args.variants.split(","):
        if variant not in ("as-is", "no-loads", "no-bars", "no-stage"):
            sys.exit(f"speed_of_light.py: unknown variant {variant}")
        text, counts = alter(ptx, variant) if variant != "as-is" else (ptx, {})
        dest = os.path.join(args.out, variant)
        os.makedirs(dest, exist_ok=True)
        for name in ("kernels.json", "weights.bin", "bias.bin"):
            if os.path.exists(os.path.join(args.case, name)):
                shutil.copy(os.path.join(args.case, name), dest)
        regs, spills = assemble(text, os.path.join(dest, "kernels.cubin"), args.ptxas, args.arch)
        if args.keep_ptx:
            with open(os.path.join(dest, "kernels.ptx"), "w") as f:
                f.write(text)
        altered = " ".join(f"{k} {v}" for k, v in counts.items() if v) or "unaltered"
        print(f"{variant}: {altered}; {spills} bytes spilled")


if __name__ == "__main__":
    main()
