"""Layout conversions and max pools through torch.compile where it is there.

Converting to and from image pairs (module.to_image_pairs / from_image_pairs) is a permuted
copy. PyTorch runs it eagerly as a strided elementwise copy; Inductor (torch.compile) emits a
tiled kernel for the same permutation: on an H200 at ResNet-50's batch-64 FP16 shapes,
bit-equal and 1.5-2.3x faster to and from NCHW, 2.3-6.4x from and to channels-last
(bench/results/2026-11-27-measured-policy/conversions.json). The max pool over image pairs
(carry.ip_max_pool2d) runs here too: ResNet-50's stem pool at batch 64, FP16, 0.2921 ms
eagerly (PyTorch's pool over two channels stored channels-last) and 0.0463 ms compiled,
bit-equal; PyTorch's own pool over the same tensor in channels-last takes 0.2204
(bench/results/2026-11-27-compiled-pools). So does the max pool on a 4-D tensor
(carry.max_pool2d), where eager PyTorch computes int64 indices nobody reads
(bench/results/2026-11-27-kept-pools). `run(fn, x, *args)` calls the compiled copy of
`fn` for a CUDA tensor, compiling it on first use for that shape, and `fn` itself where that
cannot or should not happen: on CPU, without torch.compile (torch 1.x), while a graph is
being traced or a CUDA graph captured (no compile there; a function compiled before is
replayed as captured), when IMMCONV_COMPILED_COPIES=0, or once a compile of it has failed
(one warning). Each (fn, args, shape, strides, dtype, device) has its own compiled function
object, so neither the recompile limit nor a guard failure ever sends a model's conversions
back to the eager copy.
"""
import os
import types
import warnings

import torch

_COMPILED = {}
_FAILED = set()
_CALLS = {"compiled": 0, "eager": 0}  # how each call of run() went (stats())


def stats():
    """How many calls of run() ran a compiled function and how many the eager one, so far
    (calls traced into a caller's graph are neither): a caller can check that a model's
    conversions and pools run compiled where it runs them (inside
    torch.compile(backend="immconv")'s graphs, for one)."""
    return dict(_CALLS)


def _enabled():
    return hasattr(torch, "compile") and os.environ.get("IMMCONV_COMPILED_COPIES", "1") != "0"


def _tracing():
    compiler = getattr(torch, "compiler", None)
    is_compiling = getattr(compiler, "is_compiling", None)
    return bool(is_compiling and is_compiling())


def _fresh(fn):
    """A copy of fn with its own code object: torch.compile caches per code object."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def run(fn, x, *args):
    if _tracing():  # inside a caller's graph: traced into it, neither counted nor compiled
        return fn(x, *args)
    compiled = _compiled(fn, x, args)
    if compiled is not None:
        try:
            y = compiled(x, *args)
            _CALLS["compiled"] += 1
            return y
        except Exception as e:  # noqa: BLE001 - no Inductor backend here: the eager op
            _FAILED.add(fn)
            warnings.warn("immconv: compiled %s unavailable (%s: %s); using PyTorch's eager "
                          "op" % (fn.__name__.lstrip("_"), type(e).__name__, e))
    _CALLS["eager"] += 1
    return fn(x, *args)


def _compiled(fn, x, args):
    """The compiled function for this call, made on first use; None where the eager op runs."""
    if not (x.is_cuda and _enabled()) or fn in _FAILED:
        return None
    key = (fn, args, tuple(x.shape), tuple(x.stride()), x.dtype, x.device)
    compiled = _COMPILED.get(key)
    if compiled is None and not torch.cuda.is_current_stream_capturing():
        compiled = _COMPILED[key] = torch.compile(_fresh(fn), dynamic=False)
    return compiled
