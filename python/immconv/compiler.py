"""Runs spconv-translate: ONNX import and whole-module compiles.

One compile per module (`--spconv-compile`): spconv-translate runs ptxas in parallel
(`--jobs`), caches templates and ptxas objects (`--cache-dir`), and links every conv into one
cubin with one sidecar (kernel i = func i), so a network is one process, not one per conv.
"""
import os
import subprocess
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import List, Optional

from . import launch
from .progress import ProgressBar
from .tools import find_tool


class CompileError(RuntimeError):
    pass


@dataclass
class Bundle:
    """What a compile left on disk. `kernels` are the sidecar's entries in order (launch.load:
    validated against docs/launch-abi.md); kernel i is the module's func i."""
    mlir: str
    cubin: str
    sidecar: str
    listing: Optional[str] = None
    kernels: List[dict] = field(default_factory=list)

    @classmethod
    def from_prefix(cls, prefix, mlir=None, listing=None):
        sidecar = prefix + ".json"
        return cls(mlir=mlir or prefix + ".mlir", cubin=prefix + ".cubin", sidecar=sidecar,
                   listing=listing, kernels=launch.load(sidecar))


def run_tool(args, progress=True, stream=None):
    """Runs a spconv tool; progress lines become a bar, other stderr lines pass through.
    Raises CompileError with the last stderr lines when it fails."""
    stream = stream or sys.stderr
    bar = ProgressBar(stream) if progress else None
    tail = deque(maxlen=40)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if bar is not None and bar.update(line):
            continue
        tail.append(line)
        if progress:
            if bar is not None and bar.drawn:
                stream.write("\n")  # keep the message off the bar's line
                bar.drawn = False
            stream.write(line)
    out = proc.stdout.read()
    rc = proc.wait()
    if bar is not None:
        bar.close()
    if rc != 0:
        raise CompileError("%s failed (exit %d):\n%s" % (" ".join(args[:2]), rc, "".join(tail)))
    return out


def compile_mlir(mlir, out_prefix, cache_dir=None, jobs=None, progress=True, extra_args=()):
    """`spconv-translate --spconv-compile` of a whole module into out_prefix.{ptx,cubin,json}."""
    d = os.path.dirname(os.path.abspath(out_prefix))
    os.makedirs(d, exist_ok=True)
    args = [find_tool(), "--spconv-compile", mlir, "--artifact-prefix=" + out_prefix,
            "-o", out_prefix + ".json"]
    if cache_dir is not None:
        args.append("--cache-dir=" + str(cache_dir))
    if jobs is not None:
        args.append("--jobs=%d" % jobs)
    if progress:
        args.append("--progress")
    args.extend(extra_args)
    run_tool(args, progress=progress)
    return Bundle.from_prefix(out_prefix, mlir=mlir)


def import_onnx(path, mlir, listing, batch=None, input_shapes=None, progress=True):
    """`spconv-translate --import-onnx` (docs/onnx-import.md): one func per Conv, BN folded,
    Relu/Clip fused, and the graph listing for the host."""
    args = [find_tool(), "--import-onnx", path, "--onnx-listing=" + listing, "-o", mlir]
    if batch is not None:
        args.append("--onnx-batch=%d" % batch)
    for name, shape in (input_shapes or {}).items():
        args.append("--onnx-input-shape=%s:%s" % (name, "x".join(str(int(d)) for d in shape)))
    run_tool(args, progress=progress)


def compile_onnx(path, out_prefix, batch=None, input_shapes=None, cache_dir=None, jobs=None,
                 progress=True):
    """ONNX model -> out_prefix.mlir, out_prefix.listing.json, out_prefix.{ptx,cubin,json}.

    input_shapes: {graph input name: (N, C, H, W)}, applied after `batch`. Returns a Bundle
    whose `listing` says which graph nodes the kernels replace."""
    d = os.path.dirname(os.path.abspath(out_prefix))
    os.makedirs(d, exist_ok=True)
    mlir, listing = out_prefix + ".mlir", out_prefix + ".listing.json"
    import_onnx(path, mlir, listing, batch=batch, input_shapes=input_shapes, progress=progress)
    b = compile_mlir(mlir, out_prefix, cache_dir=cache_dir, jobs=jobs, progress=progress)
    b.listing = listing
    return b
