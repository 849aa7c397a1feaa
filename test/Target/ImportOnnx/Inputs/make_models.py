"""Writes the ONNX models of the --import-onnx tests into a directory.

    /usr/bin/python3 make_models.py OUTDIR

Good models exercise every 2-D float Conv configuration ONNX defines, plus BatchNormalization
folding and Relu/Clip fusion; bad models exercise every refusal and error. Weights are
random normal with about half of them exactly zero (pruned), from a fixed seed.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(7)
F = TensorProto.FLOAT


def pruned(*shape, p=0.5):
    w = rng.standard_normal(shape).astype(np.float32)
    w[rng.random(shape) < p] = 0.0
    return w


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)  # raw_data


def init_floats(name, array):
    array = np.asarray(array, dtype=np.float32)
    return helper.make_tensor(name, F, array.shape, array.flatten().tolist())  # float_data


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def save(name, nodes, inputs, outputs, inits=(), opset=13, value_info=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits),
                              value_info=list(value_info))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())
    return model


# --- every Conv configuration ---------------------------------------------------------------
# x9: 1x4x9x9 (odd sizes), x8: 1x4x8x8 (even sizes).
nodes, inits, outs = [], [], []


def conv(name, x, k, cpg, r, s, bias=True, kernel_shape=True, raw=True, **attrs):
    w = pruned(k, cpg, r, s)
    wname = name + "_w"
    inits.append(init(wname, w) if raw else init_floats(wname, w))
    ins = [x, wname]
    if bias:
        inits.append(init(name + "_b", rng.standard_normal(k).astype(np.float32)))
        ins.append(name + "_b")
    if kernel_shape:
        attrs["kernel_shape"] = [r, s]
    out = name + "_y"
    nodes.append(helper.make_node("Conv", ins, [out], name=name, **attrs))
    outs.append(helper.make_tensor_value_info(out, F, None))


conv("pads_asym", "x9", 6, 4, 3, 3, pads=[1, 2, 0, 1])
conv("same_upper_even", "x8", 6, 4, 3, 3, auto_pad="SAME_UPPER", strides=[2, 2])
conv("same_lower_even", "x8", 6, 4, 3, 3, auto_pad="SAME_LOWER", strides=[2, 2])
conv("same_upper_odd", "x9", 6, 4, 4, 4, auto_pad="SAME_UPPER")
conv("same_lower_odd", "x9", 6, 4, 4, 4, auto_pad="SAME_LOWER")
conv("same_upper_dil", "x9", 6, 4, 3, 3, auto_pad="SAME_UPPER", dilations=[2, 2], strides=[2, 1])
conv("valid_s2", "x9", 6, 4, 3, 3, auto_pad="VALID", strides=[2, 2])
conv("notset", "x9", 6, 4, 3, 3, auto_pad="NOTSET", pads=[1, 1, 1, 1])
conv("strides_2x3", "x9", 6, 4, 3, 3, strides=[2, 3], pads=[1, 1, 1, 1])
conv("dil_2x1", "x9", 6, 4, 3, 3, dilations=[2, 1], pads=[0, 1, 0, 1])
conv("group2", "x9", 6, 2, 3, 3, group=2, pads=[1, 1, 1, 1])
conv("depthwise_x2", "x9", 8, 1, 3, 3, group=4, pads=[1, 1, 1, 1])
conv("no_kernel_shape", "x8", 5, 4, 1, 1, kernel_shape=False)
conv("no_bias", "x8", 5, 4, 3, 3, bias=False, raw=False)
conv("odd name/with:chars", "x8", 2, 4, 1, 1)
conv("9starts_with_digit", "x8", 2, 4, 1, 1)
conv("dup", "x8", 2, 4, 1, 1)
nodes.append(helper.make_node("Relu", ["dup_y"], ["dup_relu"], name="dup_relu"))
outs[-1] = helper.make_tensor_value_info("dup_relu", F, None)
w = init("dup2_w", pruned(2, 4, 1, 1))
inits.append(w)
nodes.append(helper.make_node("Conv", ["x8", "dup2_w"], ["dup2_y"], name="dup"))
outs.append(helper.make_tensor_value_info("dup2_y", F, None))
conv("", "x8", 2, 4, 1, 1)
save("configs", nodes, [vi("x9", [1, 4, 9, 9]), vi("x8", [1, 4, 8, 8])], outs, inits)

# --- Constant-node weights and external data -------------------------------------------------
w = pruned(4, 3, 3, 3)
b = rng.standard_normal(4).astype(np.float32)
save("constant_weights", [
    helper.make_node("Constant", [], ["cw"], name="wconst", value=numpy_helper.from_array(w)),
    helper.make_node("Constant", [], ["cb"], name="bconst", value=numpy_helper.from_array(b)),
    helper.make_node("Conv", ["x", "cw", "cb"], ["y"], name="cconv", pads=[1, 1, 1, 1]),
], [vi("x", [1, 3, 6, 6])], [vi("y", None)])


def external(name, array, location, offset):
    t = TensorProto()
    t.name = name
    t.data_type = F
    t.dims.extend(array.shape)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)),
                       ("length", str(array.nbytes))):
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    return t


w = pruned(4, 3, 3, 3)
os.makedirs(os.path.join(OUT, "data"), exist_ok=True)
with open(os.path.join(OUT, "data", "weights.bin"), "wb") as f:
    f.write(b"\0" * 16 + w.astype("<f4").tobytes())
save("external", [helper.make_node("Conv", ["x", "ew"], ["y"], name="econv")],
     [vi("x", [1, 3, 5, 5])], [vi("y", None)], [external("ew", w, "data/weights.bin", 16)])
# The same with a missing file, and with a file too short for the tensor.
save("external_missing", [helper.make_node("Conv", ["x", "ew"], ["y"], name="econv")],
     [vi("x", [1, 3, 5, 5])], [vi("y", None)], [external("ew", w, "data/nothere.bin", 0)])
with open(os.path.join(OUT, "data", "short.bin"), "wb") as f:
    f.write(w.astype("<f4").tobytes()[:50])
save("external_short", [helper.make_node("Conv", ["x", "ew"], ["y"], name="econv")],
     [vi("x", [1, 3, 5, 5])], [vi("y", None)], [external("ew", w, "data/short.bin", 0)])
save("external_escape", [helper.make_node("Conv", ["x", "ew"], ["y"], name="econv")],
     [vi("x", [1, 3, 5, 5])], [vi("y", None)], [external("ew", w, "../weights.bin", 0)])

# --- BatchNormalization folding and activation fusion -----------------------------------------
nodes, inits = [], []


def bn_params(prefix, k, scale=None):
    scale = rng.uniform(0.5, 2.0, k).astype(np.float32) if scale is None else scale
    inits.extend([init(prefix + "_scale", scale),
                  init(prefix + "_B", rng.standard_normal(k).astype(np.float32)),
                  init(prefix + "_mean", rng.standard_normal(k).astype(np.float32)),
                  init(prefix + "_var", rng.uniform(0.5, 2.0, k).astype(np.float32))])
    return [prefix + "_scale", prefix + "_B", prefix + "_mean", prefix + "_var"]


inits.append(init("w1", pruned(8, 3, 3, 3)))
inits.append(init("b1", rng.standard_normal(8).astype(np.float32)))
nodes += [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
          helper.make_node("BatchNormalization", ["c1"] + bn_params("bn1", 8), ["n1"],
                           name="bn1", epsilon=1e-3),
          helper.make_node("Relu", ["n1"], ["r1"], name="relu1")]
# conv2: BN (no conv bias) then Clip(0, 6) with bounds as inputs (opset 11+): relu6.
inits.append(init("w2", pruned(8, 8, 3, 3)))
inits += [init("zero", np.array(0.0, np.float32)), init("six", np.array(6.0, np.float32)),
          init("minus1", np.array(-1.0, np.float32)), init("one", np.array(1.0, np.float32))]
nodes += [helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", strides=[2, 2],
                           pads=[1, 1, 1, 1]),
          helper.make_node("BatchNormalization", ["c2"] + bn_params("bn2", 8), ["n2"],
                           name="bn2"),
          helper.make_node("Clip", ["n2", "zero", "six"], ["r2"], name="clip6")]
# conv3: Clip(0, max absent) is a ReLU.
inits.append(init("w3", pruned(4, 8, 1, 1)))
nodes += [helper.make_node("Conv", ["r2", "w3"], ["c3"], name="conv3"),
          helper.make_node("Clip", ["c3", "zero"], ["r3"], name="clip_lo")]
# conv4: Clip(-1, 1) is no ReLU: not fused.
inits.append(init("w4", pruned(4, 4, 3, 3)))
nodes += [helper.make_node("Conv", ["r3", "w4"], ["c4"], name="conv4", pads=[1, 1, 1, 1]),
          helper.make_node("Clip", ["c4", "minus1", "one"], ["r4"], name="clip_pm1")]
# conv5: its output feeds a Relu and a graph output: nothing fuses.
inits.append(init("w5", pruned(4, 4, 1, 1)))
nodes += [helper.make_node("Conv", ["r4", "w5"], ["c5"], name="conv5"),
          helper.make_node("Relu", ["c5"], ["r5"], name="relu5")]
# conv6: a BN whose tiny scale would underflow a nonzero weight: refused, and the Relu after
# it stays too. Channel 0 gets scale 1e-44: weight 1e-3 times that underflows float32 to 0.
w6 = pruned(4, 4, 3, 3)
w6[0, 0, 0, 0] = 1e-3
inits.append(init("w6", w6))
tiny = np.ones(4, np.float32)
tiny[0] = 1e-44
nodes += [helper.make_node("Conv", ["r5", "w6"], ["c6"], name="conv6", pads=[1, 1, 1, 1]),
          helper.make_node("BatchNormalization", ["c6"] + bn_params("bn6", 4, tiny), ["n6"],
                           name="bn6"),
          helper.make_node("Relu", ["n6"], ["r6"], name="relu6_after_bn"),
          helper.make_node("MaxPool", ["r6"], ["pool"], name="pool", kernel_shape=[2, 2],
                           strides=[2, 2])]
save("fuse", nodes, [vi("x", [1, 3, 8, 8])], [vi("pool", None), vi("c5", None)], inits)

# --- residual Adds ------------------------------------------------------------------------------
# rconv1: Conv + BN + Add + Relu, ResNet's block end. The Add's other operand comes from
# rdown, a Conv after rconv1 in the file (the downsample path): rconv1 takes the Add (the
# first conv in topological order does), its listing entry moves to the Add's place, and
# rdown, whose result the fused Add reads, fuses nothing. rconv2: `x + conv(x)` with the
# conv's result as the Add's second operand and nothing after it (MobileNetV2): fused, no
# activation. rconv3: Add + Clip(0, 6): relu6. Not fused: rconv4's Add broadcasts a
# [1, 8, 1, 1] graph input, rconv5's adds a constant, rconv6's adds its own result twice,
# rconv7's result is read by the Add and a graph output.
inits = []
for name, shape in (("wr1", (8, 8, 3, 3)), ("wrd", (8, 8, 1, 1)), ("wr2", (8, 8, 3, 3)),
                    ("wr3", (8, 8, 1, 1)), ("wr4", (8, 8, 1, 1)), ("wr5", (8, 8, 1, 1)),
                    ("wr6", (8, 8, 1, 1)), ("wr7", (8, 8, 1, 1))):
    inits.append(init(name, pruned(*shape)))
inits += [init("rb1", rng.standard_normal(8).astype(np.float32)),
          init("rcst", rng.standard_normal((1, 8, 6, 6)).astype(np.float32)),
          init("rzero", np.array(0.0, np.float32)), init("rsix", np.array(6.0, np.float32))]
nodes = [helper.make_node("Conv", ["x", "wr1", "rb1"], ["rc1"], name="rconv1", pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["rc1"] + bn_params("rbn1", 8), ["rn1"],
                          name="rbn1"),
         helper.make_node("Conv", ["x", "wrd"], ["rsk"], name="rdown"),
         helper.make_node("Add", ["rn1", "rsk"], ["rs1"], name="radd1"),
         helper.make_node("Relu", ["rs1"], ["rr1"], name="rrelu1"),
         helper.make_node("Conv", ["rr1", "wr2"], ["rc2"], name="rconv2", pads=[1, 1, 1, 1]),
         helper.make_node("Add", ["rr1", "rc2"], ["rs2"], name="radd2"),
         helper.make_node("Conv", ["rs2", "wr3"], ["rc3"], name="rconv3"),
         helper.make_node("Add", ["rc3", "rs2"], ["rs3"], name="radd3"),
         helper.make_node("Clip", ["rs3", "rzero", "rsix"], ["rr3"], name="rclip3"),
         helper.make_node("Conv", ["rr3", "wr4"], ["rc4"], name="rconv4"),
         helper.make_node("Add", ["rc4", "bcast"], ["rs4"], name="radd4"),
         helper.make_node("Conv", ["rs4", "wr5"], ["rc5"], name="rconv5"),
         helper.make_node("Add", ["rc5", "rcst"], ["rs5"], name="radd5"),
         helper.make_node("Conv", ["rs5", "wr6"], ["rc6"], name="rconv6"),
         helper.make_node("Add", ["rc6", "rc6"], ["rs6"], name="radd6"),
         helper.make_node("Conv", ["rs6", "wr7"], ["rc7"], name="rconv7"),
         helper.make_node("Add", ["rc7", "rs6"], ["rs7"], name="radd7")]
save("residual", nodes, [vi("x", [1, 8, 6, 6]), vi("bcast", [1, 8, 1, 1])],
     [vi("rs7", None), vi("rc7", None)], inits)

# Old-opset Clip (opset 6: min/max are attributes) and a symbolic batch.
save("clip_old", [
    helper.make_node("Conv", ["x", "w"], ["c"], name="oconv", pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["c"], ["y"], name="oclip", min=0.0, max=6.0),
    helper.make_node("Conv", ["y", "w2"], ["c2"], name="oconv2"),
    helper.make_node("Clip", ["c2"], ["y2"], name="oclip_lo", min=0.0),
], [vi("x", ["N", 3, 6, 6])], [vi("y2", None)],
    [init("w", pruned(4, 3, 3, 3)), init("w2", pruned(4, 4, 1, 1))], opset=6)

# --- models the importer must refuse ----------------------------------------------------------
x = [vi("x", [1, 4, 6, 6])]
w = init("w", pruned(4, 4, 3, 3))


def bad(name, attrs=None, weights=None, inputs=None, ins=("x", "w"), out=None, extra=(),
        opset=13):
    save(name, [helper.make_node("Conv", list(ins), ["y"], name="bad_conv", **(attrs or {}))]
         + list(extra), inputs or x, [out or vi("y", None)],
         [weights if weights is not None else w], opset=opset)


bad("missing_initializer", ins=("x", "nope"))
bad("nonconstant_weights", inputs=x + [vi("w", [4, 4, 3, 3])], weights=init("other", [1.0]))
short = init("w", pruned(4, 4, 3, 3))
short.raw_data = short.raw_data[:-4]
bad("wrong_weight_size", weights=short)
bad("int_weights", weights=init("w", np.ones((4, 4, 3, 3), np.int32)))
bad("conv1d", inputs=[vi("x", [1, 4, 6])], weights=init("w", pruned(4, 4, 3)))
bad("conv3d", inputs=[vi("x", [1, 4, 6, 6, 6])], weights=init("w", pruned(4, 4, 3, 3, 3)))
bad("double_input", inputs=[vi("x", [1, 4, 6, 6], TensorProto.DOUBLE)],
    out=vi("y", None, TensorProto.DOUBLE),
    weights=init("w", pruned(4, 4, 3, 3).astype(np.float64)))
bad("zero_stride", attrs={"strides": [0, 1]})
bad("negative_stride", attrs={"strides": [1, -2]})
bad("pads_length", attrs={"pads": [1, 1]})
bad("negative_pad", attrs={"pads": [1, -1, 1, 1]})
bad("group_not_dividing", attrs={"group": 3})
bad("kernel_shape_mismatch", attrs={"kernel_shape": [5, 5]})
bad("pads_and_auto_pad", attrs={"pads": [1, 1, 1, 1], "auto_pad": "SAME_UPPER"})
huge = TensorProto()
huge.name, huge.data_type = "w", F
huge.dims.extend([1 << 40, 1 << 40, 1, 1])
bad("huge_weight_dims", weights=huge)
bad("huge_input", inputs=[vi("x", [1 << 40, 4, 1 << 40, 6])], weights=init("w", pruned(4, 4, 1, 1)))
bad("filter_too_large", weights=init("w", pruned(4, 4, 9, 9)))
bad("symbolic_batch", inputs=[vi("x", ["batch", 4, 6, 6])])
bad("inference_conflict", out=vi("y", [1, 5, 4, 4]))
bad("bn_bad_params", ins=("x", "w"), out=vi("z", None), extra=[
    helper.make_node("BatchNormalization", ["y", "s", "s", "s", "s"], ["z"], name="bad_bn")])
# (bn_bad_params: 's' has 3 elements for 4 channels; added below to the initializers.)
m = onnx.load(os.path.join(OUT, "bn_bad_params.onnx"))
m.graph.initializer.append(init("s", np.ones(3, np.float32)))
onnx.save(m, os.path.join(OUT, "bn_bad_params.onnx"))

# --- what the fuzzer found (fuzz/onnx-import/regression, docs/reliability.md) ----------------
# Weights of a higher rank than the input: ONNX 1.12's Conv/ConvTranspose/ConvInteger shape
# inference read past the input's dims and crashed.
bad("rank_mismatch", inputs=[vi("x", [1, 4, 6])])
save("convtranspose_rank_mismatch",
     [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="deconv")],
     [vi("x", [1, 4])], [vi("y", None)], [init("w", pruned(4, 4, 3, 3))])


# auto_pad (even NOTSET) with a stride of 2 on a 2^40-row input: ONNX 1.12's Conv inference
# subtracted the stride from 2^40 one step at a time (minutes; 2^62 would never end).
save("autopad_huge_input", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                                             auto_pad="NOTSET", strides=[2, 2])],
     [vi("x", [1, 4, 1 << 40, 6])], [vi("y", None)], [w])
# A zero stride inside an If branch (the main graph's are refused before inference):
# a division by zero in ONNX's Conv inference.
zero_stride_branch = helper.make_graph(
    [helper.make_node("Conv", ["x", "w"], ["t"], name="inner", strides=[0, 1])],
    "then", [], [vi("t", None)])
save("subgraph_zero_stride", [
    helper.make_node("If", ["c"], ["y"], name="if", then_branch=zero_stride_branch,
                     else_branch=zero_stride_branch)],
    x + [vi("c", [], TensorProto.BOOL)], [vi("y", None)], [w])


# Model-local functions that call themselves, or nest too deep: ONNX's shape inference
# recursed into them until the stack overflowed.
def functions_model(name, calls):
    """calls: {function name: [names it calls]}; the graph calls the first one."""
    fns = [helper.make_function("local", f, ["a"], ["b"],
                                [helper.make_node(c, ["a"], ["b"], domain="local") for c in cs]
                                or [helper.make_node("Relu", ["a"], ["b"])],
                                [helper.make_opsetid("", 13), helper.make_opsetid("local", 1)])
           for f, cs in calls.items()]
    graph = helper.make_graph(
        [helper.make_node(next(iter(calls)), ["x"], ["y"], name="call", domain="local"),
         helper.make_node("Conv", ["y", "w"], ["z"], name="conv")],
        name, [vi("x", [1, 4, 6, 6])], [vi("z", None)], [w])
    model = helper.make_model(graph, functions=fns, opset_imports=[
        helper.make_opsetid("", 13), helper.make_opsetid("local", 1)])
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


functions_model("recursive_function", {"Act": ["Act"]})
functions_model("mutually_recursive_functions", {"A": ["B"], "B": ["C"], "C": ["A"]})
functions_model("deep_functions", {f"F{i}": [f"F{i + 1}"] for i in range(20)} | {"F20": []})
functions_model("nested_functions", {f"F{i}": [f"F{i + 1}"] for i in range(15)} | {"F15": []})

# A huge input with SAME padding and a huge dilation: the total padding overflowed int64.
bad("same_pad_overflow", inputs=[vi("x", [1, 4, 1 << 62, 6])],
    weights=init("w", pruned(4, 4, 3, 1)), attrs={"auto_pad": "SAME_UPPER",
                                                 "dilations": [1 << 61, 1]})

# Raw data that is not a whole number of elements (an int64 shape of 7 bytes): ONNX 1.12's
# ParseData copied all of it into a vector of raw size / 8 elements (a heap overflow).
shape7 = TensorProto()
shape7.name, shape7.data_type = "shape", TensorProto.INT64
shape7.dims.append(1)
shape7.raw_data = b"\x01" * 7
save("raw_data_partial_element", [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
                                  helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
     x, [vi("y", None), vi("r", None)], [w, shape7])

# An op without the attributes its schema requires: ONNX 1.12's Scan inference dereferenced
# the missing num_scan_inputs (a null pointer; the fuzzer's input was a Conv renamed Scan).
# A Conv whose 'strides' is an int, not a list of ints.
save("scan_missing_attributes", [helper.make_node("Scan", ["x"], ["s"], name="scan"),
                                 helper.make_node("Conv", ["s", "w"], ["y"], name="conv")],
     x, [vi("y", None)], [w])
save("renamed_scan", [helper.make_node("Scan", ["x", "w"], ["y"], name="conv", strides=[2, 2])],
     x, [vi("y", None)], [w])
save("strides_wrong_type", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", strides=2)],
     x, [vi("y", None)], [w])

# Names that are not UTF-8 cannot go into the JSON listing.
save("non_utf8_name", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], x,
     [vi("y", None)], [w])
m = onnx.load(os.path.join(OUT, "non_utf8_name.onnx"))
m.graph.node[0].name = b"conv\xff".decode("latin-1")
raw = m.SerializeToString().replace(b"conv\xc3\xbf", b"conv\xff\xfe")  # same length
with open(os.path.join(OUT, "non_utf8_name.onnx"), "wb") as f:
    f.write(raw)

good = open(os.path.join(OUT, "constant_weights.onnx"), "rb").read()
with open(os.path.join(OUT, "truncated.onnx"), "wb") as f:
    f.write(good[: len(good) // 2])
with open(os.path.join(OUT, "garbage.onnx"), "wb") as f:
    f.write(b"\xff\xfe this is not a model \x00\x01\x02" * 8)
with open(os.path.join(OUT, "empty.onnx"), "wb") as f:
    pass
print("wrote models to", OUT)
