"""Writes the float16 / bfloat16 ONNX models of the --import-onnx tests into a directory.

    /usr/bin/python3 make_half_models.py OUTDIR

Good models: float16 convs with and without a folded BatchNormalization (float16 and float32
BN parameters: opset 15 lets them differ from the conv's type) and a fused Relu / Clip,
weights as raw_data, as int32_data (ONNX's non-raw form of 16-bit floats) and as external
data; a bfloat16 model; a float32 model whose middle is float16 through Cast nodes. Folds the
half types cannot hold: a weight that float16 flushes to zero, one it overflows. Bad models:
mixed element types, and malformed half initializers. Weights are random normal, about half
of them exactly zero (pruned), from a fixed seed.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(16)
F, H, BF = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16


def pruned(*shape, p=0.5):
    w = rng.standard_normal(shape).astype(np.float32)
    w[rng.random(shape) < p] = 0.0
    return w


def bf16_bits(array):
    """float32 values rounded to bfloat16 (to nearest, ties to even), as uint16 bits."""
    u = np.asarray(array, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def init(name, array, elem=H):
    """An initializer holding `array` in `elem`, as raw_data."""
    t = TensorProto()
    t.name, t.data_type = name, elem
    array = np.asarray(array, np.float32)
    t.dims.extend(array.shape)
    if elem == F:
        t.raw_data = array.astype("<f4").tobytes()
    elif elem == H:
        t.raw_data = array.astype("<f2").tobytes()
    else:
        t.raw_data = bf16_bits(array).astype("<u2").tobytes()
    return t


def init_int32(name, array, elem=H):
    """The same as int32_data (what helper.make_tensor writes for 16-bit floats)."""
    array = np.asarray(array, np.float32)
    bits = array.astype(np.float16).view(np.uint16) if elem == H else bf16_bits(array)
    t = TensorProto()
    t.name, t.data_type = name, elem
    t.dims.extend(array.shape)
    t.int32_data.extend(int(b) for b in bits.flatten())
    return t


def vi(name, shape, elem=H):
    return helper.make_tensor_value_info(name, elem, shape)


def save(name, nodes, inputs, outputs, inits=(), opset=15):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


def bn_params(prefix, k, elem=H, scale=None):
    scale = rng.uniform(0.5, 2.0, k).astype(np.float32) if scale is None else scale
    return ([init(prefix + "_scale", scale, elem),
             init(prefix + "_B", rng.standard_normal(k).astype(np.float32), elem),
             init(prefix + "_mean", rng.standard_normal(k).astype(np.float32), elem),
             init(prefix + "_var", rng.uniform(0.5, 2.0, k).astype(np.float32), elem)],
            [prefix + "_scale", prefix + "_B", prefix + "_mean", prefix + "_var"])


# --- float16: plain, BN + Relu, BN (float32 parameters) + Clip(0, 6), BN it cannot fold -------
inits, nodes = [], []
# hconv1: weights as int32_data, a bias, no fusion (its result feeds a Conv).
inits += [init_int32("w1", pruned(8, 4, 3, 3)),
          init("b1", rng.standard_normal(8).astype(np.float32))]
nodes.append(helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="hconv1",
                              pads=[1, 1, 1, 1]))
# hconv2: no bias; BN with float16 parameters, then Relu.
inits.append(init("w2", pruned(8, 8, 3, 3)))
p, names = bn_params("bn2", 8)
inits += p
nodes += [helper.make_node("Conv", ["c1", "w2"], ["c2"], name="hconv2", pads=[1, 1, 1, 1]),
          helper.make_node("BatchNormalization", ["c2"] + names, ["n2"], name="bn2",
                           epsilon=1e-3),
          helper.make_node("Relu", ["n2"], ["r2"], name="relu2")]
# hconv3: stride 2, a bias; BN with float32 parameters; Clip with float16 bounds: relu6.
inits += [init("w3", pruned(8, 8, 3, 3)),
          init("b3", rng.standard_normal(8).astype(np.float32)),
          init("zero", np.array(0.0)), init("six", np.array(6.0))]
p, names = bn_params("bn3", 8, F)
inits += p
nodes += [helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], name="hconv3", strides=[2, 2],
                          pads=[1, 1, 1, 1]),
          helper.make_node("BatchNormalization", ["c3"] + names, ["n3"], name="bn3"),
          helper.make_node("Clip", ["n3", "zero", "six"], ["r3"], name="clip3")]
# hconv4: channel 0's BN factor is 1e-5, so the weight 1e-3 folds to 1e-8: a float32 would
# hold it, float16 (smallest subnormal 2^-24 = 6e-8) rounds it to 0. The BN is not folded
# (warning at bn4, node 8), and the Relu after it is not fused.
w4 = pruned(4, 8, 1, 1)
w4[0, 0, 0, 0] = 1e-3
tiny = rng.uniform(0.5, 2.0, 4).astype(np.float32)
tiny[0] = 1e-5
inits.append(init("w4", w4))
p, names = bn_params("bn4", 4, scale=tiny)
inits += p
nodes += [helper.make_node("Conv", ["r3", "w4"], ["c4"], name="hconv4"),
          helper.make_node("BatchNormalization", ["c4"] + names, ["n4"], name="bn4"),
          helper.make_node("Relu", ["n4"], ["r4"], name="relu4")]
save("half_fuse", nodes, [vi("x", [2, 4, 8, 8])], [vi("r4", None)], inits)

# A BN whose factor (1e5, float32 parameters) overflows a float16 weight of 2 (2e5 > 65504).
w = pruned(4, 3, 3, 3)
w[1, 0, 0, 0] = 2.0
big = np.ones(4, np.float32)
big[1] = 1e5
p, names = bn_params("bnbig", 4, F, scale=big)
save("half_bn_overflow", [
    helper.make_node("Conv", ["x", "w"], ["c"], name="hconv", pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c"] + names, ["y"], name="bnbig")],
    [vi("x", [1, 3, 6, 6])], [vi("y", None)], [init("w", w)] + p)

# float16 weights in external data.
w = pruned(4, 3, 3, 3)
os.makedirs(os.path.join(OUT, "data"), exist_ok=True)
with open(os.path.join(OUT, "data", "half.bin"), "wb") as f:
    f.write(b"\0" * 6 + w.astype("<f2").tobytes())
ext = TensorProto()
ext.name, ext.data_type = "ew", H
ext.dims.extend(w.shape)
ext.data_location = TensorProto.EXTERNAL
for key, value in (("location", "data/half.bin"), ("offset", "6"), ("length", str(w.size * 2))):
    entry = ext.external_data.add()
    entry.key, entry.value = key, value
save("half_external", [helper.make_node("Conv", ["x", "ew"], ["y"], name="hext")],
     [vi("x", [1, 3, 5, 5])], [vi("y", None)], [ext])

# --- bfloat16: BN (bfloat16 parameters) + Relu, and a plain conv with an int32_data bias ----
p, names = bn_params("bfbn", 8, BF)
save("bf16", [
    helper.make_node("Conv", ["x", "w1"], ["c1"], name="bconv1", pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c1"] + names, ["n1"], name="bfbn"),
    helper.make_node("Relu", ["n1"], ["r1"], name="bfrelu"),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["y"], name="bconv2", strides=[2, 2]),
], [vi("x", [3, 4, 7, 7], BF)], [vi("y", None, BF)],
    [init("w1", pruned(8, 4, 3, 3), BF), init("w2", pruned(4, 8, 1, 1), BF),
     init_int32("b2", rng.standard_normal(4), BF)] + p)

# --- float16 residual: Conv + BN + Add(graph input) + Relu, then Conv + Add(the block's input)
p, names = bn_params("hrbn", 8)
save("half_residual", [
    helper.make_node("Conv", ["x", "wr1"], ["c1"], name="hres1", pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c1"] + names, ["n1"], name="hrbn"),
    helper.make_node("Add", ["skip", "n1"], ["s1"], name="hradd1"),
    helper.make_node("Relu", ["s1"], ["r1"], name="hrrelu"),
    helper.make_node("Conv", ["r1", "wr2"], ["c2"], name="hres2"),
    helper.make_node("Add", ["c2", "r1"], ["y"], name="hradd2"),
], [vi("x", [2, 8, 6, 6]), vi("skip", [2, 8, 6, 6])], [vi("y", None)],
    [init("wr1", pruned(8, 8, 3, 3)), init("wr2", pruned(8, 8, 1, 1))] + p)

# --- mixed: a float32 model with a float16 conv between two Casts ---------------------------
save("cast_mixed", [
    helper.make_node("Cast", ["x"], ["xh"], name="to_half", to=H),
    helper.make_node("Conv", ["xh", "wh"], ["ch"], name="half_conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["ch"], ["rh"], name="half_relu"),
    helper.make_node("Cast", ["rh"], ["rf"], name="to_float", to=F),
    helper.make_node("Conv", ["rf", "wf"], ["y"], name="float_conv"),
], [vi("x", [1, 3, 6, 6], F)], [vi("y", None, F)],
    [init("wh", pruned(4, 3, 3, 3)), init("wf", pruned(2, 4, 1, 1), F)])

# --- refused ----------------------------------------------------------------------------------
x = [vi("x", [1, 4, 6, 6])]


def bad(name, inits, ins=("x", "w")):
    save(name, [helper.make_node("Conv", list(ins), ["y"], name="bad_conv")], x,
         [vi("y", None)], inits)


# A float16 input with float32 weights, and with a float32 bias: not one type T.
bad("half_mixed_weights", [init("w", pruned(4, 4, 3, 3), F)])
bad("half_mixed_bias", [init("w", pruned(4, 4, 3, 3)), init("b", np.ones(4), F)],
    ins=("x", "w", "b"))
# raw_data two bytes (one element) short; one byte short (not whole elements).
short = init("w", pruned(4, 4, 3, 3))
short.raw_data = short.raw_data[:-2]
bad("half_short_raw", [short])
odd = init("w", pruned(4, 4, 3, 3))
odd.raw_data = odd.raw_data[:-1]
bad("half_odd_raw", [odd])
# bfloat16 int32_data: one entry missing; an entry that is not 16 bits.
few = init_int32("w", pruned(4, 4, 3, 3), BF)
del few.int32_data[-1]
save("bf16_int32_short", [helper.make_node("Conv", ["x", "w"], ["y"], name="bad_conv")],
     [vi("x", [1, 4, 6, 6], BF)], [vi("y", None, BF)], [few])
wide = init_int32("w", pruned(4, 4, 3, 3))
wide.int32_data[5] = 70000
bad("half_int32_wide", [wide])
print("wrote models to", OUT)
