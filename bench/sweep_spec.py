#!/usr/bin/env python3
"""Writes a bench/variants.sh spec that sweeps the tilings around one conv's.

usage: bench/sweep_spec.py --gen "SPCONV-GEN-CONV FLAGS" [--name NAME] [-o SPEC]
                           [--translate "SPCONV-TRANSLATE FLAGS"] [--max N]
       bench/sweep_spec.py --net NETWORK [--batch N] [--dtype T] [--sparsity P]
                           [--layers A:B] [-o SPEC] [--translate ...] [--max N]
       bench/sweep_spec.py --net NETWORK ... --coverage

--gen names the conv as spconv-gen-conv does (`--layer vgg-conv3 --batch 1 --dtype f16`, or
`--shape N,C,H,W,K,R,S --pad ... --stride ...`); --translate holds flags every case keeps
(none by default). The first line is NAME-base: the tiling spconv-translate chooses today
(the heuristic, or $SPCONV_TUNING_TABLE's entry). Each other line changes one thing from it:

  block-k, tile-p and min-blocks-per-sm halved and doubled; threads-q 8, 16 and 32;
  split-c 1, 2 and 4; cp.async staging on or off; double-buffered cp.async staging (a
  chunk loop); dynamic shared memory; 8 loads ahead; SM affinity; channel vectors of 1, 2
  and 4; and, in half precision, every other pairing the conv can take, alone, with
  cp.async (the pairings of whole words), with channel vectors of 4, and with 16 threads along a row (the pair that took alexnet-conv1 at batch 1 from 0.0070 to
  0.0039 ms, docs/tuning-log.md "Batch 1 without staging").

--net sweeps every distinct conv shape of a bench/networks.py network (the first layer of
each shape names its cases, e.g. layer1_0_conv2-q16), or of `paper10` (spconv-gen-conv's
ten layers): the shapes a tuning table keys on, with spconv-gen-conv's random weights at
the network's sparsity. --coverage sweeps nothing: it prints one line per distinct conv,
the tuning-table entry its tiling comes from or "heuristic", so that an untuned conv
shows before anyone times it.

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


def resolve(conv_dir, translate_flags, kernel_out=None):
    """(pairing, tiling) spconv-translate chooses for the conv with these flags, or the
    first line of its complaint. `kernel_out` (a dict) receives the sidecar's kernel."""
    r = run([os.path.join(BIN, "spconv-translate"), "--spconv-to-launch-json", "--cache-dir=none",
             os.path.join(conv_dir, "conv.mlir")] + translate_flags)
    if r.returncode != 0:
        lines = [l[l.index("error:"):] for l in r.stderr.splitlines() if "error:" in l] or \
            r.stderr.splitlines()
        return None, (lines[0] if lines else "exit %d" % r.returncode)
    kernel = json.loads(r.stdout)["kernels"][0]
    if kernel_out is not None:
        kernel_out.update(kernel)
    return (kernel.get("numerics", {}).get("pairing", "none"), kernel["tiling"]), None


def generate(gen_flags, out_dir):
    os.makedirs(os.path.dirname(out_dir), exist_ok=True)
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
    if not t["chunk_loop"]:
        # Double-buffered staging: chunk j + 1 copied by cp.async while chunk j's FMAs run
        # (a chunk loop, KernelGeometry::stagingBuffers 2); the two flags only act together.
        out.append(("db", ["--chunk-loop=2", "--async-staging=2"], None))
    if not t.get("dynamic_shared"):
        out.append(("dyn", ["--dynamic-shared=2"], None))
    if not t.get("load_ahead"):
        out.append(("la8", ["--load-ahead=8"], None))
    if not t["sm_affine"]:
        out.append(("sa", ["--sm-affinity=2"], None))
    for v in (1, 2, 4):  # channel vectors (docs/design.md, "Channel vectors")
        if v != t.get("channel_vector", 1):
            out.append(("cv%d" % v, ["--channel-vector=%d" % v], None))
    if half:
        for p in HALF_PAIRINGS:
            if p == base_pairing or (p == "images" and batch < 2):
                continue
            out.append((p, [], p))
            out.append((p + "-q16", ["--threads-q=16"], p))
            if p in ("adjacent", "images"):  # whole words, which cp.async can copy
                out.append((p + "-async", ["--async-staging=2"], p))
            # one load a window word of 4 channels (vgg-conv2 at batch 1 by rows -> this:
            # 1.05x on an H100, docs/tuning-log.md "Channel vectors under adjacent windows")
            out.append((p + "-cv4", ["--channel-vector=4"], p))
    return out


def sweep(gen_text, name, keep, limit, tmp, messages):
    """The spec lines of one conv's sweep: its base, then each distinct variant."""
    gen = shlex.split(gen_text)
    base_dir = os.path.join(tmp, name, "base")
    generate(gen, base_dir)
    base, why = resolve(base_dir, keep)
    if base is None:
        sys.exit("sweep_spec.py: %s: the base does not compile: %s" % (name, why))
    pairing, tiling = base
    half = pairing not in ("none", "")
    batch = int(gen[gen.index("--batch") + 1]) if "--batch" in gen else (
        int(gen[gen.index("--shape") + 1].split(",")[0]) if "--shape" in gen else 1)
    seen = {json.dumps(base, sort_keys=True): "base"}
    lines = ["%s-base|%s|%s" % (name, gen_text, " ".join(keep))]
    pairing_dirs = {}
    for suffix, flags, pair in candidates(tiling, half, pairing, batch):
        if limit and len(lines) - 1 >= limit:
            break
        conv_dir, gen_line = base_dir, gen_text
        if pair:
            gen_line = "%s --pairing %s" % (gen_text, pair)
            if pair not in pairing_dirs:
                pairing_dirs[pair] = os.path.join(tmp, name, pair)
                generate(gen + ["--pairing", pair], pairing_dirs[pair])
            conv_dir = pairing_dirs[pair]
        resolved, why = resolve(conv_dir, keep + flags)
        case = "%s-%s" % (name, suffix)
        if resolved is None:
            messages.append("%s left out: %s" % (case, why))
            continue
        key = json.dumps(resolved, sort_keys=True)
        if key in seen:
            messages.append("%s left out: the same kernel as %s" % (case, seen[key]))
            continue
        seen[key] = suffix
        lines.append("%s|%s|%s" % (case, gen_line, " ".join(keep + flags)))
    return lines


PAPER10 = ("lenet-conv1", "lenet-conv2", "alexnet-conv1", "alexnet-conv2", "vgg-conv1",
           "vgg-conv2", "vgg-conv3", "resnet-conv1", "resnet-conv2", "googlenet-1x1")


def network_convs(args):
    """(name, spconv-gen-conv flags) of each distinct conv shape of --net, in order."""
    if args.net == "paper10":
        names = PAPER10
        if args.layers:
            a, _, b = args.layers.partition(":")
            names = PAPER10[slice(int(a) if a else None, int(b) if b else None)]
        return [(l, "--layer %s --batch %d --dtype %s --sparsity %g" % (
            l, args.batch, args.dtype, args.sparsity)) for l in names]
    # bench/networks.py knows the networks' conv shapes; it needs numpy, which --gen does not.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import networks
    if args.net not in networks.NETWORKS:
        sys.exit("sweep_spec.py: no network %s (bench/networks.py has %s)" % (
            args.net, ", ".join(sorted(networks.NETWORKS))))
    layers, _ = networks.network(args.net)
    if args.layers:
        layers = [layers[i] for i in networks.parse_slice(args.layers, len(layers))]
    out, shapes = [], set()
    for l in layers:
        flags = "--shape %d,%d,%d,%d,%d,%d,%d --stride %d,%d --pad %d,%d,%d,%d" % (
            (args.batch, l.c, l.h, l.w, l.k, l.r, l.s, l.sh, l.sw) + tuple(l.pad))
        if l.groups != 1:
            flags += " --groups %d" % l.groups
        flags += " --dtype %s --sparsity %g" % (args.dtype, args.sparsity)
        if flags not in shapes:
            shapes.add(flags)
            out.append((l.func, flags))
    return out


def coverage(convs, keep, tmp):
    """One line per conv: where its tiling comes from, its pairing, grid and block."""
    out = []
    for name, gen_text in convs:
        conv_dir = os.path.join(tmp, name, "base")
        generate(shlex.split(gen_text), conv_dir)
        kernel = {}
        base, why = resolve(conv_dir, keep, kernel)
        if base is None:
            out.append("%-24s does not compile: %s" % (name, why))
            continue
        source = kernel.get("tuned_by")
        out.append("%-24s %-9s grid %-14s block %-5s %s" % (
            name, base[0], "x".join(map(str, kernel["grid"])), kernel["block"][0],
            "table: " + source.split(" ")[0] if source else "heuristic"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--gen", help="spconv-gen-conv flags of the conv")
    which.add_argument("--net", help="every distinct conv of a bench/networks.py network "
                       "(resnet50, vgg16, mobilenetv2, ...) or of paper10")
    ap.add_argument("--name", default="case", help="case name prefix with --gen (default: case)")
    ap.add_argument("--batch", type=int, default=1, help="--net: batch (default 1)")
    ap.add_argument("--dtype", default="f16", help="--net: f32, f16 or bf16 (default f16)")
    ap.add_argument("--sparsity", type=float, default=0.9, help="--net: default 0.9")
    ap.add_argument("--layers", help="--net: a slice A:B of its layers")
    ap.add_argument("--translate", default="", help="spconv-translate flags every case keeps")
    ap.add_argument("--max", type=int, default=0, help="at most N variants a conv (0: all)")
    ap.add_argument("--coverage", action="store_true",
                    help="list each conv's tiling source (table entry or heuristic) instead")
    ap.add_argument("-o", "--out", help="the spec (default: stdout)")
    args = ap.parse_args()
    if args.gen is not None and "--pairing" in shlex.split(args.gen):
        sys.exit("sweep_spec.py: leave --pairing out of --gen; the sweep tries each pairing")
    convs = [(args.name, args.gen)] if args.gen is not None else network_convs(args)
    keep = shlex.split(args.translate)

    text = []
    with tempfile.TemporaryDirectory(prefix="sweep-spec-") as tmp:
        if args.coverage:
            text = coverage(convs, keep, tmp)
            convs = []
        for name, gen_text in convs:
            messages = []
            lines = sweep(gen_text, name, keep, args.max, tmp, messages)
            for m in messages:
                print("sweep_spec.py: " + m, file=sys.stderr)
            text.append("# bench/sweep_spec.py --gen %s%s: one change a line from %s-base" % (
                shlex.quote(gen_text), " --translate %s" % shlex.quote(args.translate)
                if args.translate else "", name))
            text += lines
    text = "\n".join(text) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
