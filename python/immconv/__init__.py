"""immconv: the Python front end of the spconv compiler.

The package drives the C++ compiler (`spconv-translate`) and runs what it produces; it has no
compiled extension of its own, so it works wherever the tools and the artifacts are.

- `compile_onnx(path, prefix)`: ONNX model -> .mlir, listing, .cubin and sidecar (a `Bundle`).
- `immconv.torch.compile(model, example)`: a PyTorch model whose pruned convs run as spconv
  kernels (imports torch only when used).
- `immconv.launch`: the launch sidecar reader (standard library only).
- `immconv.plots`: per-layer speedup and time plots of benchmark results.
"""
from .tools import ToolNotFound, find_tool
from .compiler import Bundle, CompileError, compile_mlir, compile_onnx

__all__ = ["Bundle", "CompileError", "ToolNotFound", "compile_mlir", "compile_onnx", "find_tool"]
