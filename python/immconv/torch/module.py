"""SpconvConv2d: one compiled conv (+ its folded BN and fused activation) as an nn.Module.

Modes (attribute `mode`):
- "auto" (default): a CUDA input runs the compiled kernel; a CPU input runs the reference
  (F.conv2d with the folded weights), which is what CPU-only tests exercise.
- "reference": always F.conv2d with the folded weights, bias and activation.
- "torch": the original modules (conv, BN, activation) as the model had them: how a layer
  the measured policy rejects stays with cuDNN, and the baseline `benchmark_layers` times.
  `kept_layout` says how they run: "nchw", the original modules on the input made
  contiguous; or "channels_last", `run_channels_last`: cuDNN on channels-last tensors
  (PyTorch's fast half-precision path) with the folded weights and bias rounded to the
  layer's dtype, the values the kernel holds, and the ReLU fused into the conv
  (torch.cudnn_convolution_relu) where cuDNN has that, or the original modules channels-last
  where those measured faster (`kept_impl`); the output stays channels-last for the next
  layer. `keep_in_torch(layout)` sets both; the measured policy chooses the layout
  with the neighbours' (layout.py).

Half precision: a kernel compiled from a float16/bfloat16 conv (`dtype`) takes and gives
tensors of that type (NCHW, contiguous); `weight`/`bias` stay the folded float32 values the
compiler rounded, and the reference rounds them to `dtype` the same way (nearest even),
computes in float32 and rounds its output to `dtype`.

Image pairs: a half kernel compiled in the image-pair layout (`layout` "image_pairs",
docs/design.md "Image-pair layout") reads and writes [N/2, C, H, W, 2] tensors
(`to_image_pairs`). `io` says what forward takes and gives: "nchw" (the default: the layer
converts at its own edges) or "image_pairs", which carry.py sets where the graph hands it
pairs and takes pairs from it. Forward accepts either layout as input (4-D NCHW or 5-D
pairs) and converts what it must.

Shapes are static: the kernel was compiled for one input shape, and a call with any other
shape raises ShapeMismatch (rather than silently falling back, which would hide that the
deployment is not running what was compiled).
"""
import copy
import json
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import driver as _drv
from . import fastcopy

_LOADED = {}  # (cubin path, device index) -> driver.LoadedModule


NCHW, IMAGE_PAIRS = "nchw", "image_pairs"


class ShapeMismatch(RuntimeError):
    pass


def to_image_pairs(x):
    """An N x C x H x W tensor (any memory format, N even) as image pairs: the contiguous
    [N/2, C, H, W, 2] tensor whose [m, c, y, x, h] is x[m + h * N/2, c, y, x]. On CUDA the
    copy is torch.compile's where it can be (fastcopy.py)."""
    return fastcopy.run(_to_image_pairs, x)


def from_image_pairs(x, memory_format=NCHW):
    """An image-pair tensor as the N x C x H x W tensor it holds, NCHW or channels-last (on
    CUDA torch.compile's copy where it can be: fastcopy.py)."""
    return fastcopy.run(_from_image_pairs, x, memory_format)


def _to_image_pairs(x):
    n, c, h, w = x.shape
    return x.reshape(2, n // 2, c, h, w).permute(1, 2, 3, 4, 0).contiguous()


def _from_image_pairs(x, memory_format):
    m, c, h, w, _ = x.shape
    fmt = torch.channels_last if memory_format == "channels_last" else \
        torch.contiguous_format
    out = torch.empty((2 * m, c, h, w), dtype=x.dtype, device=x.device, memory_format=fmt)
    out.view(2, m, c, h, w).copy_(x.permute(4, 0, 1, 2, 3))
    return out


def pairs_shape(shape):
    n, c, h, w = shape
    return (n // 2, c, h, w, 2)


def _loaded(cubin, sidecar, device_index):
    key = (cubin, device_index)
    if key not in _LOADED:
        with open(sidecar) as f:
            kernels = json.load(f)["kernels"]
        with torch.cuda.device(device_index):
            torch.cuda.current_stream()  # makes torch's (primary) context current
            torch.empty(1, device="cuda")
            _LOADED[key] = _drv.LoadedModule(cubin, kernels)
    return _LOADED[key]


class SpconvConv2d(nn.Module):
    def __init__(self, name, kernel, cubin, sidecar, weight, bias, stride, padding, dilation,
                 groups, activation, input_shape, output_shape, original, dtype=torch.float32,
                 accumulate=None):
        super().__init__()
        self.name = name
        self.kernel = kernel  # the sidecar entry (docs/launch-abi.md); None: no kernel
        self.cubin, self.sidecar = cubin, sidecar
        self.register_buffer("weight", torch.as_tensor(weight))
        self.register_buffer("bias", torch.as_tensor(bias) if bias is not None else None)
        self.stride, self.padding, self.dilation = tuple(stride), tuple(padding), tuple(dilation)
        self.groups, self.activation = groups, activation
        self.input_shape, self.output_shape = tuple(input_shape), tuple(output_shape)
        self.original = original  # nn.Sequential(conv, [bn], [act]) as in the source model
        self.dtype, self.accumulate = dtype, accumulate
        want = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
        got = [p.get("dtype", "f32") for p in (kernel or {}).get("params", ())]
        if any(g != want for g in got):
            raise ValueError("%s: kernel %s has params of %s, not %s" % (
                name, kernel.get("entry"), got, want))
        # every param in one layout (docs/launch-abi.md, "layout"): NCHW or image pairs
        layouts = {p.get("layout", NCHW) for p in (kernel or {}).get("params", ())}
        if not layouts <= {NCHW, IMAGE_PAIRS} or len(layouts) > 1 or (
                IMAGE_PAIRS in layouts and (dtype == torch.float32 or input_shape[0] % 2)):
            raise ValueError("%s: kernel %s stores its tensors as %s; immconv.torch passes "
                             "NCHW tensors, or image pairs of a half type and an even batch"
                             % (name, kernel.get("entry"), sorted(layouts)))
        self.layout = layouts.pop() if layouts else NCHW
        # a kernel compiled with the residual (docs/launch-abi.md): add_relu runs it alone
        self.takes_residual = any(p.get("role") == "residual"
                                  for p in (kernel or {}).get("params", ()))
        self._warned_residual = False
        # the residual add's ReLU: whether one follows the add in the graph
        # (layout.fuse_residual_adds sets it), and whether the kernel's epilogue applies one
        self.residual_relu = True
        self.kernel_residual_relu = True
        self.io = NCHW  # what forward takes and gives; carry.py sets it
        self.mode = "auto"
        self.kept_layout = "nchw"
        self._folded = None     # (device, weight, bias) for run_channels_last
        self._fused_relu = None  # whether cudnn_convolution_relu ran here (None: not tried)
        self._fused_add = None   # the same for cudnn_convolution_add_relu
        self.kept_impl = "folded"  # run_channels_last: "folded" or "original"
        self._original_cl = None   # the original modules, channels-last ("original")

    def keep_in_torch(self, layout="nchw", impl=None):
        """Run the original modules (mode "torch") in `layout` ("nchw" or "channels_last");
        `impl` picks run_channels_last's way ("folded" or "original")."""
        if layout not in ("nchw", "channels_last"):
            raise ValueError("%s: kept layout %r is not 'nchw' or 'channels_last'"
                             % (self.name, layout))
        if impl is not None:
            if impl not in ("folded", "original"):
                raise ValueError("%s: kept implementation %r is not 'folded' or 'original'"
                                 % (self.name, impl))
            self.kept_impl = impl
        self.mode, self.kept_layout = "torch", layout

    def extra_repr(self):
        half = "" if self.dtype == torch.float32 else ", dtype=%s, accumulate=%s" % (
            str(self.dtype).replace("torch.", ""), self.accumulate)
        kept = ", kept_layout=channels_last (%s)" % self.kept_impl if (
            self.mode == "torch" and self.kept_layout == "channels_last") else ""
        pairs = ", layout=image_pairs (io %s)" % self.io if self.layout == IMAGE_PAIRS else ""
        return "%s, entry=%s, %s -> %s, act=%s, mode=%s%s%s%s" % (
            self.name, self.kernel["entry"] if self.kernel else None, list(self.input_shape),
            list(self.output_shape),
            self.activation, self.mode, kept, half, pairs)

    def check_shape(self, x):
        if tuple(x.shape) != self.input_shape:
            raise ShapeMismatch("%s was compiled for input %s, called with %s (shapes are static: "
                                "compile again for this shape)" % (
                                    self.name, list(self.input_shape), list(x.shape)))

    def reference(self, x):
        t, l, b, r = self.padding
        w, bias = self.weight, self.bias
        if self.dtype != torch.float32:
            # the values the kernel holds: rounded to its type (x too)
            x = x.to(self.dtype)
            w = w.to(self.dtype).float()
            bias = bias.to(self.dtype).float() if bias is not None else None
        x = x.float()
        if (t, l) == (b, r):
            y = F.conv2d(x, w, bias, self.stride, (t, l), self.dilation, self.groups)
        else:
            y = F.conv2d(F.pad(x, (l, r, t, b)), w, bias, self.stride, 0,
                         self.dilation, self.groups)
        if self.activation == "relu":
            y = F.relu(y)
        elif self.activation == "relu6":
            y = F.relu6(y)
        return y if self.dtype == torch.float32 else y.to(self.dtype)

    def run_kernel(self, x, residual=None):
        """Launch the compiled kernel on PyTorch's current stream; output allocated by torch.
        x (and the residual, for a kernel that takes one: the output's shape) is in the
        kernel's layout: NCHW, or a [N/2, C, H, W, 2] tensor of image pairs."""
        if self.kernel is None:
            raise RuntimeError("%s has no kernel (the half-precision default rule did not "
                               "compile it): it runs in mode 'torch'" % self.name)
        pairs = self.layout == IMAGE_PAIRS
        if pairs and tuple(x.shape) != pairs_shape(self.input_shape):
            raise ShapeMismatch("%s was compiled for image pairs %s, called with %s" % (
                self.name, list(pairs_shape(self.input_shape)), list(x.shape)))
        if not pairs:
            self.check_shape(x)
        out_shape = pairs_shape(self.output_shape) if pairs else self.output_shape
        if (residual is None) == self.takes_residual:
            raise ValueError("%s: kernel %s %s a residual" % (
                self.name, self.kernel["entry"],
                "takes" if self.takes_residual else "takes no"))
        if residual is not None and tuple(residual.shape) != tuple(out_shape):
            raise ShapeMismatch("%s: residual %s, the output is %s" % (
                self.name, list(residual.shape), list(out_shape)))

        def operand(t):
            # contiguous, of the kernel's dtype; a kernel of whole words (adjacent pairs,
            # image pairs) copies a view at an odd element offset rather than refuse it
            t = t.to(self.dtype).contiguous()
            return t.clone() if t.data_ptr() % _drv.pointer_alignment(self.kernel) else t
        x = operand(x)
        operands = [x] if residual is None else [x, operand(residual)]
        dev = x.device.index if x.device.index is not None else torch.cuda.current_device()
        mod = _loaded(self.cubin, self.sidecar, dev)
        y = torch.empty(out_shape, dtype=self.dtype, device=x.device)
        stream = torch.cuda.current_stream(x.device).cuda_stream
        _drv.launch(mod.functions[self.kernel["entry"]], self.kernel, stream,
                    [t.data_ptr() for t in operands] + [y.data_ptr()])
        return y

    def folded(self, device):
        """The folded weight (channels-last) and bias in the layer's dtype on `device`: made
        at the first call per device, which is eager (a CUDA graph captures later calls)."""
        if self._folded is None or self._folded[0] != device:
            w = self.weight.to(device=device, dtype=self.dtype).contiguous(
                memory_format=torch.channels_last)
            b = self.bias if self.bias is not None else torch.zeros(w.shape[0])
            self._folded = (device, w, b.to(device=device, dtype=self.dtype))
        return self._folded[1:]

    def run_channels_last(self, x):
        """The layer kept channels-last (kept_layout "channels_last"), `kept_impl`'s way:
        "folded", cuDNN with the folded weights, the ReLU fused where cuDNN can; or
        "original", the original modules (conv, BN, activation) converted to channels-last,
        which benchmark_layers picks where they measure faster (a bias without ReLU is a
        broadcast add after the folded conv, slower than BN on large tensors)."""
        x = x.to(self.dtype).contiguous(memory_format=torch.channels_last)
        if self.kept_impl == "original":
            if self._original_cl is None:  # made at the first call, which is eager; in a
                # tuple, so that it is no submodule (not in state_dict nor named_modules)
                self._original_cl = (copy.deepcopy(self.original).to(
                    memory_format=torch.channels_last),)
            return self._original_cl[0](x)
        w, b = self.folded(x.device)
        t, l, bo, r = self.padding
        pad = (t, l)
        if (t, l) != (bo, r):
            x, pad = F.pad(x, (l, r, t, bo)), (0, 0)
        args = (self.stride, pad, self.dilation, self.groups)
        if self.activation == "relu" and x.is_cuda and self._fused_relu is not False and \
                hasattr(torch, "cudnn_convolution_relu"):
            if self._fused_relu:
                return torch.cudnn_convolution_relu(x, w, b, *args)
            try:  # the first call is eager: a conv cuDNN cannot fuse runs unfused from then on
                y = torch.cudnn_convolution_relu(x, w, b, *args)
                self._fused_relu = True
                return y
            except RuntimeError:
                self._fused_relu = False
        y = F.conv2d(x, w, None, *args).add_(b.view(1, -1, 1, 1))
        if self.activation == "relu":
            y = F.relu_(y)
        elif self.activation == "relu6":
            y = F.hardtanh_(y, 0.0, 6.0)
        return y

    def add_residual(self, x, residual):
        """relu(self(x) + residual), or self(x) + residual where `residual_relu` is False:
        what a graph fused by layout.fuse_residual_adds calls (ResNet's conv3, + identity,
        ReLU; MobileNetV2's projection + the block's input). A layer kept channels-last
        without an activation runs the first as one cuDNN call
        (torch.cudnn_convolution_add_relu) where cuDNN has that; a kernel compiled with the
        residual runs either in its epilogue."""
        if self.mode == "torch" and self.kept_layout == "channels_last" and x.is_cuda and \
                self.residual_relu and \
                self.activation == "none" and self._fused_add is not False and \
                hasattr(torch, "cudnn_convolution_add_relu") and \
                self.padding[:2] == self.padding[2:]:
            x, z = (from_image_pairs(t, "channels_last") if t.dim() == 5 else t
                    for t in (x, residual))
            x = x.to(self.dtype).contiguous(memory_format=torch.channels_last)
            z = z.to(self.dtype).contiguous(memory_format=torch.channels_last)
            w, b = self.folded(x.device)
            args = (b, self.stride, self.padding[:2], self.dilation, self.groups)
            if self._fused_add:
                return self._give(torch.cudnn_convolution_add_relu(x, w, z, 1.0, *args))
            try:  # eager first call, as in run_channels_last
                y = torch.cudnn_convolution_add_relu(x, w, z, 1.0, *args)
                self._fused_add = True
                return self._give(y)
            except RuntimeError:
                self._fused_add = False
        if self.takes_residual and self.mode == "auto" and x.is_cuda and \
                self.kernel_residual_relu == self.residual_relu:
            # one kernel: the conv, the residual added in its epilogue, the ReLU if any
            pairs = self.layout == IMAGE_PAIRS
            x, r = ((t if t.dim() == 5 else to_image_pairs(t)) if pairs else
                    (from_image_pairs(t) if t.dim() == 5 else t) for t in (x, residual))
            y = self.run_kernel(x, r)
            return from_image_pairs(y) if pairs and self.io != IMAGE_PAIRS else y
        if residual.dim() == 5 and self.io != IMAGE_PAIRS:
            residual = from_image_pairs(residual)
        elif residual.dim() == 4 and self.io == IMAGE_PAIRS:
            residual = to_image_pairs(residual)
        y = self.forward(x) + residual
        return F.relu(y) if self.residual_relu else y

    def _give(self, y):
        """A kept layer's 4-D output as its graph expects it: image pairs where carry.py last
        placed a pair kernel here (`io`), as when a mode is changed without carrying again."""
        return to_image_pairs(y) if self.io == IMAGE_PAIRS and y.dim() == 4 else y

    def forward(self, x, residual=None):
        if residual is not None:
            return self.add_residual(x, residual)
        if self.mode == "torch":
            if x.dim() == 5:  # image pairs handed to a layer kept in torch
                x = from_image_pairs(x, self.kept_layout)
            if self.kept_layout == "channels_last":
                return self._give(self.run_channels_last(x))
            return self._give(self.original(x.contiguous()))
        kernel = self.mode != "reference" and x.is_cuda
        if kernel and self.takes_residual:
            # called without its residual (outside the graph build rewrote): the kernel adds
            # one (and ReLUs, if compiled so), so the layer's own conv (+BN) runs as the
            # reference instead
            if not self._warned_residual:
                warnings.warn("immconv: %s was compiled with its residual add; "
                              "called without a residual it runs the reference conv" %
                              self.name)
                self._warned_residual = True
            kernel = False
        if self.layout == IMAGE_PAIRS and kernel:
            y = self.run_kernel(x if x.dim() == 5 else to_image_pairs(x))
            return y if self.io == IMAGE_PAIRS else from_image_pairs(y)
        if x.dim() == 5:
            x = from_image_pairs(x)
        if kernel:
            y = self.run_kernel(x)
        else:
            self.check_shape(x)
            y = self.reference(x)
        return to_image_pairs(y) if self.io == IMAGE_PAIRS else y
