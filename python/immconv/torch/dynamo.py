"""`torch.compile(model, backend="immconv")`: the PyTorch 2 entry to spconv.

The installed distribution registers `immconv_backend` under the `torch_dynamo_backends`
entry point, so `backend="immconv"` works once the package is installed; without an install
(`PYTHONPATH=python`), `immconv.torch.dynamo.register()` registers it by hand, or pass the
callable itself: `torch.compile(model, backend=immconv_backend)`.

For every graph dynamo captures, the backend does what immconv.torch.compile does to a model
(pipeline.compile_graph): conv -> BN -> ReLU/ReLU6 chains fused, BN folded with the same
rule, the same keep-or-compile policy (the default rule, then on CUDA the measured decision),
kernels from the shared kernel cache (kcache.py) or one spconv-translate compile of the
missing convs. Everything else in the graph stays PyTorch.

Options (`torch.compile(..., options={...})`, or `ImmconvBackend(**options)`): the keyword
arguments of immconv.torch.compile that apply to a graph: sparsity_threshold, keep,
min_speedup, min_speedup_graphs, cache_dir, jobs, progress, kernel_cache, accumulate (for
half-precision graphs: "half", the default, or "f32"), compiler_args, layout ("nchw" or
"image_pairs": half kernels in the image-pair layout, carried through the graph).

The model's dtype is followed: a graph of a model.half() or bfloat16 model gets f16/bf16
kernels (docs/python.md "Half precision").

Shapes are static in spconv's kernels. The compiled graph is specialised per input shape:
a call with tensor shapes not seen before compiles again for them (kernels cached on disk as
ever; a graph dynamo marked dynamic is handled the same way, one specialisation per concrete
shape). The weights are folded into the code, so each call also checks that the tensors the
kernels folded (the conv weights and BN statistics dynamo passes as graph inputs) are the
same tensors, unmodified (storage pointer and version counter); otherwise the graph is
compiled again for the new values.

Inference only: a graph captured with autograd recording (grad enabled and a parameter that
requires grad) is returned unchanged, with a warning; run the model under torch.no_grad() or
torch.inference_mode().
"""
import warnings

import torch

from . import pipeline

OPTIONS = ("sparsity_threshold", "keep", "min_speedup", "min_speedup_graphs", "cache_dir",
           "jobs", "progress", "kernel_cache", "accumulate", "compiler_args", "layout")


def _needs_grad(example_inputs):
    return torch.is_grad_enabled() and any(
        isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs)


class CompiledGraph:
    """The callable handed back to dynamo: one compiled GraphModule per input signature."""

    def __init__(self, gm, options, stats):
        self.gm = gm
        self.options = options
        self.stats = stats
        self.frozen = ()
        self.specialised = {}

    def _signature(self, args):
        sig = []
        for i, a in enumerate(_concrete(args)):
            if isinstance(a, torch.Tensor):
                if i in self.frozen:
                    sig.append(("w", a.data_ptr(), a._version, tuple(a.shape)))
                else:
                    sig.append(("t", tuple(a.shape), a.dtype, a.device))
            else:
                sig.append(("v", a if isinstance(a, (int, float, bool, str, type(None)))
                            else type(a).__name__))
        return tuple(sig)

    def compile_for(self, args):
        args = _concrete(args)
        with torch.no_grad():
            cm = pipeline.compile_graph(self.gm, tuple(args), None, **self.options)
        self.frozen = frozenset(cm.immconv_frozen)
        man = cm.immconv_manifest
        self.stats["compiles"] += 1
        self.stats["convs_compiled"] += len(man["layers"])
        self.stats["convs_kept"] += len(man["kept"])
        self.stats["convs_fused_without_kernel"] += len(man.get("fused", ()))
        self.stats["convs_measured_back_to_torch"] += len(man.get("torch_mode", ()))
        self.specialised[self._signature(args)] = cm
        return cm

    def __call__(self, *args):
        cm = self.specialised.get(self._signature(args))
        if cm is None:
            cm = self.compile_for(args)
        return cm(*args)


class ImmconvBackend:
    """A dynamo backend: `torch.compile(model, backend=ImmconvBackend(**options))`; the
    module-level `immconv_backend` is the one registered as "immconv"."""

    def __init__(self, **options):
        unknown = set(options) - set(OPTIONS)
        if unknown:
            raise TypeError("immconv backend: unknown options %s" % sorted(unknown))
        self.options = options
        self._stats = {"graphs": 0, "compiles": 0, "convs_compiled": 0, "convs_kept": 0,
                       "convs_fused_without_kernel": 0, "convs_measured_back_to_torch": 0,
                       "graphs_left_to_pytorch": 0}

    def __call__(self, gm, example_inputs, options=None, mode=None, **kw):
        opts = dict(self.options)
        opts.update(options or {})
        opts.update(kw)
        unknown = set(opts) - set(OPTIONS)
        if unknown:
            raise TypeError("immconv backend: unknown options %s" % sorted(unknown))
        self._stats["graphs"] += 1
        if _needs_grad(example_inputs):
            warnings.warn("immconv: this graph records autograd (grad enabled, parameters "
                          "that require grad); its convs stay in PyTorch. Run inference "
                          "under torch.no_grad() or torch.inference_mode().")
            self._stats["graphs_left_to_pytorch"] += 1
            return gm.forward
        compiled = CompiledGraph(gm, opts, self._stats)
        if all(not isinstance(t, torch.Tensor) or not _is_fake(t) for t in example_inputs):
            compiled.compile_for(list(example_inputs))  # compile errors surface here
        return compiled

    def stats(self):
        return dict(self._stats)


def _concrete(args):
    """Symbolic sizes (torch.SymInt, what dynamo passes a graph it made dynamic as example
    inputs) as the ints they stand for here, so the example call and the real calls with
    the same shapes share one specialisation."""
    sym = getattr(torch, "SymInt", None)
    if sym is None or not any(isinstance(a, sym) for a in args):
        return list(args)
    return [int(a) if isinstance(a, sym) else a for a in args]


def _is_fake(t):
    try:
        from torch._subclasses.fake_tensor import FakeTensor
    except ImportError:  # torch without fake tensors
        return False
    return isinstance(t, FakeTensor)


immconv_backend = ImmconvBackend()


def register(name="immconv"):
    """Registers immconv_backend with dynamo under `name` (what the entry point does for an
    installed package)."""
    from torch._dynamo import register_backend
    try:
        from torch._dynamo.backends.registry import _COMPILER_FNS
    except ImportError:
        _COMPILER_FNS = {}
    if name not in _COMPILER_FNS:
        register_backend(immconv_backend, name=name)
    return immconv_backend
