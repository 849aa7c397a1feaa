"""Brings the graphs torch.compile (dynamo) and torch.export hand over to the form the
explicit pipeline reads: each 2-D conv and eval-mode batch norm whose weights are constants
becomes a call of an nn.Conv2d / nn.BatchNorm2d submodule that holds those same tensors.

The graphs differ in how a conv appears:
- torch.fx.symbolic_trace, and dynamo without module inlining: `call_module` of an nn.Conv2d
  (left as it is);
- dynamo with inlined modules (the default since PyTorch 2.5): `torch.conv2d(x, w, b, stride,
  padding, dilation, groups)` and `F.batch_norm(x, mean, var, w, b, training, momentum, eps)`,
  where w, b, mean, var are *graph inputs* (placeholders) fed the model's parameters and
  buffers on every call;
- torch.export (`ExportedProgram.module()`): `aten.conv2d` / `aten.convolution` and
  `aten._native_batch_norm_legit_no_training` (+ getitem 0) or `aten.batch_norm`, with the
  weights as attributes (get_attr).

`lift_pools` does the same for max pools (`F.max_pool2d`, `torch.max_pool2d`,
`aten.max_pool2d`, or `aten.max_pool2d_with_indices` whose indices nobody reads -> an
nn.MaxPool2d submodule), in every graph pipeline.build makes, a user's model's included: the
image-pair layout is carried through an nn.MaxPool2d (carry.py), and a pool it does not see
sends the pairs through two conversions, to NCHW and back.

A conv's weight (or a BN's statistics) counts as a constant when it is an attribute of the
graph module, or a placeholder (dynamo passes the parameter itself): the compiled kernel folds
its value, so the caller must check that later calls pass the same tensors unchanged (the
`frozen` placeholder indices returned; immconv.torch.dynamo does that check on every call).
Activations stay as they are: fusion.find_chains already reads functional and aten ReLU/ReLU6.
"""
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

CONV_FUNCS = {torch.conv2d, F.conv2d}


def op_name(target):
    """'aten::conv2d' for an OpOverload / OpOverloadPacket, else None."""
    schema = getattr(target, "_schema", None)
    if schema is not None:
        return schema.name
    name = getattr(target, "_qualified_op_name", None)
    return name


class _Args:
    """A call's positional + keyword arguments by position and name, with defaults."""

    def __init__(self, node, names, defaults):
        self.v = dict(defaults)
        for i, a in enumerate(node.args):
            if i < len(names):
                self.v[names[i]] = a
        self.v.update({k: a for k, a in node.kwargs.items() if k in names})

    def __getitem__(self, k):
        return self.v.get(k)


CONV_ARGS = ["input", "weight", "bias", "stride", "padding", "dilation", "groups"]
CONV_DEFAULTS = {"bias": None, "stride": 1, "padding": 0, "dilation": 1, "groups": 1}
CONVOLUTION_ARGS = ["input", "weight", "bias", "stride", "padding", "dilation", "transposed",
                    "output_padding", "groups"]
BN_FUNC_ARGS = ["input", "running_mean", "running_var", "weight", "bias", "training", "momentum",
                "eps"]
BN_FUNC_DEFAULTS = {"weight": None, "bias": None, "training": False, "momentum": 0.1,
                    "eps": 1e-5}
BN_ATEN_ARGS = ["input", "weight", "bias", "running_mean", "running_var", "training",
                "momentum", "eps", "cudnn_enabled"]
BN_LEGIT_ARGS = ["input", "weight", "bias", "running_mean", "running_var", "momentum", "eps"]
POOL_ARGS = ["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
             "return_indices"]
POOL_DEFAULTS = {"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False,
                 "return_indices": False}
# F.max_pool2d is a dispatcher on return_indices; _max_pool2d is its no-indices branch
POOL_FUNCS = {F.max_pool2d, getattr(F, "_max_pool2d", F.max_pool2d), torch.max_pool2d}


def _pair(v):
    if isinstance(v, (list, tuple)):
        return tuple(int(x) for x in v) * (2 if len(v) == 1 else 1)
    return (int(v), int(v))


class _Constants:
    """Resolves a node to the tensor it stands for, if that tensor is a constant."""

    def __init__(self, gm, example_inputs):
        self.gm = gm
        self.placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        self.inputs = list(example_inputs) if example_inputs is not None else None
        self.frozen = set()

    def tensor(self, node):
        if not isinstance(node, torch.fx.Node):
            return None
        if node.op == "get_attr":
            obj = self.gm
            for part in node.target.split("."):
                obj = getattr(obj, part, None)
                if obj is None:
                    return None
            return obj if isinstance(obj, torch.Tensor) else None
        if node.op == "placeholder" and self.inputs is not None:
            i = self.placeholders.index(node)
            if i < len(self.inputs) and isinstance(self.inputs[i], torch.Tensor):
                return self.inputs[i]
        return None

    def use(self, node):
        if node.op == "placeholder":
            self.frozen.add(self.placeholders.index(node))


def _param(t):
    return t if isinstance(t, nn.Parameter) else nn.Parameter(t, requires_grad=False)


def _conv_module(c, node, a):
    """nn.Conv2d holding the constant weight/bias of a conv call, or None."""
    w_node, b_node = a["weight"], a["bias"]
    w = c.tensor(w_node)
    if w is None or w.dim() != 4 or not w.is_floating_point():
        return None
    b = None
    if b_node is not None:
        b = c.tensor(b_node)
        if b is None:
            return None
    if a["transposed"]:
        return None
    if a["output_padding"] is not None and any(int(x) for x in (a["output_padding"] or ())):
        return None
    groups = int(a["groups"])
    padding = a["padding"]
    padding = padding if isinstance(padding, str) else _pair(padding)
    k, cpg, r, s = w.shape
    conv = nn.Conv2d(cpg * groups, k, (r, s), stride=_pair(a["stride"]), padding=padding,
                     dilation=_pair(a["dilation"]), groups=groups, bias=b is not None)
    conv.weight = _param(w)
    if b is not None:
        conv.bias = _param(b)
    conv.eval()
    c.use(w_node)
    if b_node is not None:
        c.use(b_node)
    return conv


def _bn_module(c, a):
    """Eval-mode nn.BatchNorm2d holding the constant statistics and affine, or None."""
    if a["training"]:
        return None
    mean, var = c.tensor(a["running_mean"]), c.tensor(a["running_var"])
    if mean is None or var is None or mean.dim() != 1:
        return None
    w = c.tensor(a["weight"]) if a["weight"] is not None else None
    b = c.tensor(a["bias"]) if a["bias"] is not None else None
    if (a["weight"] is not None and w is None) or (a["bias"] is not None and b is None):
        return None
    bn = nn.BatchNorm2d(mean.numel(), eps=float(a["eps"]), affine=w is not None or b is not None)
    if bn.affine:
        bn.weight = _param(w if w is not None else torch.ones_like(mean))
        bn.bias = _param(b if b is not None else torch.zeros_like(mean))
    bn.running_mean, bn.running_var = mean, var
    bn.eval()
    for key in ("running_mean", "running_var", "weight", "bias"):
        if a[key] is not None:
            c.use(a[key])
    return bn


def _pool_module(a):
    """nn.MaxPool2d of a max pool call, or None where it gives indices or a size is not a
    constant."""
    if a["return_indices"]:
        return None
    try:
        k = _pair(a["kernel_size"])
        stride = _pair(a["stride"]) if a["stride"] not in (None, [], ()) else k
        return nn.MaxPool2d(k, stride, _pair(a["padding"]), _pair(a["dilation"]),
                            ceil_mode=bool(a["ceil_mode"]))
    except (TypeError, ValueError):  # a size given by another node
        return None


def _match(node):
    """('conv'|'bn'|'bn_legit'|'pool'|'pool_indices', _Args) for a functional or aten conv,
    BN or max pool call, else None."""
    if node.op != "call_function":
        return None
    t = node.target
    if t in CONV_FUNCS:
        return "conv", _Args(node, CONV_ARGS, CONV_DEFAULTS)
    if t is F.batch_norm:
        return "bn", _Args(node, BN_FUNC_ARGS, BN_FUNC_DEFAULTS)
    name = op_name(t)
    if name == "aten::conv2d":
        return "conv", _Args(node, CONV_ARGS, CONV_DEFAULTS)
    if name == "aten::convolution":
        return "conv", _Args(node, CONVOLUTION_ARGS, {})
    if name == "aten::batch_norm" or t is torch.batch_norm:
        return "bn", _Args(node, BN_ATEN_ARGS, {})
    if name == "aten::_native_batch_norm_legit_no_training":
        a = _Args(node, BN_LEGIT_ARGS, {})
        a.v["training"] = False
        return "bn_legit", a
    if t in POOL_FUNCS or name == "aten::max_pool2d":
        return "pool", _Args(node, POOL_ARGS, POOL_DEFAULTS)
    if name == "aten::max_pool2d_with_indices":
        return "pool_indices", _Args(node, POOL_ARGS[:-1], POOL_DEFAULTS)
    return None


POOL_KINDS = ("pool", "pool_indices")


def lift(gm, example_inputs=None, prefix="immconv_"):
    """Rewrites gm in place (functional/aten conv and eval BN with constant weights -> call
    of a new submodule) and returns (gm, frozen): the indices of the placeholders whose
    tensors were folded. Convs whose weights are not constants are left alone."""
    return _lift(gm, example_inputs, prefix, lambda kind: kind not in POOL_KINDS)


def lift_pools(gm, prefix="immconv_"):
    """Rewrites gm's functional and aten max pools in place as calls of new nn.MaxPool2d
    submodules; pipeline.build does it for every model it builds, whatever the front end."""
    return _lift(gm, None, prefix, lambda kind: kind in POOL_KINDS)[0]


def _lift(gm, example_inputs, prefix, wanted):
    c = _Constants(gm, example_inputs)
    count = 0
    for node in list(gm.graph.nodes):
        m = _match(node)
        if m is None or not wanted(m[0]):
            continue
        kind, a = m
        x = a["input"]
        if not isinstance(x, torch.fx.Node):
            continue
        if kind == "conv":
            a.v.setdefault("transposed", False)
            a.v.setdefault("output_padding", None)
            mod = _conv_module(c, node, a)
            if mod is None:
                continue
            target = "%sconv%d" % (prefix, count)
        elif kind in POOL_KINDS:
            mod = _pool_module(a)
            if mod is None:
                continue
            target = "%spool%d" % (prefix, count)
            while hasattr(gm, target):  # a user's module of that name
                target += "_"
        else:
            mod = _bn_module(c, a)
            if mod is None:
                continue
            target = "%sbn%d" % (prefix, count)
        count += 1
        gm.add_submodule(target, mod)
        with gm.graph.inserting_before(node):
            new = gm.graph.call_module(target, (x,))
        new.meta = {}
        if kind in ("bn_legit", "pool_indices"):
            # (out, save_mean, save_var) or (out, indices): only the output may be read
            users = list(node.users)
            if not all(u.op == "call_function" and u.target is operator.getitem and
                       u.args[1] == 0 for u in users):
                gm.graph.erase_node(new)
                gm.delete_submodule(target)
                continue
            for u in users:
                u.replace_all_uses_with(new)
                gm.graph.erase_node(u)
        else:
            node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
    if count:
        gm.graph.lint()
        gm.recompile()
    return gm, c.frozen


def strip_meta(gm):
    """Drops node.meta (dynamo's fake tensors), so the module can be deep-copied."""
    for n in gm.graph.nodes:
        n.meta = {}
    return gm
