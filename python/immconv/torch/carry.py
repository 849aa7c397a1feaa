"""Carrying the image-pair layout through a compiled model's graph.

A half-precision kernel compiled with `layout = #spconv.layout<image_pairs>` (docs/design.md,
"Image-pair layout") reads and writes its tensors as image pairs: images n and n + N/2 of one
element share a 32-bit word. In PyTorch such a tensor is a contiguous 5-D tensor
[N/2, C, H, W, 2] (`to_image_pairs`): element (n, c, y, x) of the NCHW tensor is
[n mod N/2, c, y, x, n div N/2]. No 4-D strided view can hold that layout (the batch index
would need two strides), so the graph between such kernels must know it: `carry` rewrites a
GraphModule so that 5-D image-pair tensors flow from kernel to kernel through the ops that
keep the layout, and are converted (one copy) only where something else reads them:

  node                                      image-pair inputs        output
  a SpconvConv2d whose kernel runs          x (and the fused          image pairs
  (mode auto) in image pairs                residual) made pairs
  any other SpconvConv2d (kept in torch,    converted to NCHW, or    NCHW / channels-last
  or an NCHW kernel)                        channels-last where kept so
  element-wise op (add, mul, sub, ReLU,     all tensor arguments      image pairs
  ReLU6, hardtanh, Identity, Dropout)       image pairs
  the same with any other tensor argument   converted to NCHW        NCHW
  nn.MaxPool2d                              kept                      image pairs
                                            (max_pool2d over the pair; compiled on CUDA)
  nn.MaxPool2d on a 4-D tensor              none                      its input's (NCHW or
                                            (compiled on CUDA)        channels-last)
  nn.AdaptiveAvgPool2d                      pooled, then converted    NCHW
  anything else, and the graph's output     converted to NCHW        NCHW

A tensor converted once is reused by every reader that wants it in that layout. Every node
`carry` makes is marked (node.meta[CARRIED]), so each `carry` first undoes the last one
(`uncarry`) and starts from the graph as built (pipeline.build): the layout choice
(layout.decide) can set modes and carry again as often as it likes, and a copy of the module
(copy.deepcopy keeps node meta, not the module's other attributes) carries the same. Each
SpconvConv2d's `io` says what its forward takes and gives: "image_pairs" where `carry` feeds
it pairs, else "nchw" (a kernel of image pairs then converts at its own edges, so a model
that is not carried, or not traceable, still computes the same values).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import fastcopy
from .module import IMAGE_PAIRS, NCHW, SpconvConv2d, from_image_pairs, to_image_pairs

CHANNELS_LAST = "channels_last"

# functions and methods whose output has their tensor arguments' layout, element by element
ELEMENTWISE = ("add", "add_", "iadd", "sub", "sub_", "isub", "mul", "mul_", "imul", "relu",
               "relu_", "relu6", "hardtanh", "hardtanh_", "clamp", "clamp_", "dropout")
ELEMENTWISE_MODULES = (nn.ReLU, nn.ReLU6, nn.Hardtanh, nn.Identity, nn.Dropout)


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _pool_args(pool):
    """nn.MaxPool2d `pool`'s (kernel_size, stride, padding, dilation, ceil_mode) as the
    hashable arguments fastcopy.run keys its compiled functions by."""
    stride = pool.stride if pool.stride is not None else pool.kernel_size
    return (_pair(pool.kernel_size), _pair(stride), _pair(pool.padding), _pair(pool.dilation),
            bool(pool.ceil_mode))


def ip_max_pool2d(x, pool):
    """nn.MaxPool2d `pool` on an image-pair tensor [M, C, H, W, 2], as image pairs. On CUDA
    through torch.compile where it can be (fastcopy.py): PyTorch's eager pool over the view
    below writes int64 indices and runs blocks two channels wide, 6.3x slower than
    Inductor's kernel on ResNet-50's stem (bench/results/2026-11-27-compiled-pools)."""
    return fastcopy.run(_ip_max_pool2d, x, *_pool_args(pool))


def _ip_max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode):
    """Seen as M * C planes of two channels stored channels-last ([M * C, 2, H, W] with the
    pair innermost), the pool is PyTorch's channels-last max_pool2d, whose output keeps that
    layout, so the result is a view of pairs again. (PyTorch's max_pool3d with a (kh, kw, 1)
    window computes the same but measured 2 ms on ResNet-50's stem pool at batch 64, H200:
    4.0 of 7.7 ms end to end.) On CPU it pools in float32 (PyTorch 1.x has no CPU float16
    max_pool2d); a maximum of rounded values is exact either way."""
    m, c, h, w, _ = x.shape
    planes = x.reshape(m * c, h, w, 2).permute(0, 3, 1, 2)
    y = F.max_pool2d(planes if x.is_cuda else planes.float(), kernel_size, stride, padding,
                     dilation, ceil_mode)
    p, q = y.shape[2:]
    return y.permute(0, 2, 3, 1).reshape(m, c, p, q, 2).to(x.dtype)


def max_pool2d(x, pool):
    """nn.MaxPool2d `pool` (without indices) on a 4-D tensor, NCHW or channels-last, in the
    same memory format as the eager module gives: on CUDA through torch.compile where it can
    be (fastcopy.py). PyTorch's eager max_pool2d computes and writes int64 indices even where
    nobody reads them, so the kept layers' pools (VGG-16's, or ResNet-50's stem where conv1
    is kept) cost several times Inductor's (bench/results/2026-11-27-kept-pools)."""
    channels_last = x.dim() == 4 and not x.is_contiguous() and \
        x.is_contiguous(memory_format=torch.channels_last)
    return fastcopy.run(_max_pool2d, x, *_pool_args(pool), channels_last)


def _max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode, channels_last):
    """F.max_pool2d; the eager op gives a channels-last input a channels-last output, and the
    compiled one must too, or the next kept channels-last conv would convert it back."""
    y = F.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)
    return y.contiguous(memory_format=torch.channels_last) if channels_last else y


def ip_adaptive_avg_pool2d(x, pool):
    """nn.AdaptiveAvgPool2d `pool` on an image-pair tensor, given back as an NCHW tensor
    (what a classifier head reads): a mean over H and W for the global pool, else a 3-D
    adaptive pool that keeps the pair (float32 on CPU, as above). Eager: compiled, ResNet-50's
    head (pool and conversion in one function) ran slower, 0.0154 against 0.0132 ms
    (bench/results/2026-11-27-compiled-pools)."""
    oh, ow = _pair(pool.output_size)
    if (oh, ow) == (1, 1):
        y = x.mean(dim=(2, 3), keepdim=True)
    else:
        h, w = x.shape[2:4]
        y = F.adaptive_avg_pool3d(x if x.is_cuda else x.float(),
                                  (oh or h, ow or w, 2)).to(x.dtype)
    return from_image_pairs(y)


def _op_name(target):
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    return name.split(".")[0]


# node.meta[CARRIED] of what carry makes: "conversion"; "pool", a pool carry runs itself (in
# pairs, or compiled on a 4-D tensor), called with the module (a get_attr node, "module": so
# that the module stays in the graph's, and in a copy's, submodules), which it stands for
CARRIED = "immconv_carried"


def uncarry(graph):
    """A copy of `graph` without what `carry` made: conversions dropped, pools in pairs
    back to the modules they stand for."""
    g = torch.fx.Graph()
    g.output(g.graph_copy(graph, {}))
    if hasattr(graph, "_codegen"):
        g._codegen = graph._codegen
    for node in list(g.nodes):
        tag = node.meta.get(CARRIED)
        if tag == "conversion":
            node.replace_all_uses_with(node.args[0])
        elif tag == "pool":
            with g.inserting_before(node):
                new = g.call_module(node.args[1].target, (node.args[0],))
            new.meta = {k: v for k, v in node.meta.items() if k != CARRIED}
            node.replace_all_uses_with(new)
        if tag in ("conversion", "pool"):
            g.erase_node(node)
    for node in list(g.nodes):
        if node.meta.get(CARRIED) == "module" and not node.users:
            g.erase_node(node)
    return g


def pairs_modules(gm):
    """{name: SpconvConv2d} whose kernels run in the image-pair layout in their current mode."""
    return {n: m for n, m in gm.named_modules() if isinstance(m, SpconvConv2d)
            and m.layout == IMAGE_PAIRS and m.kernel is not None and m.mode != "torch"}


def carry(gm):
    """Rewrite `gm` (from the graph pipeline.build made) so that image-pair tensors flow
    between the kernels that use them (module docstring). Returns the number of layout
    conversions the rewritten graph runs."""
    if not isinstance(gm, torch.fx.GraphModule):
        return 0
    plain = uncarry(gm.graph)
    modules = dict(gm.named_modules())
    pairs = pairs_modules(gm)
    for n, m in modules.items():
        if isinstance(m, SpconvConv2d):
            m.io = IMAGE_PAIRS if n in pairs else NCHW
    g = torch.fx.Graph()
    env, lay, converted = {}, {}, {}

    def want(new, layout):
        """`new` (a node of g) in `layout`: itself, or its conversion (made once)."""
        have = lay.get(new, NCHW)
        if have == layout or (layout == CHANNELS_LAST and have == NCHW):
            return new  # a kept channels-last layer converts NCHW itself, as before
        key = (new, layout)
        if key not in converted:
            if layout == IMAGE_PAIRS:
                converted[key] = g.call_function(to_image_pairs, (new,))
            else:
                converted[key] = g.call_function(from_image_pairs, (new, layout))
            lay[converted[key]] = layout
            converted[key].meta[CARRIED] = "conversion"
        return converted[key]

    def copy(node, layout):
        """node copied into g, its inputs given in `layout`."""
        return g.node_copy(node, lambda a: want(env[a], layout))

    def pool(fn, node):
        """fn(pairs, the pool module) in place of the pool's call_module `node`."""
        module = g.get_attr(node.target)
        module.meta[CARRIED] = "module"
        new = g.call_function(fn, (env[node.args[0]], module))
        new.meta[CARRIED] = "pool"
        return new

    def inputs(node):
        found = []
        torch.fx.node.map_arg((node.args, node.kwargs), lambda a: found.append(env[a]))
        return found

    for node in plain.nodes:
        ins = inputs(node)
        any_pairs = any(lay.get(i) == IMAGE_PAIRS for i in ins)
        mod = modules.get(node.target) if node.op == "call_module" else None
        out_layout = NCHW
        if isinstance(mod, SpconvConv2d):
            if node.target in pairs:
                new = copy(node, IMAGE_PAIRS)
                out_layout = IMAGE_PAIRS
            else:
                kept_cl = mod.mode == "torch" and mod.kept_layout == CHANNELS_LAST
                new = copy(node, CHANNELS_LAST if kept_cl else NCHW)
        elif any_pairs and isinstance(mod, nn.MaxPool2d) and not mod.return_indices and \
                len(node.args) == 1 and not node.kwargs:
            new = pool(ip_max_pool2d, node)
            out_layout = IMAGE_PAIRS
        elif any_pairs and isinstance(mod, nn.AdaptiveAvgPool2d) and len(node.args) == 1 \
                and not node.kwargs:
            new = pool(ip_adaptive_avg_pool2d, node)
        elif not any_pairs and isinstance(mod, nn.MaxPool2d) and not mod.return_indices and \
                len(node.args) == 1 and not node.kwargs:
            new = pool(max_pool2d, node)  # a 4-D tensor: the layout it came in
        elif any_pairs and all(lay.get(i) == IMAGE_PAIRS for i in ins) and (
                isinstance(mod, ELEMENTWISE_MODULES) or
                (node.op in ("call_function", "call_method") and
                 _op_name(node.target) in ELEMENTWISE)):
            new = g.node_copy(node, lambda a: env[a])
            out_layout = IMAGE_PAIRS
        else:  # the graph's output too
            new = copy(node, NCHW)
        env[node] = new
        lay[new] = out_layout
    if hasattr(plain, "_codegen"):
        g._codegen = plain._codegen
    g.lint()
    gm.graph = g
    gm.recompile()
    return len(converted)
