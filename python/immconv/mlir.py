"""Writes spconv.conv2d modules from numpy arrays (and reads their weight blobs back).

One func.func per conv, weights and bias as `dense_resource` blobs in the module's
`dialect_resources` section: the form real models take (bench/networks.py writes the same),
and the form `spconv-translate --spconv-compile` compiles into one cubin with kernel i = func i.
"""
import re
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

ACTIVATIONS = ("none", "relu", "relu6")
# element types of a conv's input and result (docs/design.md "Half precision"); the weights
# and bias are always written as f32 blobs: the compiler rounds them to a half type itself,
# refusing a nonzero value that would round to zero or overflow
DTYPES = ("f32", "f16", "bf16")
ACCUMULATE = ("f32", "f16", "bf16")
LAYOUTS = ("nchw", "image_pairs")


def symbol(name):
    """A bare MLIR symbol / resource name: [A-Za-z_][A-Za-z0-9_]*."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return "_" + s if not s or s[0].isdigit() else s


@dataclass
class ConvSpec:
    """One conv as spconv compiles it. weights: K x C/groups x R x S float32; padding is
    spconv's [top, left, bottom, right]; input_shape NCHW (static). dtype: the element type
    of the input and output ("f32", "f16", "bf16"); accumulate: for a half dtype, the
    op's `accumulate` attribute ("f32": bounded half runs promoted to f32 sums; the dtype
    itself: sums in half precision), None for the compiler's default. layout: how the input
    and result are stored, "nchw" or "image_pairs" (a half dtype and an even batch: images n
    and n + N/2 share a 32-bit word; docs/design.md "Image-pair layout"). residual: the func
    takes a second argument of the result's type, the op's `residual`, added before the
    activation (docs/design.md "Residual epilogue")."""
    name: str
    weights: np.ndarray
    input_shape: Tuple[int, int, int, int]
    bias: Optional[np.ndarray] = None
    stride: Tuple[int, int] = (1, 1)
    padding: Tuple[int, int, int, int] = (0, 0, 0, 0)
    dilation: Tuple[int, int] = (1, 1)
    groups: int = 1
    activation: str = "none"
    dtype: str = "f32"
    accumulate: Optional[str] = None
    layout: str = "nchw"
    residual: bool = False

    @property
    def func(self):
        return symbol(self.name)

    @property
    def output_shape(self):
        n, c, h, w = self.input_shape
        k, _, r, s = self.weights.shape
        t, l, b, rr = self.padding
        p = (h + t + b - self.dilation[0] * (r - 1) - 1) // self.stride[0] + 1
        q = (w + l + rr - self.dilation[1] * (s - 1) - 1) // self.stride[1] + 1
        return (n, k, p, q)


def hex_blob(a):
    """dense_resource blob text: the alignment (4) as a little-endian uint32, then the data."""
    return "0x04000000" + np.ascontiguousarray(a, dtype="<f4").tobytes().hex().upper()


def _tensor(dims, elem="f32"):
    return "tensor<" + "x".join(str(int(d)) for d in dims) + "x" + elem + ">"


def func_text(spec):
    if spec.dtype not in DTYPES:
        raise ValueError("%s: unknown dtype %r" % (spec.name, spec.dtype))
    tin, tout = _tensor(spec.input_shape, spec.dtype), _tensor(spec.output_shape, spec.dtype)
    f = spec.func
    attrs = ["weights = dense_resource<%s_w> : %s" % (f, _tensor(spec.weights.shape))]
    if spec.bias is not None:
        attrs.append("bias = dense_resource<%s_b> : %s" % (f, _tensor(spec.bias.shape)))
    attrs.append("strides = array<i64: %d, %d>" % tuple(spec.stride))
    attrs.append("padding = array<i64: %d, %d, %d, %d>" % tuple(spec.padding))
    attrs.append("dilations = array<i64: %d, %d>" % tuple(spec.dilation))
    if spec.groups != 1:
        attrs.append("groups = %d" % spec.groups)
    if spec.activation != "none":
        if spec.activation not in ACTIVATIONS:
            raise ValueError("%s: unknown activation %r" % (spec.name, spec.activation))
        attrs.append("activation = #spconv.activation<%s>" % spec.activation)
    if spec.accumulate is not None:
        if spec.dtype == "f32" or spec.accumulate not in ("f32", spec.dtype):
            raise ValueError("%s: accumulate %r does not apply to a %s conv"
                             % (spec.name, spec.accumulate, spec.dtype))
        attrs.append("accumulate = %s" % spec.accumulate)
    if spec.layout != "nchw":
        if spec.layout not in LAYOUTS or spec.dtype == "f32" or spec.input_shape[0] % 2:
            raise ValueError("%s: layout %r needs one of %s, a half dtype and an even batch "
                             "(this conv: %s, batch %d)" % (spec.name, spec.layout, LAYOUTS,
                                                            spec.dtype, spec.input_shape[0]))
        attrs.append("layout = #spconv.layout<%s>" % spec.layout)
    loc = spec.name.replace("\\", "\\\\").replace('"', '\\"')
    args, operand = "%%x: %s" % tin, ""
    if spec.residual:
        args += ", %%r: %s" % tout
        operand = " residual(%%r : %s)" % tout
    return ("func.func @%s(%s) -> %s {\n"
            "  %%y = spconv.conv2d %%x%s {%s}\n"
            "      : %s -> %s loc(\"%s\")\n"
            "  return %%y : %s\n"
            "}\n") % (f, args, tout, operand, ", ".join(attrs), tin, tout, loc, tout)


def module_text(specs: Sequence[ConvSpec], header=""):
    funcs = [s.func for s in specs]
    if len(set(funcs)) != len(funcs):
        raise ValueError("conv names collide after making them MLIR symbols: %s" % funcs)
    parts = ["// " + line + "\n" for line in header.splitlines()]
    for i, s in enumerate(specs):
        parts.append("\n// kernel %d: %s\n" % (i, s.name))
        parts.append(func_text(s))
    blobs = []
    for s in specs:
        blobs.append('      %s_w: "%s"' % (s.func, hex_blob(s.weights)))
        if s.bias is not None:
            blobs.append('      %s_b: "%s"' % (s.func, hex_blob(s.bias)))
    parts.append("{-#\n  dialect_resources: {\n    builtin: {\n" + ",\n".join(blobs)
                 + "\n    }\n  }\n#-}\n")
    return "".join(parts)


def write_module(path, specs, header=""):
    with open(path, "w") as f:
        f.write(module_text(specs, header))


BLOB = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*): "0x([0-9A-Fa-f]*)"', re.M)


def read_resources(text):
    """{resource name: float32 array} from a module's dialect_resources (alignment checked)."""
    out = {}
    for name, hexdata in BLOB.findall(text):
        raw = bytes.fromhex(hexdata)
        if raw[:4] != b"\x04\x00\x00\x00":
            raise ValueError("%s: blob does not start with alignment 4" % name)
        out[name] = np.frombuffer(raw[4:], dtype="<f4").copy()
    return out
