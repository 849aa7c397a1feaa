#!/usr/bin/env python3
"""Compiles the sanitizer cases of the round-4 tuning-table entries into .santuned2: each
entry's tiling (read from the .cases/f16t2 sidecar that the table made) forced by flags at a
smaller image or batch, checked against that sidecar's tiling and pairing. Run from the
repository root after compiling .cases/f16t2 (../../2026-11-26-half-tuned2/device-run.sh)."""
import json
import os
import subprocess

CASES = [  # name, .cases/f16t2 case, batch, image (None: the layer's own)
    ("vgg-conv3-n1-tuned@h22", "vgg-conv3-n1-p0.9", 1, 22),
    ("vgg-conv2-n1-tuned@h22", "vgg-conv2-n1-p0.9", 1, 22),
    ("alexnet-conv2-n1-tuned", "alexnet-conv2-n1-p0.9", 1, None),
    ("resnet-conv2-n64-tuned@n4h22", "resnet-conv2-n64-p0.9", 4, 22),
    ("vgg-conv3-n64-tuned@n4h22", "vgg-conv3-n64-p0.9", 4, 22),
]


def switch(on):
    return "2" if on else "1"


lines = []
for name, src, n, img in CASES:
    k = json.load(open(".cases/f16t2/%s/kernels.json" % src))["kernels"][0]
    c, t = k["conv"], k["tiling"]
    h, w = img or c["H"], img or c["W"]
    d = ".santuned2/tuned/" + name
    gen = ["build/bin/spconv-gen-conv", "--shape",
           "%d,%d,%d,%d,%d,%d,%d" % (n, c["C"], h, w, c["K"], c["R"], c["S"]),
           "--stride", "%d,%d" % tuple(c["stride"]), "--pad", "%d,%d,%d,%d" % tuple(c["padding"]),
           "--dtype", "f16", "--sparsity", "0.9", "--pairing", k["numerics"]["pairing"],
           "--seed", "1", "-o", d]
    gen += ["--bias"] if c.get("has_bias") else []
    gen += ["--relu"] if c.get("activation") == "relu" else []
    subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
    flags = ["--block-k=%d" % t["block_k"], "--tile-p=%d" % t["tile_p"],
             "--threads-q=%d" % t["threads_q"], "--chunk-c=%d" % t["chunk_c"],
             "--split-c=%d" % t["split_c"], "--images-per-block=%d" % t["images_per_block"],
             "--min-blocks-per-sm=%d" % t["min_blocks_per_sm"],
             "--outputs-per-thread=%d" % t["outputs_per_thread"],
             "--chunk-loop=" + switch(t["chunk_loop"]), "--sm-affinity=" + switch(t["sm_affine"]),
             "--async-staging=" + switch(t["async_staging"]),
             "--direct-inputs=" + switch(t["direct_inputs"]),
             "--block-order=" + switch(t["channel_block_major"])]
    subprocess.run(["build/bin/spconv-translate", "--spconv-compile", d + "/conv.mlir",
                    "--cache-dir=none", "--tuning-table=none", "--artifact-prefix=" + d + "/kernels",
                    "-o", d + "/kernels.json"] + flags, check=True)
    got = json.load(open(d + "/kernels.json"))["kernels"][0]
    assert got["tiling"] == t and got["numerics"]["pairing"] == k["numerics"]["pairing"], name
    for f in ("conv.mlir", "kernels.ptx"):
        if os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))
    lines.append("tuned/%s tuned/%s -" % (name, name))
with open(".santuned2/cases.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
