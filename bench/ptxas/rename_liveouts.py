#!/usr/bin/env python3
"""Experiment (docs/compile-time.md, "What a warm compile costs"): how much ptxas time the
live-out `mov`s of shared staging cost.

The PTX fold leaves `mov.b32 %rLive, %rAlias` at the end of a channel block's FMA region
wherever it deleted the last FMA of an accumulator chain. Where %rAlias is defined by an
FMA in the same straight-line segment, is mentioned nowhere else and feeds no other mov,
that FMA could write %rLive directly. This rewrites a kernel unit's PTX that way (a text
experiment, not the compiler) so ptxas can be timed on both:

    python3 bench/ptxas/rename_liveouts.py UNIT.ptx OUT.ptx
    ptxas -c -arch=sm_90 -O3 UNIT.ptx -o a.o; ptxas -c -arch=sm_90 -O3 OUT.ptx -o b.o

Units come from bench/ptxas/time-ptxas.sh, which keeps every unit a compile assembles.
Measured on two ResNet-50 batch-1 units: 40% of their movs qualify, ptxas 3-8% faster,
cubins of the same size (one byte-identical).
"""
import collections
import re
import sys

MOV = re.compile(r"^\s*mov\.b32\s+%r(\d+),\s*%r(\d+);\s*$")
FMA = re.compile(r"^(\s*fma\.rn\.f32\s+%r)(\d+)(,.*)$")
REG = re.compile(r"%r(\d+)\b")


def segment_ends(line: str) -> bool:
    s = line.strip()
    return s.endswith(":") or s.startswith(("bra", "@", "brx", "bar"))


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    lines = open(sys.argv[1]).read().split("\n")
    mentions = collections.Counter(m.group(1) for line in lines for m in REG.finditer(line))
    out = list(lines)
    movs = renamed = 0

    def rewrite(first: int, last: int) -> None:
        nonlocal movs, renamed
        defs = {m.group(2): k for k in range(first, last) if (m := FMA.match(out[k]))}
        sources = collections.Counter(m.group(2) for k in range(first, last) if (m := MOV.match(out[k])))
        for k in range(first, last):
            m = MOV.match(out[k])
            if not m:
                continue
            movs += 1
            live, alias = m.group(1), m.group(2)
            if alias in defs and sources[alias] == 1 and mentions[alias] == 2:
                f = FMA.match(out[defs[alias]])
                out[defs[alias]] = f.group(1) + live + f.group(3)
                out[k] = None
                renamed += 1

    start = 0
    for k, line in enumerate(lines):
        if segment_ends(line):
            rewrite(start, k)
            start = k + 1
    rewrite(start, len(lines))
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(line for line in out if line is not None))
    print(f"register movs {movs}, renamed away {renamed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
