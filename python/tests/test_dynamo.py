"""What sits below torch.compile / torch.export, tested on CPU without dynamo: the graph
forms those hand over (functional calls with weights as graph inputs; ATen ops with weights
as attributes) are lifted and compiled like a module model, the backend specialises per
input shape and per weight version, and the kernel cache keys agree across front ends."""
import copy
import operator
import os

import pytest

torch = pytest.importorskip("torch")
import torch.fx  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import immconv.torch as it  # noqa: E402
from immconv.torch import lift as lift_mod  # noqa: E402
from immconv.torch.dynamo import ImmconvBackend  # noqa: E402


def close(out, ref, rel=1e-5):
    return float((out - ref).abs().max()) <= rel * float(ref.abs().max())


def pruned(shape, p, seed):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(shape, generator=g)
    k = int(p * w.numel())
    thr = w.abs().flatten().kthvalue(k).values
    w[w.abs() <= thr] = 0
    return w


def bn_params(n, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, generator=g) * 0.1, torch.rand(n, generator=g) + 0.5,
            torch.rand(n, generator=g) + 0.5, torch.randn(n, generator=g) * 0.1)


class ModuleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.act = nn.ReLU6()

    def forward(self, x):
        return self.act(self.conv2(torch.relu(self.bn1(self.conv1(x)))))


def module_net():
    m = ModuleNet()
    m.conv1.weight.data = pruned((8, 3, 3, 3), 0.6, 1)
    m.conv2.weight.data = pruned((8, 4, 3, 3), 0.6, 2)
    m.conv2.bias.data = torch.randn(8, generator=torch.Generator().manual_seed(3))
    mean, var, w, b = bn_params(8, 4)
    m.bn1.running_mean.copy_(mean)
    m.bn1.running_var.copy_(var)
    m.bn1.weight.data, m.bn1.bias.data = w, b
    return m.eval()


def inlined_graph(m):
    """The graph dynamo captures from ModuleNet with module inlining (PyTorch >= 2.5):
    functional calls, parameters and buffers as graph inputs, in-place ReLU, hardtanh."""
    def f(x, w1, mean, var, bw, bb, w2, b2):
        y = torch.conv2d(x, w1, None, (1, 1), (1, 1), (1, 1), 1)
        y = F.batch_norm(y, mean, var, bw, bb, False, 0.1, 1e-5)
        y = F.relu(y, inplace=True)
        y = torch.conv2d(y, w2, b2, (2, 2), (1, 1), (1, 1), 2)
        return (F.hardtanh(y, 0.0, 6.0, False),)
    gm = torch.fx.symbolic_trace(f)
    args = [m.conv1.weight, m.bn1.running_mean, m.bn1.running_var, m.bn1.weight, m.bn1.bias,
            m.conv2.weight, m.conv2.bias]
    return gm, args


def test_inlined_dynamo_graph_is_lifted_and_fused(fake_compiler):
    m = module_net()
    x = torch.randn(2, 3, 10, 10)
    gm, params = inlined_graph(m)
    lifted, frozen = lift_mod.lift(it.pipeline.fresh_graph_module(gm), [x] + params)
    assert frozen == set(range(1, 8))
    chains = {c.conv: (c.bn, c.act) for c in it.find_chains(lifted).values()}
    assert list(chains.values()) == [("immconv_bn1", "relu"), (None, "relu6")]
    # gm itself is untouched by lifting a fresh copy
    assert sum(n.op == "call_module" for n in gm.graph.nodes) == 0
    cm = it.pipeline.compile_graph(gm, [x] + params, None, progress=False,
                                   sparsity_threshold=0.0)
    assert len([mm for mm in cm.modules() if isinstance(mm, it.SpconvConv2d)]) == 2
    assert not any(n.op == "call_module" and "bn" in n.target for n in cm.graph.nodes)
    assert close(cm(x, *params)[0], m(x))


def test_backend_specialises_per_shape_and_weight_version(fake_compiler):
    m = module_net()
    x = torch.randn(2, 3, 10, 10)
    gm, params = inlined_graph(m)
    backend = ImmconvBackend(progress=False, sparsity_threshold=0.0)
    with torch.no_grad():
        fn = backend(gm, [x] + params)
        assert backend.stats()["compiles"] == 1 and backend.stats()["convs_compiled"] == 2
        assert close(fn(x, *params)[0], m(x))
        assert backend.stats()["compiles"] == 1          # same shapes, same weights: reused
        x2 = torch.randn(1, 3, 14, 14)                   # a new input shape: compiled again
        assert close(fn(x2, *params)[0], m(x2))
        assert backend.stats()["compiles"] == 2
        m.conv2.weight.mul_(2.0)                         # weights changed in place
        assert close(fn(x, *params)[0], m(x))
        assert backend.stats()["compiles"] == 3
        # the kernels the two shapes got: the same convs, other input shapes
        assert len(fake_compiler) == 3


def test_backend_leaves_training_graphs_to_pytorch(fake_compiler):
    m = module_net()
    x = torch.randn(1, 3, 8, 8)
    gm, params = inlined_graph(m)
    backend = ImmconvBackend(progress=False)
    with pytest.warns(UserWarning, match="records autograd"):
        fn = backend(gm, [x] + params)
    assert fn == gm.forward and not fake_compiler


def test_backend_options_are_checked():
    with pytest.raises(TypeError, match="unknown options"):
        ImmconvBackend(no_such_option=1)
    b = ImmconvBackend()
    gm = torch.fx.symbolic_trace(lambda x: x + 1)
    with pytest.raises(TypeError, match="unknown options"):
        b(gm, [torch.zeros(1)], options={"mode": "max-autotune"})


class FunctionalNet(nn.Module):
    """Functional calls on parameters (get_attr in an fx trace, as in torch.export)."""

    def __init__(self, m):
        super().__init__()
        self.w1 = nn.Parameter(m.conv1.weight.detach().clone())
        self.register_buffer("mean", m.bn1.running_mean.clone())
        self.register_buffer("var", m.bn1.running_var.clone())
        self.bw = nn.Parameter(m.bn1.weight.detach().clone())
        self.bb = nn.Parameter(m.bn1.bias.detach().clone())
        self.w2 = nn.Parameter(m.conv2.weight.detach().clone())
        self.b2 = nn.Parameter(m.conv2.bias.detach().clone())

    def forward(self, x):
        y = F.conv2d(x, self.w1, None, 1, 1)
        y = F.relu(F.batch_norm(y, self.mean, self.var, self.bw, self.bb, False, 0.1, 1e-5))
        return F.relu6(F.conv2d(y, self.w2, self.b2, 2, 1, 1, 2))


def test_cache_keys_agree_across_front_ends(fake_compiler, tmp_path):
    """The module model and its functional twin compile the same convs: the second compile
    finds every kernel in the cache and runs no compiler."""
    m = module_net()
    x = torch.randn(2, 3, 10, 10)
    cm1 = it.compile(m, x, out_dir=str(tmp_path / "a"), progress=False,
                     sparsity_threshold=0.0)
    assert len(fake_compiler) == 1
    gm = torch.fx.symbolic_trace(FunctionalNet(m).eval())
    cm2 = it.compile(gm, x, out_dir=str(tmp_path / "b"), progress=False,
                     sparsity_threshold=0.0)
    assert len(fake_compiler) == 1                        # all from the kernel cache
    k1 = [l["key"] for l in cm1.immconv_manifest["layers"]]
    k2 = [l["key"] for l in cm2.immconv_manifest["layers"]]
    assert k1 == k2 and len(k1) == 2
    assert close(cm2(x), m(x))
    # the user's GraphModule is left as it was
    assert not any(n.op == "call_module" for n in gm.graph.nodes)
    # and load() rebuilds it from the directory
    lm = it.load(gm, str(tmp_path / "b"))
    assert close(lm(x), m(x))


def test_aten_graph_as_torch_export_gives_it(fake_compiler):
    """aten.convolution / aten.batch_norm / aten.relu / aten.hardtanh with get_attr weights,
    the ops of an ExportedProgram's module()."""
    aten = torch.ops.aten
    m = module_net()
    root = nn.Module()
    for k, v in {"w1": m.conv1.weight, "mean": m.bn1.running_mean, "var": m.bn1.running_var,
                 "bw": m.bn1.weight, "bb": m.bn1.bias, "w2": m.conv2.weight,
                 "b2": m.conv2.bias}.items():
        root.register_buffer(k, v.detach().clone())
    g = torch.fx.Graph()
    x = g.placeholder("x")
    a = {k: g.get_attr(k) for k in ("w1", "mean", "var", "bw", "bb", "w2", "b2")}
    y = g.call_function(aten.convolution.default,
                        (x, a["w1"], None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1))
    y = g.call_function(aten.batch_norm.default,
                        (y, a["bw"], a["bb"], a["mean"], a["var"], False, 0.1, 1e-5, True))
    y = g.call_function(aten.relu.default, (y,))
    y = g.call_function(aten.conv2d.default, (y, a["w2"], a["b2"], [2, 2], [1, 1], [1, 1], 2))
    y = g.call_function(aten.hardtanh.default, (y, 0.0, 6.0))
    g.output(y)
    gm = torch.fx.GraphModule(root, g)
    xin = torch.randn(2, 3, 10, 10)
    cm = it.pipeline.compile_graph(gm, (xin,), None, progress=False, sparsity_threshold=0.0)
    sp = [mm for mm in cm.modules() if isinstance(mm, it.SpconvConv2d)]
    assert [s.activation for s in sp] == ["relu", "relu6"]
    assert close(cm(xin), m(xin))


def test_graph_modules_that_refuse_eval_are_compiled(fake_compiler, tmp_path, monkeypatch):
    """ExportedProgram.module() raises NotImplementedError on .eval() (PyTorch 2.11); its
    graph is compiled all the same (a stand-in ExportedProgram class on torch 1.13)."""
    class NoEval(torch.fx.GraphModule):
        def eval(self):
            raise NotImplementedError("Calling eval() is not supported yet.")

        def train(self, mode=True):
            if not mode:
                raise NotImplementedError("Calling eval() is not supported yet.")
            return self

    class FakeExportedProgram:
        def __init__(self, gm):
            self.gm = gm

        def module(self):  # a fresh module each call, as ExportedProgram.module() gives
            return NoEval(self.gm, copy.deepcopy(self.gm.graph))

    monkeypatch.setattr(it.pipeline, "exported_program_class", lambda: FakeExportedProgram)
    m = module_net()
    x = torch.randn(2, 3, 10, 10)
    gm = torch.fx.symbolic_trace(FunctionalNet(m).eval())
    ep = FakeExportedProgram(gm)
    with pytest.raises(NotImplementedError):
        ep.module().eval()
    cm = it.compile(ep, (x,), out_dir=str(tmp_path), progress=False, sparsity_threshold=0.0)
    assert isinstance(cm, NoEval)
    assert len([mm for mm in cm.modules() if isinstance(mm, it.SpconvConv2d)]) == 2
    assert close(cm(x), m(x))
    assert close(it.load(ep, str(tmp_path))(x), m(x))


def test_lift_leaves_non_constant_and_training_convs(fake_compiler):
    def f(x, w):
        y = torch.conv2d(x, w * 2.0)                  # weight computed in the graph
        return F.batch_norm(y, torch.zeros(4), torch.ones(4), training=True)
    gm = torch.fx.symbolic_trace(f)
    x, w = torch.randn(1, 2, 5, 5), torch.randn(4, 2, 3, 3)
    lifted, frozen = lift_mod.lift(it.pipeline.fresh_graph_module(gm), [x, w])
    assert frozen == set()
    assert not any(n.op == "call_module" for n in lifted.graph.nodes)


def test_max_pools_are_lifted_in_every_graph_form():
    """Functional, torch.* and ATen max pools become nn.MaxPool2d calls (what carry.py keeps
    image pairs through); a pool whose indices are read stays as it is."""
    aten = torch.ops.aten
    g = torch.fx.Graph()
    x = g.placeholder("x")
    ys = [g.call_function(F.max_pool2d, (x, 3, 2, 1)),
          g.call_function(torch.max_pool2d, (x, [2, 2])),
          g.call_function(aten.max_pool2d.default, (x, [3, 2], [1, 2], [1, 0], [1, 1], True))]
    both = g.call_function(aten.max_pool2d_with_indices.default, (x, [2, 2], [2, 2]))
    ys.append(g.call_function(operator.getitem, (both, 0)))
    kept = g.call_function(aten.max_pool2d_with_indices.default, (x, [3, 3]))
    ys += [g.call_function(operator.getitem, (kept, 0)),
           g.call_function(operator.getitem, (kept, 1))]
    g.output(tuple(ys))
    gm = torch.fx.GraphModule(nn.Module(), g)
    xin = torch.randn(2, 3, 9, 8)
    ref = gm(xin)
    # lift() takes the convs and BNs only; build() lifts the pools of every graph it builds
    convs, frozen = lift_mod.lift(it.pipeline.fresh_graph_module(gm), [xin])
    assert frozen == set() and not any(n.op == "call_module" for n in convs.graph.nodes)
    lifted = lift_mod.lift_pools(it.pipeline.fresh_graph_module(gm))
    pools = [(n.target, lifted.get_submodule(n.target)) for n in lifted.graph.nodes
             if n.op == "call_module"]
    assert [(p.kernel_size, p.stride, p.padding, p.ceil_mode) for _, p in pools] == [
        ((3, 3), (2, 2), (1, 1), False), ((2, 2), (2, 2), (0, 0), False),
        ((3, 2), (1, 2), (1, 0), True), ((2, 2), (2, 2), (0, 0), False)]
    assert all(isinstance(p, nn.MaxPool2d) for _, p in pools)
    left = [n for n in lifted.graph.nodes if n.op == "call_function"
            and lift_mod.op_name(n.target) == "aten::max_pool2d_with_indices"]
    assert len(left) == 1  # the one whose indices are read
    for a, b in zip(lifted(xin), ref):
        assert torch.equal(a, b)


def test_export_programs_are_accepted_when_torch_has_export(fake_compiler, tmp_path):
    export = getattr(torch, "export", None)
    if export is None or not hasattr(export, "export"):
        pytest.skip("torch.export needs PyTorch 2 (checked on the GPU machine: "
                    "bench/torch_backend.py)")
    m = module_net()
    x = torch.randn(2, 3, 10, 10)
    ep = export.export(m, (x,))
    cm = it.compile(ep, (x,), out_dir=str(tmp_path), progress=False, sparsity_threshold=0.0)
    assert len([mm for mm in cm.modules() if isinstance(mm, it.SpconvConv2d)]) == 2
    assert close(cm(x), m(x))


def test_register_needs_dynamo():
    if not hasattr(torch, "_dynamo"):
        from immconv.torch import dynamo
        with pytest.raises(ImportError):
            dynamo.register()
    else:
        from immconv.torch import dynamo
        assert dynamo.register() is dynamo.immconv_backend
    assert os.path.basename(lift_mod.__file__) == "lift.py"
