"""Compiles one .mlir with --fold-at=ptx and --fold-at=llvm and compares the PTX.

usage: compare-folds.py SPCONV-TRANSLATE CONV.mlir [extra spconv-translate flags]
Prints one 'same <what>: <count>' line per agreeing statistic; exits 1 on a difference.
"""
import collections
import re
import subprocess
import sys


def ptx(translate, path, fold, extra):
    cmd = [translate, "--spconv-to-ptx", "--cache-dir=none", "--fold-at=" + fold,
           path] + extra
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def stats(text):
    imms = collections.Counter()
    for m in re.finditer(r"fma\.rn\.f32\s+[^;]*;", text):
        imms.update(re.findall(r"0f[0-9A-F]{8}", m.group(0)))
    return {
        "fma immediates": imms,
        "ld.shared": len(re.findall(r"\bld\.shared\.", text)),
    }


def main():
    translate, path, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    a = stats(ptx(translate, path, "ptx", extra))
    b = stats(ptx(translate, path, "llvm", extra))
    ok = True
    for key in a:
        if a[key] != b[key]:
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
