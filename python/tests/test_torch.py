"""immconv.torch on CPU: fusion detection, folding in the graph, the rewrite, reference mode,
policies, static shapes, load checks; a real compile when spconv-translate and ptxas exist."""
import json
import os

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import immconv.torch as st  # noqa: E402
from conftest import needs_ptxas, needs_translate  # noqa: E402


def prune_(model, p, seed=0):
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            w = m.weight.data
            w.copy_(torch.randn(w.shape, generator=g))
            k = int(p * w.numel())
            if k:
                thr = w.abs().flatten().kthvalue(k).values
                w[w.abs() <= thr] = 0
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.1)
    return model.eval()


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, padding="valid", groups=4)
        self.c3 = nn.Conv2d(8, 16, 3, padding="same", dilation=2, bias=False)
        self.b3 = nn.BatchNorm2d(16)
        self.c4 = nn.Conv2d(16, 16, 1)
        self.b4 = nn.BatchNorm2d(16)
        self.act6 = nn.ReLU6()

    def forward(self, x):
        x = F.relu(self.b1(self.c1(x)))          # conv -> bn -> relu (functional)
        y = self.c2(x)
        x = torch.relu(y) + y                    # conv output has two users: nothing fused
        x = self.act6(self.b3(self.c3(x)))       # conv -> bn -> relu6
        z = self.b4(self.c4(x))
        return torch.relu(z) + z                 # bn output has two users: bn only


def close(out, ref, rel=1e-5):
    """max |out - ref| within rel of max |ref| (the e2e metric)."""
    return float((out - ref).abs().max()) <= rel * float(ref.abs().max())


def small():
    torch.manual_seed(0)
    return prune_(Small(), 0.6)


def test_fusion_on_a_small_model():
    gm = torch.fx.symbolic_trace(small())
    got = {c.conv: (c.bn, c.act) for c in st.find_chains(gm).values()}
    assert got == {"c1": ("b1", "relu"), "c2": (None, "none"), "c3": ("b3", "relu6"),
                   "c4": ("b4", "none")}


def test_fusion_on_torchvision_structures():
    tv = pytest.importorskip("torchvision")
    r18 = tv.models.resnet18(weights=None).eval()
    ch = {c.conv: (c.bn, c.act) for c in st.find_chains(torch.fx.symbolic_trace(r18)).values()}
    assert len(ch) == 20
    assert ch["conv1"] == ("bn1", "relu")
    assert ch["layer1.0.conv1"] == ("layer1.0.bn1", "relu")
    assert ch["layer1.0.conv2"] == ("layer1.0.bn2", "none")  # relu comes after the add
    assert ch["layer2.0.downsample.0"] == ("layer2.0.downsample.1", "none")
    mb = tv.models.mobilenet_v2(weights=None).eval()
    ch = {c.conv: (c.bn, c.act) for c in st.find_chains(torch.fx.symbolic_trace(mb)).values()}
    assert len(ch) == 52
    assert ch["features.0.0"] == ("features.0.1", "relu6")
    assert ch["features.2.conv.1.0"] == ("features.2.conv.1.1", "relu6")  # depthwise
    assert ch["features.2.conv.2"] == ("features.2.conv.3", "none")       # linear bottleneck


def test_compile_rewrites_graph_and_reference_matches(fake_compiler, tmp_path):
    m = small()
    x = torch.randn(2, 3, 12, 12)
    ref = m(x)
    cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False)
    assert len(fake_compiler) == 1
    mods = {n: mm for n, mm in cm.named_modules() if isinstance(mm, st.SpconvConv2d)}
    assert sorted(mods) == ["c1", "c2", "c3", "c4"]
    assert mods["c3"].activation == "relu6" and mods["c3"].padding == (2, 2, 2, 2)
    assert mods["c2"].groups == 4 and mods["c2"].padding == (0, 0, 0, 0)
    # the fused BN / activation nodes are gone from the graph, the unfused ones remain
    targets = [n.target for n in cm.graph.nodes if n.op == "call_module"]
    assert "b1" not in targets and "b3" not in targets and "act6" not in targets
    assert "b4" not in targets
    # folding kept every zero weight zero
    assert torch.equal(mods["c1"].weight == 0, m.c1.weight == 0)
    out = cm(x)
    assert (out - ref).abs().max() <= 1e-5 * ref.abs().max()
    man = json.load(open(tmp_path / "manifest.json"))
    assert [l["entry"] for l in man["layers"]] == ["spconv_conv2d_%d" % i for i in range(4)]
    assert man["layers"][0]["bn"] == "b1" and man["layers"][0]["act"] == "relu"
    # the original model is untouched
    assert isinstance(m.c1, nn.Conv2d) and torch.equal(m(x), ref)
    # load() rebuilds the same model from the directory, without the compiler
    lm = st.load(m, str(tmp_path))
    assert torch.allclose(lm(x), out, rtol=0, atol=0)


def test_static_shapes_and_torch_mode(fake_compiler, tmp_path):
    m = small()
    x = torch.randn(1, 3, 12, 12)
    cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False)
    with pytest.raises(st.ShapeMismatch, match=r"compiled for input \[1, 3, 12, 12\]"):
        cm(torch.randn(2, 3, 12, 12))
    for mm in cm.modules():
        if isinstance(mm, st.SpconvConv2d):
            mm.mode = "torch"
    assert close(cm(x), m(x))


def test_keep_policies(fake_compiler, tmp_path):
    m = small()
    m.c4.weight.data.fill_(1.0)   # dense: below a threshold of 0.5
    x = torch.randn(1, 3, 12, 12)
    cm = st.compile(m, x, out_dir=str(tmp_path / "a"), progress=False, sparsity_threshold=0.5)
    names = {n for n, mm in cm.named_modules() if isinstance(mm, st.SpconvConv2d)}
    assert names == {"c1", "c2", "c3"}
    man = json.load(open(tmp_path / "a" / "manifest.json"))
    assert "sparsity" in man["kept"]["c4"]
    cm = st.compile(m, x, out_dir=str(tmp_path / "b"), keep={"c1"}, sparsity_threshold=0.0,
                    progress=False)
    names = {n for n, mm in cm.named_modules() if isinstance(mm, st.SpconvConv2d)}
    assert names == {"c2", "c3", "c4"}
    cm = st.compile(m, x, out_dir=str(tmp_path / "c"), progress=False, sparsity_threshold=0.0,
                    keep=lambda name, conv: conv.groups > 1)
    names = {n for n, mm in cm.named_modules() if isinstance(mm, st.SpconvConv2d)}
    assert names == {"c1", "c3", "c4"}
    assert close(cm(x), m(x))


class Wide(nn.Module):
    """Two 3x3 convs over 64 channels: 576 weights per output channel."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(64, 16, 3, padding=1, bias=False)
        self.b = nn.Conv2d(16, 64, 1)
        self.c = nn.Conv2d(64, 16, 3, padding=1, bias=False)

    def forward(self, x):
        return self.c(self.b(self.a(x)))


def _prune_exact(conv, p):
    w = conv.weight.data
    flat = w.flatten()
    k = int(round(p * flat.numel()))
    idx = torch.randperm(flat.numel(), generator=torch.Generator().manual_seed(1))[:k]
    flat[idx] = 0
    conv.weight.data = flat.reshape(w.shape)


def test_default_rule_reads_fmas_per_output_and_sparsity(fake_compiler, tmp_path):
    from immconv.torch import policy
    m = Wide().eval()
    _prune_exact(m.a, 0.5)    # 288 nonzeros per output channel: stays in PyTorch
    _prune_exact(m.b, 0.0)    # dense 1x1, 16 per output: compiled
    _prune_exact(m.c, 0.6)    # 230 per output: compiled
    assert policy.default_keep(m.a) and not policy.default_keep(m.b)
    assert not policy.default_keep(m.c)
    x = torch.randn(1, 64, 6, 6)
    cm = st.compile(m, x, out_dir=str(tmp_path / "a"), progress=False)
    names = {n for n, mm in cm.named_modules() if isinstance(mm, st.SpconvConv2d)}
    assert names == {"b", "c"}
    man = json.load(open(tmp_path / "a" / "manifest.json"))
    assert man["sparsity_threshold"] == "auto" and "288 FMAs per output" in man["kept"]["a"]
    _prune_exact(m.a, 0.9)    # 58 per output, and at least 0.9 sparse: compiled
    assert policy.default_keep(m.a) is None
    # sparse enough alone: 0.9 of a wider conv still leaves more than 256 per output
    big = nn.Conv2d(512, 4, 3, bias=False)
    _prune_exact(big, 0.9)
    assert policy.fmas_per_output(big) > 256 and policy.default_keep(big) is None
    _prune_exact(big, 0.95)
    assert policy.default_keep(big) is None
    big2 = nn.Conv2d(512, 4, 3, bias=False)
    _prune_exact(big2, 0.85)
    assert "sparsity 0.850" in policy.default_keep(big2)
    # pruned "to 0.9" by flooring the count of zeros (bench/e2e_torch.py): 0.8999998 sparse
    big3 = nn.Conv2d(512, 512, 3, bias=False)
    n = big3.weight.numel()
    flat = big3.weight.data.flatten()
    flat[torch.randperm(n, generator=torch.Generator().manual_seed(2))[:int(0.9 * n)]] = 0
    big3.weight.data = flat.reshape(big3.weight.shape)
    assert policy.sparsity(big3) < 0.9 and policy.default_keep(big3) is None


def test_refused_bn_fold_warns_and_stays(fake_compiler, tmp_path):
    m = small()
    m.b1.weight.data[0] = 1e-30     # weight * factor underflows to zero
    m.b1.running_var.data[0] = 1e38   # factor 1e-49
    x = torch.randn(1, 3, 12, 12)
    with pytest.warns(UserWarning, match="BatchNorm b1 not folded"):
        cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False)
    targets = [n.target for n in cm.graph.nodes if n.op == "call_module"]
    assert "b1" in targets
    assert cm.c1.activation == "none" and torch.equal(cm.c1.weight, m.c1.weight)
    ref = m(x)
    assert (cm(x) - ref).abs().max() <= 1e-5 * ref.abs().max()


def test_load_refuses_other_weights(fake_compiler, tmp_path):
    m = small()
    x = torch.randn(1, 3, 12, 12)
    st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False)
    m.b3.running_var.data[0] += 1.0
    with pytest.raises(st.LoadError, match="c3: the model's .folded. weights differ"):
        st.load(m, str(tmp_path))


def test_untraceable_model_replaces_convs_without_fusion(fake_compiler, tmp_path):
    class Dyn(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 4, 3)
            self.bn = nn.BatchNorm2d(4)

        def forward(self, x):
            if x.sum() > 0:   # data-dependent control flow: fx cannot trace it
                return self.bn(self.c(x))
            return self.bn(self.c(-x))

    m = prune_(Dyn(), 0.5)
    x = torch.randn(1, 3, 8, 8).abs()
    with pytest.warns(UserWarning, match="cannot trace"):
        cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False)
    assert isinstance(cm.c, st.SpconvConv2d) and cm.c.activation == "none"
    assert close(cm(x), m(x))


@needs_translate
@needs_ptxas
def test_real_compile_of_a_tiny_model(tmp_path, capsys, kernel_cache_dir):
    m = small()
    x = torch.randn(1, 3, 12, 12)
    cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=True,
                    cache_dir=str(tmp_path / "cache"), jobs=2)
    assert "4/4 ptxas units" in capsys.readouterr().err   # the progress bar
    man = json.load(open(tmp_path / "manifest.json"))
    assert man["version"] == 2 and len({l["sidecar"] for l in man["layers"]}) == 1
    side = json.load(open(tmp_path / man["layers"][0]["sidecar"]))
    assert len(side["kernels"]) == 4 and os.path.getsize(tmp_path / man["layers"][0]["cubin"]) > 0
    acts = [k["conv"]["activation"] for k in side["kernels"]]
    assert acts == ["relu", "none", "relu6", "none"]
    assert [k["conv"]["groups"] for k in side["kernels"]] == [1, 4, 1, 1]
    assert side["kernels"][2]["conv"]["padding"] == [2, 2, 2, 2]
    ref = m(x)
    assert (cm(x) - ref).abs().max() <= 1e-5 * ref.abs().max()
    # the nnz the compiler folded equals the nonzeros of the weights we wrote
    for k, l in zip(side["kernels"], json.load(open(tmp_path / "manifest.json"))["layers"]):
        w = dict(cm.named_modules())[l["module"]].weight
        assert k["weights_nnz"] == int((w != 0).sum())
    # The same convs again: every kernel from the immconv kernel cache, no spconv-translate run
    # (and so no progress), the same cubin; load() of the new directory works on its own.
    cm2 = st.compile(m, x, out_dir=str(tmp_path / "again"), sparsity_threshold=0.0,
                     progress=True)
    assert "ptxas units" not in capsys.readouterr().err
    man2 = json.load(open(tmp_path / "again" / "manifest.json"))
    assert [l["key"] for l in man2["layers"]] == [l["key"] for l in man["layers"]]
    assert (tmp_path / "again" / man2["layers"][0]["cubin"]).read_bytes() == \
        (tmp_path / man["layers"][0]["cubin"]).read_bytes()
    assert (cm2(x) - ref).abs().max() <= 1e-5 * ref.abs().max()
    # One conv changed: only it is compiled (one new unit of one kernel).
    m.c4.weight.data[0, 0, 0, 0] += 1.0
    units_dir = kernel_cache_dir / "units"
    before = set(os.listdir(units_dir))
    st.compile(m, x, out_dir=str(tmp_path / "third"), sparsity_threshold=0.0, progress=False)
    new_units = set(os.listdir(units_dir)) - before
    assert len(new_units) == 1
    assert len(json.load(open(units_dir / new_units.pop() / "model.json"))["kernels"]) == 1
    man3 = json.load(open(tmp_path / "third" / "manifest.json"))
    units = {l["module"]: l["cubin"] for l in man3["layers"]}
    assert units["c1"] == units["c2"] == units["c3"] != units["c4"]
    assert json.load(open(tmp_path / "third" / man3["layers"][3]["sidecar"]))["kernels"][0][
        "entry"] == man3["layers"][3]["entry"]


def test_min_speedup_needs_cuda_and_measured_decisions_survive_load(fake_compiler, tmp_path):
    m = small()
    x = torch.randn(1, 3, 12, 12)
    with pytest.warns(UserWarning, match="min_speedup needs the model and input on CUDA"):
        st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, min_speedup=1.0,
                   progress=False)
    p = tmp_path / "manifest.json"
    man = json.loads(p.read_text())
    assert "torch_mode" not in man
    man["torch_mode"] = ["c3"]          # as a measured compile on a GPU would record it
    p.write_text(json.dumps(man))
    lm = st.load(m, str(tmp_path))
    assert lm.c3.mode == "torch" and lm.c1.mode == "auto"
    assert close(lm(x), m(x))


def test_unsupported_convs_are_listed_as_kept(fake_compiler, tmp_path):
    m = small()
    m.c2.padding_mode = "reflect"
    x = torch.randn(1, 3, 12, 12)
    cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False)
    assert isinstance(cm.c2, nn.Conv2d)
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert "zeros-padded" in man["kept"]["c2"]
    assert close(cm(x), m(x))
