"""The image-pair layout carried through a compiled model (immconv/torch/carry.py), on CPU:
the conversions' index map, the graph a ResNet-like bfloat16 model gets (pairs from the input's
one conversion to the head's pool, max pooling in pairs, the residual add in pairs), the same
outputs as NCHW kernels where layers are kept in PyTorch in either layout, load(), the options
and keys, the layout choice's image-pair conversions, and a real compile's sidecar."""
import copy
import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import immconv.torch as st  # noqa: E402
from immconv import mlir  # noqa: E402
from immconv.torch import carry, kcache, layout  # noqa: E402
from immconv.torch.module import from_image_pairs, to_image_pairs  # noqa: E402
from conftest import needs_translate  # noqa: E402
from test_torch import close, prune_  # noqa: E402


class Block(nn.Module):
    """torchvision's bottleneck: conv3 without activation, a downsample, += and ReLU."""

    def __init__(self, c):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.c3, self.b3 = nn.Conv2d(c, 2 * c, 1, bias=False), nn.BatchNorm2d(2 * c)
        self.down = nn.Sequential(nn.Conv2d(c, 2 * c, 1, bias=False), nn.BatchNorm2d(2 * c))
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.b1(self.c1(x)))
        out = self.relu(self.b2(self.c2(out)))
        out = self.b3(self.c3(out))
        out += self.down(x)
        return self.relu(out)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem, self.bn = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), \
            nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.block = Block(8)
        self.avg = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = self.block(self.pool(self.relu(self.bn(self.stem(x)))))
        return self.fc(torch.flatten(self.avg(x), 1))


def net():
    torch.manual_seed(0)
    return prune_(Net(), 0.6).eval().to(torch.bfloat16)


def compiled(tmp_path, layout_option, batch=4, model=None):
    m = model or net()
    x = torch.randn(batch, 3, 16, 16).to(torch.bfloat16)
    cm = st.compile(m, x, out_dir=str(tmp_path / layout_option), sparsity_threshold=0.0,
                    progress=False, kernel_cache=False, layout=layout_option)
    return m, x, cm


def calls(gm, fn):
    return sum(n.op == "call_function" and n.target is fn for n in gm.graph.nodes)


def spconv_layers(cm):
    return {n: m for n, m in cm.named_modules() if isinstance(m, st.SpconvConv2d)}


def test_conversions_are_the_image_pair_index_map():
    x = torch.arange(6 * 2 * 3 * 2, dtype=torch.float32).reshape(6, 2, 3, 2)
    p = to_image_pairs(x)
    assert p.shape == (3, 2, 3, 2, 2) and p.is_contiguous()
    for n in range(6):  # (n, c, y, x) at [n mod N/2, c, y, x, n div N/2]
        assert torch.equal(p[n % 3, :, :, :, n // 3], x[n])
    assert torch.equal(from_image_pairs(p), x) and from_image_pairs(p).is_contiguous()
    cl = from_image_pairs(p, "channels_last")
    assert torch.equal(cl, x) and cl.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(to_image_pairs(x.contiguous(memory_format=torch.channels_last)), p)


def test_a_resnet_like_graph_carries_pairs(fake_compiler, tmp_path):
    m, x, cm = compiled(tmp_path, "image_pairs")
    _, _, nchw = compiled(tmp_path, "nchw")
    layers = spconv_layers(cm)
    assert len(layers) == 5
    assert all(l.layout == "image_pairs" and l.io == "image_pairs" for l in layers.values())
    assert all(l.layout == "nchw" for l in spconv_layers(nchw).values())
    # image pairs are the default where a conv can have them
    default = st.compile(m, x, out_dir=str(tmp_path / "default"), sparsity_threshold=0.0,
                         progress=False, kernel_cache=False)
    assert all(l.layout == "image_pairs" for l in spconv_layers(default).values())
    manifest = json.load(open(tmp_path / "image_pairs" / "manifest.json"))
    assert {l["layout"] for l in manifest["layers"]} == {"image_pairs"}
    # one conversion (the input), the max pool and the head's pool in pairs, the residual
    # add fused into c3's call (layout.fuse_residual_adds) and given in pairs
    assert calls(cm, to_image_pairs) == 1 and calls(cm, from_image_pairs) == 0
    assert calls(cm, carry.ip_max_pool2d) == 1 and calls(cm, carry.ip_adaptive_avg_pool2d) == 1
    c3 = [n for n in cm.graph.nodes if n.op == "call_module" and n.target == "block.c3"]
    assert len(c3) == 1 and len(c3[0].args) == 2
    with torch.no_grad():
        out, ref = cm(x), nchw(x)
        assert torch.equal(out, ref)  # exact: the pools and conversions move values only
        assert close(out.float(), m.float()(x.float()), 0.05)


def test_kept_layers_are_converted_to_and_from_pairs(fake_compiler, tmp_path):
    m, x, cm = compiled(tmp_path, "image_pairs")
    _, _, nchw = compiled(tmp_path, "nchw")
    modules, nchw_modules = dict(cm.named_modules()), dict(nchw.named_modules())

    def same_as_nchw(d):  # the decision in both models: the same values
        layout.apply(modules, d, {}, cm)
        layout.apply(nchw_modules, d, {}, nchw)
        with torch.no_grad():
            return torch.equal(cm(x), nchw(x))

    d = {n: layout.SPCONV for n in spconv_layers(cm)}
    d["block.c2"] = layout.TORCH  # c1 -> c2 (NCHW) -> c3: out of pairs and back
    assert same_as_nchw(d)
    assert cm.block.c2.io == "nchw" and cm.block.c1.io == "image_pairs"
    assert calls(cm, to_image_pairs) == 2 and calls(cm, from_image_pairs) == 1
    d["block.c2"] = layout.TORCH_CL  # out of pairs straight to channels-last
    assert same_as_nchw(d)
    (conv,) = [n for n in cm.graph.nodes if n.op == "call_function"
               and n.target is from_image_pairs]
    assert conv.args[1] == "channels_last"
    d["block.c3"] = layout.TORCH_CL  # the residual add leaves pairs too
    assert same_as_nchw(d)
    assert calls(cm, to_image_pairs) == 1 and calls(cm, from_image_pairs) == 2
    d = {n: layout.SPCONV for n in d}  # and back: one conversion
    assert same_as_nchw(d)
    assert calls(cm, to_image_pairs) == 1 and calls(cm, from_image_pairs) == 0
    # a layer carried gives pairs; one not carried converts at its own edges
    with torch.no_grad():
        assert torch.equal(from_image_pairs(cm.stem(x)), nchw.stem(x))
        cm.stem.io = "nchw"
        assert torch.equal(cm.stem(x), nchw.stem(x))


def test_load_and_copies_carry_the_same_graph(fake_compiler, tmp_path):
    m, x, cm = compiled(tmp_path, "image_pairs")
    again = st.load(m, str(tmp_path / "image_pairs"))
    assert calls(again, to_image_pairs) == 1
    with torch.no_grad():
        assert torch.equal(again(x), cm(x))
    # a copy carries again from its own graph as built (bench/torch_backend.py's ablation)
    dense = copy.deepcopy(cm)
    for mm in spconv_layers(dense).values():
        mm.keep_in_torch("nchw")
    assert carry.carry(dense) == 0 and calls(dense, to_image_pairs) == 0
    assert calls(cm, to_image_pairs) == 1
    with torch.no_grad():
        assert close(dense(x).float(), cm(x).float(), 0.05)


def test_pairs_only_where_a_conv_can_have_them(fake_compiler, tmp_path):
    _, _, odd = compiled(tmp_path, "image_pairs", batch=3)  # odd batch: NCHW kernels
    assert all(l.layout == "nchw" for l in spconv_layers(odd).values())
    assert calls(odd, to_image_pairs) == 0
    f32 = net().float()
    x = torch.randn(4, 3, 16, 16)
    cm = st.compile(f32, x, out_dir=str(tmp_path / "f32"), sparsity_threshold=0.0,
                    progress=False, kernel_cache=False, layout="image_pairs")
    assert all(l.layout == "nchw" for l in spconv_layers(cm).values())
    with pytest.raises(ValueError, match="layout must be one of"):
        st.compile(f32, x, out_dir=str(tmp_path / "bad"), progress=False,
                   kernel_cache=False, layout="nhwc")


def spec(**kw):
    w = np.zeros((4, 2, 1, 1), np.float32)
    w[0, 0] = 1.0
    return mlir.ConvSpec(name="c", weights=w, input_shape=(2, 2, 4, 4), **kw)


def test_the_mlir_attribute_and_the_cache_key():
    text = mlir.func_text(spec(dtype="f16", layout="image_pairs"))
    assert "layout = #spconv.layout<image_pairs>" in text
    assert "layout" not in mlir.func_text(spec(dtype="f16"))
    for bad in (dict(layout="image_pairs"), dict(dtype="f16", layout="nhwc")):
        with pytest.raises(ValueError, match="layout"):
            mlir.func_text(spec(**bad))
    assert kcache.layer_key(spec(dtype="f16")) != kcache.layer_key(
        spec(dtype="f16", layout="image_pairs"))


def ip_row(sp, kept, to_ip, from_ip):
    return {"spconv": sp, "kept": kept, "cudnn": kept, "spconv_layout": layout.IMAGE_PAIRS,
            "to_image_pairs": to_ip, "from_image_pairs": from_ip}


def test_the_choice_charges_pair_conversions():
    # a -> b -> c: b alone is faster kept (0.8 < 1.0), but leaving pairs and coming back
    # costs 0.3 + 0.3
    rows = {"a": ip_row(1.0, 2.0, 0.3, 0.3), "b": ip_row(1.0, 0.8, 0.3, 0.3),
            "c": ip_row(1.0, 2.0, 0.3, 0.3)}
    producers, observed = {"b": "a", "c": "b"}, {"a": layout.NCHW}
    d, _ = layout.choose(rows, producers, observed, 1.0)
    assert d == {n: layout.SPCONV for n in rows}
    # the model's input is NCHW: a pays its conversion into pairs
    assert layout.total(rows, producers, observed, d) == pytest.approx(3.3)
    cheap = {n: dict(r, to_image_pairs=0.01, from_image_pairs=0.01) for n, r in rows.items()}
    d, _ = layout.choose(cheap, producers, observed, 1.0)
    assert d["b"] == layout.TORCH
    assert layout.conversion(rows["a"], layout.IMAGE_PAIRS, layout.CHANNELS_LAST) == 0.3


def real_compile(tmp_path):
    """(model, input, compiled model, manifest, sidecar kernels) of a real compile of net()
    in image pairs (spconv-translate and ptxas)."""
    m, x, cm = compiled(tmp_path, "image_pairs")
    manifest = json.load(open(tmp_path / "image_pairs" / "manifest.json"))
    (sidecar,) = {l["sidecar"] for l in manifest["layers"]}
    kernels = json.load(open(os.path.join(tmp_path, "image_pairs", sidecar)))["kernels"]
    return m, x, cm, manifest, kernels


@needs_translate
def test_a_real_compile_states_the_layout(tmp_path):
    m, x, cm, _, kernels = real_compile(tmp_path)
    assert all(p["layout"] == "image_pairs" for k in kernels for p in k["params"])
    with torch.no_grad():
        assert close(cm(x).float(), m.float()(x.float()), 0.05)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_pairs_on_a_gpu(fake_compiler, tmp_path, dtype):
    # the GPU's half pools, means and conversions in pairs, each layer as the reference on
    # the device (the stand-in compiler has no kernels), replayed from a CUDA graph too
    m = net().to(dtype)
    x = torch.randn(4, 3, 16, 16).to(dtype)
    outs = []
    for option in ("image_pairs", "nchw"):
        cm = st.compile(m, x, out_dir=str(tmp_path / option), sparsity_threshold=0.0,
                        progress=False, kernel_cache=False, layout=option, min_speedup=None)
        cm = cm.cuda()
        for layer in spconv_layers(cm).values():
            layer.mode = "reference"
        carry.carry(cm)
        assert calls(cm, to_image_pairs) == (option == "image_pairs")
        xc = x.cuda()
        with torch.no_grad():
            eager = cm(xc)
            from immconv.torch.bench import time_cuda_graph
            time_cuda_graph(lambda: cm(xc), 1, 1)
            outs.append(eager.float())
    # the head's mean may round apart from cuDNN's adaptive pool by an ulp; a misplaced
    # image or channel would not be close
    assert close(outs[0], outs[1], 0.01)


def test_conversions_off_cuda_are_the_eager_copy(monkeypatch):
    # fastcopy.run compiles nothing for a CPU tensor, nor with IMMCONV_COMPILED_COPIES=0
    from immconv.torch import fastcopy
    x = torch.randn(4, 3, 2, 2)
    seen = []

    def spy(t, *args):
        seen.append(args)
        return t + 1
    before, calls = len(fastcopy._COMPILED), fastcopy.stats()
    assert torch.equal(fastcopy.run(spy, x, "a"), x + 1) and seen == [("a",)]
    assert len(fastcopy._COMPILED) == before
    assert fastcopy.stats() == dict(calls, eager=calls["eager"] + 1)
    monkeypatch.setenv("IMMCONV_COMPILED_COPIES", "0")
    assert not fastcopy._enabled()
    # a fresh copy of a function is a new code object (torch.compile caches per code object)
    assert fastcopy._fresh(spy).__code__ is not spy.__code__
    assert torch.equal(fastcopy._fresh(spy)(x), x + 1)


@pytest.mark.skipif(not torch.cuda.is_available() or not hasattr(torch, "compile"),
                    reason="needs CUDA and torch.compile")
def test_compiled_conversions_are_bit_equal_on_a_gpu():
    from immconv.torch import fastcopy, module
    x = torch.randn(6, 8, 5, 7, device="cuda").half()
    for src in (x, x.contiguous(memory_format=torch.channels_last)):
        p = to_image_pairs(src)
        assert torch.equal(p, module._to_image_pairs(src))
        for fmt in ("nchw", "channels_last"):
            y = from_image_pairs(p, fmt)
            ref = module._from_image_pairs(p, fmt)
            assert torch.equal(y, ref) and y.stride() == ref.stride()
    assert fastcopy._COMPILED and not fastcopy._FAILED


@pytest.mark.skipif(not torch.cuda.is_available() or not hasattr(torch, "compile"),
                    reason="needs CUDA and torch.compile")
def test_compiled_max_pools_over_pairs_are_bit_equal_on_a_gpu(monkeypatch):
    # a maximum of the same values: the compiled pool gives the eager pool's tensor exactly
    from immconv.torch import fastcopy
    p = to_image_pairs(torch.randn(6, 8, 15, 13, device="cuda").half())
    pools = [nn.MaxPool2d(3, 2, 1), nn.MaxPool2d((2, 3), (1, 2), (1, 0), ceil_mode=True)]
    before, calls = len(fastcopy._COMPILED), fastcopy.stats()
    got = [carry.ip_max_pool2d(p, pool) for pool in pools]
    assert len(fastcopy._COMPILED) == before + len(pools) and not fastcopy._FAILED
    assert fastcopy.stats() == dict(calls, compiled=calls["compiled"] + len(pools))
    monkeypatch.setenv("IMMCONV_COMPILED_COPIES", "0")
    for pool, y in zip(pools, got):
        ref = carry.ip_max_pool2d(p, pool)
        assert torch.equal(y, ref) and y.stride() == ref.stride()


def test_max_pools_on_4d_tensors_run_through_fastcopy(fake_compiler, tmp_path):
    # a pool whose input is not image pairs (an NCHW model, or one whose producer is kept)
    # is carry.max_pool2d (compiled on CUDA), with the values and layout of the module's
    from immconv.torch import fastcopy
    m, x, cm = compiled(tmp_path, "image_pairs")
    _, _, nchw = compiled(tmp_path, "nchw")
    assert calls(nchw, carry.max_pool2d) == 1 and calls(nchw, carry.ip_max_pool2d) == 0
    assert calls(cm, carry.max_pool2d) == 0 and calls(cm, carry.ip_max_pool2d) == 1
    kept = {n: layout.TORCH_CL for n in spconv_layers(cm)}
    layout.apply(dict(cm.named_modules()), kept, {}, cm)
    layout.apply(dict(nchw.named_modules()), kept, {}, nchw)
    assert calls(cm, carry.max_pool2d) == 1 and calls(cm, carry.ip_max_pool2d) == 0
    assert calls(cm, to_image_pairs) == 0
    # carrying again starts from the module: one pool, not a pool of a pool
    carry.carry(cm)
    assert calls(cm, carry.max_pool2d) == 1 and "pool" in dict(cm.named_children())
    before = fastcopy.stats()
    with torch.no_grad():
        assert torch.equal(cm(x), nchw(x))
    assert fastcopy.stats()["eager"] > before["eager"]  # CPU: the eager op
    pool = nn.MaxPool2d(3, 2, 1)
    y = torch.randn(2, 3, 9, 7)
    for t in (y, y.contiguous(memory_format=torch.channels_last)):
        got, ref = carry.max_pool2d(t, pool), pool(t)
        assert torch.equal(got, ref) and got.stride() == ref.stride()


@pytest.mark.skipif(not torch.cuda.is_available() or not hasattr(torch, "compile"),
                    reason="needs CUDA and torch.compile")
def test_compiled_max_pools_on_4d_tensors_are_bit_equal_on_a_gpu():
    # the compiled pool gives the module's tensor exactly, NCHW or channels-last
    from immconv.torch import fastcopy
    x = torch.randn(6, 8, 15, 13, device="cuda").half()
    pools = [nn.MaxPool2d(3, 2, 1), nn.MaxPool2d((2, 3), (1, 2), (1, 0), ceil_mode=True)]
    before, calls = len(fastcopy._COMPILED), fastcopy.stats()
    n = 0
    for t in (x, x.contiguous(memory_format=torch.channels_last)):
        for pool in pools:
            got, ref = carry.max_pool2d(t, pool), pool(t)
            n += 1
            assert torch.equal(got, ref) and got.stride() == ref.stride()
    assert len(fastcopy._COMPILED) == before + n and not fastcopy._FAILED
    assert fastcopy.stats() == dict(calls, compiled=calls["compiled"] + n)


def test_pairs_go_through_a_max_pool_the_model_calls_as_a_function(fake_compiler, tmp_path):
    # F.max_pool2d in the model's own forward is lifted to an nn.MaxPool2d at build
    class FunctionalPool(Net):
        def forward(self, x):
            x = F.max_pool2d(self.relu(self.bn(self.stem(x))), 3, 2, 1)
            return self.fc(torch.flatten(self.avg(self.block(x)), 1))
    torch.manual_seed(0)
    m = prune_(FunctionalPool(), 0.6).eval().to(torch.bfloat16)
    _, x, cm = compiled(tmp_path, "image_pairs", model=m)
    assert calls(cm, carry.ip_max_pool2d) == 1 and calls(cm, to_image_pairs) == 1
    with torch.no_grad():
        assert close(cm(x).float(), m.float()(x.float()), 0.05)


@pytest.mark.skipif(not hasattr(torch, "compile") or
                    not hasattr(getattr(torch, "export", None), "export"),
                    reason="needs torch.compile and torch.export (PyTorch 2: the GPU machine)")
def test_pairs_go_through_the_max_pool_of_dynamo_and_export_graphs(fake_compiler, tmp_path):
    # their graphs call the pool as a function (F.max_pool2d, aten.max_pool2d...), which
    # lift.py makes an nn.MaxPool2d again: the pairs go through it, one conversion in all
    # (the input), where a pool carry.py did not see would add one on each side of it
    from immconv.torch.dynamo import ImmconvBackend
    m = net()
    x = torch.randn(4, 3, 16, 16).to(torch.bfloat16)
    opts = dict(sparsity_threshold=0.0, progress=False, kernel_cache=False,
                layout="image_pairs")
    graphs = []

    class Spy(ImmconvBackend):
        def __call__(self, gm, example_inputs, **kw):
            graphs.append(super().__call__(gm, example_inputs, **kw))
            return graphs[-1]
    exported = st.compile(torch.export.export(m, (x,)), (x,), out_dir=str(tmp_path / "ep"),
                          **opts)
    with torch.no_grad():
        ref = net().float()(x.float())
        outs = [exported(x), torch.compile(net(), backend=Spy(**opts))(x)]
    gms = [exported] + [cm for g in graphs for cm in g.specialised.values()]
    assert len(gms) == 2
    for gm, out in zip(gms, outs):
        assert calls(gm, carry.ip_max_pool2d) == 1 and calls(gm, to_image_pairs) == 1
        assert close(out.float(), ref, 0.05)


def test_a_mode_changed_without_carrying_again(fake_compiler, tmp_path):
    # a layer carry.py placed as a pair kernel, then kept in torch by hand: it still hands
    # its graph image pairs (and takes them), so the model computes the same
    m, x, cm = compiled(tmp_path, "image_pairs")
    assert cm.block.c2.io == "image_pairs"
    with torch.no_grad():
        before = cm(x)
        cm.block.c2.keep_in_torch("nchw")
        cm.block.c3.keep_in_torch("nchw")
        assert close(cm(x).float(), before.float(), 0.02)
