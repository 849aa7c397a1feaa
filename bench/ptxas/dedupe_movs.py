#!/usr/bin/env python3
"""An experiment, not a compiler pass: rewrites a half-precision kernel's PTX so that each
nonzero packed weight word is moved into a register once per `{ }` scope and every later FMA
of the same word reads that register (docs/compile-time.md, "One mov per distinct weight
word"). The weight movs sit in code every thread runs (staging branches hold none), so
within a scope the first mov of a word dominates its later uses; a register defined more
than once is left alone. Prints how many movs went.

usage: dedupe_movs.py IN.ptx OUT.ptx
then: ptxas -arch=sm_90 -O3 IN.ptx -o a.o; ptxas -arch=sm_90 -O3 OUT.ptx -o b.o; cmp a.o b.o"""
import collections
import re
import sys

MOV = re.compile(r"^\s*mov\.b32\s+%r(\d+), (-?\d+);$")
DEF = re.compile(r"^\s*[a-z][\w.]*\s+%r(\d+)[,;]")
REG = re.compile(r"%r(\d+)\b")


def main():
    src = open(sys.argv[1]).read().split("\n")
    defs = collections.Counter(m.group(1) for m in map(DEF.match, src) if m)
    out, seen, rename, removed = [], {}, {}, 0
    for line in src:
        if line.strip() in ("{", "}"):
            seen = {}
        m = MOV.match(line)
        if m and m.group(2) != "0" and defs[m.group(1)] == 1:
            if m.group(2) in seen:
                rename[m.group(1)] = seen[m.group(2)]
                removed += 1
                continue
            seen[m.group(2)] = m.group(1)
        if rename:
            line = REG.sub(lambda r: "%r" + rename.get(r.group(1), r.group(1)), line)
        out.append(line)
    open(sys.argv[2], "w").write("\n".join(out))
    movs = sum(1 for line in src if MOV.match(line))
    print("%d of %d weight movs removed" % (removed, movs))


if __name__ == "__main__":
    main()
