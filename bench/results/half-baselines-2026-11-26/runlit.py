#!/usr/bin/env python3
"""Runs the RUN lines of one lit test where lit is not installed (the GPU machine has no
LLVM): %t, %s, %python and %spconv_src substituted, spconv-bench, FileCheck and not taken
from BIN_DIR, each line under bash -o pipefail as lit runs it. Exit 1 if a line fails.

usage: runlit.py TEST BIN_DIR SRC_ROOT TMP_DIR
"""
import os
import re
import subprocess
import sys

test, bindir, src, tmp = (os.path.abspath(a) for a in sys.argv[1:5])
lines = [l.split("RUN:", 1)[1].strip() for l in open(test) if l.startswith("# RUN:")]
failed = 0
for i, line in enumerate(lines):
    cmd = (line.replace("%spconv_src", src).replace("%python", "python3")
           .replace("%t", tmp).replace("%s", test).replace("%%", "%"))
    cmd = re.sub(r"(^|\|\s*)not ", r"\1%s/not " % bindir, cmd)
    cmd = re.sub(r"\bFileCheck\b", bindir + "/FileCheck", cmd)
    cmd = re.sub(r"(^|\s)spconv-bench(?=\s)", r"\1%s/spconv-bench" % bindir, cmd)
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True)
    ok = r.returncode == 0
    failed += not ok
    print("%s RUN %d: %s" % ("ok  " if ok else "FAIL", i + 1, line[:150]))
    if not ok:
        print(r.stdout[-3000:] + r.stderr[-3000:])
print("runlit: %d of %d RUN lines failed" % (failed, len(lines)))
sys.exit(1 if failed else 0)
