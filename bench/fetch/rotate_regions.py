#!/usr/bin/env python3
"""Rotated FMA regions: every warp runs a channel block's FMA region in S segments, starting
at segment (warp mod S), so that an SM's warps fetch S places of the same code at once
instead of one (docs/tuning-log.md, "Instruction fetch in one pass").

usage: bench/fetch/rotate_regions.py CASE_DIR OUT_DIR --segments S [--keep-ptx]
                                     [--start warp|smsp] [--ptxas PTXAS] [--arch sm_90]

CASE_DIR is a case compiled with shared staging and its PTX kept (kernels.ptx,
kernels.json, weights.bin). Each region of each channel block (`$spconv_rN_bK:` up to its
`bra.uni $spconv_rN_join`) is rewritten:
  - every FMA chain (an FMA whose addend is the previous FMA's result, read by nothing else)
    accumulates in place in a register of its own, set from the chain's first addend
    before the region and copied to the chain's last result after it, so that its FMAs may
    run in any segment order;
  - the region is cut into S segments of about equal FMAs, only where no other value of the
    region (a loaded word, a weight's mov) is defined before the cut and read after it;
  - a loop of S steps branches (brx.idx) to segment (start + step) mod S.
A region where a chain value has another reader, or where fewer than S cuts exist, is left
as it was (and counted). The outputs stay correct; only the order in which each sum adds
its products changes, which the checker's bound does not depend on. The cubin is assembled
as spconv-translate assembles it (bench/speed_of_light.py's assemble), so time it with
spconv-bench against the unaltered copy (`as-is` in OUT_DIR).
"""
import argparse
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from speed_of_light import assemble  # noqa: E402

FMA = re.compile(r"^(\s*)fma\.rn\.(f16x2|bf16x2|f32)\s+(%\w+),\s*(%\w+),\s*(%\w+),\s*(%\w+);")
REG = re.compile(r"%[A-Za-z_][\w]*")
NO_DEF = ("st.", "bar.", "bra", "ret", "exit", "brx", "cp.async", "red.", "prefetch")


def defs_uses(line):
    """(registers the instruction writes, registers it reads) of one PTX instruction."""
    text = line.strip().rstrip(";")
    pred = []
    if text.startswith("@"):
        p, text = text.split(None, 1)
        pred = REG.findall(p)
    op, _, rest = text.partition(" ")
    rest = rest.strip()
    if op.startswith(NO_DEF) or not rest:
        return [], pred + REG.findall(rest)
    if rest.startswith("{"):
        first, _, tail = rest[1:].partition("}")
    else:
        first, _, tail = rest.partition(",")
    return REG.findall(first), pred + REG.findall(tail)


def rotate(lines, segments, tag, start):
    """The region's lines rotated into `segments` segments, or None (why in the second)."""
    body = [l for l in lines if l.strip() and not l.strip().startswith("//")]
    # The stamped region copies its sums to the registers the template's later code reads
    # (the live-out movs, anywhere after the sum's last FMA): those run after the loop.
    copy = re.compile(r"^\s*mov\.b32\s+(%\w+),\s*(%\w+);")
    sums = {m.group(3) for m in map(FMA.match, body) if m}
    read = [r for l in body for r in defs_uses(l)[1]]
    tail = [l for l in body if copy.match(l) and copy.match(l).group(2) in sums
            and copy.match(l).group(1) not in read]
    body = [l for l in body if l not in tail]
    # Address arithmetic on values from before the region (its base address, mostly) runs
    # once before the loop, so that no segment needs another's.
    defined = {r for l in body for r in defs_uses(l)[0]}
    head, hoisted = [], set()
    for l in body:
        d, u = defs_uses(l)
        op = l.strip().split()[0]
        if not FMA.match(l) and not op.startswith(("ld.", "st.", "cp.", "mov.b32")) \
                and all(r not in defined or r in hoisted for r in u):
            head.append(l)
            hoisted.update(d)
    body = [l for l in body if l not in head]
    info = [defs_uses(l) for l in body]
    where = {}
    for i, (d, _) in enumerate(info):
        for r in d:
            if r in where:
                return None, "a register defined twice"
            where[r] = i
    readers = {}
    for i, (_, u) in enumerate(info):
        for r in u:
            readers.setdefault(r, []).append(i)
    # Chains: FMA i continues FMA j when i's addend is j's result and nothing else reads it.
    fmas = {i: FMA.match(l) for i, l in enumerate(body) if FMA.match(l)}
    chain_of, chains = {}, []
    for i in sorted(fmas):
        addend = fmas[i].group(6)
        j = where.get(addend)
        if j is not None and j >= i:
            return None, "a sum carried around a loop"
        if j is not None and j in fmas:
            if readers[addend] != [i] or fmas[i].group(4) == addend or fmas[i].group(5) == addend:
                return None, "a partial sum with another reader"
            chain_of[i] = chain_of[j]
            chains[chain_of[i]]["last"] = i
        else:
            chain_of[i] = len(chains)
            chains.append({"first": i, "last": i, "init": addend})
    for c in chains:
        if readers.get(fmas[c["last"]].group(3)):
            return None, "a sum read inside its region"
    # A sum that starts from a value the region makes (a copy of an earlier sum, a constant)
    # starts before the loop: that line moves there, when it reads nothing the region makes.
    starts = sorted({where[c["init"]] for c in chains if c["init"] in where})
    for i in starts:
        if any(r in where for r in info[i][1]) or i in fmas:
            return None, "a sum started from the region's own arithmetic"
        if any(k not in fmas or fmas[k].group(6) not in info[i][0] for k in readers[info[i][0][0]]):
            return None, "a sum's start read by more than its sums"
        head.append(body[i])
    # A cut before line c is allowed when no non-chain value crosses it.
    crossing = [0] * (len(body) + 1)
    for r, i in where.items():
        if (i in fmas and r == fmas[i].group(3)) or i in starts:
            continue  # sums live in their accumulators; their starts run before the loop
        later = [k for k in readers.get(r, []) if k > i]
        if later:
            crossing[i + 1] += 1
            crossing[max(later) + 1] -= 1
    live, allowed = 0, []
    for c in range(len(body) + 1):
        live += crossing[c]
        allowed.append(live == 0)
    fma_before = [0]
    for i in range(len(body)):
        fma_before.append(fma_before[-1] + (1 if i in fmas else 0))
    total = fma_before[-1]
    cuts = [0]
    for s in range(1, segments):
        want = total * s / segments
        best = min((c for c in range(cuts[-1] + 1, len(body)) if allowed[c]),
                   key=lambda c: abs(fma_before[c] - want), default=None)
        if best is None:
            return None, "too few cut points"
        cuts.append(best)
    cuts.append(len(body))
    # Every segment may run first: each register it reads comes from before the region, the
    # lines moved before the loop, or the segment itself.
    early = {r for l in head for r in defs_uses(l)[0]}
    for a, b in zip(cuts, cuts[1:]):
        mine = set()
        for i in range(a, b):
            if i in starts:
                continue
            need = info[i][1] if i not in fmas else [fmas[i].group(4), fmas[i].group(5)]
            if any(r in where and r not in early and r not in mine for r in need):
                return None, "a segment reads another's value"
            mine.update(info[i][0])
    acc = lambda k: f"%rot{tag}_a{k}"
    out = ["\t{", f"\t.reg .b32 %rot{tag}_a<{len(chains)}>;", f"\t.reg .b32 %rot{tag}_s, %rot{tag}_k, %rot{tag}_t;",
           f"\t.reg .pred %rot{tag}_p;"]
    out += head
    out += [f"\tmov.b32 \t{acc(k)}, {c['init']};" for k, c in enumerate(chains)]
    out += [f"\tmov.u32 \t%rot{tag}_s, %tid.x;", f"\tshr.u32 \t%rot{tag}_s, %rot{tag}_s, 5;"]
    if start == "smsp":  # warps w and w + 4 share a scheduler: spread a scheduler's warps
        out += [f"\tshr.u32 \t%rot{tag}_s, %rot{tag}_s, 2;"]
    out += [f"\tmov.u32 \t%rot{tag}_k, 0;", f"$rot{tag}_loop:",
            f"\tadd.u32 \t%rot{tag}_t, %rot{tag}_s, %rot{tag}_k;",
            f"\trem.u32 \t%rot{tag}_t, %rot{tag}_t, {segments};",
            f"$rot{tag}_targets: .branchtargets " + ", ".join(f"$rot{tag}_g{s}" for s in range(segments)) + ";",
            f"\tbrx.idx.uni \t%rot{tag}_t, $rot{tag}_targets;"]
    for s in range(segments):
        out.append(f"$rot{tag}_g{s}:")
        for i in range(cuts[s], cuts[s + 1]):
            if i in starts:
                continue
            if i in fmas:
                m = fmas[i]
                k = chain_of[i]
                out.append(f"{m.group(1)}fma.rn.{m.group(2)} \t{acc(k)}, {m.group(4)}, {m.group(5)}, {acc(k)};")
            else:
                out.append(body[i])
        out.append(f"\tbra.uni \t$rot{tag}_next;")
    out += [f"$rot{tag}_next:", f"\tadd.u32 \t%rot{tag}_k, %rot{tag}_k, 1;",
            f"\tsetp.lt.u32 \t%rot{tag}_p, %rot{tag}_k, {segments};",
            f"\t@%rot{tag}_p bra.uni \t$rot{tag}_loop;"]
    out += [f"\tmov.b32 \t{fmas[c['last']].group(3)}, {acc(k)};" for k, c in enumerate(chains)]
    out += tail
    out.append("\t}")
    # Registers the region defined and later code reads, other than chain ends, are defined
    # by some segment, which runs once: still defined after the loop.
    return out, None


def rewrite(ptx, segments, start):
    lines = ptx.splitlines()
    out, counts, i, tag = [], {"rotated": 0, "kept": {}}, 0, 0
    head = re.compile(r"^\$spconv_r(\d+)_b(\d+):")
    while i < len(lines):
        m = head.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        join = f"$spconv_r{m.group(1)}_join"
        end = i + 1
        while not (lines[end].strip().startswith("bra.uni") and join in lines[end]) \
                and not head.match(lines[end]) and not lines[end].startswith(join + ":"):
            end += 1
        region = lines[i + 1:end]
        rotated, why = rotate(region, segments, tag, start) if not any(
            l.strip().startswith(("bra", "@", "$")) for l in region) else (None, "branches inside")
        out.append(lines[i])
        if rotated is None:
            counts["kept"][why] = counts["kept"].get(why, 0) + 1
            out += region
        else:
            counts["rotated"] += 1
            out += rotated
        tag += 1
        i = end
    return "\n".join(out) + "\n", counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case")
    ap.add_argument("out")
    ap.add_argument("--segments", type=int, required=True)
    ap.add_argument("--start", choices=("warp", "smsp"), default="warp",
                    help="segment a warp starts at: warp mod S, or (warp / 4) mod S")
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--keep-ptx", action="store_true")
    args = ap.parse_args()
    ptx = open(os.path.join(args.case, "kernels.ptx")).read()
    os.makedirs(args.out, exist_ok=True)
    text, counts = rewrite(ptx, args.segments, args.start)
    for name in ("kernels.json", "weights.bin", "bias.bin", "case.json"):
        if os.path.exists(os.path.join(args.case, name)):
            shutil.copy(os.path.join(args.case, name), args.out)
    if args.keep_ptx:
        with open(os.path.join(args.out, "kernels.ptx"), "w") as f:
            f.write(text)
    regs, spills = assemble(text, os.path.join(args.out, "kernels.cubin"), args.ptxas, args.arch)
    print(f"{args.out}: {counts['rotated']} regions rotated, kept {counts['kept'] or 0}; "
          f"{regs} registers, {spills} bytes spilled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
