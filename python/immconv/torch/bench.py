"""benchmark_layers: each SpconvConv2d timed against its original PyTorch (cuDNN) layers.

This is the measurement behind the keep/compile decision: per layer, the compiled kernel and
the original conv (+BN +activation) on the same captured input, CUDA events, warm-up, median
of repeats, cudnn.benchmark on. The baseline is PyTorch in the layer's own dtype, as a
deployment runs it: an FP32 layer against cuDNN FP32 with TF32 off (`cudnn_fp32`); a
float16/bfloat16 layer against the same modules and input in channels-last memory format
(`cudnn_fp16_channels_last` / `cudnn_bf16_channels_last`), tensor cores allowed. Each row
names its `baseline` and has its time as `cudnn` and spconv's speedup over it as `x` (FP32
rows also `cudnn_fp32`/`x_fp32`, as before). `kept` is the time of what runs if the layer is
kept in PyTorch (SpconvConv2d in mode "torch": the original modules on the input as the model
hands it over, NCHW), and `x_kept` spconv's speedup over that: the measured policy decides on
it. For FP32 it is the baseline itself; for a half-precision layer it is cuDNN on NCHW
tensors, which a channels-last baseline does not time. A half-precision row also has
`kept_channels_last`, the layer kept in channels-last as SpconvConv2d.run_channels_last runs
it, the faster of its two ways (`kept_channels_last_impl`: "folded", BN folded and ReLU
fused, or "original", the baseline's modules), and `to_channels_last` and `to_nchw`: the
layer's input converted to channels-last and back (`contiguous(memory_format=...)`), which
the policy charges where a kept layer's layout differs from its neighbours' (layout.py).
A layer fused with its residual add and ReLU, or add alone (`residual`:
layout.fuse_residual_adds; a half kernel compiled with the residual does both in its
epilogue) is timed with them on every side: the kernel alone, PyTorch's modules followed by
the add and the ReLU (the baseline and `kept`), cuDNN's fused conv-add-ReLU
(`kept_channels_last`, folded; without a ReLU the conv, then the add).
A kernel in the image-pair layout (`spconv_layout` "image_pairs") is timed on its input as
image pairs, and the row adds `to_image_pairs` and `from_image_pairs`: that input converted
from NCHW and back, and `to_image_pairs_cl` and `from_image_pairs_cl`: from channels-last
and back (carry.py's conversions). A
layer without a kernel (the half rule, policy.py) has `spconv` None. The result has the
layout of bench/network_summary.py (`layers` rows and `totals`), so immconv.plots draws it.
"""
import copy
import statistics

import torch

from .module import IMAGE_PAIRS, SpconvConv2d, from_image_pairs, to_image_pairs


def time_cuda(fn, warmup, repeats):
    """Median milliseconds of `fn()` on the current stream (CUDA events), after `warmup` runs,
    without autograd."""
    with torch.no_grad():
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
    return statistics.median(times)


def time_cuda_graph(fn, warmup, repeats, calls=1):
    """Median milliseconds per call of `fn()` replayed from one CUDA graph that holds `calls`
    consecutive calls: what a deployment that captures its model (CUDA graphs) pays, without
    Python and launch overhead. SpconvConv2d launches on PyTorch's current stream, so it is
    captured like any PyTorch op; fn() runs a few times eagerly on a side stream first, as
    torch.cuda.graph requires (lazy initialisation must not happen during capture)."""
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(calls):
                fn()
        return time_cuda(graph.replay, warmup, repeats) / calls


HALF_NAMES = {torch.float16: "fp16", torch.bfloat16: "bf16"}


def baseline(m, x):
    """(name, module, input) of a SpconvConv2d's PyTorch baseline on its captured input x:
    the original modules in FP32 NCHW for an FP32 layer; for a half-precision one the
    original modules and x in channels-last memory format (PyTorch's fast half path)."""
    if m.dtype == torch.float32:
        return "cudnn_fp32", m.original, x
    orig = copy.deepcopy(m.original).to(memory_format=torch.channels_last)
    return ("cudnn_%s_channels_last" % HALF_NAMES[m.dtype], orig,
            x.contiguous(memory_format=torch.channels_last))


def benchmark_layers(compiled_model, example_input, warmup=10, repeats=50, graphs=False,
                     calls=20, only=None):
    """Per layer, the compiled kernel and its original layers on the same captured input.
    graphs=True times each from a CUDA graph of `calls` calls (device time per call, as a
    captured deployment sees it); otherwise each call is launched from Python (eager).
    example_input: a tensor or a tuple of the forward call's arguments; only: a set of layer
    names to time (default all)."""
    args = tuple(example_input) if isinstance(example_input, (tuple, list)) else (example_input,)
    if not (torch.cuda.is_available() and all(
            a.is_cuda for a in args if isinstance(a, torch.Tensor))):
        raise RuntimeError("benchmark_layers needs the model and example_input on CUDA")
    layers = [(n, m) for n, m in compiled_model.named_modules() if isinstance(m, SpconvConv2d)
              and (only is None or n in only)]
    inputs, hooks = {}, []
    for n, m in layers:
        hooks.append(m.register_forward_pre_hook(
            lambda mod, inp, n=n: inputs.__setitem__(
                n, tuple(t.detach().clone() for t in inp))))
    modes = {n: m.mode for n, m in layers}
    flags = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32,
             torch.backends.cudnn.benchmark)
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    rows = []
    try:
        with torch.no_grad():
            compiled_model(*args)
            for h in hooks:
                h.remove()
            for n, m in layers:
                # every option timed on its own layout (the captured input may arrive
                # channels-last, from a layer kept so): NCHW here, channels-last in baseline()
                x, r = (inputs[n] + (None,))[:2]
                x = from_image_pairs(x) if x.dim() == 5 else x.contiguous()
                name, orig, xb = baseline(m, x)
                pairs = m.layout == IMAGE_PAIRS
                xk = to_image_pairs(x.to(m.dtype)) if pairs else x
                if graphs:
                    timed = lambda fn: time_cuda_graph(fn, warmup, repeats, calls=calls)
                else:
                    timed = lambda fn: time_cuda(fn, warmup, repeats)
                # A layer fused with its residual (layout.fuse_residual_adds) is timed with
                # the add and the ReLU (if any) on every side: the kernel that takes the
                # residual does them in its epilogue, PyTorch as it runs them.
                rb = rk = None
                if r is not None:
                    r = from_image_pairs(r) if r.dim() == 5 else r.contiguous()
                    rb = r.to(xb.dtype).contiguous(memory_format=torch.channels_last) \
                        if xb is not x else r
                    rk = to_image_pairs(r.to(m.dtype)) if pairs else r

                def plus(fn, res):
                    if res is None:
                        return fn
                    return (lambda: (fn() + res).relu_()) if m.residual_relu else \
                        (lambda: fn() + res)
                if m.kernel is None:
                    t_sp = None
                elif m.takes_residual:
                    t_sp = timed(lambda: m.run_kernel(xk, rk))
                else:
                    t_sp = timed(plus(lambda: m.run_kernel(xk), rk))
                t_cu = timed(plus(lambda: orig(xb), rb))
                t_kept = t_cu if orig is m.original else timed(plus(lambda: m.original(x), r))
                w = m.weight
                x_ratio = t_cu / t_sp if t_sp else None
                row = {"layer": n, "module": n, "entry": m.kernel["entry"] if m.kernel else None,
                       "shape": list(m.input_shape), "nnz": int((w != 0).sum().item()),
                       "weights_total": w.numel(), "spconv": t_sp, "baseline": name,
                       "cudnn": t_cu, "x": x_ratio, name: t_cu,
                       "x_" + name[len("cudnn_"):]: x_ratio, "mode": modes[n],
                       "kept": t_kept, "x_kept": t_kept / t_sp if t_sp else None}
                if m.dtype != torch.float32:
                    row["dtype"] = str(m.dtype).replace("torch.", "")
                    row["accumulate"] = m.accumulate
                    # kept channels-last: the folded way, or the original modules (the
                    # baseline just timed), whichever is faster
                    state = (m.mode, m.kept_layout, m.kept_impl)
                    m.keep_in_torch("channels_last", "folded")
                    t_folded = timed(lambda: m.run_channels_last(xb)) if r is None else \
                        timed(lambda: m.add_residual(xb, rb))
                    m.mode, m.kept_layout, m.kept_impl = state
                    row["kept_channels_last"] = min(t_folded, t_cu)
                    row["kept_channels_last_impl"] = "folded" if t_folded <= t_cu \
                        else "original"
                    row["to_channels_last"] = timed(
                        lambda: x.contiguous(memory_format=torch.channels_last))
                    row["to_nchw"] = timed(lambda: xb.contiguous())
                if r is not None:
                    row["residual"] = True
                if pairs:
                    row["spconv_layout"] = IMAGE_PAIRS
                    row["to_image_pairs"] = timed(lambda: to_image_pairs(x))
                    row["from_image_pairs"] = timed(lambda: from_image_pairs(xk))
                    # the same from and to channels-last (carry.py converts straight to
                    # what a kept neighbour wants): another copy, at another speed
                    row["to_image_pairs_cl"] = timed(lambda: to_image_pairs(xb))
                    row["from_image_pairs_cl"] = timed(
                        lambda: from_image_pairs(xk, "channels_last"))
                rows.append(row)
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32, \
            torch.backends.cudnn.benchmark = flags
        for h in hooks:
            h.remove()
    from .pipeline import totals
    return {"convs": len(rows), "device": torch.cuda.get_device_name(args[0].device),
            "timing": "cuda-graph" if graphs else "eager", "totals": totals(rows), "layers": rows}
