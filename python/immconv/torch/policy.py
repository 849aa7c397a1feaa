"""Which convs are worth compiling: the default rule, and the measured decision.

Two stages, both on by default:

1. Before compiling (no GPU needed): `default_keep(conv)` keeps a conv in PyTorch unless its
   weights are at least SPARSE_ENOUGH (0.9) sparse or each output needs at most
   MAX_FMAS_PER_OUTPUT (256) nonzero weights (nnz / K, the FMAs the kernel issues per output
   value); a half-precision conv unless it needs at most HALF_MAX_FMAS_PER_OUTPUT (64), and
   such a conv still runs fused, channels-last, without a kernel (layout.py). This replaces the old `sparsity_threshold=0.5` placeholder and rests on committed
   runs (docs/python.md, "Which convs are compiled"):
   - paper10 at p = 0.5, batch 64 (bench/results/2026-11-25-sm-affinity/suite-final, H100):
     every layer with at most 250 FMAs per output is faster than the best legacy cuDNN FP32
     (1.44x to 3.9x), every layer with 288 or more is not (0.31x to 1.01x);
   - paper10 at p = 0.9 at batch 1 and 64 (the same run) and ResNet-50's 53 convs at p = 0.9
     (bench/results/2026-11-25-block-code-budget): no conv is slower than cuDNN.
   An FP32 kernel issues one FMA per nonzero weight and output, while cuDNN's cost grows with
   the dense C*R*S at a far better FLOP rate, so the FMA count per output is what decides.
2. On CUDA (the model and example input on a GPU): every compiled conv is timed against its
   PyTorch original (conv + BN + activation) from CUDA graphs and goes back to PyTorch unless
   it is at least `min_speedup` (default DEFAULT_MIN_SPEEDUP = 1.05) times faster. The margin
   covers timing noise and the difference between a layer timed alone and in the network.
   `min_speedup=None` turns the measurement off. For half precision a kept layer may run
   channels-last, and the choice weighs the layout conversions between neighbours and is
   checked end to end (layout.py): the model with kernels must beat it with every layer kept
   by END_TO_END_MIN_SPEEDUP (1.02), or by min_speedup where that is lower. A 5% margin does
   not cover a half layer inside the network, where its code comes from DRAM (up to 2x its
   time alone at batch 1), so the end-to-end check also times plans made at stricter margins
   (layout.STRICTER_MARGINS).
"""
import torch

SPARSE_ENOUGH = 0.9
# a conv pruned to 90% by keeping ceil(0.1 n) weights reads as 0.8999998 sparse: measured
# runs at "p = 0.9" are such convs, so the bar allows the rounding
SPARSE_ENOUGH_TOLERANCE = 5e-4
MAX_FMAS_PER_OUTPUT = 256
# Half precision: of the 171 FP16 layers of ResNet-50 (batch 64 and 1), MobileNetV2 and
# VGG-16 (batch 64) at p = 0.9, no layer with more than 64 FMAs per output beat cuDNN with
# the layer kept channels-last (0 of 57; 57 of the 114 at or below did: H200,
# bench/results/2026-11-26-half-layout/fmas_per_output.txt).
HALF_MAX_FMAS_PER_OUTPUT = 64
HALF_RULE = "default rule (half precision)"
DEFAULT_MIN_SPEEDUP = 1.05
# The end-to-end check (layout.decide): a decision with kernels is kept if the whole model runs
# at least this much faster than with every layer kept (or min_speedup, if lower). It times the
# model itself, so it needs no allowance for a layer timed alone; only for noise. On an H200
# the same ResNet-50 FP16 plan at batch 64 timed in one process through three front ends
# spread 0.24%, and all-kept timed twice 0.28% (bench/results/2026-11-27-kept-pools, call1).
END_TO_END_MIN_SPEEDUP = 1.02

AUTO = "auto"


def fmas_per_output(conv):
    w = conv.weight.detach()
    return float((w != 0).sum().item()) / w.shape[0]


def sparsity(conv):
    w = conv.weight.detach()
    return float((w == 0).sum().item()) / w.numel()


def default_keep(conv):
    """None if the default rule compiles `conv`, else the reason it stays in PyTorch. A half
    conv (float16/bfloat16 weights) is compiled if it needs at most HALF_MAX_FMAS_PER_OUTPUT
    FMAs per output; one the half rule keeps (the reason starts with HALF_RULE) is still
    rewritten, without a kernel, to run fused and channels-last (pipeline.plan)."""
    p, f = sparsity(conv), fmas_per_output(conv)
    if conv.weight.dtype in (torch.float16, torch.bfloat16):
        if f <= HALF_MAX_FMAS_PER_OUTPUT:
            return None
        return "%s: %.0f FMAs per output > %d" % (HALF_RULE, f, HALF_MAX_FMAS_PER_OUTPUT)
    if p >= SPARSE_ENOUGH - SPARSE_ENOUGH_TOLERANCE or f <= MAX_FMAS_PER_OUTPUT:
        return None
    return ("default rule: sparsity %.3f < %.2f and %.0f FMAs per output > %d"
            % (p, SPARSE_ENOUGH, f, MAX_FMAS_PER_OUTPUT))
