"""Finds conv -> BatchNorm2d -> ReLU/ReLU6 chains in a PyTorch model with torch.fx.

A BN or activation is fused into a conv only when it is applied *directly* to the conv's
output and that output has no other reader (the intermediate tensor never exists once the
kernel does conv+BN+activation in one launch). This is a property of the dataflow, not of
module order, so it is read from a `torch.fx.symbolic_trace` graph; a model that cannot be
traced gets no fusion at all (each conv is still replaced on its own).
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

RELU_FUNCS = {F.relu, torch.relu, torch.relu_, F.relu_}
# dynamo traces into F.relu6 / F.hardtanh and records the builtins they call
RELU6_FUNCS = {F.relu6} | {f for f in (getattr(torch._C._nn, "relu6", None),) if f}
HARDTANH_FUNCS = {F.hardtanh, F.hardtanh_} | {
    f for f in (getattr(torch._C._nn, "hardtanh", None), getattr(torch._C._nn, "hardtanh_", None))
    if f}


@dataclass
class Chain:
    """conv: qualified module name; bn: BN module name or None; act: 'none'|'relu'|'relu6';
    nodes: fx node names of (conv, bn?, act?) in order."""
    conv: str
    bn: Optional[str] = None
    act: str = "none"
    nodes: List[str] = field(default_factory=list)


# the weight dtypes spconv compiles, as spconv.conv2d element types (a float16/bfloat16
# conv becomes a half-precision kernel: docs/python.md "Half precision")
DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}


def is_plain_conv(m):
    """The convs spconv takes: 2-D, float32/float16/bfloat16, zero padding mode."""
    return (type(m) is nn.Conv2d and m.padding_mode == "zeros"
            and m.weight.dtype in DTYPES)


def _single_user(node):
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def _const_args(node, values):
    """node's arguments after the first are the constants `values` (positional or keyword
    min_val/max_val), with an optional trailing inplace flag."""
    rest = list(node.args[1:])
    kw = dict(node.kwargs)
    kw.pop("inplace", None)
    if len(rest) == len(values) + 1 and isinstance(rest[-1], bool):
        rest = rest[:-1]
    if not rest and kw:
        rest = [kw.pop("min_val", None), kw.pop("max_val", None)][:len(values)]
    if kw:
        return False
    try:
        return len(rest) == len(values) and all(float(a) == v for a, v in zip(rest, values))
    except (TypeError, ValueError):
        return False


def _activation(node, modules):
    """'relu' / 'relu6' if node applies one to its first argument alone, else None.
    Reads module calls, functional calls (as fx and dynamo record them, with or without
    inplace) and ATen ops (torch.export)."""
    if node.op == "call_module":
        m = modules.get(node.target)
        if type(m) is nn.ReLU:
            return "relu"
        if type(m) is nn.ReLU6:
            return "relu6"
        if type(m) is nn.Hardtanh and m.min_val == 0.0 and m.max_val == 6.0:
            return "relu6"
        return None
    if node.op == "call_function":
        t = node.target
        if t in RELU_FUNCS:
            return "relu" if _const_args(node, ()) else None
        if t in RELU6_FUNCS:
            return "relu6" if _const_args(node, ()) else None
        if t in HARDTANH_FUNCS:
            return "relu6" if _const_args(node, (0.0, 6.0)) else None
        name = getattr(getattr(t, "_schema", None), "name", None)
        if name in ("aten::relu", "aten::relu_"):
            return "relu" if _const_args(node, ()) else None
        if name in ("aten::relu6",):
            return "relu6" if _const_args(node, ()) else None
        if name in ("aten::hardtanh", "aten::hardtanh_"):
            return "relu6" if _const_args(node, (0.0, 6.0)) else None
        return None
    if node.op == "call_method" and node.target in ("relu", "relu_"):
        return "relu" if _const_args(node, ()) else None
    return None


def _is_bn_for(node, modules, conv):
    if node.op != "call_module":
        return False
    m = modules.get(node.target)
    return (type(m) is nn.BatchNorm2d and not m.training and m.track_running_stats
            and m.running_mean is not None and m.num_features == conv.out_channels)


def trace(model):
    """A GraphModule of the model (the model itself if it is one already: graphs from
    torch.compile and torch.export are not traced again), or None if tracing fails."""
    if isinstance(model, torch.fx.GraphModule):
        return model
    try:
        return torch.fx.symbolic_trace(model)
    except Exception:  # noqa: BLE001 - any tracing failure means: no fusion
        return None


def find_chains(gm) -> Dict[str, Chain]:
    """{conv fx node name: Chain} for every call of a plain Conv2d in the graph."""
    modules = dict(gm.named_modules())
    chains = {}
    for node in gm.graph.nodes:
        if node.op != "call_module" or not is_plain_conv(modules.get(node.target)):
            continue
        conv = modules[node.target]
        chain = Chain(conv=node.target, nodes=[node.name])
        cur = node
        nxt = _single_user(cur)
        if nxt is not None and _is_bn_for(nxt, modules, conv) and nxt.args[0] is cur:
            chain.bn = nxt.target
            chain.nodes.append(nxt.name)
            cur = nxt
            nxt = _single_user(cur)
        if nxt is not None and nxt.args and nxt.args[0] is cur:
            act = _activation(nxt, modules)
            if act is not None:
                chain.act = act
                chain.nodes.append(nxt.name)
        chains[node.name] = chain
    return chains
