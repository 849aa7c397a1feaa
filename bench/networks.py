#!/usr/bin/env python3
"""Writes the convolution stacks of real networks as spconv input.

Networks (NCHW; fp32 activations, or f16/bf16 with --dtype; weights KCRS fp32, groups = 1
only), with torchvision's layer names:

  resnet50          ResNet-50 v1.5 at 224x224: 53 convs (conv1, 16 bottlenecks of 3 convs,
                    4 downsample 1x1 convs); stride 2 on the 3x3 conv2 of layer2..4's first block.
  vgg16             VGG-16 features: 13 3x3 pad 1 convs (features.0 ... features.28).
  mobilenetv2       MobileNetV2 (width 1.0, 224x224), all 52 convs: the stem, each block's 1x1
                    expand (absent when t = 1), 3x3 depthwise (groups = channels) and 1x1
                    project, and the last 1x1 320->1280.
  mobilenetv2_nodw  the same without its 17 depthwise convs (the set measured before grouped
                    convs were supported): the stem, each block's
                    1x1 expand (absent when t = 1) and 1x1 project, and the last 1x1 320->1280:
                    35 convs. Each conv sees the spatial size of the real network (the skipped
                    depthwise convs' strides are applied).

Weights: per conv, numpy default_rng(seed + layer index) standard normal (float32), then
magnitude-pruned like spconv-gen-conv: the floor(p * count) smallest |w| become +0.0 (ties
broken by KCRS index). --bias adds a per-conv normal bias (scale 0.1, as spconv-gen-conv),
drawn from the same generator after the weights; --relu fuses a ReLU. The layer index is the
index in the whole network, so a --layers slice holds the same weights as the full network.

Output: -o FILE.mlir writes one module with a func.func per conv (one spconv.conv2d each,
located at loc("<network>/<layer name>")) and every weight blob in the dialect_resources
section; --split DIR writes DIR/NN-<name>.mlir (one conv each), DIR/weights/NN-<name>.bin
(raw KCRS float32 little-endian; .bias.bin with --bias) and DIR/manifest.json.

  python3 bench/networks.py resnet50 --batch 1 --sparsity 0.9 --seed 1 -o r50.mlir
  python3 bench/networks.py vgg16 --split out/vgg16 --layers 0:4
  python3 bench/networks.py mobilenetv2_nodw --list

Needs numpy (Debian: apt-get install python3-numpy).
"""
import argparse
import json
import math
import os
import re
import sys

try:
    import numpy as np
except ImportError:  # pragma: no cover - depends on the machine
    # A pyenv/venv python3 may shadow Debian's, which is where python3-numpy installs.
    if (__name__ == "__main__" and os.path.exists("/usr/bin/python3")
            and not os.environ.get("SPCONV_NETWORKS_REEXEC")
            and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3")):
        os.environ["SPCONV_NETWORKS_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3", os.path.abspath(__file__)] + sys.argv[1:])
    if __name__ == "__main__":
        sys.exit("networks.py: error: numpy is missing (apt-get install python3-numpy)")
    raise


# --------------------------------------------------------------------------------------------
# Layer tables
# --------------------------------------------------------------------------------------------

class Layer:
    """One conv: input C x H x W, K filters of R x S (over C / groups channels each), stride
    (sh, sw), pad (t, l, b, r)."""

    def __init__(self, name, c, h, w, k, r, s, stride=1, pad=0, groups=1):
        self.name = name
        if c % groups or k % groups:
            raise ValueError("%s: groups must divide C and K" % name)
        self.groups = groups
        self.c, self.h, self.w, self.k, self.r, self.s = c, h, w, k, r, s
        self.sh, self.sw = (stride, stride) if isinstance(stride, int) else tuple(stride)
        self.pad = (pad,) * 4 if isinstance(pad, int) else tuple(pad)
        t, l, b, rr = self.pad
        if h + t + b < r or w + l + rr < s:
            raise ValueError("%s: filter larger than the padded input" % name)
        self.p = (h + t + b - r) // self.sh + 1
        self.q = (w + l + rr - s) // self.sw + 1

    @property
    def weights_total(self):
        return self.k * (self.c // self.groups) * self.r * self.s

    @property
    def func(self):
        return sanitise(self.name)

    def __repr__(self):
        return "Layer(%s: %dx%dx%d -> %dx%dx%d, %dx%d/%d)" % (
            self.name, self.c, self.h, self.w, self.k, self.p, self.q, self.r, self.s, self.sh)


def sanitise(name):
    """A symbol/resource name usable bare in MLIR: [A-Za-z_][A-Za-z0-9_]*."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return "_" + s if s[:1].isdigit() or not s else s


def resnet50():
    layers = [Layer("conv1", 3, 224, 224, 64, 7, 7, stride=2, pad=3)]
    hw = 56  # 112 after conv1, 56 after the 3x3/2 maxpool
    cin = 64
    for li, (blocks, width) in enumerate(zip([3, 4, 6, 3], [64, 128, 256, 512]), start=1):
        cout = width * 4
        for b in range(blocks):
            stride = 2 if (b == 0 and li > 1) else 1
            pre = "layer%d.%d." % (li, b)
            layers.append(Layer(pre + "conv1", cin, hw, hw, width, 1, 1))
            layers.append(Layer(pre + "conv2", width, hw, hw, width, 3, 3, stride=stride, pad=1))
            out_hw = layers[-1].p
            layers.append(Layer(pre + "conv3", width, out_hw, out_hw, cout, 1, 1))
            if b == 0:
                layers.append(Layer(pre + "downsample", cin, hw, hw, cout, 1, 1, stride=stride))
            cin, hw = cout, out_hw
    return layers, []


def vgg16():
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512]
    layers, idx, c, hw = [], 0, 3, 224
    for v in cfg:
        if v == "M":
            hw //= 2
            idx += 1
        else:
            layers.append(Layer("features.%d" % idx, c, hw, hw, v, 3, 3, stride=1, pad=1))
            c = v
            idx += 2  # the conv and its ReLU
    return layers, []


def mobilenetv2():
    """All 52 convs of MobileNetV2, the 17 depthwise 3x3 ones included (groups = channels)."""
    return mobilenetv2_layers(depthwise=True)


def mobilenetv2_nodw():
    """Returns (layers, skipped): skipped lists the depthwise convs left out, as Layer-like dicts."""
    return mobilenetv2_layers(depthwise=False)


def mobilenetv2_layers(depthwise):
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]
    layers = [Layer("features.0.0", 3, 224, 224, 32, 3, 3, stride=2, pad=1)]
    skipped = []
    c, hw, f = 32, layers[0].p, 1
    for t, cout, n, s in settings:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = c * t
            pre = "features.%d.conv." % f
            j = 0
            if t != 1:
                layers.append(Layer(pre + "0.0", c, hw, hw, hidden, 1, 1))
                j = 1
            dw_out = (hw + 2 - 3) // stride + 1
            if depthwise:
                layers.append(Layer(pre + "%d.0" % j, hidden, hw, hw, hidden, 3, 3, stride=stride,
                                    pad=1, groups=hidden))
            else:
                skipped.append({"name": pre + "%d.0" % j, "C": hidden, "H": hw, "W": hw, "K": hidden,
                                "R": 3, "S": 3, "groups": hidden, "stride": [stride, stride],
                                "pad": [1, 1, 1, 1], "P": dw_out, "Q": dw_out})
            hw = dw_out
            layers.append(Layer(pre + "%d" % (j + 1), hidden, hw, hw, cout, 1, 1))
            c, f = cout, f + 1
    layers.append(Layer("features.%d.0" % f, c, hw, hw, 1280, 1, 1))
    return layers, skipped


NETWORKS = {"resnet50": resnet50, "vgg16": vgg16, "mobilenetv2": mobilenetv2,
            "mobilenetv2_nodw": mobilenetv2_nodw}


def network(name):
    layers, skipped = NETWORKS[name]()
    funcs = [l.func for l in layers]
    assert len(set(funcs)) == len(funcs), "sanitised layer names collide"
    return layers, skipped


# --------------------------------------------------------------------------------------------
# Weights
# --------------------------------------------------------------------------------------------

def prune(w, sparsity):
    """Zeroes (to +0.0) exactly floor(p * count) smallest |w|, ties broken by index, in place.

    Returns the number of zeroed entries."""
    flat = w.reshape(-1)
    n = flat.size
    count = int(math.floor(sparsity * n + 1e-9))
    count = max(0, min(count, n))
    if count == 0:
        return 0
    if count == n:
        flat[:] = 0.0
        return n
    mag = np.abs(flat)
    thresh = np.partition(mag, count - 1)[count - 1]
    below = mag < thresh
    need = count - int(np.count_nonzero(below))
    flat[below] = 0.0
    flat[np.flatnonzero(mag == thresh)[:need]] = 0.0
    return count


def make_weights(layer, index, seed, sparsity, bias):
    """(weights K x C x R x S float32, bias K float32 or None) for the layer at network index."""
    rng = np.random.default_rng(seed + index)
    w = rng.standard_normal(layer.weights_total, dtype=np.float32)
    prune(w, sparsity)
    w = w.reshape(layer.k, layer.c // layer.groups, layer.r, layer.s)
    b = (rng.standard_normal(layer.k, dtype=np.float32) * np.float32(0.1)) if bias else None
    return w, b


def hex_blob(a):
    """dense_resource blob text: the alignment (4) as a little-endian uint32, then the data."""
    return "0x04000000" + np.ascontiguousarray(a, dtype="<f4").tobytes().hex().upper()


# --------------------------------------------------------------------------------------------
# MLIR
# --------------------------------------------------------------------------------------------

def tensor(*dims, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in dims) + "x" + dtype + ">"


def func_text(net, layer, batch, bias, relu, dtype="f32", layout="nchw"):
    # The activations take --dtype; weights and bias stay f32 blobs (spconv-fold-weights
    # rounds them to a half type), so --split's weight files are the same for every dtype.
    n = batch
    tin = tensor(n, layer.c, layer.h, layer.w, dtype=dtype)
    tout = tensor(n, layer.k, layer.p, layer.q, dtype=dtype)
    tw = tensor(layer.k, layer.c // layer.groups, layer.r, layer.s)
    f = layer.func
    attrs = ["weights = dense_resource<%s_w> : %s" % (f, tw)]
    if bias:
        attrs.append("bias = dense_resource<%s_b> : %s" % (f, tensor(layer.k)))
    attrs.append("strides = array<i64: %d, %d>" % (layer.sh, layer.sw))
    attrs.append("padding = array<i64: %d, %d, %d, %d>" % layer.pad)
    attrs.append("dilations = array<i64: 1, 1>")
    if layer.groups != 1:
        attrs.append("groups = %d" % layer.groups)
    if relu:
        attrs.append("activation = #spconv.activation<relu>")
    if layout != "nchw":
        attrs.append("layout = #spconv.layout<%s>" % layout)
    return ("func.func @%s(%%x: %s) -> %s {\n"
            "  %%y = spconv.conv2d %%x {%s}\n"
            "      : %s -> %s loc(\"%s/%s\")\n"
            "  return %%y : %s\n"
            "}\n") % (f, tin, tout, ", ".join(attrs), tin, tout, net, layer.name, tout)


def header(net, args, skipped):
    lines = ["// Generated by bench/networks.py %s --batch %d --sparsity %s --seed %d%s%s%s"
             % (net, args.batch, args.sparsity, args.seed, " --bias" if args.bias else "",
                " --relu" if args.relu else "",
                (" --dtype " + args.dtype if args.dtype != "f32" else "")
                + (" --layout " + args.layout if args.layout != "nchw" else ""))]
    if skipped:
        lines.append("// Left out (grouped depthwise convs, not generated): "
                     + ", ".join(s["name"] for s in skipped))
    return "\n".join(lines) + "\n"


def write_resources(out, entries):
    """entries: iterable of (name, array); streamed so the whole network never sits in memory."""
    out.write("{-#\n  dialect_resources: {\n    builtin: {\n")
    first = True
    for name, arr in entries:
        if not first:
            out.write(",\n")
        first = False
        out.write('      %s: "' % name)
        out.write(hex_blob(arr))
        out.write('"')
    out.write("\n    }\n  }\n#-}\n")


def write_module(path, net, selected, args, skipped, stats):
    with open(path, "w") as out:
        out.write(header(net, args, skipped))
        for index, layer in selected:
            out.write("\n// %d: %s\n" % (index, layer.name))
            out.write(func_text(net, layer, args.batch, args.bias, args.relu, args.dtype,
                                args.layout))

        def entries():
            for index, layer in selected:
                w, b = make_weights(layer, index, args.seed, args.sparsity, args.bias)
                stats.append((index, layer, int(np.count_nonzero(w))))
                yield layer.func + "_w", w
                if b is not None:
                    yield layer.func + "_b", b

        write_resources(out, entries())


def write_split(outdir, net, selected, args, skipped):
    wdir = os.path.join(outdir, "weights")
    os.makedirs(wdir, exist_ok=True)
    width = max(2, len(str(len(network(net)[0]) - 1)))
    records = []
    for index, layer in selected:
        stem = "%0*d-%s" % (width, index, layer.name)
        w, b = make_weights(layer, index, args.seed, args.sparsity, args.bias)
        with open(os.path.join(outdir, stem + ".mlir"), "w") as out:
            out.write(header(net, args, []))
            out.write("// %d: %s\n" % (index, layer.name))
            out.write(func_text(net, layer, args.batch, args.bias, args.relu, args.dtype,
                                args.layout))
            items = [(layer.func + "_w", w)] + ([(layer.func + "_b", b)] if b is not None else [])
            write_resources(out, items)
        w.astype("<f4").tofile(os.path.join(wdir, stem + ".bin"))
        if b is not None:
            b.astype("<f4").tofile(os.path.join(wdir, stem + ".bias.bin"))
        nnz = int(np.count_nonzero(w))
        records.append({
            "index": index, "name": layer.name, "func": layer.func, "N": args.batch,
            "C": layer.c, "H": layer.h, "W": layer.w, "K": layer.k, "R": layer.r, "S": layer.s,
            "P": layer.p, "Q": layer.q, "stride": [layer.sh, layer.sw], "pad": list(layer.pad),
            "dilation": [1, 1], "groups": layer.groups, "nnz": nnz, "weights_total": layer.weights_total,
            "mlir": stem + ".mlir", "weights": "weights/" + stem + ".bin",
            "bias": ("weights/" + stem + ".bias.bin") if b is not None else None,
        })
    manifest = {"network": net, "batch": args.batch, "sparsity": args.sparsity,
                "seed": args.seed, "bias": args.bias, "relu": args.relu, "dtype": args.dtype,
                "layout": args.layout,
                "weights_layout": "KCRS float32 little-endian", "layers": records,
                "skipped": skipped}
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        f.write(manifest_text(manifest))
    return records


def manifest_text(manifest):
    """JSON with one line per layer record (diff- and grep-friendly)."""
    head = {k: v for k, v in manifest.items() if k not in ("layers", "skipped")}
    parts = ['  %s: %s' % (json.dumps(k), json.dumps(v)) for k, v in head.items()]
    for key in ("layers", "skipped"):
        rows = ",\n".join("    " + json.dumps(r) for r in manifest[key])
        parts.append('  "%s": [%s]' % (key, ("\n" + rows + "\n  ") if rows else ""))
    return "{\n" + ",\n".join(parts) + "\n}\n"


def print_table(net, layers, selected, skipped, out=sys.stdout):
    out.write("%3s  %-22s %5s %4s %4s %5s %2s %2s %7s %-9s %4s %4s %9s\n"
              % ("idx", "name", "C", "H", "W", "K", "R", "S", "stride", "pad", "P", "Q", "weights"))
    for index, l in selected:
        out.write("%3d  %-22s %5d %4d %4d %5d %2d %2d %7s %-9s %4d %4d %9d\n"
                  % (index, l.name, l.c, l.h, l.w, l.k, l.r, l.s, "%d,%d" % (l.sh, l.sw),
                     ",".join(str(v) for v in l.pad), l.p, l.q, l.weights_total))
    total = sum(l.weights_total for _, l in selected)
    out.write("%s: %d of %d convs, %d weights\n" % (net, len(selected), len(layers), total))
    if skipped:
        out.write("left out (depthwise, groups = C): %d: %s\n"
                  % (len(skipped), " ".join(s["name"] for s in skipped)))


def parse_slice(text, n):
    m = re.fullmatch(r"\s*(-?\d*)\s*:\s*(-?\d*)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError("--layers wants A:B (a Python slice of layer indices)")
    a = int(m.group(1)) if m.group(1) else None
    b = int(m.group(2)) if m.group(2) else None
    return range(n)[slice(a, b)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("network", choices=sorted(NETWORKS))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--sparsity", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bias", action="store_true", help="random normal bias per conv")
    ap.add_argument("--relu", action="store_true", help="fuse a ReLU into every conv")
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32",
                    help="element type of inputs and outputs (weights stay f32)")
    ap.add_argument("--layout", choices=["nchw", "image_pairs"], default="nchw",
                    help="how every conv stores its input and output: image_pairs (half "
                         "precision, even batch) interleaves images n and n + N/2 in 32-bit "
                         "words (docs/design.md, \"Image-pair layout\")")
    ap.add_argument("--layers", default=":", help="A:B, layers by index (default all)")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("-o", dest="output", metavar="FILE.mlir", help="one module, all convs")
    mode.add_argument("--split", metavar="DIR", help="one .mlir + weights per conv, manifest.json")
    mode.add_argument("--list", action="store_true", help="print the layer table only")
    args = ap.parse_args(argv)
    if args.batch <= 0:
        ap.error("--batch must be positive")
    if not 0.0 <= args.sparsity <= 1.0:
        ap.error("--sparsity must be in [0, 1]")
    if args.layout == "image_pairs" and (args.dtype == "f32" or args.batch % 2):
        ap.error("--layout image_pairs needs --dtype f16 or bf16 and an even --batch")

    layers, skipped = network(args.network)
    try:
        indices = parse_slice(args.layers, len(layers))
    except argparse.ArgumentTypeError as e:
        ap.error(str(e))
    selected = [(i, layers[i]) for i in indices]
    if not selected:
        ap.error("--layers %s selects no layer" % args.layers)

    if args.list:
        print_table(args.network, layers, selected, skipped)
        return 0
    if args.output:
        stats = []
        write_module(args.output, args.network, selected, args, skipped, stats)
        nnz = sum(s[2] for s in stats)
    else:
        records = write_split(args.split, args.network, selected, args, skipped)
        nnz = sum(r["nnz"] for r in records)
    total = sum(l.weights_total for _, l in selected)
    print("%s: %d convs, %d weights, %d nonzero (sparsity %.4f) -> %s"
          % (args.network, len(selected), total, nnz, 1.0 - nnz / total,
             args.output or args.split))
    return 0


if __name__ == "__main__":
    sys.exit(main())
