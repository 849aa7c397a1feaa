"""immconv.torch.compile / load: a PyTorch model whose pruned convs run as spconv kernels.

compile(): trace (torch.fx; graphs from torch.compile / torch.export are lifted, lift.py) ->
find conv->BN->ReLU chains -> fold BN (immconv.folding's rule) -> record input shapes (one
forward pass with hooks) -> decide which convs stay in PyTorch (policy.py) -> look every conv
up in the kernel cache (kcache.py) -> one MLIR module (one func per conv) of the misses -> one
`spconv-translate --spconv-compile` -> manifest.json -> build() -> on CUDA, the measured
keep-or-compile decision.

load(): manifest.json + the cubin/sidecar in a compile directory -> build(), with no
spconv-translate: this is what runs on a GPU machine without MLIR. The folded weights are
recomputed from the model and checked against the manifest's hashes, so a model whose
weights differ from the compiled ones is refused instead of computing wrong results.
"""
import copy
import hashlib
import json
import os
import re
import shutil
import warnings

import numpy as np
import torch
import torch.nn as nn

from .. import folding, mlir
from ..compiler import CompileError, compile_mlir
from . import carry, kcache, policy
from . import layout as layouts
from .fusion import DTYPES, find_chains, is_plain_conv, trace
from .lift import lift, lift_pools
from .module import SpconvConv2d

MANIFEST = "manifest.json"
PREFIX = "model"
# "auto": the rule of policy.py (nnz per output and sparsity, from committed measurements);
# a number: convs whose weight sparsity is below it stay in PyTorch.
DEFAULT_SPARSITY_THRESHOLD = policy.AUTO
# Half-precision convs (float16/bfloat16 weights): where the sums live. "half": every product
# accumulates in the conv's own type (measured 1.2-2.2x faster than "f32" at batch 64);
# "f32": bounded half runs promoted to f32 sums (docs/design.md "The numerics contract").
DEFAULT_ACCUMULATE = "half"
ACCUMULATE_CHOICES = ("half", "f32", "f16", "bf16")
# How a half-precision conv's kernel stores its tensors: "nchw", or "image_pairs" where the
# conv can (a half dtype and an even batch; docs/design.md "Image-pair layout"), which the
# compiled graph then carries from kernel to kernel (carry.py). Image pairs by default: every
# conv compiled, FP16 at batch 64 on an H200, they ran ResNet-50 1.18x and MobileNetV2 1.18x
# faster end to end than NCHW kernels (bench/results/2026-11-27-image-pair-e2e).
DEFAULT_LAYOUT = "image_pairs"
LAYOUT_CHOICES = ("nchw", "image_pairs")
TORCH_DTYPES = {v: k for k, v in DTYPES.items()}


class LoadError(RuntimeError):
    pass


def conv_padding(conv, input_shape):
    """nn.Conv2d padding as spconv's [top, left, bottom, right] (string paddings resolved as
    PyTorch does: 'same' puts the odd pixel at the bottom/right)."""
    if isinstance(conv.padding, str):
        if conv.padding == "valid":
            return (0, 0, 0, 0)
        tot = [d * (k - 1) for d, k in zip(conv.dilation, conv.kernel_size)]
        return (tot[0] // 2, tot[1] // 2, tot[0] - tot[0] // 2, tot[1] - tot[1] // 2)
    ph, pw = conv.padding
    return (ph, pw, ph, pw)


def folded_weights(conv, bn):
    """(w, b) float32 numpy with bn folded (raises folding.FoldRefused), or the conv's own.
    A half-precision conv's weights and BN parameters are read as float32 (exactly) and
    folded in float64 as in FP32; the compiler rounds the result to the half type."""
    w = conv.weight.detach().cpu().float().numpy().astype(np.float32)
    b = (conv.bias.detach().cpu().float().numpy().astype(np.float32)
         if conv.bias is not None else None)
    if bn is None:
        return w, b
    g = lambda t: None if t is None else t.detach().cpu().double().numpy()  # noqa: E731
    return folding.fold_bn(w, b, g(bn.weight), g(bn.bias), g(bn.running_mean),
                           g(bn.running_var), bn.eps)


def half_refusal(w, b, dtype):
    """Why the compiler would refuse f32 weights/bias for a `dtype` ("f16"/"bf16") conv: a
    nonzero value that rounds (to nearest even) to zero or overflows (the rule of
    spconv-fold-weights: which weights are zero is what the code is made of), or None."""
    if dtype == "f32":
        return None
    tdt = TORCH_DTYPES[dtype]
    for what, a in (("weight", w), ("bias value", b)):
        if a is None:
            continue
        a = np.asarray(a, dtype=np.float32)
        r = torch.from_numpy(np.ascontiguousarray(a)).to(tdt).float().numpy()
        bad = (a != 0) & ((r == 0) | ~np.isfinite(r)) & np.isfinite(a)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return "%s %s = %r would round to zero or overflow in %s" % (
                what, list(idx), float(a[idx]), dtype)
    return None


def resolve_accumulate(accumulate, dtype):
    """The `accumulate` attribute of a `dtype` conv for compile()'s option (None for f32)."""
    if accumulate not in ACCUMULATE_CHOICES:
        raise ValueError("accumulate must be one of %s, not %r" % (ACCUMULATE_CHOICES,
                                                                  accumulate))
    if dtype == "f32":
        return None
    return "f32" if accumulate == "f32" else dtype


def resolve_layout(layout, dtype, input_shape):
    """The layout of a conv's kernel for compile()'s `layout` option: image pairs only where
    the conv can have them (a half dtype, an even batch), else NCHW."""
    if layout not in LAYOUT_CHOICES:
        raise ValueError("layout must be one of %s, not %r" % (LAYOUT_CHOICES, layout))
    if layout == "image_pairs" and dtype != "f32" and input_shape[0] % 2 == 0:
        return "image_pairs"
    return "nchw"


def weights_hash(w, b):
    h = hashlib.sha256(np.ascontiguousarray(w, dtype="<f4").tobytes())
    if b is not None:
        h.update(np.ascontiguousarray(b, dtype="<f4").tobytes())
    return h.hexdigest()[:16]


def as_args(example_input):
    """The positional arguments of one forward call: a tensor, or a tuple/list of them."""
    return tuple(example_input) if isinstance(example_input, (tuple, list)) else (example_input,)


def _hooked_pass(model, args):
    shapes, dtypes, hooks = {}, {}, []
    for name, m in model.named_modules():
        if isinstance(m, nn.Conv2d):
            def hook(mod, inp, out, name=name):
                shapes.setdefault(name, []).append(tuple(inp[0].shape))
                dtypes.setdefault(name, []).append(inp[0].dtype)
            hooks.append(m.register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(*args)
    finally:
        for h in hooks:
            h.remove()
    return shapes, dtypes


def _has_half_on_cpu(model, args):
    tensors = list(model.parameters()) + list(model.buffers()) + [
        a for a in args if isinstance(a, torch.Tensor)]
    return any(t.dtype in (torch.float16, torch.bfloat16) and not t.is_cuda for t in tensors)


def record_inputs(model, example_input):
    """({conv module name: [input shape per call]}, {name: [input dtype per call]}) from one
    forward pass. A half-precision model on a CPU whose PyTorch cannot run it (float16 convs,
    BN, pooling have no CPU kernels before PyTorch 2.1) is run as a float32 copy for the
    shapes; its convs' input dtypes are then unknown (absent)."""
    args = as_args(example_input)
    try:
        return _hooked_pass(model, args)
    except RuntimeError:
        if not _has_half_on_cpu(model, args):
            raise
    f32 = copy.deepcopy(model).float()
    shapes, _ = _hooked_pass(f32, tuple(a.float() if isinstance(a, torch.Tensor) and
                                        a.is_floating_point() else a for a in args))
    return shapes, {}


def record_input_shapes(model, example_input):
    """{conv module name: [input shape per call]} from one forward pass."""
    return record_inputs(model, example_input)[0]


def _keep_by_policy(name, conv, sparsity, keep, threshold):
    if keep is not None:
        if callable(keep):
            if keep(name, conv):
                return "keep() chose PyTorch"
        elif name in keep:
            return "in keep"
    if threshold == policy.AUTO:
        return policy.default_keep(conv)
    if sparsity < threshold:
        return "sparsity %.3f < threshold %.3f" % (sparsity, threshold)
    return None


def plan(model, example_input, sparsity_threshold=DEFAULT_SPARSITY_THRESHOLD, keep=None,
         accumulate=DEFAULT_ACCUMULATE, layout=DEFAULT_LAYOUT):
    """(layers, kept): layer records (manifest rows, with `_w`/`_b` arrays) for the convs to
    compile, in graph order, and {conv name: reason} for those left in PyTorch.

    A conv's kernel has the dtype of its weight (float32, float16, bfloat16): a half conv
    (model.half(), model.bfloat16()) becomes a half spconv.conv2d whose folded f32 weights the
    compiler rounds; `accumulate` ("half" or "f32") says where its sums live. A record with
    `fused_only` (the reason) is a half conv the default rule does not compile: it is
    rewritten without a kernel, kept in PyTorch, fused and channels-last. `layout`
    ("nchw" or "image_pairs") is how a half conv's kernel stores its tensors (resolve_layout)."""
    resolve_accumulate(accumulate, "f16")  # rejects a bad option before any work
    resolve_layout(layout, "f32", (1,))
    gm = trace(model)
    if gm is None:
        warnings.warn("spconv: torch.fx cannot trace the model: convs are replaced one by one "
                      "without BN/activation fusion")
        chains = {}
        order = [(n, None, "none") for n, m in model.named_modules() if is_plain_conv(m)]
    else:
        chains = find_chains(gm)
        order = [(c.conv, c.bn, c.act) for c in chains.values()]
    modules = dict(model.named_modules())
    residual_site = _residual_sites(gm, chains)
    listed = {name for name, _, _ in order}
    kept = {n: "not a float32/float16/bfloat16 zeros-padded 2-D conv (nn.Conv2d)"
            for n, m in modules.items() if isinstance(m, nn.Conv2d) and n not in listed}
    shapes, in_dtypes = record_inputs(model, example_input)
    calls = {}
    for name, _, _ in order:
        calls[name] = calls.get(name, 0) + 1
    layers = []
    for name, bn_name, act in order:
        conv = modules[name]
        if not is_plain_conv(conv):
            kept[name] = "not a float32/float16/bfloat16 zeros-padded Conv2d"
            continue
        dtype = DTYPES[conv.weight.dtype]
        seen_dt = set(in_dtypes.get(name, ()))
        if seen_dt and seen_dt != {conv.weight.dtype}:
            kept[name] = "input dtype %s differs from the weights' %s" % (
                "/".join(sorted(str(d) for d in seen_dt)), conv.weight.dtype)
            continue
        seen = shapes.get(name, [])
        if calls[name] != 1 or len(seen) != 1:
            kept[name] = "called %d times (one static shape per conv)" % max(calls[name], len(seen))
            continue
        w0 = conv.weight.detach()
        sparsity = float((w0 == 0).sum().item()) / w0.numel()
        why = _keep_by_policy(name, conv, sparsity, keep, sparsity_threshold)
        # A half conv the default rule keeps gets no kernel, but is rewritten all the same,
        # to run fused and channels-last (layout.py): a layer record marked fused_only.
        fused_only = why if why and why.startswith(policy.HALF_RULE) else None
        if why and not fused_only:
            kept[name] = why
            continue
        bn = modules[bn_name] if bn_name else None
        try:
            w, b = folded_weights(conv, bn)
        except folding.FoldRefused as e:
            warnings.warn("spconv: %s: BatchNorm %s not folded (it stays a PyTorch op): %s"
                          % (name, bn_name, e))
            bn_name, act = None, "none"
            w, b = folded_weights(conv, None)
        why = half_refusal(w, b, dtype)
        if why and bn_name:
            warnings.warn("immconv: %s: BatchNorm %s not folded (it stays a PyTorch op): the "
                          "folded %s" % (name, bn_name, why))
            bn_name, act = None, "none"
            w, b = folded_weights(conv, None)
            why = half_refusal(w, b, dtype)
        if why:
            warnings.warn("immconv: %s stays in PyTorch: %s" % (name, why))
            kept[name] = why
            continue
        acc = resolve_accumulate(accumulate, dtype)
        # A conv whose (folded) output is added to a residual, and ReLU'd or not, gets a
        # kernel that does both (build fuses the graph the same way:
        # layout.fuse_residual_adds).
        relu = residual_site(name, bn_name is not None) if act == "none" and not fused_only \
            else None
        residual = relu is not None
        spec = mlir.ConvSpec(name=name, weights=w, bias=b, input_shape=seen[0],
                             stride=tuple(conv.stride), padding=conv_padding(conv, seen[0]),
                             dilation=tuple(conv.dilation), groups=conv.groups,
                             activation="relu" if relu else act, dtype=dtype,
                             accumulate=acc, layout=resolve_layout(layout, dtype, seen[0]),
                             residual=residual)
        layers.append({"module": name, "func": spec.func, "bn": bn_name, "act": act,
                       "input_shape": list(spec.input_shape),
                       "output_shape": list(spec.output_shape), "stride": list(spec.stride),
                       "padding": list(spec.padding), "dilation": list(spec.dilation),
                       "groups": spec.groups, "sparsity": sparsity, "dtype": dtype,
                       "accumulate": acc, "layout": spec.layout, "residual": residual,
                       "residual_relu": bool(relu),
                       "weights_sha256": weights_hash(w, b), "_spec": spec})
        if fused_only:
            layers[-1]["fused_only"] = fused_only
    return layers, kept


def _residual_sites(gm, chains):
    """residual(conv, bn_folded): None, or whether a ReLU follows (True / False) where the
    conv's fused output (after its BN where that is folded) is added to another tensor and
    nothing else reads it: `relu(bn(conv(x)) + identity)` or `bn(conv(x)) + identity`
    (layout.residual_add_site). Called in graph order for the layers without an activation
    that build rewrites (layout.fuse_residual_adds), it gives an add to the first of them,
    as fuse_residual_adds does where both of an add's tensors come from such layers
    (ResNet's conv3, not its downsample)."""
    if gm is None:
        return lambda name, bn_folded: None
    nodes = {n.name: n for n in gm.graph.nodes}
    modules = dict(gm.named_modules())
    by_conv = {c.conv: c for c in chains.values()}
    claimed = set()

    def residual(name, bn_folded):
        c = by_conv.get(name)
        if c is None or (bn_folded and not c.bn):
            return None
        site = layouts.residual_add_site(nodes[c.nodes[1 if bn_folded else 0]], modules)
        if site is None or site[0] in claimed:
            return None
        claimed.add(site[0])
        return site[2] is not None
    return residual


def _eval(model):
    """model.eval(), where the module allows it: an ExportedProgram's .module() refuses
    (NotImplementedError); its graph is fixed, and lift.py takes only its eval-mode BNs."""
    try:
        model.eval()
    except NotImplementedError:
        pass


def exported_program_class():
    export = getattr(torch, "export", None)
    return getattr(export, "ExportedProgram", None) if export is not None else None


def fresh_graph_module(gm):
    """A new GraphModule over gm's submodules and parameters (shared, not copied) with a copy
    of its graph without node metadata (dynamo's fake tensors): lifting and rewriting it
    leave gm as it was."""
    from torch.fx.graph import Graph
    g = Graph()
    out = g.graph_copy(gm.graph, {})
    g.output(out)
    if hasattr(gm.graph, "_codegen"):
        g._codegen = copy.deepcopy(gm.graph._codegen)
    for n in g.nodes:
        n.meta = {}
    new = torch.fx.GraphModule(gm, g)
    return new


def prepare(model, example_input, copy_graph=True):
    """(module to compile, frozen placeholder indices): an nn.Module as it is; an
    ExportedProgram (torch.export) through .module(); a GraphModule (torch.compile hands one
    to the backend; .module() is one) with its functional/ATen convs and BNs lifted to
    modules (lift.py)."""
    ep = exported_program_class()
    if ep is not None and isinstance(model, ep):
        model = model.module()
        copy_graph = False  # a fresh module already
    if isinstance(model, torch.fx.GraphModule):
        gm = fresh_graph_module(model) if copy_graph else model
        return lift(gm, as_args(example_input))
    return model, set()


def open_cache(kernel_cache):
    """kernel_cache: None (the default location, kcache.default_dir()), False (none), a
    directory, or a KernelCache."""
    if isinstance(kernel_cache, kcache.KernelCache):
        return kernel_cache
    if kernel_cache is False:
        return None
    root = kernel_cache if isinstance(kernel_cache, str) else kcache.default_dir()
    return kcache.KernelCache(root) if root else None


# spconv-translate's refusal of a template the PTX-level fold cannot patch, naming the conv
# by its location (the conv's name in immconv's modules)
PTX_FOLD_REFUSED = re.compile(r'loc\("((?:[^"\\]|\\.)*)"\)[^\n]*PTX-level fold cannot patch')
LLVM_FOLD = "--fold-at=llvm"


def _compile_unit(group, out_dir, cache, compiler, prefix, cache_dir, jobs, progress, args):
    """One spconv-translate compile of the layers in `group` (into a new cache unit, or
    out_dir/<prefix>.*); gives each its kernel."""
    d = cache.new_unit() if cache is not None else out_dir
    if cache is not None:
        prefix = PREFIX
    try:
        mpath = os.path.join(d, prefix + ".mlir")
        mlir.write_module(mpath, [l["_spec"] for l in group],
                          header="Written by immconv.torch: one func per conv, kernel i = func i")
        bundle = compile_mlir(mpath, os.path.join(d, prefix), cache_dir=cache_dir, jobs=jobs,
                              progress=progress, extra_args=args)
        if cache is not None:
            d = cache.commit(d, [l["key"] for l in group], bundle.kernels,
                             compiler or kcache.compiler_id())
    except BaseException:
        if cache is not None and os.path.basename(d).startswith(".new-"):
            shutil.rmtree(d, ignore_errors=True)
        raise
    for i, (l, k) in enumerate(zip(group, bundle.kernels)):
        l["_cubin"], l["_sidecar"] = os.path.join(d, prefix + ".cubin"), os.path.join(
            d, prefix + ".json")
        l["kernel"], l["entry"] = i, k["entry"]


def resolve_kernels(layers, out_dir, cache, cache_dir=None, jobs=None, progress=True,
                    extra_args=()):
    """Gives every layer its kernel (`_cubin`, `_sidecar`, `kernel`, `entry`, `key`): from
    the kernel cache where it holds the conv, else from one spconv-translate compile of all
    the convs it does not hold (into the cache, or into out_dir without one).

    A conv whose template the PTX-level fold refuses (spconv-translate names it and says
    --fold-at=llvm folds it in LLVM IR instead) is moved, with a warning, to a second compile
    with --fold-at=llvm, and the rest compiled again; it keeps its key (the kernel computes
    the same conv; only where the weights were folded differs)."""
    compiler = kcache.compiler_id() if cache is not None else None
    missing = []
    for l in layers:
        l["key"] = kcache.layer_key(l["_spec"], extra_args)
        hit = cache.lookup(l["key"], compiler) if cache is not None else None
        if hit:
            l["_cubin"], l["_sidecar"], l["kernel"], l["entry"] = hit
        else:
            missing.append(l)
    if not missing:
        return 0
    pending, llvm = list(missing), []
    can_fall_back = not any(a.startswith("--fold-at") for a in extra_args)
    while pending:
        try:
            _compile_unit(pending, out_dir, cache, compiler, PREFIX, cache_dir, jobs, progress,
                          extra_args)
            break
        except CompileError as e:
            names = {l["_spec"].name: l for l in pending}
            found = [n.replace('\\"', '"').replace("\\\\", "\\")
                     for n in PTX_FOLD_REFUSED.findall(str(e))]
            refused = [names[n] for n in dict.fromkeys(found) if n in names]
            if not (can_fall_back and refused):
                raise
            warnings.warn("immconv: the PTX-level fold refused the template of %s: compiled "
                          "with %s instead" % (", ".join(l["module"] for l in refused),
                                               LLVM_FOLD))
            llvm += refused
            gone = {id(l) for l in refused}
            pending = [l for l in pending if id(l) not in gone]
    if llvm:
        _compile_unit(llvm, out_dir, cache, compiler, PREFIX + "-llvm-fold", cache_dir, jobs,
                      progress, tuple(extra_args) + (LLVM_FOLD,))
    return len(missing)


def _place(path, out_dir, name):
    """path inside out_dir (a hard link, else a copy, where it is elsewhere); its name there."""
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(out_dir):
        return os.path.basename(path)
    dst = os.path.join(out_dir, name)
    if os.path.exists(dst):
        os.remove(dst)
    try:
        os.link(path, dst)
    except OSError:
        shutil.copyfile(path, dst)
    return name


def write_manifest(out_dir, layers, kept, sparsity_threshold, extra=None):
    """manifest.json (version 2: each layer names its cubin and sidecar in out_dir). Without
    out_dir nothing is written and the layers name the kernel cache's files."""
    placed = {}
    fused = [l for l in layers if l.get("fused_only")]
    layers = [l for l in layers if not l.get("fused_only")]
    for l in layers:
        if out_dir is None:
            l["cubin"], l["sidecar"] = os.path.abspath(l["_cubin"]), os.path.abspath(
                l["_sidecar"])
            continue
        src = (l["_cubin"], l["_sidecar"])
        if src not in placed:
            unit = os.path.basename(os.path.dirname(os.path.abspath(l["_cubin"])))
            stem = PREFIX if os.path.abspath(os.path.dirname(l["_cubin"])) == \
                os.path.abspath(out_dir) else "kernels-" + unit[:12]
            placed[src] = (_place(l["_cubin"], out_dir, stem + ".cubin"),
                           _place(l["_sidecar"], out_dir, stem + ".json"))
        l["cubin"], l["sidecar"] = placed[src]
    manifest = {"format": "spconv-torch", "version": 2,
                "sparsity_threshold": sparsity_threshold,
                "layers": [{k: v for k, v in l.items() if not k.startswith("_")} for l in layers],
                "kept": kept}
    if fused:  # no kernel: rewritten to run fused, channels-last (plan)
        manifest["fused"] = [{k: v for k, v in l.items() if not k.startswith("_")}
                             for l in fused]
    manifest.update(extra or {})
    if out_dir is not None:
        with open(os.path.join(out_dir, MANIFEST), "w") as f:
            json.dump(manifest, f, indent=1)
        manifest["_dir"] = out_dir
    return manifest


def _on_cuda(example_input):
    return torch.cuda.is_available() and all(
        t.is_cuda for t in as_args(example_input) if isinstance(t, torch.Tensor))


def target_args(example_input, compiler_args=()):
    """The spconv-translate flags that target the CUDA device of example_input:
    `--num-sms=N` where its SM count is not what the compiler tiles for by default
    (kcache.num_sms_args); () on CPU inputs, where the default target stays."""
    if not _on_cuda(example_input):
        return ()
    t = next(t for t in as_args(example_input) if isinstance(t, torch.Tensor))
    sms = torch.cuda.get_device_properties(t.device).multi_processor_count
    return kcache.num_sms_args(sms, compiler_args)


def compile(model, example_input, *, sparsity_threshold=DEFAULT_SPARSITY_THRESHOLD,
            cache_dir=None, jobs=None, min_speedup=policy.AUTO, min_speedup_graphs=True,
            keep=None, out_dir=None, progress=True, kernel_cache=None,
            accumulate=DEFAULT_ACCUMULATE, compiler_args=(), layout=DEFAULT_LAYOUT):
    """Compile `model`'s pruned convs with spconv; returns a new module (the original is
    untouched) in which each compiled conv, with the BN and ReLU/ReLU6 applied directly to
    its output, is one SpconvConv2d.

    model: an nn.Module, a torch.fx.GraphModule (functional and ATen convs are read too) or
    a torch.export ExportedProgram; example_input: a tensor or a tuple of the call's
    arguments.

    Which convs stay in PyTorch (cuDNN), docs/python.md "Which convs are compiled":
    - keep: a set of conv module names, or keep(name, conv) -> True to keep it;
    - sparsity_threshold: "auto" (default) applies the rule derived from the committed
      measurements (policy.py: sparsity >= 0.9, or at most 256 nonzero weights per output
      channel); a number keeps the convs whose weight sparsity is below it (0 compiles all);
    - min_speedup: "auto" (default) measures on CUDA: each compiled layer is timed against
      its original (benchmark_layers, from CUDA graphs unless min_speedup_graphs=False) and
      put back to PyTorch (mode "torch") unless it is policy.DEFAULT_MIN_SPEEDUP (1.05) times
      faster; a number sets that bar; None turns the measurement off. For half precision the
      whole model with its kernels must also beat every layer kept channels-last by
      policy.END_TO_END_MIN_SPEEDUP (1.02), or by the bar where that is lower (layout.py).
      Without CUDA inputs "auto" measures nothing. Measurements are cached with the kernels.
    A conv called more than once (shared module) also stays, as shapes are static.

    kernel_cache: None (default location, kcache.py), False (no cache: every conv compiled
    into out_dir), a directory. cache_dir is spconv-translate's template/object cache.
    out_dir holds manifest.json and the cubins and sidecars it names (hard links into the
    kernel cache where possible); `load(model, out_dir)` needs only it (default: a fresh
    temporary directory). The input shape of every conv is that seen in one forward pass over
    example_input; other shapes raise ShapeMismatch at run time (torch.compile recompiles).

    Half precision (docs/python.md "Half precision"): a conv whose weight is float16 or
    bfloat16 (model.half(), model.to(torch.bfloat16)) compiles to a kernel of that type
    (input and output in it: with layout="image_pairs", the default, in the image-pair
    layout where the batch is even, which the compiled graph carries between kernels
    (carry.py); with layout="nchw", or an odd batch, NCHW); BN is folded in FP32 and the compiler rounds the folded
    weights, never letting a nonzero weight become zero (where it would, the BN stays
    unfolded, with a warning). accumulate: "half" (default: sums in the conv's type) or
    "f32" (bounded half runs promoted to f32 sums). The measured decision compares a half
    kernel with PyTorch in the same dtype, channels-last.

    compiler_args: extra spconv-translate flags (e.g. ["--fold-at=llvm"]); part of the
    kernel cache key. On CUDA inputs `--num-sms` with the device's SM count is added where
    the compiler would otherwise tile for another count (docs/python.md, "Target GPU").
    """
    if out_dir is None:
        import tempfile
        out_dir = tempfile.mkdtemp(prefix="immconv-")
    return compile_graph(model, example_input, out_dir, sparsity_threshold=sparsity_threshold,
                         cache_dir=cache_dir, jobs=jobs, min_speedup=min_speedup,
                         min_speedup_graphs=min_speedup_graphs, keep=keep, progress=progress,
                         kernel_cache=kernel_cache, accumulate=accumulate,
                         compiler_args=compiler_args, layout=layout)


def compile_graph(model, example_input, out_dir, *, sparsity_threshold=DEFAULT_SPARSITY_THRESHOLD,
                  cache_dir=None, jobs=None, min_speedup=policy.AUTO, min_speedup_graphs=True,
                  keep=None, progress=True, kernel_cache=None, inplace=False,
                  accumulate=DEFAULT_ACCUMULATE, compiler_args=(), layout=DEFAULT_LAYOUT):
    """compile() with out_dir=None allowed: then no manifest is written and the compiled
    modules use the kernel cache's files where they are (what the torch.compile backend
    does). The result's `immconv_frozen` lists the placeholders whose tensors were folded
    (lift.py) and `immconv_manifest` the manifest."""
    original = model
    # Kernels for the GPU the example input is on: the tiling heuristic counts its SMs.
    compiler_args = tuple(compiler_args) + target_args(example_input, compiler_args)
    model, frozen = prepare(model, example_input)
    _eval(model)
    layers, kept = plan(model, example_input, sparsity_threshold, keep, accumulate, layout)
    cache = open_cache(kernel_cache)
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
    elif cache is None and layers:
        import atexit
        import tempfile
        out_dir = tempfile.mkdtemp(prefix="immconv-")
        atexit.register(shutil.rmtree, out_dir, True)
    resolve_kernels([l for l in layers if not l.get("fused_only")], out_dir, cache,
                    cache_dir=cache_dir, jobs=jobs, progress=progress,
                    extra_args=tuple(compiler_args))
    manifest = write_manifest(out_dir, layers, kept, sparsity_threshold)
    # a module prepare() made (lifted graphs) is ours to rewrite; a user's model is copied
    compiled = build(model, manifest, out_dir or "", inplace=inplace or model is not original)
    if min_speedup == policy.AUTO:
        min_speedup = policy.DEFAULT_MIN_SPEEDUP if _on_cuda(example_input) and layers else None
    if min_speedup is not None:
        res = apply_min_speedup(compiled, example_input, min_speedup, graphs=min_speedup_graphs,
                                cache=cache, keys={l["module"]: l["key"] for l in layers
                                                   if "key" in l})
        if res is not None:
            # load() applies the measured decisions too
            manifest["min_speedup"] = min_speedup
            manifest["measured"] = res
            manifest["torch_mode"] = [r["module"] for r in res["layers"]
                                      if r["decision"] == "torch"]
            manifest["torch_channels_last"] = {
                r["module"]: r["kept_impl"] for r in res["layers"]
                if r.get("kept_layout") == layouts.CHANNELS_LAST}
            if manifest.get("_dir"):
                with open(os.path.join(manifest["_dir"], MANIFEST), "w") as f:
                    json.dump({k: v for k, v in manifest.items() if not k.startswith("_")}, f,
                              indent=1)
    compiled.immconv_frozen = frozen
    compiled.immconv_manifest = manifest
    return compiled


POLICY_TIMING = {"warmup": 3, "repeats": 15, "calls": 10}
# what a measurement row keeps in the kernel cache (cudnn/x: the baseline of the layer's
# dtype; cudnn_fp32/x_fp32 also for an FP32 layer, as older entries have them; kept/x_kept:
# what runs if the layer stays in PyTorch, which the policy decides on)
MEASURED_KEYS = ("spconv", "cudnn", "x", "baseline", "cudnn_fp32", "x_fp32", "kept", "x_kept",
                 "kept_channels_last", "kept_channels_last_impl", "to_channels_last",
                 "to_nchw", "spconv_layout", "to_image_pairs", "from_image_pairs",
                 "to_image_pairs_cl", "from_image_pairs_cl", "residual")


def totals(rows):
    """Sums of the per-layer times: spconv (over the layers with a kernel), cudnn (each
    layer's own baseline), and each named baseline that every row has."""
    out = {k: sum(r[k] for r in rows if r.get(k) is not None) for k in ("spconv", "cudnn")}
    if any(r.get("spconv") is None for r in rows):
        out["layers_without_kernel"] = sum(r.get("spconv") is None for r in rows)
    for name in {r.get("baseline") for r in rows}:
        if name and all(name in r for r in rows):
            out[name] = sum(r[name] for r in rows)
    return out


def apply_min_speedup(compiled, example_input, min_speedup, graphs=True, cache=None, keys=None):
    """Measured policy: a layer stays compiled if its kernel is at least min_speedup x
    faster than its cuDNN original as it would run when kept, layouts included; otherwise it
    goes back to the original (mode "torch"), in NCHW or, for half precision, channels-last,
    whichever costs less with the conversions its neighbours' layouts imply (layout.py;
    times from CUDA graphs unless graphs=False). Each row's `decision` is "spconv" or
    "torch", and `kept_layout` says how a kept layer runs. With a kernel cache and the
    layers' keys, measurements made before on this GPU (same conv, same input shape, same
    timing mode) are reused and new ones recorded."""
    if not _on_cuda(example_input):
        warnings.warn("immconv: min_speedup needs the model and input on CUDA; ignored")
        return None
    from .bench import benchmark_layers
    x = as_args(example_input)
    device = torch.cuda.get_device_name(x[0].device) if x else torch.cuda.get_device_name()
    mode = "cuda-graph" if graphs else "eager"
    keys = keys or {}
    cached = {}
    if cache is not None:
        for name, key in keys.items():
            row = cache.measured(key, device + "/" + mode)
            # A half-precision row of an older immconv has no `kept` (it timed channels-last
            # only) or no conversion times, which the layout choice needs: measured again.
            if row is not None and (("x_kept" in row and "kept_channels_last_impl" in row) or
                                    row.get("baseline", "cudnn_fp32") == "cudnn_fp32"):
                cached[name] = dict(row, module=name, layer=name, cached=True)
    mods = dict(compiled.named_modules())
    todo = {n for n, m in mods.items() if isinstance(m, SpconvConv2d) and n not in cached}
    res = {"layers": []}
    if todo:
        res = benchmark_layers(compiled, example_input, graphs=graphs, only=todo,
                               **POLICY_TIMING)
        for row in res["layers"]:
            if cache is not None and row["module"] in keys:
                cache.record_measurement(keys[row["module"]], device + "/" + mode,
                                         {k: row[k] for k in MEASURED_KEYS if k in row})
    rows = res["layers"] + list(cached.values())
    order = {n: i for i, n in enumerate(mods)}
    rows.sort(key=lambda r: order.get(r["module"], 0))
    for row in rows:
        row.setdefault("baseline", "cudnn_fp32")  # cache entries of an older immconv
        row.setdefault("cudnn", row.get("cudnn_fp32"))
        row.setdefault("x", row.get("x_fp32"))
        row.setdefault("x_kept", row["x"])  # an older FP32 row: its baseline ran when kept
        row.setdefault("kept", row["cudnn"])
    timer = None
    if graphs:
        from .bench import time_cuda_graph
        timer = lambda fn: time_cuda_graph(fn, POLICY_TIMING["warmup"],  # noqa: E731
                                           POLICY_TIMING["repeats"])
    decision, report = layouts.decide(compiled, x, {r["module"]: r for r in rows}, min_speedup,
                                     timer)
    for row in rows:
        d = decision[row["module"]]
        row["decision"] = layouts.SPCONV if d == layouts.SPCONV else "torch"
        if d != layouts.SPCONV:
            row["kept_layout"] = layouts.CHANNELS_LAST if d == layouts.TORCH_CL \
                else layouts.NCHW
        if d == layouts.TORCH_CL:
            row["kept_impl"] = mods[row["module"]].kept_impl
    out = {"convs": len(rows), "device": device, "timing": mode, "min_speedup": min_speedup,
           "timing_params": POLICY_TIMING, "cached": len(cached),
           "totals": totals(rows), "layout": report,
           "layers": rows}
    compiled.spconv_measurements = out
    return out


def load(model, out_dir):
    """The compiled model from a compile directory, without spconv-translate."""
    model, _ = prepare(model, None)
    _eval(model)
    with open(os.path.join(out_dir, MANIFEST)) as f:
        manifest = json.load(f)
    if manifest.get("format") != "spconv-torch" or manifest.get("version") not in (1, 2):
        raise LoadError("%s: not a spconv.torch manifest" % out_dir)
    return build(model, manifest, out_dir)


def _original(modules, layer):
    parts = [modules[layer["module"]]]
    if layer["bn"]:
        parts.append(modules[layer["bn"]])
    if layer["act"] == "relu":
        parts.append(nn.ReLU())
    elif layer["act"] == "relu6":
        parts.append(nn.ReLU6())
    return nn.Sequential(*parts)


def _kernel_of(layer, name, sidecar, kernels):
    """The sidecar entry of a manifest layer, checked against it."""
    if layer["kernel"] >= len(kernels):
        raise LoadError("%s has %d kernels, the manifest wants kernel %d"
                        % (sidecar, len(kernels), layer["kernel"]))
    k = kernels[layer["kernel"]]
    if k["entry"] != layer["entry"]:
        raise LoadError("%s: sidecar kernel %d is %s, manifest says %s"
                        % (name, layer["kernel"], k["entry"], layer["entry"]))
    return k


def build(model, manifest, out_dir, inplace=False):
    """Rewrite a copy of `model` (model itself with inplace): each manifest layer's conv
    (+ bn, act) -> SpconvConv2d."""
    work = model if inplace else copy.deepcopy(model)
    _eval(work)
    modules = dict(work.named_modules())
    sidecars = {}
    gm = trace(work)
    chains = {c.conv: c for c in find_chains(gm).values()} if gm is not None else {}
    nodes = {n.name: n for n in gm.graph.nodes} if gm is not None else {}
    for layer in manifest["layers"] + manifest.get("fused", []):
        name = layer["module"]
        if name not in modules or not isinstance(modules[name], nn.Conv2d):
            raise LoadError("the model has no conv %s (compiled from another model?)" % name)
        fused_only = bool(layer.get("fused_only"))
        sidecar = cubin = None
        if not fused_only:
            sidecar = os.path.abspath(os.path.join(out_dir, layer.get("sidecar") or
                                                   manifest["sidecar"]))
            cubin = os.path.abspath(os.path.join(out_dir, layer.get("cubin") or
                                                 manifest["cubin"]))
            if sidecar not in sidecars:
                with open(sidecar) as f:
                    sidecars[sidecar] = json.load(f)["kernels"]
        conv = modules[name]
        dtype = layer.get("dtype", "f32")
        if DTYPES.get(conv.weight.dtype) != dtype:
            raise LoadError("%s: compiled for %s weights, the model's are %s (convert the model "
                            "as at compile time)" % (name, dtype, conv.weight.dtype))
        bn = modules[layer["bn"]] if layer["bn"] else None
        w, b = folded_weights(conv, bn)
        if weights_hash(w, b) != layer["weights_sha256"]:
            raise LoadError("%s: the model's (folded) weights differ from those compiled into "
                            "%s: load the same state_dict as at compile time"
                            % (name, cubin or "the manifest"))
        k = None if fused_only else _kernel_of(layer, name, sidecar, sidecars[sidecar])
        new = SpconvConv2d(name, k, cubin, sidecar, w, b, layer["stride"], layer["padding"],
                           layer["dilation"], layer["groups"], layer["act"], layer["input_shape"],
                           layer["output_shape"], _original(modules, layer),
                           dtype=TORCH_DTYPES[dtype], accumulate=layer.get("accumulate"))
        # whether the kernel's epilogue ReLUs after the residual add (manifests before
        # residual_relu had only relu(conv + residual))
        new.kernel_residual_relu = layer.get("residual_relu", True)
        if fused_only:
            new.keep_in_torch(layouts.CHANNELS_LAST)  # no kernel; the policy may pick NCHW
        if name in manifest.get("torch_mode", ()):
            # measured slower than its original (min_speedup), in this layout
            cl = manifest.get("torch_channels_last", {})
            if name in cl:  # {layer: kept_impl}
                new.keep_in_torch(layouts.CHANNELS_LAST, cl[name])
            else:
                new.keep_in_torch(layouts.NCHW)
        if gm is None:
            _set_module(work, name, new)
            continue
        chain = chains.get(name)
        fused = 1 + (1 if layer["bn"] else 0) + (1 if layer["act"] != "none" else 0)
        if chain is None or (layer["bn"] and chain.bn != layer["bn"]) or \
                len(chain.nodes) < fused:
            raise LoadError("%s: the traced graph does not have the chain compiled (%s, %s)"
                            % (name, layer["bn"], layer["act"]))
        conv_node = nodes[chain.nodes[0]]
        gm.add_submodule(name, new)
        for n in reversed(chain.nodes[1:fused]):
            node = nodes[n]
            node.replace_all_uses_with(conv_node)
            gm.graph.erase_node(node)
    if gm is None:
        return work
    gm.graph.lint()
    gm.recompile()
    gm.delete_all_unused_submodules()
    # a max pool the graph calls as a function (a user's F.max_pool2d; dynamo's and export's
    # pools), as an nn.MaxPool2d: carry keeps pairs through that (lift.py)
    lift_pools(gm)
    # [relu](conv + residual) as one call: one kernel where the layer's takes the residual,
    # one cuDNN call where a half layer is kept channels-last and a ReLU follows, else the
    # conv, the add, the ReLU
    layouts.fuse_residual_adds(gm, {l["module"] for l in
                                    manifest["layers"] + manifest.get("fused", [])
                                    if l["act"] == "none"})
    # image pairs from kernel to kernel, where kernels of that layout run (carry.py)
    carry.carry(gm)
    return gm


def _set_module(root, name, new):
    parent, _, leaf = name.rpartition(".")
    setattr(root.get_submodule(parent) if parent else root, leaf, new)
