"""Compiles one .mlir with --fold-at=ptx and --fold-at=llvm and compares the PTX.

usage: compare-folds.py SPCONV-TRANSLATE CONV.mlir [--fewer-loads-ok|--loads-not-compared]
                        [--ptx-only=FLAG] [extra spconv-translate flags]
Prints one 'same <what>: <count>' line per agreeing statistic; exits 1 on a difference.
--ptx-only=FLAG: pass FLAG to the PTX-level fold's compile only (a test that must differ).
--fewer-loads-ok: the PTX-level fold may leave fewer shared loads than LLVM (it drops some
that LLVM keeps in split-c and chunk-loop kernels, f32 as well as half precision).
--loads-not-compared: prints both load counts without comparing them. For a half-sum chunk
loop with a bias (NVPTX coalesces each accumulator with the bias word it starts from) the
PTX-level fold keeps more shared loads than LLVM's folded kernel (372 words against 350 on
fold-at-crosscheck-half.test's conv): a speed difference, not one of arithmetic, which the
other statistics still compare.

Half precision (fma.rn.f16x2 / bf16x2): each paired FMA's weight is the word a mov.b32 put
in one of its factors. LLVM turns fma(x, 1, c) into add.rn.f16x2 and fma(x, -1, c) into
sub.rn.f16x2 (the same rounding), which a half-precision reduction's own adds make
indistinguishable, so products by (1, 1) and (-1, -1) are left out. Compared:
the multiset of paired FMA weight words, of their constant addends (a bias word or 0, else
'reg'), and of the nonzero f32 immediates added to the sums (the bias, with f32
accumulation). With --strict-ieee LLVM merges identical products by a zero weight word
(fma(x, 0, 0) of two channels): compare strict kernels whose runs start at the bias.
"""
import collections
import re
import subprocess
import sys


def ptx(translate, path, fold, extra):
    cmd = [translate, "--spconv-to-ptx", "--cache-dir=none", "--fold-at=" + fold,
           path] + extra
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


MOV = re.compile(r"^\s*mov\.b32\s+(%r\d+),\s*(-?(?:0x[0-9A-Fa-f]+|\d+));")
PAIRED = re.compile(r"^\s*(fma)\.rn\.(f16x2|bf16x2)\s+(%r\d+),\s*(%r\d+),\s*"
                    r"(%r\d+)(?:,\s*(%r\d+))?;")
DEST = re.compile(r"^\s*[a-z][\w.]*\s+(%r\d+),")
ONE = {"f16x2": 0x3C00, "bf16x2": 0x3F80}


def half_stats(text):
    words, addends, adds = (collections.Counter() for _ in range(3))
    # The integer a mov.b32 last put in each register (text order), until overwritten; for
    # addends, only within the straight-line code since the last label.
    defs, addend_defs = {}, {}
    for line in text.split("\n"):
        if line.rstrip().endswith(":"):
            # A label: what reaches here may come around a loop (a chunk loop carries its
            # sums), so an addend word seen above no longer says what the register holds.
            addend_defs.clear()
        m = MOV.match(line)
        if m:
            defs[m.group(1)] = addend_defs[m.group(1)] = int(m.group(2), 0) & 0xFFFFFFFF
            continue
        m = PAIRED.match(line)
        if m and m.group(1) == "fma":
            ty, a, b, c = m.group(2), m.group(4), m.group(5), m.group(6)
            w = defs.get(b, defs.get(a))
            addend = addend_defs.get(c)
            ones = [one << 16 | one for one in (ONE[ty], ONE[ty] | 0x8000)]
            if w not in ones:
                words["%08x" % w if w is not None else "none"] += 1
                addends["%08x" % addend if addend is not None else "reg"] += 1
        # Any other write replaces the register's word: NVPTX may coalesce an accumulator
        # with the bias word it starts from (mov %r, <bias>; fma %r, x, w, %r; or a chunk
        # loop's copies, mov %r, %r2), which then holds a sum.
        d = DEST.match(line)
        if d:
            defs.pop(d.group(1), None)
            addend_defs.pop(d.group(1), None)
        # Zero adds are the template's own (sums of chunks past the first), and the PTX fold
        # keeps those of a last channel block's channels past K, which LLVM's template lacks.
        adds.update(imm for imm in
                    re.findall(r"^\s*add\.rn\.f32\s+[^;]*?(0f[0-9A-F]{8})", line)
                    if imm not in ("0f00000000", "0f80000000"))
    return words, addends, adds


def stats(text):
    imms = collections.Counter()
    for m in re.finditer(r"fma\.rn\.f32\s+[^;]*;", text):
        imms.update(re.findall(r"0f[0-9A-F]{8}", m.group(0)))
    result = {
        "fma immediates": imms,
        "ld.shared": len(re.findall(r"\bld\.shared\.", text)),
    }
    if re.search(r"\bfma\.rn\.b?f16x2\b", text):
        words, addends, adds = half_stats(text)
        result["paired fma weight words"] = words
        result["paired fma constant addends"] = addends
        result["f32 immediates added to sums"] = adds
    return result


def main():
    translate, path, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    fewer_loads_ok = "--fewer-loads-ok" in extra
    loads_not_compared = "--loads-not-compared" in extra
    # --ptx-only=FLAG: a flag for the PTX-level fold alone (to check the comparison fails).
    ptx_only = [e[len("--ptx-only="):] for e in extra if e.startswith("--ptx-only=")]
    extra = [e for e in extra if e not in ("--fewer-loads-ok", "--loads-not-compared") and
             not e.startswith("--ptx-only=")]
    a = stats(ptx(translate, path, "ptx", extra + ptx_only))
    b = stats(ptx(translate, path, "llvm", extra))
    ok = True
    for key in a:
        if key == "ld.shared" and loads_not_compared:
            print("%s not compared: ptx %d, llvm %d" % (key, a[key], b[key]))
        elif key == "ld.shared" and fewer_loads_ok and a[key] < b[key]:
            print("fewer %s: ptx %d, llvm %d" % (key, a[key], b[key]))
        elif a[key] != b[key]:
            ok = False
            if isinstance(a[key], collections.Counter):
                diff = (a[key] - b[key]) + (b[key] - a[key])
                print("DIFFERENT %s: %s" % (key, dict(list(diff.items())[:10])))
            else:
                print("DIFFERENT %s: ptx %s, llvm %s" % (key, a[key], b[key]))
        else:
            n = sum(a[key].values()) if isinstance(a[key], collections.Counter) else a[key]
            print("same %s: %d" % (key, n))
    sys.exit(0 if ok else 1)


main()
