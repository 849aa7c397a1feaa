"""immconv.torch with float16/bfloat16 models (docs/python.md "Half precision"), on CPU: the
spconv.conv2d written for a half model (dtype, accumulate, FP32-folded f32 weights), the
rounding rule, cache keys, the sidecar checks, the reference, the measurement's baseline, and
that FP32 compiles are what they were. With spconv-translate and ptxas: a real compile of a
half model, and its module through spconv-cpu-check (the CPU twin within the stated bound)."""
import json
import os
import re
import subprocess
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import immconv.torch as st  # noqa: E402
from immconv import folding, launch, mlir  # noqa: E402
from immconv.torch import kcache, pipeline  # noqa: E402
from conftest import TRANSLATE, needs_ptxas, needs_translate  # noqa: E402
from test_torch import prune_  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)

    def forward(self, x):
        return self.c2(F.relu(self.b1(self.c1(x))))


def net(dtype=torch.float32):
    torch.manual_seed(0)
    return prune_(Net(), 0.6).to(dtype)


def module_text(tmp_path):
    """The one MLIR module the (fake) compile was given."""
    (path,) = [os.path.join(r, f) for r, _, fs in os.walk(tmp_path) for f in fs
               if f == "model.mlir"]
    with open(path) as f:
        return f.read()


def convs(text):
    return re.findall(r"spconv\.conv2d %x \{(.*?)\}\s*: (tensor<[^>]*>) -> (tensor<[^>]*>)",
                      text, re.S)


@pytest.mark.parametrize("dtype,elem", [(torch.float16, "f16"), (torch.bfloat16, "bf16")])
def test_half_model_gives_half_convs_with_f32_folded_weights(fake_compiler, tmp_path, dtype,
                                                             elem):
    m = net(dtype)
    x = torch.randn(2, 3, 12, 12).to(dtype)
    cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False,
                    kernel_cache=False)
    text = module_text(tmp_path)
    found = convs(text)
    assert len(found) == 2
    assert found[0][1] == "tensor<2x3x12x12x%s>" % elem
    assert found[0][2] == "tensor<2x8x12x12x%s>" % elem
    assert found[1][2] == "tensor<2x8x6x6x%s>" % elem
    for attrs, _, _ in found:
        # the default: sums in the model's own type; weights (and bias) as f32 blobs
        assert "accumulate = %s" % elem in attrs
        assert re.search(r"weights = dense_resource<\w+> : tensor<8x\dx3x3xf32>", attrs)
    # c1's weights are BN folded in FP32 from the half parameters read as float32
    blobs = mlir.read_resources(text)
    g = lambda t: t.detach().double().numpy()  # noqa: E731
    w, b = folding.fold_bn(m.c1.weight.detach().float().numpy(), None, g(m.b1.weight),
                           g(m.b1.bias), g(m.b1.running_mean), g(m.b1.running_var), m.b1.eps)
    assert np.array_equal(blobs["c1_w"], w.reshape(-1))
    assert np.array_equal(blobs["c1_b"], b)
    # c2 (no BN): its half weights, exactly, as f32
    assert np.array_equal(blobs["c2_w"], m.c2.weight.detach().float().numpy().reshape(-1))
    man = json.load(open(tmp_path / "manifest.json"))
    assert [(l["dtype"], l["accumulate"]) for l in man["layers"]] == [(elem, elem)] * 2
    mods = {n: mm for n, mm in cm.named_modules() if isinstance(mm, st.SpconvConv2d)}
    assert mods["c1"].dtype == dtype and mods["c1"].weight.dtype == torch.float32
    assert "dtype=%s" % str(dtype)[6:] in repr(mods["c1"])
    # load() rebuilds it, and refuses the FP32 model those kernels were not made for
    lm = st.load(m, str(tmp_path))
    assert {type(mm).__name__ for mm in lm.modules()} >= {"SpconvConv2d"}
    with pytest.raises(st.LoadError, match="compiled for %s weights" % elem):
        st.load(net(torch.float32), str(tmp_path))


def test_accumulate_option_and_its_check(fake_compiler, tmp_path):
    m = net(torch.bfloat16)
    x = torch.randn(1, 3, 12, 12).to(torch.bfloat16)
    st.compile(m, x, out_dir=str(tmp_path / "a"), sparsity_threshold=0.0, progress=False,
               accumulate="f32", kernel_cache=False)
    found = convs(module_text(tmp_path / "a"))
    assert all("accumulate = f32" in a for a, _, _ in found)
    assert all(t.endswith("xbf16>") for _, t, _ in found)
    with pytest.raises(ValueError, match="accumulate must be one of"):
        st.compile(m, x, out_dir=str(tmp_path / "b"), sparsity_threshold=0.0, progress=False,
                   accumulate="f64")
    # the attribute is refused where it means nothing
    spec = mlir.ConvSpec(name="c", weights=np.ones((1, 1, 1, 1), np.float32),
                         input_shape=(1, 1, 2, 2), accumulate="f16")
    with pytest.raises(ValueError, match="does not apply to a f32 conv"):
        mlir.func_text(spec)
    with pytest.raises(ValueError, match="does not apply"):
        mlir.func_text(mlir.ConvSpec(name="c", weights=np.ones((1, 1, 1, 1), np.float32),
                                     input_shape=(1, 1, 2, 2), dtype="bf16", accumulate="f16"))


def test_fp32_compiles_are_unchanged(fake_compiler, tmp_path, monkeypatch):
    # the keys below are those without a tuning table (a table's hash joins the key)
    monkeypatch.delenv("SPCONV_TUNING_TABLE", raising=False)
    m = net(torch.float32)
    x = torch.randn(1, 3, 12, 12)
    st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False,
               accumulate="f32", kernel_cache=False)
    text = module_text(tmp_path)
    assert "accumulate" not in text and "f16" not in text
    assert all(t.endswith("xf32>") for _, t, _ in convs(text))
    man = json.load(open(tmp_path / "manifest.json"))
    assert [(l["dtype"], l["accumulate"]) for l in man["layers"]] == [("f32", None)] * 2
    # an FP32 conv's cache key is what it was before half precision existed (computed by
    # the layer_key of 7829791), so FP32 kernel caches stay valid
    w = np.arange(2 * 3 * 3 * 3, dtype=np.float32).reshape(2, 3, 3, 3) - 20
    w[w % 3 == 0] = 0
    spec = mlir.ConvSpec(name="c", weights=w, bias=np.array([0.5, -1], np.float32),
                         input_shape=(1, 3, 8, 8), padding=(1, 1, 1, 1), activation="relu")
    assert kcache.layer_key(spec) == "18bce2b2af43724d356062bb30af8c72"
    assert kcache.layer_key(spec, ("--fold-at=llvm",)) == "f5e8ce89ef42269fc279d4756e54aa70"


def test_cache_keys_include_dtype_and_accumulate():
    w = np.random.default_rng(0).standard_normal((4, 2, 3, 3)).astype(np.float32)
    keys = set()
    for dtype, acc in (("f32", None), ("f16", "f16"), ("f16", "f32"), ("bf16", "bf16"),
                       ("bf16", "f32")):
        keys.add(kcache.layer_key(mlir.ConvSpec(name="c", weights=w, input_shape=(2, 2, 6, 6),
                                                dtype=dtype, accumulate=acc)))
    assert len(keys) == 5


def test_rounding_rule_unfolds_bn_or_keeps_the_conv(fake_compiler, tmp_path):
    m = net(torch.float16)
    # folded in FP32 these c1 weights are ~5e-10 (gamma 1.2e-7 over sqrt(6e4)): fine in f32,
    # zero in f16; the conv's own half weights are representable, so the BN stays a PyTorch
    # op and c1 is compiled alone
    m.b1.weight.data[:] = 1e-7
    m.b1.running_var.data[:] = 6e4
    x = torch.randn(1, 3, 12, 12).half()
    with pytest.warns(UserWarning, match=r"BatchNorm b1 not folded .*would round to zero or "
                                         r"overflow in f16"):
        cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False,
                        kernel_cache=False)
    assert cm.c1.activation == "none"
    assert "b1" in [n.target for n in cm.graph.nodes if n.op == "call_module"]
    # the same factors are fine in bfloat16 (its exponent range is float32's)
    mb = net(torch.bfloat16)
    mb.b1.weight.data[:] = 1e-7
    mb.b1.running_var.data[:] = 6e4
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        cmb = st.compile(mb, x.bfloat16(), out_dir=str(tmp_path / "bf"), sparsity_threshold=0.0,
                         progress=False, kernel_cache=False)
    assert not [r for r in rec if "not folded" in str(r.message)]
    assert cmb.c1.activation == "relu"
    # the rule itself: zero stays zero, nonzero must stay nonzero and finite
    w = np.array([0.0, -0.0, 1.0, 1e-9], np.float32)
    assert pipeline.half_refusal(w[:3], None, "f16") is None
    assert re.match(r"weight \[3\] = 9\.99+\d*e-10 would round to zero",
                    pipeline.half_refusal(w, None, "f16"))
    assert pipeline.half_refusal(w, None, "bf16") is None
    assert "bias value [0]" in pipeline.half_refusal(w[:3], np.array([7e4], np.float32), "f16")
    assert pipeline.half_refusal(w, np.array([7e4], np.float32), "f32") is None


def test_mixed_input_dtype_stays_in_pytorch(fake_compiler, tmp_path):
    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Conv2d(3, 4, 3)

        def forward(self, x):
            return self.c(x.float()).bfloat16()

    m = prune_(Mixed(), 0.5)
    cm = st.compile(m, torch.randn(1, 3, 8, 8).bfloat16(), out_dir=str(tmp_path),
                    sparsity_threshold=0.0, progress=False, kernel_cache=False)
    assert isinstance(cm.c, st.SpconvConv2d) and cm.c.dtype == torch.float32
    m.c.bfloat16()

    class Mixed2(Mixed):
        def forward(self, x):
            return self.c(x)

    m2 = Mixed2()
    m2.c = m.c
    cm2 = st.compile(m2, torch.randn(1, 3, 8, 8).bfloat16(), out_dir=str(tmp_path / "2"),
                     sparsity_threshold=0.0, progress=False, kernel_cache=False)
    assert isinstance(cm2.c, st.SpconvConv2d) and cm2.c.dtype == torch.bfloat16


def test_bf16_reference_rounds_like_the_kernel(fake_compiler, tmp_path):
    m = net(torch.bfloat16)
    x = torch.randn(2, 3, 12, 12)
    xb = x.bfloat16()
    cm = st.compile(m, xb, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False,
                    kernel_cache=False)
    out = cm(xb)
    assert out.dtype == torch.bfloat16 and out.shape == (2, 8, 6, 6)
    ref = net(torch.float32)(xb.float())   # FP32 model on the same (rounded) input
    err = float((out.float() - ref).abs().max() / ref.abs().max())
    assert 0 < err < 3e-2


def test_sidecar_checks_for_half_kernels():
    spec = mlir.ConvSpec(name="c", weights=np.ones((4, 2, 3, 3), np.float32),
                         input_shape=(5, 2, 6, 6), dtype="f16", accumulate="f16")
    from conftest import fake_kernel
    k = fake_kernel(0, spec)
    assert k["grid"][2] == 3      # paired images: ceil(5 / 2) words
    launch.check_kernel(k)
    bad = json.loads(json.dumps(k))
    bad["grid"][2] = 5
    with pytest.raises(launch.SidecarError, match="batch over images_per_block"):
        launch.check_kernel(bad)
    bad = json.loads(json.dumps(k))
    del bad["numerics"]
    with pytest.raises(launch.SidecarError, match="states its numerics"):
        launch.check_kernel(bad)
    bad = json.loads(json.dumps(k))
    bad["params"][1]["dtype"] = "f32"
    with pytest.raises(launch.SidecarError, match="share one dtype"):
        launch.check_kernel(bad)
    # the image-pair layout: a half dtype and an even batch; no other layout name
    good = json.loads(json.dumps(k))
    for p in good["params"]:
        p["layout"] = "image_pairs"
    good["conv"]["N"] = 2
    for p in good["params"]:
        p["shape"][0] = 2
    good["grid"][2] = 1
    launch.check_kernel(good)
    bad = json.loads(json.dumps(good))
    bad["params"][0]["layout"] = "nhwc"
    with pytest.raises(launch.SidecarError, match="layouts must be nchw"):
        launch.check_kernel(bad)
    with pytest.raises(ValueError, match="stores its tensors as"):
        st.SpconvConv2d("c", good, "x.cubin", "x.json", spec.weights, None, (1, 1), (0,) * 4,
                        (1, 1), 1, "none", spec.input_shape, spec.output_shape, nn.Identity(),
                        dtype=torch.float16)
    # a module refuses a kernel of another dtype than its conv's
    with pytest.raises(ValueError, match="not bf16"):
        st.SpconvConv2d("c", k, "x.cubin", "x.json", spec.weights, None, (1, 1), (0,) * 4,
                        (1, 1), 1, "none", spec.input_shape, spec.output_shape, nn.Identity(),
                        dtype=torch.bfloat16)


def test_layer_baseline_is_channels_last_in_the_layer_dtype(fake_compiler, tmp_path):
    from immconv.torch.bench import baseline
    for dtype, name in ((torch.float32, "cudnn_fp32"),
                        (torch.float16, "cudnn_fp16_channels_last"),
                        (torch.bfloat16, "cudnn_bf16_channels_last")):
        m = net(dtype)
        x = torch.randn(1, 3, 12, 12).to(dtype)
        cm = st.compile(m, x, out_dir=str(tmp_path / name), sparsity_threshold=0.0,
                        progress=False, kernel_cache=False)
        got, orig, xb = baseline(cm.c1, x)
        assert got == name
        w = orig[0].weight
        if dtype == torch.float32:
            assert orig is cm.c1.original and xb is x
        else:
            assert w.dtype == dtype and w.is_contiguous(memory_format=torch.channels_last)
            assert xb.is_contiguous(memory_format=torch.channels_last)
            assert cm.c1.original[0].weight.is_contiguous()   # the module's own is untouched


def test_totals_of_mixed_rows():
    rows = [{"spconv": 1.0, "cudnn": 2.0, "baseline": "cudnn_fp32", "cudnn_fp32": 2.0},
            {"spconv": 1.0, "cudnn": 3.0, "baseline": "cudnn_fp16_channels_last",
             "cudnn_fp16_channels_last": 3.0}]
    assert pipeline.totals(rows) == {"spconv": 2.0, "cudnn": 5.0}
    assert pipeline.totals(rows[:1]) == {"spconv": 1.0, "cudnn": 2.0, "cudnn_fp32": 2.0}


def test_backend_takes_accumulate():
    from immconv.torch.dynamo import ImmconvBackend
    assert ImmconvBackend(accumulate="f32", compiler_args=["--fold-at=llvm"]).options
    with pytest.raises(TypeError, match="unknown options"):
        ImmconvBackend(accumulation="f32")


@needs_translate
@needs_ptxas
@pytest.mark.parametrize("dtype,elem", [(torch.float16, "f16"), (torch.bfloat16, "bf16")])
def test_real_half_compile_and_cpu_twin(tmp_path, dtype, elem):
    m = net(dtype)
    x = torch.randn(2, 3, 12, 12).to(dtype)
    cm = st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False,
                    kernel_cache=False)
    man = json.load(open(tmp_path / "manifest.json"))
    side = json.load(open(tmp_path / man["layers"][0]["sidecar"]))
    assert len(side["kernels"]) == 2
    for k in side["kernels"]:
        assert [p["dtype"] for p in k["params"]] == [elem, elem]
        assert k["numerics"]["dtype"] == elem and k["numerics"]["accumulate"] == elem
        assert k["numerics"]["pairing"] == "images" and k["grid"][2] == 1
    assert isinstance(cm.c2, st.SpconvConv2d) and cm.c2.dtype == dtype
    # The module immconv wrote, through the CPU twin of the kernels: every output within the
    # bound the compiler states (spconv-cpu-check fails above it), for both accumulations.
    specs = [l["_spec"] for l in pipeline.plan(m, x, 0.0)[0]]
    for acc in (elem, "f32"):
        for s in specs:
            s.accumulate = acc
        path = tmp_path / ("twin-%s.mlir" % acc)
        mlir.write_module(str(path), specs)
        tool = os.path.join(os.path.dirname(TRANSLATE), "spconv-cpu-check")
        r = subprocess.run([tool, str(path)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        lines = [l for l in r.stdout.splitlines() if l.startswith("PASS conv")]
        assert len(lines) == 2, r.stdout
        for l in lines:
            assert re.search(r"%spairimagese\d+acc%s(layimage_pairs)? tiling" % (elem, acc),
                             l), l
            assert float(l.split("of-bound ")[1].split()[0]) <= 1.0


def test_backend_follows_a_bf16_graph(fake_compiler):
    """What torch.compile hands the backend for a bfloat16 model (functional convs and BN,
    half parameters as graph inputs): half kernels, the accumulate option honoured."""
    from immconv.torch.dynamo import ImmconvBackend
    from test_dynamo import inlined_graph, module_net
    m = module_net().to(torch.bfloat16)
    x = torch.randn(2, 3, 10, 10).to(torch.bfloat16)
    gm, params = inlined_graph(m)
    backend = ImmconvBackend(progress=False, sparsity_threshold=0.0, accumulate="f32")
    with torch.no_grad():
        fn = backend(gm, [x] + params)
        out = fn(x, *params)[0]
    cm = next(iter(fn.specialised.values()))
    mods = [mm for mm in cm.modules() if isinstance(mm, st.SpconvConv2d)]
    assert [(mm.dtype, mm.accumulate) for mm in mods] == [(torch.bfloat16, "f32")] * 2
    assert [(l["dtype"], l["accumulate"]) for l in cm.immconv_manifest["layers"]] == \
        [("bf16", "f32")] * 2
    ref = m.float()(x.float())   # the bf16 model's own values, in FP32
    assert out.dtype == torch.bfloat16
    assert float((out.float() - ref).abs().max() / ref.abs().max()) < 3e-2


def test_convs_the_ptx_fold_refuses_are_compiled_with_the_llvm_fold(fake_compiler, tmp_path,
                                                                     monkeypatch,
                                                                     kernel_cache_dir):
    """spconv-translate refuses (one at a time) a template its PTX-level fold cannot patch;
    those convs go to a second compile with --fold-at=llvm, under their own keys."""
    from immconv import compiler
    fake = pipeline.compile_mlir
    seen = []

    def refusing(mlir_path, prefix, **kw):
        text = open(mlir_path).read()
        seen.append((sorted(set(re.findall(r'loc\("(\w+)"\)', text))), kw.get("extra_args")))
        if "--fold-at=llvm" not in kw.get("extra_args", ()):
            for name in ("c2",):
                if 'loc("%s")' % name in text:
                    raise compiler.CompileError(
                        "spconv-translate failed (exit 1):\n<unknown>:0: error: loc(\"%s\"): "
                        "NVPTX produced a template the PTX-level fold cannot patch (template "
                        "PTX line 25: ...); --fold-at=llvm folds in LLVM IR instead\n" % name)
        return fake(mlir_path, prefix, **kw)

    monkeypatch.setattr(pipeline, "compile_mlir", refusing)
    m = net(torch.float16)
    x = torch.randn(2, 3, 12, 12).half()
    with pytest.warns(UserWarning, match="refused the template of c2: compiled with "
                                         "--fold-at=llvm"):
        st.compile(m, x, out_dir=str(tmp_path), sparsity_threshold=0.0, progress=False)
    assert seen == [(["c1", "c2"], ()), (["c1"], ()), (["c2"], ("--fold-at=llvm",))]
    man = json.load(open(tmp_path / "manifest.json"))
    cubins = {l["module"]: l["cubin"] for l in man["layers"]}
    assert cubins["c1"] != cubins["c2"]
    # the keys are the default compile's: a second compile finds both in the kernel cache
    calls = len(seen)
    st.compile(m, x, out_dir=str(tmp_path / "again"), sparsity_threshold=0.0, progress=False)
    assert len(seen) == calls
    # an error that names no conv, or a compile asked for --fold-at already, is not retried
    monkeypatch.setenv("IMMCONV_CACHE_DIR", str(tmp_path / "other-cache"))
    with pytest.raises(compiler.CompileError):
        st.compile(m, x, out_dir=str(tmp_path / "3"), sparsity_threshold=0.0, progress=False,
                   compiler_args=["--fold-at=ptx"])
