"""Writes the seed corpus of spconv-onnx-import-fuzzer (fuzz/onnx-import/corpus).

    /usr/bin/python3 fuzz/onnx-import/make_corpus.py [OUTDIR]

Two sources: the models of the --import-onnx lit tests (test/Target/ImportOnnx/Inputs/
make_models.py and make_half_models.py: good and bad, float32, float16 and bfloat16), and
small models written here for what those lack in a small file: one Conv, Conv+BN+Relu,
Conv+Clip (opset 13 inputs and opset 6 attributes), grouped and depthwise convs, each
auto_pad, a symbolic batch (for --onnx-batch), Constant weights, external data that resolves
inside the fuzzer's scratch directory (`data.bin`, `data/weights.bin`: 4 KiB each, see the
fuzzer), a few other operators around a conv for ONNX's shape inference, a subgraph (If) and
a model-local function. Weights are tiny and from a fixed seed, so the output is the same on
every run with the same onnx version (Debian's python3-onnx 1.12 here).
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
os.makedirs(OUT, exist_ok=True)
F = TensorProto.FLOAT
rng = np.random.default_rng(12)

# --- the lit tests' models ---------------------------------------------------------------------
for script in ("make_models.py", "make_half_models.py"):  # float32; float16 and bfloat16
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(ROOT, "test/Target/ImportOnnx/Inputs", script),
                        tmp], check=True, stdout=subprocess.DEVNULL)
        for name in sorted(os.listdir(tmp)):
            if name.endswith(".onnx"):
                shutil.copy(os.path.join(tmp, name), os.path.join(OUT, "test-" + name))


# --- small models of our own -------------------------------------------------------------------
def pruned(*shape):
    w = rng.standard_normal(shape).astype(np.float32)
    w[rng.random(shape) < 0.5] = 0.0
    return w


def init(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def save(name, nodes, inputs, outputs, inits=(), opset=13, functions=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    kwargs = {"opset_imports": [helper.make_opsetid("", opset)]}
    if functions:
        kwargs["opset_imports"].append(helper.make_opsetid("local", 1))
        kwargs["functions"] = list(functions)
    model = helper.make_model(graph, **kwargs)
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


def conv_model(name, k=4, c=3, r=3, s=3, hw=6, bias=True, opset=13, **attrs):
    inits = [init("w", pruned(k, c // attrs.get("group", 1), r, s))]
    ins = ["x", "w"]
    if bias:
        inits.append(init("b", rng.standard_normal(k)))
        ins.append("b")
    save(name, [helper.make_node("Conv", ins, ["y"], name="conv", **attrs)],
         [vi("x", [1, c, hw, hw])], [vi("y", None)], inits, opset)


conv_model("conv", pads=[1, 1, 1, 1])
conv_model("conv_nobias_stride", bias=False, strides=[2, 2])
conv_model("conv_dilated", dilations=[2, 2], pads=[2, 2, 2, 2], kernel_shape=[3, 3])
conv_model("grouped", k=4, c=4, group=2, pads=[1, 1, 1, 1])
conv_model("depthwise", k=4, c=4, group=4, pads=[1, 1, 1, 1])
conv_model("depthwise_x2", k=8, c=4, group=4)
for pad in ("SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"):
    conv_model("autopad_" + pad.lower(), hw=5, r=2, s=2, strides=[2, 2], auto_pad=pad)

# Conv + BN + Relu, Conv + Clip(0, 6) with inputs (opset 13) and attributes (opset 6).
bn = [init("scale", [1.0, 0.5, 2.0, 1.5]), init("B", [0.1, 0.0, -0.1, 0.2]),
      init("mean", [0.0, 0.1, 0.2, 0.3]), init("var", [1.0, 0.5, 2.0, 1.0])]
save("conv_bn_relu", [
    helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c", "scale", "B", "mean", "var"], ["n"],
                     name="bn", epsilon=1e-3),
    helper.make_node("Relu", ["n"], ["y"], name="relu"),
], [vi("x", [1, 3, 6, 6])], [vi("y", None)], [init("w", pruned(4, 3, 3, 3))] + bn)
save("conv_clip6", [
    helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
    helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="clip"),
], [vi("x", [1, 3, 5, 5])], [vi("y", None)],
    [init("w", pruned(4, 3, 3, 3)), init("lo", np.float32(0)), init("hi", np.float32(6))])
save("conv_clip_attrs", [
    helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
    helper.make_node("Clip", ["c"], ["y"], name="clip", min=0.0, max=6.0),
], [vi("x", [1, 3, 5, 5])], [vi("y", None)], [init("w", pruned(4, 3, 3, 3))], opset=6)

# A symbolic batch: needs --onnx-batch or --onnx-input-shape=x:... (the fuzzer varies both).
save("symbolic_batch", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
     [vi("x", ["N", 3, 5, 5])], [vi("y", None)], [init("w", pruned(2, 3, 3, 3))])

# Constant-node weights and bias.
save("constant_node", [
    helper.make_node("Constant", [], ["w"], name="wc", value=init("wv", pruned(2, 3, 1, 1))),
    helper.make_node("Constant", [], ["b"], name="bc", value=init("bv", [0.5, -0.5])),
    helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv"),
], [vi("x", [1, 3, 4, 4])], [vi("y", None)])


# External data inside the fuzzer's scratch directory.
def external(name, shape, location, offset):
    t = TensorProto()
    t.name, t.data_type = name, F
    t.dims.extend(shape)
    t.data_location = TensorProto.EXTERNAL
    nbytes = 4 * int(np.prod(shape))
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(nbytes))):
        e = t.external_data.add()
        e.key, e.value = key, value
    return t


save("external_data", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
     [vi("x", [1, 3, 5, 5])], [vi("y", None)], [external("w", [4, 3, 3, 3], "data.bin", 64)])
save("external_subdir", [helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv")],
     [vi("x", [1, 2, 4, 4])], [vi("y", None)],
     [external("w", [2, 2, 1, 1], "data/weights.bin", 0), external("b", [2], "data.bin", 8)])

# Other operators around a conv, for ONNX's shape inference and the listing.
save("mixed_ops", [
    helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"], name="relu"),
    helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p", "w2"], ["c2"], name="conv2"),
    helper.make_node("Add", ["c2", "c2"], ["a"], name="add"),
    helper.make_node("GlobalAveragePool", ["a"], ["g"], name="gap"),
    helper.make_node("Reshape", ["g", "shape"], ["f"], name="flatten"),
    helper.make_node("Gemm", ["f", "fc", "fb"], ["y"], name="fc", transB=1),
    helper.make_node("Concat", ["c", "c"], ["cc"], name="concat", axis=1),
], [vi("x", [1, 3, 6, 6])], [vi("y", None), vi("cc", None)],
    [init("w", pruned(2, 3, 3, 3)), init("w2", pruned(2, 2, 1, 1)),
     numpy_helper.from_array(np.array([1, -1], np.int64), "shape"),
     init("fc", pruned(3, 2)), init("fb", [0.0, 1.0, 2.0])])

# A subgraph: an If whose branches hold convs (not imported; shape inference walks them).
then_g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["t"], name="then_conv")],
                           "then", [], [vi("t", None)])
else_g = helper.make_graph([helper.make_node("Relu", ["x"], ["e"], name="else_relu")],
                           "else", [], [vi("e", None)])
save("if_subgraph", [
    helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
    helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g),
], [vi("x", [1, 3, 3, 3]), vi("cond", [], TensorProto.BOOL)], [vi("y", None), vi("c", None)],
    [init("w", pruned(3, 3, 3, 3))])

# A model-local function called on a conv's result.
fn = helper.make_function("local", "Act", ["a"], ["b"],
                          [helper.make_node("Relu", ["a"], ["b"])],
                          [helper.make_opsetid("", 13)])
save("local_function", [
    helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
    helper.make_node("Act", ["c"], ["y"], name="act", domain="local"),
], [vi("x", [1, 3, 4, 4])], [vi("y", None)], [init("w", pruned(2, 3, 3, 3))],
    functions=[fn])

print("wrote", len(os.listdir(OUT)), "models to", OUT)
