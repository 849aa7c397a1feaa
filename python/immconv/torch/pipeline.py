"""immconv.torch.compile / load: a PyTorch model whose pruned convs run as spconv kernels.

compile(): trace (torch.fx) -> find conv->BN->ReLU chains -> fold BN (immconv.folding's rule)
-> record input shapes (one forward pass with hooks) -> decide which convs stay in PyTorch
(policy) -> write one MLIR module (one func per conv) -> one `spconv-translate
--spconv-compile` -> manifest.json -> build().

load(): manifest.json + the cubin/sidecar in a compile directory -> build(), with no
spconv-translate: this is what runs on a GPU machine without MLIR. The folded weights are
recomputed from the model and checked against the manifest's hashes, so a model whose
weights differ from the compiled ones is refused instead of computing wrong results.
"""
import copy
import hashlib
import json
import os
import warnings

import numpy as np
import torch
import torch.nn as nn

from .. import folding, mlir
from ..compiler import compile_mlir
from .fusion import find_chains, is_plain_conv, trace
from .module import SpconvConv2d

MANIFEST = "manifest.json"
PREFIX = "model"
DEFAULT_SPARSITY_THRESHOLD = 0.5


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
    """(w, b) float32 numpy with bn folded (raises folding.FoldRefused), or the conv's own."""
    w = conv.weight.detach().cpu().numpy().astype(np.float32)
    b = conv.bias.detach().cpu().numpy().astype(np.float32) if conv.bias is not None else None
    if bn is None:
        return w, b
    g = lambda t: None if t is None else t.detach().cpu().double().numpy()  # noqa: E731
    return folding.fold_bn(w, b, g(bn.weight), g(bn.bias), g(bn.running_mean),
                           g(bn.running_var), bn.eps)


def weights_hash(w, b):
    h = hashlib.sha256(np.ascontiguousarray(w, dtype="<f4").tobytes())
    if b is not None:
        h.update(np.ascontiguousarray(b, dtype="<f4").tobytes())
    return h.hexdigest()[:16]


def record_input_shapes(model, example_input):
    """{conv module name: [input shape per call]} from one forward pass."""
    shapes, hooks = {}, []
    for name, m in model.named_modules():
        if isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(
                lambda mod, inp, out, name=name: shapes.setdefault(name, []).append(
                    tuple(inp[0].shape))))
    try:
        with torch.no_grad():
            model(example_input)
    finally:
        for h in hooks:
            h.remove()
    return shapes


def _keep_by_policy(name, conv, sparsity, keep, threshold):
    if keep is not None:
        if callable(keep):
            if keep(name, conv):
                return "keep() chose PyTorch"
        elif name in keep:
            return "in keep"
    if sparsity < threshold:
        return "sparsity %.3f < threshold %.3f" % (sparsity, threshold)
    return None


def plan(model, example_input, sparsity_threshold=DEFAULT_SPARSITY_THRESHOLD, keep=None):
    """(layers, kept): layer records (manifest rows, with `_w`/`_b` arrays) for the convs to
    compile, in graph order, and {conv name: reason} for those left in PyTorch."""
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
    listed = {name for name, _, _ in order}
    kept = {n: "not a float32 zeros-padded 2-D conv (nn.Conv2d)" for n, m in modules.items()
            if isinstance(m, nn.Conv2d) and n not in listed}
    shapes = record_input_shapes(model, example_input)
    calls = {}
    for name, _, _ in order:
        calls[name] = calls.get(name, 0) + 1
    layers = []
    for name, bn_name, act in order:
        conv = modules[name]
        if not is_plain_conv(conv):
            kept[name] = "not a float32 zeros-padded Conv2d"
            continue
        seen = shapes.get(name, [])
        if calls[name] != 1 or len(seen) != 1:
            kept[name] = "called %d times (one static shape per conv)" % max(calls[name], len(seen))
            continue
        w0 = conv.weight.detach()
        sparsity = float((w0 == 0).sum().item()) / w0.numel()
        why = _keep_by_policy(name, conv, sparsity, keep, sparsity_threshold)
        if why:
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
        spec = mlir.ConvSpec(name=name, weights=w, bias=b, input_shape=seen[0],
                             stride=tuple(conv.stride), padding=conv_padding(conv, seen[0]),
                             dilation=tuple(conv.dilation), groups=conv.groups, activation=act)
        layers.append({"module": name, "func": spec.func, "bn": bn_name, "act": act,
                       "input_shape": list(spec.input_shape),
                       "output_shape": list(spec.output_shape), "stride": list(spec.stride),
                       "padding": list(spec.padding), "dilation": list(spec.dilation),
                       "groups": spec.groups, "sparsity": sparsity,
                       "weights_sha256": weights_hash(w, b), "_spec": spec})
    return layers, kept


def compile(model, example_input, *, sparsity_threshold=DEFAULT_SPARSITY_THRESHOLD,
            cache_dir=None, jobs=None, min_speedup=None, min_speedup_graphs=True, keep=None,
            out_dir=None, progress=True):
    """Compile `model`'s pruned convs with spconv; returns a new module (the original is
    untouched) in which each compiled conv, with the BN and ReLU/ReLU6 applied directly to
    its output, is one SpconvConv2d.

    Which convs stay in PyTorch (cuDNN):
    - keep: a set of conv module names, or keep(name, conv) -> True to keep it;
    - sparsity_threshold: convs whose weight sparsity (fraction of exact zeros) is below it
      stay. The default 0.5 is a placeholder until measured per-layer data
      (benchmark_layers on the target GPU) replaces it: at low sparsity cuDNN usually wins;
      pass 0 to compile every conv;
    - min_speedup: if given and the model runs on CUDA, each compiled layer is timed against
      its original (benchmark_layers) and put back to PyTorch (mode "torch") when the
      measured speedup is below it. min_speedup_graphs (default) times each layer from a
      CUDA graph (device time, what a captured deployment sees); False times eager calls,
      whose Python launch overhead dominates small layers at batch 1.
    A conv called more than once (shared module) also stays, as shapes are static.

    out_dir holds model.mlir, model.cubin, model.json (sidecar) and manifest.json; it is
    what `load(model, out_dir)` needs on a machine without spconv-translate (default: a
    fresh temporary directory). The input shape of every conv is that seen in one forward
    pass over example_input; other shapes raise ShapeMismatch at run time.
    """
    model.eval()
    if out_dir is None:
        import tempfile
        out_dir = tempfile.mkdtemp(prefix="spconv-")
    os.makedirs(out_dir, exist_ok=True)
    layers, kept = plan(model, example_input, sparsity_threshold, keep)
    if layers:
        mpath = os.path.join(out_dir, PREFIX + ".mlir")
        mlir.write_module(mpath, [l["_spec"] for l in layers],
                          header="Written by immconv.torch.compile: one func per conv, "
                                 "kernel i = func i")
        bundle = compile_mlir(mpath, os.path.join(out_dir, PREFIX), cache_dir=cache_dir,
                              jobs=jobs, progress=progress)
        for i, (l, k) in enumerate(zip(layers, bundle.kernels)):
            l["kernel"], l["entry"] = i, k["entry"]
    manifest = {"format": "spconv-torch", "version": 1, "sidecar": PREFIX + ".json",
                "cubin": PREFIX + ".cubin", "sparsity_threshold": sparsity_threshold,
                "layers": [{k: v for k, v in l.items() if not k.startswith("_")} for l in layers],
                "kept": kept}
    with open(os.path.join(out_dir, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1)
    compiled = build(model, manifest, out_dir)
    if min_speedup is not None:
        res = apply_min_speedup(compiled, example_input, min_speedup, graphs=min_speedup_graphs)
        if res is not None:
            # load() applies the measured decisions too
            manifest["min_speedup"] = min_speedup
            manifest["measured"] = res
            manifest["torch_mode"] = [r["module"] for r in res["layers"]
                                      if r["decision"] == "torch"]
            with open(os.path.join(out_dir, MANIFEST), "w") as f:
                json.dump(manifest, f, indent=1)
    return compiled


def apply_min_speedup(compiled, example_input, min_speedup, graphs=True):
    """Measured policy: layers slower than min_speedup x their cuDNN original go back to it
    (timed by benchmark_layers, from CUDA graphs unless graphs=False)."""
    if not (torch.cuda.is_available() and example_input.is_cuda):
        warnings.warn("spconv: min_speedup needs the model and input on CUDA; ignored")
        return None
    from .bench import benchmark_layers
    res = benchmark_layers(compiled, example_input, graphs=graphs)
    mods = dict(compiled.named_modules())
    for row in res["layers"]:
        if row["x_fp32"] < min_speedup:
            mods[row["module"]].mode = "torch"
            row["decision"] = "torch"
        else:
            row["decision"] = "spconv"
    compiled.spconv_measurements = res
    return res


def load(model, out_dir):
    """The compiled model from a compile directory, without spconv-translate."""
    model.eval()
    with open(os.path.join(out_dir, MANIFEST)) as f:
        manifest = json.load(f)
    if manifest.get("format") != "spconv-torch" or manifest.get("version") != 1:
        raise LoadError("%s: not a immconv.torch manifest" % out_dir)
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


def build(model, manifest, out_dir):
    """Rewrite a copy of `model`: each manifest layer's conv (+ bn, act) -> SpconvConv2d."""
    work = copy.deepcopy(model).eval()
    modules = dict(work.named_modules())
    sidecar = os.path.abspath(os.path.join(out_dir, manifest["sidecar"]))
    cubin = os.path.abspath(os.path.join(out_dir, manifest["cubin"]))
    kernels = []
    if manifest["layers"]:
        with open(sidecar) as f:
            kernels = json.load(f)["kernels"]
        if len(kernels) != len(manifest["layers"]):
            raise LoadError("%s has %d kernels, the manifest %d layers"
                            % (sidecar, len(kernels), len(manifest["layers"])))
    gm = trace(work)
    chains = {c.conv: c for c in find_chains(gm).values()} if gm is not None else {}
    nodes = {n.name: n for n in gm.graph.nodes} if gm is not None else {}
    for layer in manifest["layers"]:
        name = layer["module"]
        if name not in modules or not isinstance(modules[name], nn.Conv2d):
            raise LoadError("the model has no conv %s (compiled from another model?)" % name)
        conv = modules[name]
        bn = modules[layer["bn"]] if layer["bn"] else None
        w, b = folded_weights(conv, bn)
        if weights_hash(w, b) != layer["weights_sha256"]:
            raise LoadError("%s: the model's (folded) weights differ from those compiled into "
                            "%s: load the same state_dict as at compile time" % (name, cubin))
        k = kernels[layer["kernel"]]
        if k["entry"] != layer["entry"]:
            raise LoadError("%s: sidecar kernel %d is %s, manifest says %s"
                            % (name, layer["kernel"], k["entry"], layer["entry"]))
        new = SpconvConv2d(name, k, cubin, sidecar, w, b, layer["stride"], layer["padding"],
                           layer["dilation"], layer["groups"], layer["act"], layer["input_shape"],
                           layer["output_shape"], _original(modules, layer))
        if name in manifest.get("torch_mode", ()):
            new.mode = "torch"  # measured slower than its original (min_speedup)
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
    return gm


def _set_module(root, name, new):
    parent, _, leaf = name.rpartition(".")
    setattr(root.get_submodule(parent) if parent else root, leaf, new)
