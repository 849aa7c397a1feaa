"""The measured policy's layout choice (immconv/torch/layout.py), on CPU: the coordinate
descent over spconv / NCHW kept / channels-last kept with conversions, producers found by
storage through in-place ops, layouts observed behind other ops, a kept layer running
channels-last, and the decision surviving the manifest."""
import json

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import immconv.torch as st  # noqa: E402
from immconv.torch import layout  # noqa: E402
from test_torch import close, prune_  # noqa: E402


def row(sp, kept, cl=None, conv=0.0):
    """A measured row: spconv and NCHW-kept times, and for a half layer the channels-last
    time and both conversions."""
    r = {"spconv": sp, "kept": kept, "cudnn": kept, "baseline": "cudnn_fp32"}
    if cl is not None:
        r.update(cudnn=cl, baseline="cudnn_fp16_channels_last", kept_channels_last=cl,
                 to_channels_last=conv, to_nchw=conv)
    return r


def test_descent_counts_the_neighbours_conversions():
    # a -> b -> c. Alone, a and c are faster kept channels-last (0.8 < 1.0) and b compiled;
    # but every change of layout costs 0.3: all compiled (2.5) beats the layer-by-layer
    # choice (3.0) and all channels-last (2.7).
    rows = {"a": row(1.0, 2.0, 0.8, 0.3), "b": row(0.5, 2.0, 0.8, 0.3),
            "c": row(1.0, 2.0, 0.8, 0.3)}
    producers = {"b": "a", "c": "b"}
    observed = {"a": layout.NCHW}
    greedy = {"a": layout.TORCH_CL, "b": layout.SPCONV, "c": layout.TORCH_CL}
    assert layout.total(rows, producers, observed, greedy) == pytest.approx(3.0)
    d, sweeps = layout.choose(rows, producers, observed, 1.0)
    assert d == {"a": layout.SPCONV, "b": layout.SPCONV, "c": layout.SPCONV}
    assert layout.total(rows, producers, observed, d) == pytest.approx(2.5)
    # cheap conversions: each layer takes its own fastest option
    cheap = {n: dict(r, to_channels_last=0.01, to_nchw=0.01) for n, r in rows.items()}
    d, _ = layout.choose(cheap, producers, observed, 1.0)
    assert d == greedy


def test_junctions_keep_an_add_in_one_layout():
    # a and b meet at an add; alone a is faster kept channels-last (0.9 < 1.0), but the add
    # then reads b's NCHW output across the grain (0.5)
    # (their inputs arrive in either layout: no conversions)
    rows = {"a": row(1.0, 2.0, 0.9, 0.3), "b": row(0.5, 2.0, 2.0, 0.3)}
    either = {"a": layout.ANY, "b": layout.ANY}
    d, _ = layout.choose(rows, {}, either, 1.0)
    assert d == {"a": layout.TORCH_CL, "b": layout.SPCONV}
    d, _ = layout.choose(rows, {}, either, 1.0, [("a", "b", 0.5)])
    assert d == {"a": layout.SPCONV, "b": layout.SPCONV}
    assert layout.total(rows, {}, either, {"a": layout.TORCH_CL, "b": layout.SPCONV},
                        [("a", "b", 0.5)]) == pytest.approx(0.9 + 0.5 + 0.5)


def test_image_pair_conversions_by_layout_and_estimated():
    # from and to channels-last are their own measurements; a row of an older immconv has
    # the NCHW ones only, which then stand for both
    r = dict(row(1.0, 2.0, 0.8), spconv_layout=layout.IMAGE_PAIRS, to_image_pairs=0.1,
             from_image_pairs=0.2, to_image_pairs_cl=0.3, from_image_pairs_cl=0.4)
    IP, CL, NCHW = layout.IMAGE_PAIRS, layout.CHANNELS_LAST, layout.NCHW
    assert [layout.conversion(r, a, w) for a, w in ((NCHW, IP), (IP, NCHW), (CL, IP),
                                                    (IP, CL))] == [0.1, 0.2, 0.3, 0.4]
    old = {k: v for k, v in r.items() if not k.endswith("_cl")}
    assert layout.conversion(old, IP, CL) == 0.2 and layout.conversion(old, CL, IP) == 0.1
    # a half layer without a kernel in pairs is charged its input's bytes at the median
    # measured rate (not nothing); an FP32 row gets nothing
    shape = type("M", (), {"input_shape": (2, 4, 8, 8), "dtype": torch.float16})
    big = type("M", (), {"input_shape": (2, 8, 8, 8), "dtype": torch.float16})
    f32 = type("M", (), {"input_shape": (2, 8, 8, 8), "dtype": torch.float32})
    rows = {"a": r, "b": row(None, 2.0, 0.8), "c": row(1.0, 2.0)}
    layout.estimate_pair_conversions(rows, {"a": shape, "b": big, "c": f32})
    assert rows["b"]["from_image_pairs_cl"] == pytest.approx(0.8)
    assert rows["b"]["to_image_pairs"] == pytest.approx(0.2)
    assert sorted(rows["b"]["estimated"]) == sorted(layout.PAIR_CONVERSIONS)
    assert "estimated" not in rows["a"] and "to_image_pairs" not in rows["c"]
    assert layout.conversion(rows["b"], IP, CL) == pytest.approx(0.8)


def test_margin_and_fp32_rows():
    # min_speedup: a kernel must win by the margin, as before
    rows = {"a": row(1.0, 1.04), "b": row(1.0, 1.06)}
    d, _ = layout.choose(rows, {}, {}, 1.05)
    assert d == {"a": layout.TORCH, "b": layout.SPCONV}
    # an FP32 row has no channels-last option, even when its baseline is faster
    assert set(layout.options(row(1.0, 0.5))) == {layout.SPCONV, layout.TORCH}
    # a half row of an older immconv (no kept_channels_last): no channels-last option
    old = row(1.0, 2.0, 0.5)
    del old["kept_channels_last"]
    assert layout.TORCH_CL not in layout.options(old)


class Res(nn.Module):
    """c1 (+ ReLU) -> c2, += c1's output, relu_ (in place: the storage stays c2's) -> c3; a
    max pool (a new tensor in its input's layout) -> c4."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.c3 = nn.Conv2d(8, 8, 1)
        self.c4 = nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, x):
        y = F.relu(self.c1(x))
        z = self.c2(y)
        z += y
        z = F.relu_(z)
        return self.c4(F.max_pool2d(self.c3(z), 2))


def compiled(fake_compiler, tmp_path, model=Res, shape=(2, 3, 8, 8)):
    """(model, input, every conv compiled with the fake compiler)."""
    torch.manual_seed(0)
    m = prune_(model(), 0.6).eval()
    x = torch.randn(*shape)
    cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False,
                    kernel_cache=False)
    return m, x, cm


def test_producers_from_the_graph_and_from_storage(fake_compiler, tmp_path):
    m, x, cm = compiled(fake_compiler, tmp_path)
    names = ["c1", "c2", "c3", "c4"]
    order, producers, arrived = layout.trace(cm, (x,), names)
    assert order == names and arrived == {n: layout.NCHW for n in order}
    # c2's kernel takes its residual (relu_(c2 + y), layout.fuse_residual_adds): c3 reads c2's
    # output storage; the pool's output is always a new tensor, so c4 has no producer
    assert cm.c2.takes_residual
    assert producers == {"c2": "c1", "c3": "c2"}
    # the graph walks first arguments: relu_(c2 + c1) comes from c2, the pool from c3
    assert layout.graph_producers(cm, set(names)) == {"c2": "c1", "c3": "c2", "c4": "c3"}
    # relu_(c2 + relu(c1)): an add over two layers' outputs
    assert [(a, b) for a, b, _ in layout.graph_junctions(cm, set(names))] == [("c2", "c1")]
    # an eager model's in-place ops keep the storage
    y = torch.randn(2, 8, 8, 8)
    eager = nn.Sequential(nn.Conv2d(8, 8, 1), nn.ReLU(inplace=True), nn.Conv2d(8, 8, 1))
    _, producers, _ = layout.trace(eager, (y,), ["0", "2"])
    assert producers == {"2": "0"}


def test_kept_channels_last_layer(fake_compiler, tmp_path):
    m, x, cm = compiled(fake_compiler, tmp_path)
    ref = m(x)
    cm.c2.keep_in_torch("channels_last")
    y = cm.c1(x)
    out = cm.c2(y)
    # cuDNN-style: channels-last in and out, the folded weights (as the kernel's reference)
    assert out.is_contiguous(memory_format=torch.channels_last) and not out.is_contiguous()
    assert close(out, cm.c2.reference(y))
    w, _ = cm.c2.folded(x.device)
    assert w.is_contiguous(memory_format=torch.channels_last)
    assert "kept_layout=channels_last" in repr(cm.c2)
    assert close(cm(x), ref)
    cm.c2.keep_in_torch("channels_last", "original")  # the original modules, channels-last
    out = cm.c2(y)
    assert out.is_contiguous(memory_format=torch.channels_last) and close(out, m.c2(y))
    assert not any("_original_cl" in n for n, _ in cm.named_modules())
    with pytest.raises(ValueError, match="kept implementation 'fused'"):
        cm.c2.keep_in_torch("channels_last", "fused")
    cm.c1.keep_in_torch("channels_last", "folded")  # with its ReLU
    assert cm.c1.activation == "relu" and close(cm.c1(x), cm.c1.reference(x))
    assert close(cm(x), ref)
    cm.c2.keep_in_torch("nchw")
    assert cm.c2(cm.c1(x)).is_contiguous()
    with pytest.raises(ValueError, match="kept layout 'nhwc'"):
        cm.c2.keep_in_torch("nhwc")


def test_decide_observes_layouts_behind_other_ops(fake_compiler, tmp_path):
    m, x, cm = compiled(fake_compiler, tmp_path)
    ref = m(x)
    # c3 and c4 are faster kept channels-last; c4's input comes through the pool, which
    # keeps c3's layout: one conversion, before c3
    rows = {"c1": row(1.0, 5.0, 5.0, 0.2), "c2": row(1.0, 5.0, 5.0, 0.2),
            "c3": row(1.0, 5.0, 0.5, 0.2), "c4": row(1.0, 5.0, 0.7, 0.2)}
    d, report = layout.decide(cm, (x,), rows, 1.0)
    assert d == {"c1": layout.SPCONV, "c2": layout.SPCONV, "c3": layout.TORCH_CL,
                 "c4": layout.TORCH_CL}
    assert report["producers"]["c4"] == "c3" and report["rounds"] == 1
    assert report["modelled_ms"] == pytest.approx(1.0 + 1.0 + 0.2 + 0.5 + 0.7)
    # without the graph (storage only), c4 has no producer: its layout is observed, which
    # takes a second round once c3 runs channels-last
    cm2 = compiled(fake_compiler, tmp_path / "b")[2]
    plain = nn.Module()
    plain.net = cm2
    plain.forward = lambda t: cm2(t)
    d, report = layout.decide(plain, (x,), {"net." + n: r for n, r in rows.items()}, 1.0)
    assert d["net.c4"] == layout.TORCH_CL and report["rounds"] == 2
    assert report["observed"]["net.c4"] == layout.CHANNELS_LAST
    assert cm.c3.mode == cm.c4.mode == "torch" and cm.c1.mode == "auto"
    assert cm.c4.kept_layout == "channels_last"
    assert close(cm(x), ref)


def test_channels_last_decisions_survive_load(fake_compiler, tmp_path):
    m, x, cm = compiled(fake_compiler, tmp_path)
    p = tmp_path / "manifest.json"
    man = json.loads(p.read_text())
    man["torch_mode"] = ["c2", "c3"]       # as a measured compile on a GPU would record it
    man["torch_channels_last"] = {"c3": "original"}
    p.write_text(json.dumps(man))
    lm = st.load(m, str(tmp_path))
    assert (lm.c2.mode, lm.c2.kept_layout) == ("torch", "nchw")
    assert (lm.c3.mode, lm.c3.kept_layout, lm.c3.kept_impl) == ("torch", "channels_last",
                                                                 "original")
    assert lm.c1.mode == "auto"
    assert close(lm(x), m(x))


def test_end_to_end_timing_guards_the_model(fake_compiler, tmp_path):
    m, x, cm = compiled(fake_compiler, tmp_path)
    rows = {"c1": row(1.0, 5.0, 5.0, 0.2), "c2": row(1.0, 5.0, 5.0, 0.2),
            "c3": row(1.0, 5.0, 0.5, 0.2), "c4": row(1.0, 0.9, 0.7, 0.2)}

    def timer(fn, cl_ms):  # a model with a channels-last layer takes cl_ms, else 1 ms
        fn()
        return cl_ms if any(getattr(mm, "kept_layout", "") == "channels_last" and
                            mm.mode == "torch" for mm in cm.modules()) else 1.0

    d, report = layout.decide(cm, (x,), rows, 1.0, lambda fn: timer(fn, 2.0))
    assert report["chosen"] == "nchw_only" and d == layout.nchw_only(rows, 1.0)
    assert report["end_to_end_ms"] == {"layouts": 2.0, "nchw_only": 1.0, "all_kept": 2.0}
    assert cm.c3.mode == "auto" and (cm.c4.mode, cm.c4.kept_layout) == ("torch", "nchw")
    d, report = layout.decide(cm, (x,), rows, 1.0, lambda fn: timer(fn, 0.5))
    assert report["chosen"] == "layouts" and d["c3"] == layout.TORCH_CL
    assert (cm.c3.mode, cm.c3.kept_layout) == ("torch", "channels_last")
    assert close(cm(x), m(x))

    def by_kernels(fn):  # every kernel costs 1 ms: no kernel at all is fastest
        fn()
        return 0.1 + sum(mm.mode == "auto" for mm in cm.modules()
                         if isinstance(mm, st.SpconvConv2d))

    d, report = layout.decide(cm, (x,), rows, 1.05, by_kernels)
    assert report["chosen"] == "all_kept" and d == layout.all_kept(rows)
    assert report["candidates"]["all_kept"] == {"spconv": [],
                                                "channels_last": ["c1", "c2", "c3", "c4"]}
    assert all(mm.mode == "torch" for mm in cm.modules() if isinstance(mm, st.SpconvConv2d))


    def kernels_gain(total):  # any kernel at all saves `total` of the all-kept time
        return lambda fn: 1.0 - total * (by_kernels(fn) > 0.1)

    # 1.5%: under the end-to-end margin (2%), so no kernel
    d, report = layout.decide(cm, (x,), rows, 1.05, kernels_gain(0.015))
    assert report["chosen"] == "all_kept" and report["end_to_end_margin"] == 1.02
    # with min_speedup 1.0 any gain keeps the kernels
    d, report = layout.decide(cm, (x,), rows, 1.0, kernels_gain(0.015))
    assert report["chosen"] in ("layouts", "nchw_only") and report["end_to_end_margin"] == 1.0
    assert report["end_to_end_ms"][report["chosen"]] < report["end_to_end_ms"]["all_kept"]
    # 3%: end to end that clears 2%, though a layer must win by 5%
    d, report = layout.decide(cm, (x,), rows, 1.05, kernels_gain(0.03))
    assert report["chosen"] in ("layouts", "nchw_only")

    # a GPU that slows down by 1% at each timing: the rounds, in alternating order, leave
    # every candidate the same mean, where one pass would have favoured the first timed
    seen = []

    def drifting(fn):
        fn()
        seen.append(1.0 + 0.01 * len(seen))
        return seen[-1]
    d, report = layout.decide(cm, (x,), rows, 1.0, drifting)
    assert len(seen) == len(report["candidates"]) * layout.END_TO_END_ROUNDS
    assert all(len(t) == layout.END_TO_END_ROUNDS
               for t in report["end_to_end_rounds_ms"].values())
    assert len({round(t, 9) for t in report["end_to_end_ms"].values()}) == 1


def test_stricter_margins_keep_the_large_wins(fake_compiler, tmp_path):
    # c1 wins 5x alone, c2 1.25x (1.0 against a 1.25 channels-last time). In the network c2
    # loses (a kernel's code is cold there: layout.py's docstring) and c1 still wins, so the
    # descent at the layers' own margin (c1 and c2 compiled) loses to every layer kept,
    # and only a stricter margin's plan, c1 alone, beats it end to end.
    m, x, cm = compiled(fake_compiler, tmp_path)
    rows = {"c1": row(1.0, 5.0, 5.0, 0.0), "c2": row(1.0, 1.25, 1.25, 0.0),
            "c3": row(9.0, 5.0, 0.5, 0.0), "c4": row(9.0, 5.0, 0.7, 0.0)}

    def network(fn):
        fn()
        auto = {n for n, mm in cm.named_modules()
                if isinstance(mm, st.SpconvConv2d) and mm.mode == "auto"}
        return 1.0 - 0.05 * ("c1" in auto) + 0.1 * ("c2" in auto)
    d, report = layout.decide(cm, (x,), rows, 1.0, network)
    assert report["candidates"]["layouts"]["spconv"] == ["c1", "c2"]
    assert report["candidates"]["layouts_x1.5"]["spconv"] == ["c1"]
    # the 2x and 3x margins choose what 1.5x did: timed once
    assert "layouts_x2" not in report["candidates"] and "layouts_x3" not in report["candidates"]
    assert report["chosen"] == "layouts_x1.5"
    assert report["end_to_end_ms"]["layouts_x1.5"] == pytest.approx(0.95)
    assert report["end_to_end_ms"]["layouts"] == pytest.approx(1.05)
    assert (cm.c1.mode, cm.c2.mode) == ("auto", "torch")
    assert close(cm(x), m(x))


class Bottleneck(nn.Module):
    """conv3 (no activation), the residual computed after it, += and ReLU: torchvision's."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(8, 8, 1)
        self.c3 = nn.Conv2d(8, 8, 1)
        self.down = nn.Conv2d(8, 8, 1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.c3(self.relu(self.c1(x)))
        identity = self.down(x)
        out += identity
        return self.relu(out)


def test_conv_add_relu_is_one_call(fake_compiler, tmp_path):
    # the rewrite, on the traced model: c3 (the first of the add's two convs) takes it
    m = Bottleneck()
    gm = torch.fx.symbolic_trace(m)
    assert [n.target for n in gm.graph.nodes if n.op == "call_module"] == [
        "c1", "relu", "c3", "down", "relu"]
    assert layout.fuse_residual_adds(gm, {"c3", "down"}) == ["c3"]
    # c3 now runs after the residual it adds, and the add and ReLU are gone
    assert [(n.target, len(n.args)) for n in gm.graph.nodes if n.op == "call_module"] == [
        ("c1", 1), ("relu", 1), ("down", 1), ("c3", 2)]
    # build does the same (FP32 as half): c3's kernel takes the residual
    m, x, cm = compiled(fake_compiler, tmp_path, Bottleneck, (2, 8, 6, 6))
    calls = [(n.target, len(n.args)) for n in cm.graph.nodes if n.op == "call_module"]
    assert calls == [("c1", 1), ("down", 1), ("c3", 2)] and cm.c3.takes_residual
    # the fused call is a junction of c3 and its residual's layer
    assert [(a, b) for a, b, _ in layout.graph_junctions(cm, {"c1", "c3", "down"})] == [
        ("c3", "down")]
    assert close(cm(x), m(x))
    cm.c3.keep_in_torch("channels_last")  # on CPU: relu(conv + residual), unfused
    assert close(cm(x), m(x))
    assert layout.fuse_residual_adds(cm, {"c3", "down"}) == []


needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@needs_cuda
@pytest.mark.parametrize("layout_option", ["nchw", "image_pairs"])
@pytest.mark.parametrize("impl", ["folded", "original"])
def test_kept_channels_last_on_a_gpu(fake_compiler, tmp_path, impl, layout_option):
    # FP16 on CUDA: the fused cuDNN calls (conv + ReLU, conv + residual + ReLU) run and give
    # the model's result within half precision; the original modules' way too
    torch.manual_seed(0)
    m = prune_(Bottleneck(), 0.6).eval().half().cuda()
    x = torch.randn(2, 8, 6, 6).half().cuda()
    cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False,
                    kernel_cache=False, min_speedup=None, layout=layout_option)
    assert [(n.target, len(n.args)) for n in cm.graph.nodes if n.op == "call_module"] == [
        ("c1", 1), ("down", 1), ("c3", 2)]
    for name in ("c1", "c3", "down"):
        getattr(cm, name).keep_in_torch("channels_last", impl)
    if layout_option == "image_pairs":
        # kept by hand after carry.py placed pair kernels: the graph still carries pairs
        # between them (SpconvConv2d._give); the output is the model's all the same
        with torch.no_grad():
            assert close(cm(x).float(), m(x).float(), rel=1e-2)
        return
    with torch.no_grad():
        ref, out = m(x).float(), cm(x)
    assert out.is_contiguous(memory_format=torch.channels_last)
    assert close(out.float(), ref, rel=1e-2)
    if impl == "folded":
        assert cm.c1._fused_relu and cm.c3._fused_add


class Mixed(nn.Module):
    """c1: 3 -> 16, 3x3 (at most 27 FMAs per output); c2: 16 -> 16, 3x3 (144 at most)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.b1 = nn.BatchNorm2d(16)
        self.c2 = nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        return self.c2(F.relu(self.b1(self.c1(x))))


def test_half_rule_rewrites_without_a_kernel(fake_compiler, tmp_path):
    from immconv.torch import policy
    torch.manual_seed(0)
    m = prune_(Mixed(), 0.2).eval().to(torch.bfloat16)
    assert policy.default_keep(m.c1) is None
    why = policy.default_keep(m.c2)
    assert why.startswith(policy.HALF_RULE) and "> 64" in why
    assert policy.default_keep(m.c2.float()) is None  # FP32: the 256 rule
    m = m.to(torch.bfloat16)
    x = torch.randn(1, 3, 8, 8).to(torch.bfloat16)
    cm = st.compile(m, x, out_dir=str(tmp_path), progress=False, kernel_cache=False)
    # only c1 went to the compiler; c2 is rewritten all the same, without a kernel
    from immconv.torch import pipeline
    assert len(fake_compiler) == 1 and [sp.name for sp in pipeline._last_specs] == ["c1"]
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert [l["module"] for l in man["layers"]] == ["c1"]
    assert [l["module"] for l in man["fused"]] == ["c2"] and "c2" not in man["kept"]
    assert man["fused"][0]["fused_only"].startswith(policy.HALF_RULE)
    assert cm.c2.kernel is None and (cm.c2.mode, cm.c2.kept_layout) == ("torch",
                                                                      "channels_last")
    with pytest.raises(RuntimeError, match="c2 has no kernel"):
        cm.c2.run_kernel(x)
    ref = m(x).float()
    assert close(cm(x).float(), ref, rel=2e-2)
    lm = st.load(m, str(tmp_path))
    assert lm.c2.kernel is None and lm.c2.mode == "torch"
    assert close(lm(x).float(), ref, rel=2e-2)
    # a layer without a kernel has no kernel option in the measured policy
    assert layout.SPCONV not in layout.options({"spconv": None, "kept": 1.0})
