"""Tests for bench/networks.py (pytest; numpy; CPU only, a few seconds).

    python3 -m pytest -q bench/test_networks.py

spconv-opt checks run where build/bin/spconv-opt exists (else skipped); the torchvision
cross-check runs where torch and torchvision import (else skipped).
"""
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import networks  # noqa: E402

SCRIPT = os.path.join(HERE, "networks.py")
SPCONV_OPT = os.path.join(HERE, "..", "build", "bin", "spconv-opt")
NETS = ["resnet50", "vgg16", "mobilenetv2", "mobilenetv2_nodw"]


def by_name(net):
    return {l.name: l for l in networks.network(net)[0]}


def shape(l):
    return (l.c, l.h, l.w, l.k, l.r, l.s, l.sh, l.sw, l.pad, l.p, l.q)


def run(*args, **kw):
    return subprocess.run([sys.executable, SCRIPT] + [str(a) for a in args], check=True,
                          capture_output=True, text=True, **kw)


# ---------------------------------------------------------------------------- layer tables

def test_layer_counts():
    assert len(networks.network("resnet50")[0]) == 53
    assert len(networks.network("vgg16")[0]) == 13
    # Stem + 1 project (t = 1 block) + 16 x (expand + project) + last 1x1 = 35; the 17
    # depthwise convs (one per inverted-residual block) are listed as skipped.
    layers, skipped = networks.network("mobilenetv2_nodw")
    assert len(layers) == 35
    assert len(skipped) == 17
    assert all(s["groups"] == s["C"] == s["K"] and s["R"] == s["S"] == 3 for s in skipped)


def test_resnet50_shapes():
    L = by_name("resnet50")
    assert shape(L["conv1"]) == (3, 224, 224, 64, 7, 7, 2, 2, (3, 3, 3, 3), 112, 112)
    assert shape(L["layer1.0.conv1"]) == (64, 56, 56, 64, 1, 1, 1, 1, (0, 0, 0, 0), 56, 56)
    assert shape(L["layer1.0.downsample"]) == (64, 56, 56, 256, 1, 1, 1, 1, (0,) * 4, 56, 56)
    # v1.5: the stride sits on the 3x3.
    assert shape(L["layer2.0.conv1"]) == (256, 56, 56, 128, 1, 1, 1, 1, (0,) * 4, 56, 56)
    assert shape(L["layer2.0.conv2"]) == (128, 56, 56, 128, 3, 3, 2, 2, (1,) * 4, 28, 28)
    assert shape(L["layer3.0.downsample"]) == (512, 28, 28, 1024, 1, 1, 2, 2, (0,) * 4, 14, 14)
    assert shape(L["layer4.2.conv2"]) == (512, 7, 7, 512, 3, 3, 1, 1, (1,) * 4, 7, 7)
    assert shape(L["layer4.2.conv3"]) == (512, 7, 7, 2048, 1, 1, 1, 1, (0,) * 4, 7, 7)
    names = [l.name for l in networks.network("resnet50")[0]]
    assert names[:6] == ["conv1", "layer1.0.conv1", "layer1.0.conv2", "layer1.0.conv3",
                         "layer1.0.downsample", "layer1.1.conv1"]
    assert sum(n.endswith("downsample") for n in names) == 4


def test_vgg16_shapes():
    layers = networks.network("vgg16")[0]
    assert [l.name for l in layers] == ["features.%d" % i for i in
                                        (0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28)]
    assert [l.k for l in layers] == [64, 64, 128, 128, 256, 256, 256, 512, 512, 512, 512, 512, 512]
    assert [l.h for l in layers] == [224, 224, 112, 112, 56, 56, 56, 28, 28, 28, 14, 14, 14]
    assert all((l.r, l.s, l.sh, l.pad, l.p) == (3, 3, 1, (1,) * 4, l.h) for l in layers)


def test_mobilenetv2_shapes():
    L = by_name("mobilenetv2_nodw")
    assert shape(L["features.0.0"]) == (3, 224, 224, 32, 3, 3, 2, 2, (1,) * 4, 112, 112)
    assert shape(L["features.1.conv.1"]) == (32, 112, 112, 16, 1, 1, 1, 1, (0,) * 4, 112, 112)
    assert shape(L["features.2.conv.0.0"]) == (16, 112, 112, 96, 1, 1, 1, 1, (0,) * 4, 112, 112)
    # The skipped depthwise features.2.conv.1.0 has stride 2: the project sees 56x56.
    assert shape(L["features.2.conv.2"]) == (96, 56, 56, 24, 1, 1, 1, 1, (0,) * 4, 56, 56)
    assert shape(L["features.17.conv.2"]) == (960, 7, 7, 320, 1, 1, 1, 1, (0,) * 4, 7, 7)
    assert shape(L["features.18.0"]) == (320, 7, 7, 1280, 1, 1, 1, 1, (0,) * 4, 7, 7)
    assert "features.1.conv.0.0" not in L  # t = 1: no expand; conv.0 is the depthwise


def test_layers_chain():
    """Each conv's output feeds the next conv's input wherever the real network does."""
    L = by_name("resnet50")
    for name, l in L.items():
        if name.endswith("conv2") or name.endswith("conv3"):
            prev = L[name[:-1] + str(int(name[-1]) - 1)]
            assert (l.c, l.h) == (prev.k, prev.p), name
    m = networks.network("mobilenetv2_nodw")[0]
    for a, b in zip(m, m[1:]):
        assert a.k == b.c, (a.name, b.name)


def test_weight_totals():
    """Conv weight counts; plus BN, depthwise and fc they add up to torchvision's parameter
    counts (resnet50 25,557,032; vgg16 features 14,714,688 with biases; mobilenet_v2 3,504,872)."""
    r50 = networks.network("resnet50")[0]
    assert sum(l.weights_total for l in r50) == 23454912
    assert sum(l.weights_total for l in r50) + 2 * sum(l.k for l in r50) + 2049000 == 25557032
    vgg = networks.network("vgg16")[0]
    assert sum(l.weights_total for l in vgg) == 14710464
    assert sum(l.weights_total + l.k for l in vgg) == 14714688
    mb, dw = networks.network("mobilenetv2_nodw")
    assert sum(l.weights_total for l in mb) == 2125536
    bn = 2 * (sum(l.k for l in mb) + sum(s["K"] for s in dw))
    assert sum(l.weights_total for l in mb) + sum(s["K"] * 9 for s in dw) + bn + 1281000 == 3504872
    full, none = networks.network("mobilenetv2")
    assert not none and len(full) == 52 and sum(l.groups > 1 for l in full) == 17
    assert sum(l.weights_total for l in full) == 2125536 + sum(s["K"] * 9 for s in dw)


def test_against_torchvision():
    torch = pytest.importorskip("torch")
    tv = pytest.importorskip("torchvision")
    models = {"resnet50": tv.models.resnet50, "vgg16": tv.models.vgg16,
              "mobilenetv2": tv.models.mobilenet_v2, "mobilenetv2_nodw": tv.models.mobilenet_v2}
    for net, ctor in models.items():
        model = ctor().eval()
        seen = []

        def hook(mod, inp, out, name=None):
            seen.append((name, mod, tuple(inp[0].shape), tuple(out.shape)))

        for name, mod in model.named_modules():
            if isinstance(mod, torch.nn.Conv2d):
                mod.register_forward_hook(lambda m, i, o, n=name: hook(m, i, o, n))
        with torch.no_grad():
            model(torch.zeros(1, 3, 224, 224))
        if net.endswith("_nodw"):
            seen = [s for s in seen if s[1].groups == 1]
        layers = networks.network(net)[0]
        assert len(seen) == len(layers), net
        for (name, mod, ishape, oshape), l in zip(seen, layers):
            assert re.sub(r"\.downsample\.0$", ".downsample", name) == l.name
            assert tuple(mod.weight.shape) == (l.k, l.c // l.groups, l.r, l.s), name
            assert mod.groups == l.groups, name
            assert ishape == (1, l.c, l.h, l.w), name
            assert oshape == (1, l.k, l.p, l.q), name
            assert tuple(mod.stride) == (l.sh, l.sw), name
            assert tuple(mod.padding) == (l.pad[0], l.pad[1]) == (l.pad[2], l.pad[3]), name
        if net == "resnet50":
            assert sum(s[1].weight.numel() for s in seen) == 23454912


# ---------------------------------------------------------------------------- weights

def reference_prune(w, p):
    """spconv-gen-conv's rule, literally: stable sort by |w|, zero the first floor(p*n)."""
    w = w.copy()
    n = int(math.floor(p * w.size + 1e-9))
    order = np.argsort(np.abs(w), kind="stable")
    w[order[:n]] = 0.0
    return w


@pytest.mark.parametrize("p", [0.0, 0.3, 0.5, 0.9, 0.95, 0.999, 1.0])
def test_prune_exact(p):
    rng = np.random.default_rng(7)
    # Heavy ties (few distinct magnitudes, both signs) exercise the tie-break by index.
    for w in (rng.standard_normal(1000, dtype=np.float32),
              rng.integers(-4, 5, size=997).astype(np.float32),
              np.ones(64, dtype=np.float32)):
        ref = reference_prune(w, p)
        got = w.copy()
        zeroed = networks.prune(got, p)
        assert zeroed == int(math.floor(p * w.size + 1e-9))
        assert np.array_equal(got, ref)
        assert np.count_nonzero(got == 0) >= zeroed
        assert not np.any(np.signbit(got[got == 0]) & (w[got == 0] != 0))  # +0.0


def test_make_weights_count_and_determinism():
    l = by_name("resnet50")["layer1.0.conv2"]  # 36864 weights
    w, b = networks.make_weights(l, 2, 1, 0.9, bias=True)
    assert w.shape == (64, 64, 3, 3) and w.dtype == np.float32
    assert np.count_nonzero(w) == 36864 - math.floor(0.9 * 36864)
    assert b.shape == (64,) and b.dtype == np.float32
    w2, _ = networks.make_weights(l, 2, 1, 0.9, bias=False)
    assert np.array_equal(w, w2)  # the bias is drawn after the weights
    w3, _ = networks.make_weights(l, 3, 1, 0.9, bias=False)
    assert not np.array_equal(w, w3)  # seed + layer index


# ---------------------------------------------------------------------------- output

def blobs(text):
    section = text[text.index("dialect_resources"):]
    return dict(re.findall(r'(\w+): "0x([0-9A-F]*)"', section))


def decode(hexstr):
    assert hexstr[:8] == "04000000"  # alignment 4, little-endian uint32
    return np.frombuffer(bytes.fromhex(hexstr[8:]), dtype="<f4")


@pytest.mark.parametrize("net", NETS)
def test_module(net, tmp_path):
    out = tmp_path / (net + ".mlir")
    run(net, "--sparsity", 0.9, "--seed", 3, "--batch", 2, "--bias", "--relu", "--layers", "0:2",
        "-o", out)
    text = out.read_text()
    layers = networks.network(net)[0][:2]
    assert text.count("func.func @") == 2
    assert text.count("spconv.conv2d") == 2
    res = blobs(text)
    assert len(res) == 4
    for i, l in enumerate(layers):
        tin = "tensor<2x%dx%dx%dxf32>" % (l.c, l.h, l.w)
        tout = "tensor<2x%dx%dx%dxf32>" % (l.k, l.p, l.q)
        assert "func.func @%s(%%x: %s) -> %s {" % (l.func, tin, tout) in text
        assert ': %s -> %s loc("%s/%s")' % (tin, tout, net, l.name) in text
        assert "dense_resource<%s_w> : tensor<%dx%dx%dx%dxf32>" % (
            l.func, l.k, l.c // l.groups, l.r, l.s) in text
        assert ("groups = %d" % l.groups in text) == (l.groups > 1)
        assert "strides = array<i64: %d, %d>" % (l.sh, l.sw) in text
        w, b = networks.make_weights(l, i, 3, 0.9, bias=True)
        assert np.array_equal(decode(res[l.func + "_w"]), w.reshape(-1))
        assert np.array_equal(decode(res[l.func + "_b"]), b)
    assert text.count("activation = #spconv.activation<relu>") == 2

    if not os.path.exists(SPCONV_OPT):
        pytest.skip("build/bin/spconv-opt not built")
    r = subprocess.run([SPCONV_OPT, str(out), "-o", os.devnull], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([SPCONV_OPT, str(out), "--spconv-sparsity-stats", "-o", os.devnull],
                       capture_output=True, text=True)
    if r.returncode == 0:  # the stats name each layer by its location
        for l in layers:
            assert 'loc("%s/%s")' % (net, l.name) in r.stdout + r.stderr


def test_split(tmp_path):
    d = tmp_path / "split"
    run("resnet50", "--sparsity", 0.8, "--bias", "--layers", "3:5", "--split", d)
    man = json.loads((d / "manifest.json").read_text())
    assert man["network"] == "resnet50" and man["sparsity"] == 0.8 and man["bias"]
    assert [r["index"] for r in man["layers"]] == [3, 4]
    assert [r["name"] for r in man["layers"]] == ["layer1.0.conv3", "layer1.0.downsample"]
    full = networks.network("resnet50")[0]
    for r in man["layers"]:
        l = full[r["index"]]
        assert (r["C"], r["H"], r["W"], r["K"], r["R"], r["S"], r["P"], r["Q"]) == \
            (l.c, l.h, l.w, l.k, l.r, l.s, l.p, l.q)
        assert r["stride"] == [l.sh, l.sw] and r["pad"] == list(l.pad)
        assert r["weights_total"] == l.weights_total
        assert r["nnz"] == l.weights_total - math.floor(0.8 * l.weights_total + 1e-9)
        assert r["mlir"] == "%02d-%s.mlir" % (r["index"], l.name)
        w = np.fromfile(d / r["weights"], dtype="<f4")
        b = np.fromfile(d / r["bias"], dtype="<f4")
        # The same weights as layer r["index"] of the whole network.
        ew, eb = networks.make_weights(l, r["index"], 1, 0.8, bias=True)
        assert np.array_equal(w, ew.reshape(-1)) and np.array_equal(b, eb)
        text = (d / r["mlir"]).read_text()
        assert text.count("spconv.conv2d") == 1
        res = blobs(text)
        assert np.array_equal(decode(res[l.func + "_w"]), w)
        assert np.array_equal(decode(res[l.func + "_b"]), b)
        if os.path.exists(SPCONV_OPT):
            p = subprocess.run([SPCONV_OPT, str(d / r["mlir"]), "-o", os.devnull],
                               capture_output=True, text=True)
            assert p.returncode == 0, p.stderr


def test_list():
    out = run("mobilenetv2_nodw", "--list").stdout
    assert "features.18.0" in out and "35 of 35 convs" in out and "left out" in out
    out = run("resnet50", "--list", "--layers=-3:").stdout
    assert "layer4.2.conv1" in out and "layer4.1.conv3" not in out and "3 of 53" in out


def test_bad_layers():
    r = subprocess.run([sys.executable, SCRIPT, "vgg16", "--list", "--layers", "20:30"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "selects no layer" in r.stderr


def test_image_pair_layout(tmp_path):
    # --layout image_pairs puts the layout on every conv (and in the header and manifest);
    # it needs a half dtype and an even batch.
    out = tmp_path / "r.mlir"
    run("resnet50", "--batch", "4", "--dtype", "f16", "--layout", "image_pairs",
        "--layers", "0:3", "-o", str(out))
    text = out.read_text()
    assert text.count("layout = #spconv.layout<image_pairs>") == 3
    assert "--layout image_pairs" in text.splitlines()[0]
    for bad in (["--batch", "3", "--dtype", "f16"], ["--batch", "4"]):
        r = subprocess.run([sys.executable, SCRIPT, "resnet50", "--layout", "image_pairs",
                            "--list"] + bad, capture_output=True, text=True)
        assert r.returncode != 0 and "needs --dtype f16 or bf16 and an even --batch" in r.stderr
