"""The residual epilogue through immconv.torch (docs/design.md "Residual epilogue"), on CPU: a
conv whose folded output is added to a residual and ReLU'd is compiled with the
residual (spconv.conv2d ... residual(%r), activation relu, its own cache key), the graph
calls it with (x, residual), the manifest says so, and the reference computes the same; a
BN that cannot fold, or another reader of the conv's output, keeps the add outside; an FP32
conv takes its residual the same way; the sidecar check and the module refuse a kernel called
without its residual; with spconv-translate, a real compile's sidecar."""
import json
import os
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402

import immconv.torch as st  # noqa: E402
from immconv import launch, mlir  # noqa: E402
from immconv.torch import kcache  # noqa: E402
from conftest import fake_kernel, needs_translate  # noqa: E402
from test_carry import compiled, net, real_compile  # noqa: E402
from test_torch import close, prune_  # noqa: E402


def module_text(path):
    (mlir_path,) = [os.path.join(r, f) for r, _, fs in os.walk(path) for f in fs
                    if f == "model.mlir"]
    with open(mlir_path) as f:
        return f.read()


def test_the_block_output_conv_takes_its_residual(fake_compiler, tmp_path):
    m, x, cm = compiled(tmp_path, "nchw")
    manifest = json.load(open(tmp_path / "nchw" / "manifest.json"))
    residual = {l["module"] for l in manifest["layers"] if l["residual"]}
    assert residual == {"block.c3"}
    text = module_text(tmp_path / "nchw")
    (c3,) = re.findall(r"func\.func @block_c3\((.*?)\n}", text, re.S)
    assert "%r: tensor<4x16x4x4xbf16>" in c3 and "residual(%r : tensor<4x16x4x4xbf16>)" in c3
    assert "activation = #spconv.activation<relu>" in c3
    assert "residual" not in "".join(re.findall(r"func\.func @block_c2\((.*?)\n}", text, re.S))
    assert cm.block.c3.takes_residual and not cm.block.c2.takes_residual
    assert cm.block.c3.activation == "none"  # the layer is conv + BN; the add-ReLU is fused
    calls = [n for n in cm.graph.nodes if n.op == "call_module" and n.target == "block.c3"]
    assert len(calls) == 1 and len(calls[0].args) == 2
    with torch.no_grad():
        assert close(cm(x).float(), m.float()(x.float()), 0.05)


def test_pairs_and_residual_together(fake_compiler, tmp_path):
    _, x, ip = compiled(tmp_path, "image_pairs")
    _, _, nchw = compiled(tmp_path, "nchw")
    assert ip.block.c3.takes_residual and ip.block.c3.layout == "image_pairs"
    with torch.no_grad():
        assert torch.equal(ip(x), nchw(x))


class Shared(nn.Module):
    """conv -> BN whose output is added to x and ReLU'd, and also returned: not fusable."""

    def __init__(self):
        super().__init__()
        self.c, self.b = nn.Conv2d(8, 8, 1, bias=False), nn.BatchNorm2d(8)

    def forward(self, x):
        y = self.b(self.c(x))
        return torch.relu(y + x), y


def test_residual_only_where_the_output_has_no_other_reader(fake_compiler, tmp_path):
    torch.manual_seed(0)
    m = Shared().eval().to(torch.bfloat16)
    x = torch.randn(2, 8, 4, 4).to(torch.bfloat16)
    st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False,
               kernel_cache=False)
    (layer,) = json.load(open(tmp_path / "manifest.json"))["layers"]
    assert not layer["residual"]


def test_fp32_block_output_conv_takes_its_residual(fake_compiler, tmp_path):
    m = net().float()
    x = torch.randn(4, 3, 16, 16)
    cm = st.compile(m, x, out_dir=str(tmp_path / "nchw"), sparsity_threshold=0.0,
                    progress=False, kernel_cache=False)
    assert [n for n, mm in cm.named_modules() if getattr(mm, "takes_residual", False)] == \
        ["block.c3"]
    text = module_text(tmp_path / "nchw")
    (c3,) = re.findall(r"func\.func @block_c3\((.*?)\n}", text, re.S)
    assert "residual(%r : tensor<4x16x4x4xf32>)" in c3
    with torch.no_grad():
        assert close(cm(x), m(x), 1e-4)


class Inverted(nn.Module):
    """MobileNetV2's inverted residual: expand (ReLU6), project (BN, no activation), then
    `x + out` with no ReLU; `inplace_into_x` adds in place into x instead (x.add_(out): fx
    traces `x += out` as a new tensor, x.add_ as the in-place call it is)."""

    def __init__(self, inplace_into_x=False):
        super().__init__()
        self.inplace_into_x = inplace_into_x
        self.e, self.be = nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm2d(16)
        self.act = nn.ReLU6(inplace=True)
        self.p, self.bp = nn.Conv2d(16, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)

    def forward(self, x):
        out = self.bp(self.p(self.act(self.be(self.e(x)))))
        if self.inplace_into_x:
            return x.add_(out) * 2 + x  # 3 (x + out): the second x reads the sum
        return x + out


def test_an_add_without_relu_is_the_kernels_residual(fake_compiler, tmp_path):
    # MobileNetV2's x + project(h): the kernel takes the residual, with no activation
    torch.manual_seed(0)
    m = prune_(Inverted(), 0.6).eval().to(torch.bfloat16)
    x = torch.randn(2, 8, 6, 6).to(torch.bfloat16)
    cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False,
                    kernel_cache=False)
    layers = {l["module"]: l for l in json.load(open(tmp_path / "manifest.json"))["layers"]}
    assert layers["p"]["residual"] and not layers["p"]["residual_relu"]
    assert not layers["e"]["residual"]
    (p,) = re.findall(r"func\.func @p\((.*?)\n}", module_text(tmp_path), re.S)
    assert "residual(%r : tensor<2x8x6x6xbf16>)" in p and "activation" not in p
    assert cm.p.takes_residual and not cm.p.residual_relu and not cm.p.kernel_residual_relu
    calls = [n for n in cm.graph.nodes if n.op == "call_module" and n.target == "p"]
    assert len(calls) == 1 and len(calls[0].args) == 2
    assert not [n for n in cm.graph.nodes if n.op == "call_function" and "add" in str(n.target)]
    with torch.no_grad():
        assert close(cm(x).float(), m.float()(x.float()), 0.05)
    # in place into x (x.add_(out)): x's tensor is changed, so the add stays
    torch.manual_seed(0)
    m2 = prune_(Inverted(inplace_into_x=True), 0.6).eval().to(torch.bfloat16)
    cm2 = st.compile(m2, x, out_dir=str(tmp_path / "inplace"), sparsity_threshold=0.0,
                     progress=False, kernel_cache=False)
    assert not cm2.p.takes_residual
    with torch.no_grad():
        assert close(cm2(x.clone()).float(), m2.float()(x.float().clone()), 0.05)


def test_bn_that_cannot_fold_keeps_the_add_outside(fake_compiler, tmp_path):
    model = net()
    with torch.no_grad():  # a BN scale that rounds c3's folded weights to zero in bf16
        model.block.b3.weight[0] = 1e-42
    with pytest.warns(UserWarning, match="not folded"):
        _, _, cm = compiled(tmp_path, "nchw", model=model)
    assert not cm.block.c3.takes_residual


def test_cache_key_and_sidecar_checks():
    w = np.ones((4, 2, 1, 1), np.float32)
    plain = mlir.ConvSpec(name="c", weights=w, input_shape=(2, 2, 4, 4), dtype="f16",
                          activation="relu")
    res = mlir.ConvSpec(name="c", weights=w, input_shape=(2, 2, 4, 4), dtype="f16",
                        activation="relu", residual=True)
    assert kcache.layer_key(plain) != kcache.layer_key(res)
    k = fake_kernel(0, res)
    assert [p["role"] for p in k["params"]] == ["input", "residual", "output"]
    launch.check_kernel(k)
    bad = json.loads(json.dumps(k))
    bad["conv"]["has_residual"] = False
    with pytest.raises(launch.SidecarError, match="input, residual"):
        launch.check_kernel(bad)
    bad = json.loads(json.dumps(k))
    bad["params"][1]["shape"] = [2, 2, 4, 4]
    with pytest.raises(launch.SidecarError, match="residual\\) shape"):
        launch.check_kernel(bad)
    layer = st.SpconvConv2d("c", k, "x.cubin", "x.json", w, None, (1, 1), (0,) * 4, (1, 1), 1,
                            "none", res.input_shape, res.output_shape, nn.Identity(),
                            dtype=torch.float16)
    assert layer.takes_residual
    x = torch.zeros(res.input_shape, dtype=torch.float16)
    with pytest.raises(ValueError, match="takes a residual"):
        layer.run_kernel(x)
    with pytest.raises(st.ShapeMismatch, match="residual"):
        layer.run_kernel(x, torch.zeros(2, 4, 2, 2, dtype=torch.float16))


@needs_translate
def test_a_real_compile_passes_the_residual(tmp_path):
    _, _, _, manifest, kernels = real_compile(tmp_path)
    (c3,) = [l for l in manifest["layers"] if l["module"] == "block.c3"]
    k = kernels[c3["kernel"]]
    assert [p["role"] for p in k["params"]] == ["input", "residual", "output"]
    assert k["conv"]["has_residual"] and k["conv"]["activation"] == "relu"
    assert all(not kk["conv"]["has_residual"] for i, kk in enumerate(kernels)
               if i != c3["kernel"])
    launch.check_kernel(k)
