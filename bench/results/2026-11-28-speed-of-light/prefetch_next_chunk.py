#!/usr/bin/env python3
"""Experiment (not the compiler): a case's PTX with each straight-line staged chunk's global
loads prefetched while the chunk before it computes.

usage: prefetch_next_chunk.py CASE_DIR OUT_DIR [LEVEL ...]   (LEVEL: L2, L1, L2::evict_last,
       or hoistN: move up to N of the next chunk's ready loads instead of prefetching them)

In a straight-line kernel (no chunk loop) each chunk is staged (global loads, shared stores),
a bar.sync, computed, a bar.sync. This inserts, right after the bar.sync that ends chunk k's
staging, one `prefetch.global.LEVEL [a]` for every global load or cp.async source `[a]` of chunk k + 1's
staging whose address registers are already defined there (the staging addresses are
clamped into the tensor, so every prefetch is in bounds). The loads themselves stay: the
outputs are unchanged, and the cases are checked by spconv-bench as usual. Writes
OUT_DIR/pf-LEVEL/ (sidecar, weights, cubin assembled as bench/speed_of_light.py does), and prints how many
prefetches each got.
"""
import os, re, shutil, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import speed_of_light  # noqa: E402  (bench/speed_of_light.py: assembled as spconv-translate does)

LOAD = re.compile(r"^\s*(?:ld\.global[^\s]*\s+[^,]+|cp\.async\.c[ag]\.shared\.global\s+\[[^\]]+\])"
                  r",\s*(\[[^\]]+\])\s*[,;]")
DEF = re.compile(r"^\s*[a-z][\w.:]*\s+(%\w+)\s*,")
BAR = re.compile(r"^\s*bar\.sync\b")


SELP = re.compile(r"^\s*selp\.b32\s+%\w+,\s*(%\w+),")


def patch(lines, level, hoist=0):
    """level: the prefetch's cache level; hoist > 0 moves up to that many ready global loads
    of each next chunk (with the selp that zeroes a padded one) instead: the values wait in
    registers through the chunk before, a register-pipelined staging."""
    out, inserted, skipped = [], 0, 0
    # Split into functions: a piece (.func) or the entry; staging never crosses them.
    starts = [i for i, l in enumerate(lines) if re.match(r"^\.visible \.(func|entry)", l)] + [len(lines)]
    out.extend(lines[:starts[0]])
    for a, b in zip(starts, starts[1:]):
        body = lines[a:b]
        bars = [i for i, l in enumerate(body) if BAR.match(l)]
        segs = list(zip([0] + [x + 1 for x in bars], bars + [len(body)]))
        staging = [k for k, (s, e) in enumerate(segs) if any(LOAD.match(l) for l in body[s:e])]
        defined_at = {}
        for i, l in enumerate(body):
            m = DEF.match(l)
            if m and m.group(1) not in defined_at:
                defined_at[m.group(1)] = i
        extra, moved = {}, set()
        for k, k_next in zip(staging, staging[1:]):
            at = segs[k][1]  # the bar.sync ending chunk k's staging
            pf = []
            seg = range(segs[k_next][0], segs[k_next][1])
            for i in seg:
                l = body[i]
                m = LOAD.match(l)
                if not m:
                    continue
                regs = re.findall(r"%\w+", m.group(1))
                if not all(defined_at.get(r, 1 << 30) < at for r in regs):
                    skipped += 1
                elif not hoist:
                    pf.append(f"\tprefetch.global.{level} \t{m.group(1)};")
                elif len(pf) < 2 * hoist and l.lstrip().startswith("ld.global"):
                    dest = l.split()[1].rstrip(",")
                    nxt = body[i + 1] if i + 1 < len(body) else ""
                    sm = SELP.match(nxt)
                    pf.append(l)
                    moved.add(i)
                    if sm and sm.group(1) == dest and all(
                            defined_at.get(r, 1 << 30) < at
                            for r in re.findall(r"%\w+", nxt.split(",", 1)[1])[1:]):
                        pf.append(nxt)
                        moved.add(i + 1)
            extra[at] = pf
            inserted += sum(1 for l in pf if "ld.global" in l or "prefetch" in l)
        for i, l in enumerate(body):
            if i not in moved:
                out.append(l)
            out.extend(extra.get(i, []))
    return out, inserted, skipped


def main():
    case, dest_root, levels = sys.argv[1], sys.argv[2], sys.argv[3:] or ["L2"]
    lines = open(os.path.join(case, "kernels.ptx")).read().splitlines()
    for level in levels:
        hoist = int(level[len("hoist"):]) if level.startswith("hoist") else 0
        text, n, skipped = patch(lines, level, hoist)
        dest = os.path.join(dest_root, level if hoist else "pf-" + level.replace("::", "-"))
        os.makedirs(dest, exist_ok=True)
        for name in ("kernels.json", "weights.bin", "bias.bin"):
            if os.path.exists(os.path.join(case, name)):
                shutil.copy(os.path.join(case, name), dest)
        regs, spills = speed_of_light.assemble("\n".join(text) + "\n",
                                               os.path.join(dest, "kernels.cubin"),
                                               shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas",
                                               "sm_90")
        print(f"{case} {level}: {n} prefetches ({skipped} loads whose address is not ready), "
              f"{spills} bytes spilled")


if __name__ == "__main__":
    main()
