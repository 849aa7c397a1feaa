"""bench/e2e_torch.py: deterministic weights, pruning, and its compile phase + load (CPU)."""
import json
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from conftest import REPO, needs_ptxas, needs_translate  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "bench"))
import e2e_torch as e2e  # noqa: E402


def test_prune_and_deterministic_weights():
    w = np.array([3.0, -1.0, 0.5, -2.0, 0.25], np.float32)
    assert list(e2e.prune(w.copy(), 0.4)) == [3.0, -1.0, 0.0, -2.0, 0.0]
    cfg = {"net": "tiny", "batch": 1, "sparsity": 0.75, "seed": 3, "image_size": 16}
    (m1, x1), (m2, x2) = e2e.make(cfg), e2e.make(cfg)
    assert torch.equal(x1, x2)
    for (k, a), b in zip(m1.state_dict().items(), m2.state_dict().values()):
        assert torch.equal(a, b), k
    c = m1.features[0].weight
    assert int((c == 0).sum()) == int(0.75 * c.numel())
    assert not torch.equal(m1.features[1].running_var, torch.ones(16))


@needs_translate
@needs_ptxas
def test_compile_phase_then_load(tmp_path):
    out = str(tmp_path / "e2e")
    assert e2e.main(["--phase", "compile", "--net", "tiny", "--batch", "2", "--image-size", "16",
                     "--sparsity", "0.8", "--out", out, "--cache-dir",
                     str(tmp_path / "cache"), "--gzip"]) == 0
    for f in ("model.cubin.gz", "model.json", "manifest.json", "e2e-config.json"):
        assert os.path.getsize(os.path.join(out, f)) > 0
    assert sorted(os.listdir(out)) == ["e2e-config.json", "manifest.json", "model.cubin.gz",
                                       "model.json"]
    cfg = json.load(open(os.path.join(out, "e2e-config.json")))
    model, x = e2e.make(cfg)
    import immconv.torch as st
    cm = st.load(model, out)
    assert sum(isinstance(m, st.SpconvConv2d) for m in cm.modules()) == 4
    ref = model(x)
    assert float((cm(x) - ref).abs().max() / ref.abs().max()) <= 1e-5
