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

Shapes are static: the kernel was compiled for one input shape, and a call with any other
shape raises ShapeMismatch (rather than silently falling back, which would hide that the
deployment is not running what was compiled).
"""
import copy
import json

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import driver as _drv

_LOADED = {}  # (cubin path, device index) -> driver.LoadedModule


class ShapeMismatch(RuntimeError):
    pass


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
        # run_kernel passes plain NCHW tensors (docs/launch-abi.md, "layout").
        layouts = [p.get("layout", "nchw") for p in (kernel or {}).get("params", ())]
        if any(lay != "nchw" for lay in layouts):
            raise ValueError("%s: kernel %s stores its tensors as %s; immconv.torch passes "
                             "NCHW tensors" % (name, kernel.get("entry"), layouts))
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
        return "%s, entry=%s, %s -> %s, act=%s, mode=%s%s%s" % (
            self.name, self.kernel["entry"] if self.kernel else None, list(self.input_shape),
            list(self.output_shape),
            self.activation, self.mode, kept, half)

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

    def run_kernel(self, x):
        """Launch the compiled kernel on PyTorch's current stream; output allocated by torch."""
        if self.kernel is None:
            raise RuntimeError("%s has no kernel (the half-precision default rule did not "
                               "compile it): it runs in mode 'torch'" % self.name)
        self.check_shape(x)
        # the kernel reads and writes plain NCHW tensors of its dtype
        x = x.to(self.dtype).contiguous()
        # A kernel of adjacent pairs moves whole words: a view at an odd element offset is
        # copied to a fresh (aligned) tensor rather than refused.
        if x.data_ptr() % _drv.pointer_alignment(self.kernel):
            x = x.clone()
        dev = x.device.index if x.device.index is not None else torch.cuda.current_device()
        mod = _loaded(self.cubin, self.sidecar, dev)
        y = torch.empty(self.output_shape, dtype=self.dtype, device=x.device)
        stream = torch.cuda.current_stream(x.device).cuda_stream
        _drv.launch(mod.functions[self.kernel["entry"]], self.kernel, stream,
                    [x.data_ptr(), y.data_ptr()])
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

    def add_relu(self, x, residual):
        """relu(self(x) + residual), what a graph fused by layout.fuse_add_relu calls (ResNet's
        conv3, + identity, ReLU): a layer kept channels-last without an activation runs it
        as one cuDNN call (torch.cudnn_convolution_add_relu) where cuDNN has that."""
        if self.mode == "torch" and self.kept_layout == "channels_last" and x.is_cuda and \
                self.activation == "none" and self._fused_add is not False and \
                hasattr(torch, "cudnn_convolution_add_relu") and \
                self.padding[:2] == self.padding[2:]:
            x = x.to(self.dtype).contiguous(memory_format=torch.channels_last)
            z = residual.to(self.dtype).contiguous(memory_format=torch.channels_last)
            w, b = self.folded(x.device)
            args = (b, self.stride, self.padding[:2], self.dilation, self.groups)
            if self._fused_add:
                return torch.cudnn_convolution_add_relu(x, w, z, 1.0, *args)
            try:  # eager first call, as in run_channels_last
                y = torch.cudnn_convolution_add_relu(x, w, z, 1.0, *args)
                self._fused_add = True
                return y
            except RuntimeError:
                self._fused_add = False
        return F.relu(self.forward(x) + residual)

    def forward(self, x, residual=None):
        if residual is not None:
            return self.add_relu(x, residual)
        if self.mode == "torch":
            if self.kept_layout == "channels_last":
                return self.run_channels_last(x)
            return self.original(x.contiguous())
        if self.mode == "reference" or not x.is_cuda:
            self.check_shape(x)
            return self.reference(x)
        return self.run_kernel(x)
