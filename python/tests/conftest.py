"""Shared helpers: the package from this source tree, tools and a fake compiler."""
import json
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/ (works without the editable install)
REPO = os.path.dirname(os.path.dirname(HERE))
TRANSLATE = os.path.join(os.environ.get("SPCONV_BIN", os.path.join(REPO, "build", "bin")),
                         "spconv-translate")


def have_ptxas():
    cands = [os.environ.get("SPCONV_PTXAS"), os.path.join(os.environ.get("CUDA_PATH",
             "/usr/local/cuda"), "bin", "ptxas"), shutil.which("ptxas")]
    return any(c and os.access(c, os.X_OK) for c in cands)


needs_translate = pytest.mark.skipif(not os.access(TRANSLATE, os.X_OK),
                                     reason="build/bin/spconv-translate not built")
needs_ptxas = pytest.mark.skipif(not have_ptxas(), reason="CUDA ptxas not found")


def fake_kernel(i, spec):
    """A launch-ABI-valid sidecar entry for spec (what spconv-translate would describe)."""
    n, c, h, w = spec.input_shape
    _, k, p, q = spec.output_shape
    dt = getattr(spec, "dtype", "f32")
    out = {"entry": "spconv_conv2d_%d" % i, "grid": [1, 1, n], "block": [32, 1, 1],
           "dynamic_shared_bytes": 0,
           "params": [{"name": "input", "role": "input", "dtype": dt, "shape": [n, c, h, w]},
                      {"name": "output", "role": "output", "dtype": dt,
                       "shape": [n, k, p, q]}],
           "conv": {"N": n, "C": c, "H": h, "W": w, "K": k, "P": p, "Q": q,
                    "R": spec.weights.shape[2], "S": spec.weights.shape[3]},
           "weights_nnz": int((spec.weights != 0).sum()), "weights_total": spec.weights.size}
    if getattr(spec, "residual", False):  # between input and output, the output's shape
        out["params"].insert(1, dict(out["params"][1], name="residual", role="residual"))
        out["conv"]["has_residual"] = True
    if getattr(spec, "layout", "nchw") != "nchw":
        for p in out["params"]:
            p["layout"] = spec.layout
    if dt != "f32":
        # as the compiler states it (docs/launch-abi.md): paired images run over ceil(N / 2)
        pairing = "images" if n >= 2 else "columns"
        out["grid"][2] = -(-n // 2) if pairing == "images" else n
        out["numerics"] = {"dtype": dt, "accumulate": spec.accumulate or "f32",
                           "pairing": pairing, "unit_roundoff": 2.0 ** (-11 if dt == "f16"
                                                                        else -8),
                           "tiny": 2.0 ** (-24 if dt == "f16" else -133),
                           "longest_half_run": 1, "error_terms": 3}
    return out


@pytest.fixture(autouse=True)
def kernel_cache_dir(monkeypatch, tmp_path):
    """Every test gets an empty immconv kernel cache of its own."""
    d = tmp_path / "immconv-cache"
    monkeypatch.setenv("IMMCONV_CACHE_DIR", str(d))
    return d


@pytest.fixture
def fake_compiler(monkeypatch):
    """Replaces the spconv-translate compile in immconv.torch.compile by one that writes a
    sidecar (and an empty cubin) from the module's specs: exercises everything but ptxas."""
    from immconv import compiler, mlir
    import immconv.torch.pipeline as tc

    calls = []

    def fake(mlir_path, prefix, **kw):
        with open(mlir_path) as f:
            text = f.read()
        specs = tc._last_specs
        calls.append(mlir_path)
        doc = {"format": "spconv-launch", "version": 1,
               "kernels": [fake_kernel(i, s) for i, s in enumerate(specs)]}
        with open(prefix + ".json", "w") as f:
            json.dump(doc, f)
        open(prefix + ".cubin", "wb").close()
        assert mlir.read_resources(text)
        return compiler.Bundle.from_prefix(prefix, mlir=mlir_path)

    orig_write = mlir.write_module

    def write(path, specs, header=""):
        tc._last_specs = list(specs)
        orig_write(path, specs, header)

    monkeypatch.setattr(tc, "compile_mlir", fake)
    monkeypatch.setattr(tc.mlir, "write_module", write)
    return calls
