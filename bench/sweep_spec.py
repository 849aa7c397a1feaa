#!/usr/bin/env python3
"""Writes a bench/variants.sh spec that sweeps the tilings around one conv's.

usage: bench/sweep_spec.py --gen "SPCONV-GEN-CONV FLAGS" [--name NAME] [-o SPEC]
                           [--translate "SPCONV-TRANSLATE FLAGS"] [--max N]

--gen names the conv as spconv-gen-conv does (`--layer vgg-conv3 --batch 1 --dtype f16`, or
`--shape N,C,H,W,K,R,S --pad ... --stride ...`); --translate holds flags every case keeps
(none by default). The first line is NAME-base: the tiling spconv-translate chooses today
(the heuristic, or $SPCONV_TUNING_TABLE's entry). Each other line changes one thing from it:

  block-k, tile-p and min-blocks-per-sm halved and doubled; threads-q 8, 16 and 32;
  split-c 1, 2 and 4; cp.async staging on or off; dynamic shared memory; 8 loads ahead;
  SM affinity; and, in half precision, every other pairing the conv can take, alone, with
  cp.async (the pairings of whole words) and with 16 threads along a row (the pair that took alexnet-conv1 at batch 1 from 0.0070 to
  0.0039 ms, docs/tuning-log.md "Batch 1 without staging").

Each candidate is resolved by `spconv-translate --spconv-to-launch-json` (no ptxas): one
that the compiler refuses, or that resolves to the pairing and tiling of the base or of an
earlier line (a flag the conv cannot honour), is left out, so every line of the spec is a
kernel of its own. Then, as docs/design.md "Tuning table" says:

  bench/variants.sh compile SPEC DIR                       # here
  bench/variants.sh run DIR round.json                     # on the GPU machine
  bench/tuning_table.py round.json -o TABLE --merge TABLE  # here

Binaries come from $SPCONV_BIN, else build/bin. The spec goes to -o or stdout; what was left
out, and why, to stderr.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("SPCONV_BIN", os.path.join(ROOT, "build", "bin"))
HALF_PAIRINGS = ("columns", "rows", "adjacent", "images")


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def resolve(conv_dir, translate_flags):
    """(pairing, tiling) spconv-translate chooses for the conv with these flags, or the
    first line of its complaint."""
    r = run([os.path.join(BIN, "spconv-translate"), "--spconv-to-launch-json", "--cache-dir=none",
             os.path.join(conv_dir, "conv.mlir")] + translate_flags)
    if r.returncode != 0:
        lines = [l[l.index("error:"):] for l in r.stderr.splitlines() if "error:" in l] or \
            r.stderr.splitlines()
        return None, (lines[0] if lines else "exit %d" % r.returncode)
    kernel = json.loads(r.stdout)["kernels"][0]
    return (kernel.get("numerics", {}).get("pairing", "none"), kernel["tiling"]), None


def generate(gen_flags, out_dir):
    r = run([os.path.join(BIN, "spconv-gen-conv")] + gen_flags + ["--seed", "1", "-o", out_dir])
    if r.returncode != 0:
        sys.exit("sweep_spec.py: spconv-gen-conv %s failed: %s" % (" ".join(gen_flags),
                                                                  r.stderr.strip()))


def candidates(tiling, half, base_pairing, batch):
    """(suffix, translate flags, pairing or None) of every one-change variant."""
    t = tiling
    out = []

    def halve_double(flag, key, suffix, lo=1):
        v = t[key]
        if v // 2 >= lo:
            out.append(("%s%d" % (suffix, v // 2), ["--%s=%d" % (flag, v // 2)], None))
        out.append(("%s%d" % (suffix, v * 2), ["--%s=%d" % (flag, v * 2)], None))

    halve_double("block-k", "block_k", "bk")
    halve_double("tile-p", "tile_p", "tp")
    for q in (8, 16, 32):
        if q != t["threads_q"]:
            out.append(("q%d" % q, ["--threads-q=%d" % q], None))
    for s in (1, 2, 4):
        if s != t["split_c"]:
            out.append(("s%d" % s, ["--split-c=%d" % s], None))
    halve_double("min-blocks-per-sm", "min_blocks_per_sm", "mb")
    out.append(("async", ["--async-staging=2"], None) if not t["async_staging"]
               else ("regs", ["--async-staging=1"], None))
    if not t.get("dynamic_shared"):
        out.append(("dyn", ["--dynamic-shared=2"], None))
    if not t.get("load_ahead"):
        out.append(("la8", ["--load-ahead=8"], None))
    if not t["sm_affine"]:
        out.append(("sa", ["--sm-affinity=2"], None))
    if half:
        for p in HALF_PAIRINGS:
            if p == base_pairing or (p == "images" and batch < 2):
                continue
            out.append((p, [], p))
            out.append((p + "-q16", ["--threads-q=16"], p))
            if p in ("adjacent", "images"):  # whole words, which cp.async can copy
                out.append((p + "-async", ["--async-staging=2"], p))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gen", required=True, help="spconv-gen-conv flags of the conv")
    ap.add_argument("--name", default="case", help="case name prefix (default: case)")
    ap.add_argument("--translate", default="", help="spconv-translate flags every case keeps")
    ap.add_argument("--max", type=int, default=0, help="keep at most N variants (0: all)")
    ap.add_argument("-o", "--out", help="the spec (default: stdout)")
    args = ap.parse_args()
    gen = shlex.split(args.gen)
    if "--pairing" in gen:
        sys.exit("sweep_spec.py: leave --pairing out of --gen; the sweep tries each pairing")
    keep = shlex.split(args.translate)

    with tempfile.TemporaryDirectory(prefix="sweep-spec-") as tmp:
        base_dir = os.path.join(tmp, "base")
        generate(gen, base_dir)
        base, why = resolve(base_dir, keep)
        if base is None:
            sys.exit("sweep_spec.py: the base does not compile: %s" % why)
        pairing, tiling = base
        half = pairing not in ("none", "")
        batch = int(gen[gen.index("--batch") + 1]) if "--batch" in gen else (
            int(gen[gen.index("--shape") + 1].split(",")[0]) if "--shape" in gen else 1)
        seen = {json.dumps(base, sort_keys=True): "base"}
        lines = ["%s-base|%s|%s" % (args.name, args.gen, args.translate)]
        pairing_dirs = {}
        for suffix, flags, pair in candidates(tiling, half, pairing, batch):
            if args.max and len(lines) - 1 >= args.max:
                break
            conv_dir = base_dir
            gen_line = args.gen
            if pair:
                gen_line = "%s --pairing %s" % (args.gen, pair)
                if pair not in pairing_dirs:
                    pairing_dirs[pair] = os.path.join(tmp, pair)
                    generate(gen + ["--pairing", pair], pairing_dirs[pair])
                conv_dir = pairing_dirs[pair]
            resolved, why = resolve(conv_dir, keep + flags)
            name = "%s-%s" % (args.name, suffix)
            if resolved is None:
                print("sweep_spec.py: %s left out: %s" % (name, why), file=sys.stderr)
                continue
            key = json.dumps(resolved, sort_keys=True)
            if key in seen:
                print("sweep_spec.py: %s left out: the same kernel as %s" % (name, seen[key]),
                      file=sys.stderr)
                continue
            seen[key] = suffix
            lines.append("%s|%s|%s" % (name, gen_line, " ".join(keep + flags)))

    header = ["# bench/sweep_spec.py --gen %s%s: one change a line from %s-base" % (
        shlex.quote(args.gen), " --translate %s" % shlex.quote(args.translate)
        if args.translate else "", args.name)]
    text = "\n".join(header + lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
