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
RELU6_FUNCS = {F.relu6}


@dataclass
class Chain:
    """conv: qualified module name; bn: BN module name or None; act: 'none'|'relu'|'relu6';
    nodes: fx node names of (conv, bn?, act?) in order."""
    conv: str
    bn: Optional[str] = None
    act: str = "none"
    nodes: List[str] = field(default_factory=list)


def is_plain_conv(m):
    """The convs spconv takes: 2-D, float32, zero padding mode."""
    return (type(m) is nn.Conv2d and m.padding_mode == "zeros"
            and m.weight.dtype == torch.float32)


def _single_user(node):
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def _activation(node, modules):
    """'relu' / 'relu6' if node applies one to its first argument alone, else None."""
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
        if node.target in RELU_FUNCS:
            return "relu"
        if node.target in RELU6_FUNCS:
            return "relu6"
    if node.op == "call_method" and node.target in ("relu", "relu_"):
        return "relu"
    return None


def _is_bn_for(node, modules, conv):
    if node.op != "call_module":
        return False
    m = modules.get(node.target)
    return (type(m) is nn.BatchNorm2d and not m.training and m.track_running_stats
            and m.running_mean is not None and m.num_features == conv.out_channels)


def trace(model):
    """A GraphModule of the model, or None if symbolic tracing fails."""
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
        if nxt is not None and nxt.args and nxt.args[0] is cur and len(nxt.args) == 1:
            act = _activation(nxt, modules)
            if act is not None:
                chain.act = act
                chain.nodes.append(nxt.name)
        chains[node.name] = chain
    return chains
