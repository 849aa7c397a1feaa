"""End-to-end check of --import-onnx semantics, in numpy.

    /usr/bin/python3 check_numerics.py MODEL.onnx IMPORTED.mlir LISTING.json [--perturb]

For every conv the listing marks "spconv", evaluates the original ONNX nodes (the Conv, and
the BatchNormalization / Add / Relu / Clip fused into it) on a random input (and a random
residual for a fused Add's other operand, which the func takes second), straight from the
ONNX attributes (auto_pad computed here, independently of the importer), in float64. Then
evaluates a convolution built only from what the imported MLIR says: the dense_resource
blobs (an alignment header, then little-endian f32, f16 or bf16), strides, padding,
dilations, groups and activation. Prints one line per conv and exits 1 on any mismatch,
including a zero pattern that changed (a zero weight that became nonzero or the reverse).
--perturb moves one imported weight, to show that the check can fail.

float16 / bfloat16 convs (docs/onnx-import.md, "Half precision"): the imported weights and
bias must be exactly the BN fold computed in float64 and rounded once, to nearest even, to
the conv's type (rounded here by an independent implementation; zeros keep their sign), and
the output must lie within what that rounding allows: |got - ref| <= u * (conv(|x|, |w|) +
|b|), u the type's unit roundoff, w and b the unrounded fold.
"""
import json
import math
import re
import sys

import numpy as np
import onnx
from onnx import numpy_helper

model_path, mlir_path, listing_path = sys.argv[1:4]
perturb = "--perturb" in sys.argv[4:]
model = onnx.load(model_path)  # loads external data relative to the model
listing = json.load(open(listing_path))
text = open(mlir_path).read()
rng = np.random.default_rng(3)

constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
for node in model.graph.node:
    if node.op_type == "Constant":
        constants[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def conv2d(x, w, b, strides, pads, dilations, group):
    n, c, h, wd = x.shape
    k, cpg, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    p = (h + pads[0] + pads[2] - dilations[0] * (r - 1) - 1) // strides[0] + 1
    q = (wd + pads[1] + pads[3] - dilations[1] * (s - 1) - 1) // strides[1] + 1
    out = np.zeros((n, k, p, q))
    kpg = k // group
    for i in range(r):
        for j in range(s):
            y0, x0 = i * dilations[0], j * dilations[1]
            patch = xp[:, :, y0:y0 + (p - 1) * strides[0] + 1:strides[0],
                       x0:x0 + (q - 1) * strides[1] + 1:strides[1]]
            for g in range(group):
                out[:, g * kpg:(g + 1) * kpg] += np.einsum(
                    "kc,ncpq->nkpq", w[g * kpg:(g + 1) * kpg, :, i, j].astype(np.float64),
                    patch[:, g * cpg:(g + 1) * cpg])
    if b is not None:
        out += np.asarray(b, np.float64)[None, :, None, None]
    return out


def onnx_conv(node, x):
    a = attrs(node)
    w = constants[node.input[1]]
    b = constants[node.input[2]] if len(node.input) > 2 and node.input[2] else None
    k, cpg, r, s = w.shape
    strides = a.get("strides", [1, 1])
    dil = a.get("dilations", [1, 1])
    auto_pad = a.get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    pads = list(a.get("pads", [0, 0, 0, 0]))
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        for d in range(2):
            size = x.shape[2 + d]
            out = -(-size // strides[d])
            total = max(0, (out - 1) * strides[d] + dil[d] * ((r, s)[d] - 1) + 1 - size)
            lo = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            pads[d], pads[d + 2] = lo, total - lo
    elif auto_pad == "VALID":
        pads = [0, 0, 0, 0]
    return conv2d(x, w, b, strides, pads, dil, a.get("group", 1)), w


def onnx_after(node, y, residual):
    a = attrs(node)
    if node.op_type == "Add":
        return y + residual
    if node.op_type == "BatchNormalization":
        scale, bias, mean, var = (constants[n].astype(np.float64) for n in node.input[1:5])
        eps = a.get("epsilon", 1e-5)
        sh = (1, -1, 1, 1)
        return (y - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * scale.reshape(sh) \
            + bias.reshape(sh)
    if node.op_type == "Relu":
        return np.maximum(y, 0)
    if node.op_type == "Clip":
        if opset < 11:
            lo, hi = a.get("min", -3.4028234663852886e38), a.get("max", 3.4028234663852886e38)
        else:
            lo = constants[node.input[1]] if len(node.input) > 1 and node.input[1] else -np.inf
            hi = constants[node.input[2]] if len(node.input) > 2 and node.input[2] else np.inf
        return np.clip(y, lo, hi)
    raise SystemExit("unexpected fused node " + node.op_type)


blobs = {m.group(1): m.group(2) for m in re.finditer(r"([\w.$]+): \"0x([0-9A-Fa-f]+)\"", text)}


def blob(name, elem):
    raw = bytes.fromhex(blobs[name])
    width = 4 if elem == "f32" else 2
    assert int.from_bytes(raw[:4], "little") == width, "alignment header"
    if elem == "f32":
        return np.frombuffer(raw[4:], "<f4")
    if elem == "f16":
        return np.frombuffer(raw[4:], "<f2").astype(np.float32)
    return (np.frombuffer(raw[4:], "<u2").astype(np.uint32) << 16).view(np.float32)


# (significant bits, exponent of the smallest normal, largest finite) of the half types.
HALF = {"f16": (11, -14, 65504.0), "bf16": (8, -126, (2 - 2.0 ** -7) * 2.0 ** 127)}


def round_half(values, elem):
    """float64 values rounded once, to nearest even, to f16 or bf16 (IEEE, subnormals,
    overflow to infinity), as float64. Independent of numpy's and the importer's rounding."""
    bits, min_exp, largest = HALF[elem]
    out = np.array(values, np.float64)
    for i, v in enumerate(out.flat):
        if v == 0 or not math.isfinite(v):
            continue
        _, e = math.frexp(v)  # v = m * 2^e, 0.5 <= |m| < 1
        q = max(e - bits, min_exp - bits + 1)  # the exponent of one unit in the last place
        r = round(math.ldexp(v, -q))  # exact scaling; Python rounds ties to even
        y = math.copysign(0.0, v) if r == 0 else math.ldexp(r, q)
        out.flat[i] = math.copysign(math.inf, v) if abs(y) > largest else y
    return out


def array_attr(body, name, default):
    m = re.search(name + r" = array<i64: ([-0-9, ]+)>", body)
    return [int(v) for v in m.group(1).split(",")] if m else default


funcs = {}
for m in re.finditer(r"func\.func @([\w$.]+)\(%\w+: tensor<([0-9x]+)x(f32|f16|bf16)>"
                     r"(, %\w+: tensor<([0-9x]+)x(?:f32|f16|bf16)>)?\).*?\n"
                     r"(.*?)\n\s*return", text, re.S):
    funcs[m.group(1)] = (m.group(2), m.group(3), m.group(6), m.group(5))

failed = False
for entry in listing["nodes"]:
    if entry["run"] != "spconv":
        continue
    node = model.graph.node[entry["file_index"]]
    shape = entry["input_shape"]
    x = rng.standard_normal(shape)
    ref, w_onnx = onnx_conv(node, x)
    fused = [model.graph.node[other["file_index"]] for other in listing["nodes"]
             if other.get("fused_into") == entry["func"]]
    in_type, elem, body, res_type = funcs[entry["func"]]
    assert [int(d) for d in in_type.split("x")] == shape
    # a fused Add's other operand is the func's second argument, and only then
    assert ("residual" in entry) == (res_type is not None) == ("residual(" in body) == any(
        n.op_type == "Add" for n in fused), entry["func"]
    residual = None
    if res_type is not None:
        assert [int(d) for d in res_type.split("x")] == entry["result_shape"]
        residual = rng.standard_normal(entry["result_shape"])
        if elem != "f32":  # the tensor the kernel reads, in its type
            residual = round_half(residual, elem)
    for other in fused:
        ref = onnx_after(other, ref, residual)

    wm = re.search(r"weights = dense_resource<([\w.$]+)> : tensor<([0-9x]+)x(f32|f16|bf16)>", body)
    assert wm.group(3) == elem, "weights in the conv's type"
    w = blob(wm.group(1), elem).reshape([int(d) for d in wm.group(2).split("x")]).copy()
    bm = re.search(r"bias = dense_resource<([\w.$]+)> : tensor<\d+x(f32|f16|bf16)>", body)
    b = blob(bm.group(1), bm.group(2)) if bm else None
    assert not bm or bm.group(2) == elem, "bias in the conv's type"
    gm = re.search(r"groups = (\d+)", body)
    am = re.search(r"#spconv.activation<(\w+)>", body)
    if perturb:
        w.flat[np.flatnonzero(w)[0]] += 0.5
    got = conv2d(x, w, b, array_attr(body, "strides", [1, 1]),
                 array_attr(body, "padding", [0, 0, 0, 0]),
                 array_attr(body, "dilations", [1, 1]), int(gm.group(1)) if gm else 1)
    if residual is not None:
        got = got + residual
    act = am.group(1) if am else "none"
    if act == "relu":
        got = np.maximum(got, 0)
    elif act == "relu6":
        got = np.clip(got, 0, 6)
    zeros_same = np.array_equal(w == 0, w_onnx == 0) and np.array_equal(
        np.signbit(w[w == 0]), np.signbit(w_onnx[w_onnx == 0]))
    if got.shape != ref.shape:
        print("MISMATCH", entry["func"], "shape", got.shape, "want", ref.shape)
        failed = True
        continue
    err = np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30)
    if elem == "f32":
        ok = err < 1e-5 and zeros_same
    else:
        # The fold in float64 (zeros written back as they were), rounded once to the type.
        w_exact = w_onnx.astype(np.float64)
        b_onnx = constants[node.input[2]] if len(node.input) > 2 and node.input[2] else None
        b_exact = np.zeros(w.shape[0]) if b_onnx is None else b_onnx.astype(np.float64)
        for bn in (n for n in fused if n.op_type == "BatchNormalization"):
            scale, shift, mean, var = (constants[i].astype(np.float64) for i in bn.input[1:5])
            factor = scale / np.sqrt(var + attrs(bn).get("epsilon", 1e-5))
            w_exact = np.where(w_exact == 0, w_exact, w_exact * factor[:, None, None, None])
            b_exact = (b_exact - mean) * factor + shift
        exact_w = np.array_equal(w.view(np.uint32),
                                 round_half(w_exact, elem).astype(np.float32).view(np.uint32))
        exact_b = (b is None and b_onnx is None and not any(
            n.op_type == "BatchNormalization" for n in fused)) or (
            b is not None and np.array_equal(b, round_half(b_exact, elem).astype(np.float32)))
        unit = 2.0 ** -HALF[elem][0]
        bound = unit * (conv2d(np.abs(x), np.abs(w_exact), np.abs(b_exact),
                               array_attr(body, "strides", [1, 1]),
                               array_attr(body, "padding", [0, 0, 0, 0]),
                               array_attr(body, "dilations", [1, 1]),
                               int(gm.group(1)) if gm else 1))
        if residual is not None:  # the add in the type rounds once more
            bound = bound + unit * (bound / unit + np.abs(residual))
        slack = 1e-12 * max(np.max(np.abs(ref)), 1e-30)
        within = bool(np.all(np.abs(got - ref) <= bound * (1 + 1e-9) + slack))
        ok = zeros_same and exact_w and exact_b and within
        if not ok:
            print("  %s: weights rounded once %s, bias %s, output within the rounding bound %s"
                  % (entry["func"], exact_w, exact_b, within))
    failed |= not ok
    print("%s %s %s act %s max-rel-err %.1e zeros %d %s" % (
        "OK" if ok else "MISMATCH", entry["func"], elem, act, err, int(np.sum(w == 0)),
        "kept" if zeros_same else "CHANGED"))
sys.exit(1 if failed else 0)
