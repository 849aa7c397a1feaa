"""The measured keep-or-compile decision, with the memory layout a kept layer runs in.

A compiled kernel reads and writes NCHW. A half-precision layer kept in PyTorch can run NCHW
(the original modules on the model's own tensors) or channels-last, where cuDNN's
tensor-core convs are 1.1-2.4x faster on ResNet-50 (bench/results/2026-11-26-torch-half-full)
and SpconvConv2d.run_channels_last also folds the BN and fuses the ReLU. Converting a tensor
between the two layouts is a copy (`contiguous(memory_format=...)`), so which layout pays
depends on the neighbours: a run of kept layers converts once at each end, a lone kept layer
between two kernels twice.

Each layer therefore has up to three options, with the times benchmark_layers measured:

  option                 time                        wants input   gives output
  "spconv"               spconv * min_speedup        NCHW, or image pairs (the row's
                                                     `spconv_layout`: carry.py)
  "torch"                kept (NCHW)                 NCHW          NCHW
  "torch_channels_last"  kept_channels_last          CL            CL

(FP32 layers have the first two; `min_speedup` is the margin a kernel must win by, as
before.) A layer's input arrives in its producer's output layout. In a traced model (an
fx.GraphModule, as immconv.torch builds one) the producer is found by walking back from the
layer's input through each node's first tensor argument, as PyTorch's elementwise ops and
pools give their first input's layout: ResNet's `relu(conv3 + identity)` comes from conv3,
MobileNetV2's `x + conv(x)` from whatever made x. Without a graph, the producer is the layer
whose output tensor is the input (through in-place ops only). A layer without a producer
(the model's input, an op that starts a new layout) takes the layout observed by running
the model. A layer pays `to_channels_last` or `to_nchw` (its input converted, measured; to
and from image pairs `to_image_pairs` and `from_image_pairs` from and to NCHW, and their
`_cl` twins from and to channels-last) when the layout it wants is not the one that arrives.
A half layer without a kernel in image pairs has no such measurement of its own: it is
charged its input's bytes at the median measured rate (`estimated` in its row). After each
decision carry.py rewrites the graph for it: image pairs flow between the kernels that use
them and are converted only where something else reads them.

`choose` minimises the sum of the options' times and the conversions by coordinate descent
from each layer's own fastest option: each layer in turn takes the option that lowers the
total most, counting its own input conversion and those of the layers it feeds, until no
layer changes. An elementwise op over two layers' outputs (ResNet's `conv3 + identity`) is a
junction: where their layouts differ it reads one of them across the grain, charged as one
conversion of that tensor (at the median measured conversion rate). `decide` runs the
descent, then runs the model with the decisions and, where a layer's input arrives in
another layout than the model assumed, takes what it saw (and drops its producer) and
decides again. Last, on CUDA, the whole model is timed from a CUDA graph with the decision,
with the NCHW-only one (a kernel wherever it wins by the margin, else the original modules:
the policy before layouts), with the descent's decisions at STRICTER_MARGINS times
`min_speedup` ("layouts_x2" and so on, where they differ from the others), and with every
layer kept (channels-last cuDNN, no kernel), each END_TO_END_ROUNDS times in alternating
order, the mean kept. The fastest candidate with kernels is kept if it beats every layer
kept by policy.END_TO_END_MIN_SPEEDUP (or `min_speedup` where lower), else every layer is
kept: the model is an estimate, and kernels must pay for their place end to end too. That
margin is smaller than a layer's: it allows for timing noise only, since what it times is
the model itself.

Why the stricter candidates: each layer is timed alone, from warm replays that find the
kernel's code in L2. Inside a network the layers between two runs of a layer evict it, and a
sparse kernel's code is its weights: at batch 1 on an H200, ResNet-50's sparse kernels ran
1.45x their time alone inside the forward (up to 2.2x on layer1's 3x3s), while cuDNN's,
whose code is small and whose weights are read as data, ran about as fast as alone
(bench/results/2026-11-28-b1-e2e, in_network.py). Kernels that win alone by less
than that lose in the network, and with them a plan whose few large wins (the stem) would
have paid. A stricter margin keeps only the large wins; the end-to-end timing decides.
"""
import torch

from .policy import END_TO_END_MIN_SPEEDUP

END_TO_END_ROUNDS = 2  # each candidate timed this many times end to end (even: see decide)
# the descent again at these multiples of min_speedup, each a candidate timed end to end
# (module docstring: a kernel inside the network runs up to ~2x its time alone)
STRICTER_MARGINS = (1.5, 2.0, 3.0)

NCHW, CHANNELS_LAST, ANY = "nchw", "channels_last", "any"
IMAGE_PAIRS = "image_pairs"
SPCONV, TORCH, TORCH_CL = "spconv", "torch", "torch_channels_last"
WANTS = {SPCONV: NCHW, TORCH: NCHW, TORCH_CL: CHANNELS_LAST}


def wants(row, option):
    """The layout `option` of a measured row wants its input in, and gives its output in
    (every option gives what it wants): a kernel's is its row's `spconv_layout` (NCHW, or
    image pairs, which carry.py carries between kernels)."""
    if option == SPCONV:
        return row.get("spconv_layout", NCHW)
    return WANTS[option]


gives = wants
MAX_SWEEPS = 50
MAX_ROUNDS = 3


def layout_of(t):
    """NCHW, CHANNELS_LAST, ANY (both, e.g. C = 1 or H = W = 1), IMAGE_PAIRS (a 5-D tensor
    of image pairs, carry.py) or None (neither)."""
    if t.dim() == 5:
        return IMAGE_PAIRS
    if t.dim() != 4:
        return ANY
    a, b = t.is_contiguous(), t.is_contiguous(memory_format=torch.channels_last)
    return ANY if a and b else NCHW if a else CHANNELS_LAST if b else None


def storage_ptr(t):
    """Where a tensor's storage starts (torch 1.x has no untyped_storage)."""
    return (t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()).data_ptr()


def options(row):
    """{option: its own time} of a measured row (benchmark_layers / the kernel cache)."""
    out = {TORCH: row["kept"]}
    if row.get("spconv") is not None:  # None: a layer without a kernel (policy.HALF_RULE)
        out = {SPCONV: row["spconv"] * row.get("_margin", 1.0), TORCH: row["kept"]}
    if "kept_channels_last" in row:
        out[TORCH_CL] = row["kept_channels_last"]
    return out


def conversion(row, arrives, wants):
    """Time to convert a layer's input from `arrives` to `wants` (0 if they agree). Image
    pairs to and from either 4-D layout are one copy each way, measured from and to NCHW
    (`to_image_pairs`, `from_image_pairs`) and channels-last (`..._cl`; a row of an older
    immconv has only the first two, which then stand for both)."""
    if arrives in (wants, ANY):
        return 0.0
    if wants == IMAGE_PAIRS:
        key = "to_image_pairs_cl" if arrives == CHANNELS_LAST else "to_image_pairs"
        return row.get(key, row.get("to_image_pairs", 0.0))
    if arrives == IMAGE_PAIRS:
        key = "from_image_pairs_cl" if wants == CHANNELS_LAST else "from_image_pairs"
        return row.get(key, row.get("from_image_pairs", 0.0))
    if wants == CHANNELS_LAST:
        return row.get("to_channels_last", 0.0)
    return row.get("to_nchw", 0.0)


def total(rows, producers, observed, decision, junctions=()):
    """The modelled time of `decision` ({layer: option}): options plus conversions, plus
    each junction (a, b, cost) whose two layers give different layouts."""
    t = 0.0
    for name, row in rows.items():
        d = decision[name]
        p = producers.get(name)
        arrives = gives(rows[p], decision[p]) if p in decision else observed.get(name, NCHW)
        t += options(row)[d] + conversion(row, arrives, wants(row, d))
    for a, b, cost in junctions:
        if gives(rows[a], decision[a]) != gives(rows[b], decision[b]):
            t += cost
    return t


def choose(rows, producers, observed, min_speedup, junctions=()):
    """{layer: option} minimising `total` (coordinate descent; see the module docstring).
    rows: {layer: measured row}, in execution order; producers: {layer: producing layer};
    observed: {layer: layout its input arrived in} for layers without a producer;
    junctions: (a, b, cost), an elementwise op over a's and b's outputs that costs `cost`
    more when their layouts differ."""
    rows = {n: dict(r, _margin=min_speedup) for n, r in rows.items()}
    consumers = {n: [] for n in rows}
    for n, p in producers.items():
        if p in consumers and n in rows:
            consumers[p].append(n)
    joins = {n: [] for n in rows}
    for a, b, cost in junctions:
        if a in rows and b in rows and a != b:
            joins[a].append((b, cost))
            joins[b].append((a, cost))
    opts = {n: options(r) for n, r in rows.items()}
    decision = {n: min(o, key=o.get) for n, o in opts.items()}

    def local(name, option):
        row, p = rows[name], producers.get(name)
        arrives = gives(rows[p], decision[p]) if p in decision else observed.get(name, NCHW)
        cost = opts[name][option] + conversion(row, arrives, wants(row, option))
        for c in consumers[name]:
            cost += conversion(rows[c], gives(row, option), wants(rows[c], decision[c]))
        for other, extra in joins[name]:
            if gives(row, option) != gives(rows[other], decision[other]):
                cost += extra
        return cost

    for sweep in range(MAX_SWEEPS):
        changed = False
        for name in rows:
            here = local(name, decision[name])
            best = min(opts[name], key=lambda o: local(name, o))
            if local(name, best) < here * (1 - 1e-9):
                decision[name] = best
                changed = True
        if not changed:
            break
    return decision, sweep + 1


def _op_name(target):
    """An fx node's target as a plain name: "add" for operator.add, torch.add, "add" (a
    method) and aten.add.Tensor alike."""
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    return name.split(".")[0]


def _walk(node, names):
    """The named layer whose layout `node`'s value has: the node itself, or back through
    first tensor arguments; None if the walk reaches anything else first."""
    while isinstance(node, torch.fx.Node):
        if node.op == "call_module" and node.target in names:
            return node.target
        if node.op not in ("call_function", "call_method", "call_module"):
            return None
        node = next((a for a in node.args if isinstance(a, torch.fx.Node)), None)
    return None


def graph_producers(gm, names):
    """{layer: producing layer} of a GraphModule: from each named call_module node, back
    through first tensor arguments to the nearest named one."""
    out = {}
    for node in gm.graph.nodes:
        if node.op == "call_module" and node.target in names and node.args:
            p = _walk(node.args[0], names)
            if p is not None:
                out[node.target] = p
    return out


ADDS = ("add", "add_", "iadd", "sub", "mul", "cat")


def graph_junctions(gm, names):
    """[(a, b, node)]: elementwise adds (and the like) of a GraphModule whose first two
    tensor arguments come from two different named layers (ResNet's conv3 + identity), and
    layers fused with their residual (fuse_residual_adds: `layer(x, residual)`), which
    convert the residual, or add it across the grain, when its layout differs from theirs."""
    out = []
    for node in gm.graph.nodes:
        if node.op == "call_module" and node.target in names and len(node.args) == 2:
            b = _walk(node.args[1], names)
            if b is not None and b != node.target:
                out.append((node.target, b, node))
            continue
        if node.op not in ("call_function", "call_method") or \
                _op_name(node.target) not in ADDS:
            continue
        args = [a for a in node.args if isinstance(a, torch.fx.Node)][:2]
        if len(args) == 2:
            a, b = _walk(args[0], names), _walk(args[1], names)
            if a is not None and b is not None and a != b:
                out.append((a, b, node))
    return out


def _itemsize(dtype):
    return torch.empty((), dtype=dtype).element_size()


PAIR_CONVERSIONS = ("to_image_pairs", "from_image_pairs", "to_image_pairs_cl",
                    "from_image_pairs_cl")


def _bytes(shape, dtype):
    elems = 1
    for d in shape:
        elems *= d
    return elems * _itemsize(dtype)


def _median_rate(rows, modules, key):
    """The median measured ms per input byte of conversion `key` (None without any)."""
    rates = sorted(r[key] / _bytes(modules[n].input_shape, modules[n].dtype)
                   for n, r in rows.items() if r.get(key) and key not in r.get("estimated", ()))
    return rates[len(rates) // 2] if rates else None


def estimate_pair_conversions(rows, modules):
    """Give each half row without a measured image-pair conversion (a layer without a kernel
    in that layout, whose input may still arrive as pairs) the time of converting its input
    at the median measured ms per byte of that conversion, and list the keys it got in
    `estimated`. Without an estimate such a conversion would cost nothing in the model."""
    for key in PAIR_CONVERSIONS:
        rate = _median_rate(rows, modules, key)
        if rate is None:
            continue
        for n, r in rows.items():
            if "kept_channels_last" in r and r.get(key) is None:
                r[key] = rate * _bytes(modules[n].input_shape, modules[n].dtype)
                r.setdefault("estimated", []).append(key)


def junction_costs(junctions, modules, rows):
    """[(a, b, cost)]: a junction's cost is a layout conversion of a's output, at the
    median bytes-per-ms of the rows' measured conversions (None without any)."""
    rate = _median_rate(rows, modules, "to_channels_last")
    if rate is None:
        return []
    # a's output and b's have the add's shape
    return [(a, b, rate * _bytes(modules[b].output_shape, modules[b].dtype))
            for a, b, _ in junctions]


def trace(model, args, names):
    """One forward pass: each named SpconvConv2d's producer (the named layer whose output
    storage is its input's: through in-place ops only) and the layout its input arrived in,
    in execution order."""
    order, producers, arrived, outputs, by_storage, hooks = [], {}, {}, [], {}, []
    modules = dict(model.named_modules())

    def hook(mod, inp, out, name):
        x = inp[0]
        order.append(name)
        arrived[name] = layout_of(x)
        p = by_storage.get(storage_ptr(x))
        if p is not None:
            producers[name] = p
        outputs.append(out)  # alive until the pass ends, so no storage is reused
        by_storage[storage_ptr(out)] = name

    try:
        for n in names:
            hooks.append(modules[n].register_forward_hook(
                lambda mod, inp, out, n=n: hook(mod, inp, out, n)))
        with torch.no_grad():
            model(*args)
    finally:
        for h in hooks:
            h.remove()
    return order, producers, arrived


def apply(modules, decision, rows=None, model=None):
    """Set each SpconvConv2d's mode and kept layout from `decision` (and the way it runs
    kept channels-last from its row's `kept_channels_last_impl`); with `model` (a
    GraphModule), carry image pairs through its graph for the new modes (carry.py)."""
    rows = rows or {}
    for name, d in decision.items():
        m = modules[name]
        if d == SPCONV:
            m.mode = "auto"
        elif d == TORCH_CL:
            m.keep_in_torch(CHANNELS_LAST, rows.get(name, {}).get("kept_channels_last_impl"))
        else:
            m.keep_in_torch(NCHW)
    if model is not None:
        from .carry import carry
        carry(model)


def nchw_only(rows, min_speedup):
    """The decision without channels-last: a kernel where it wins by the margin."""
    return {n: SPCONV if r.get("spconv") is not None and r["spconv"] * min_speedup <= r["kept"]
            else TORCH for n, r in rows.items()}


def all_kept(rows):
    """Every layer kept, channels-last where it can be: no kernel at all."""
    return {n: TORCH_CL if TORCH_CL in options(r) else TORCH for n, r in rows.items()}


def decide(model, args, rows, min_speedup, timer=None):
    """Decide and apply (see the module docstring). rows: {layer: measured row}. With
    `timer` (a function of a callable giving its milliseconds), a decision that keeps any
    layer channels-last is timed end to end with `nchw_only`'s and `all_kept`'s, and the
    module docstring's rule picks one. Returns (decision, report): the report has each
    layer's producer, the layouts assumed for layers without one, the junctions, the
    modelled total, the rounds and sweeps it took, and the end-to-end times and candidates."""
    modules = dict(model.named_modules())
    names = list(rows)
    order, producers, arrived = trace(model, args, names)
    junctions = []
    if isinstance(model, torch.fx.GraphModule):
        producers = graph_producers(model, set(names))
        junctions = junction_costs(graph_junctions(model, set(names)), modules, rows)
    ordered = {n: rows[n] for n in order if n in rows}
    ordered.update({n: r for n, r in rows.items() if n not in ordered})  # not run: last
    rows = ordered
    estimate_pair_conversions(rows, modules)
    # image pairs reach a layer without a producer only through carry.py's conversion of an
    # NCHW tensor (the model's input), which the layer is charged for
    observed = {n: NCHW if arrived[n] == IMAGE_PAIRS else arrived[n]
                for n in rows if n not in producers and n in arrived}
    for rounds in range(1, MAX_ROUNDS + 1):
        decision, sweeps = choose(rows, producers, observed, min_speedup, junctions)
        apply(modules, decision, rows, model)
        _, _, seen = trace(model, args, names)
        moved = {}
        for n in rows:
            p = producers.get(n)
            assumed = gives(rows[p], decision[p]) if p in decision else observed.get(n, NCHW)
            # carry.py hands every layer image pairs or a 4-D tensor as it wants: only the two
            # 4-D layouts can arrive other than the model assumed
            if n in seen and IMAGE_PAIRS not in (seen[n], assumed) and \
                    seen[n] not in (assumed, ANY):
                moved[n] = seen[n]
        if not moved:
            break
        for n in moved:
            producers.pop(n, None)
        observed.update(moved)
    plain = {n: dict(r, _margin=1.0) for n, r in rows.items()}
    report = {"producers": producers, "observed": observed, "rounds": rounds,
              "sweeps": sweeps, "junctions": [list(j) for j in junctions],
              "modelled_ms": total(plain, producers, observed, decision, junctions)}
    if timer is not None and TORCH_CL in decision.values():
        candidates = {"layouts": decision, "nchw_only": nchw_only(rows, min_speedup)}
        for factor in STRICTER_MARGINS:
            stricter, _ = choose(rows, producers, observed, min_speedup * factor, junctions)
            if stricter not in candidates.values() and stricter != all_kept(rows):
                candidates["layouts_x%g" % factor] = stricter
        candidates["all_kept"] = all_kept(rows)
        # timed in rounds, each in the reverse order of the last, and averaged: a drift of
        # the GPU's speed over the timings (linear, over an even number of rounds) then
        # favours no candidate, as it would the first or last timed
        rounds = {name: [] for name in candidates}
        with torch.no_grad():
            for r in range(END_TO_END_ROUNDS):
                for name in (list(candidates) if r % 2 == 0 else list(candidates)[::-1]):
                    apply(modules, candidates[name], rows, model)
                    rounds[name].append(timer(lambda: model(*args)))
        times = {name: sum(t) / len(t) for name, t in rounds.items()}
        # kernels must pay for their place end to end too: the faster decision with kernels
        # only if it beats keeping every layer by more than the noise of this timing
        margin = min(min_speedup, END_TO_END_MIN_SPEEDUP)
        best = min((name for name in candidates if name != "all_kept"), key=times.get)
        if times[best] * margin > times["all_kept"]:
            best = "all_kept"
        decision = candidates[best]
        apply(modules, decision, rows, model)
        report["end_to_end_ms"] = times
        report["end_to_end_rounds_ms"] = rounds
        report["end_to_end_margin"] = margin
        report["chosen"] = best
        # what each candidate compiled and kept channels-last (the others: kept NCHW)
        report["candidates"] = {
            name: {"spconv": sorted(n for n, d in cand.items() if d == SPCONV),
                   "channels_last": sorted(n for n, d in cand.items() if d == TORCH_CL)}
            for name, cand in candidates.items()}
    return decision, report


RELUS = ("relu", "relu_")


def _is_relu(node, modules):
    if node.op == "call_module":
        return isinstance(modules.get(node.target), torch.nn.ReLU)
    return node.op in ("call_function", "call_method") and _op_name(node.target) in RELUS


def residual_add_site(node, modules):
    """(add, other, relu) where `node`'s one user is an add of it and another tensor
    (`other`): `relu` is the add's one user where that is a ReLU (ResNet's
    `relu(bn3(conv3(x)) + identity)`), else None (MobileNetV2's `x + conv(x)`); None where
    there is no such add. An in-place add must write to `node`'s tensor, which nothing else
    reads: one into `other` would change what other readers of `other` see."""
    if len(node.users) != 1:
        return None
    (add,) = node.users
    name = _op_name(add.target) if add.op in ("call_function", "call_method") else ""
    if name not in ("add", "iadd", "add_") or add.kwargs or len(add.args) != 2 or \
            not add.users or (name != "add" and add.args[0] is not node):
        return None
    other = add.args[1] if add.args[0] is node else add.args[0]
    if other is node or not isinstance(other, torch.fx.Node):
        return None
    relu = next(iter(add.users)) if len(add.users) == 1 else None
    if relu is not None and not (_is_relu(relu, modules) and len(relu.args) == 1):
        relu = None
    return add, other, relu


def fuse_residual_adds(gm, names):
    """Rewrite `relu(layer(x) + z)` (ResNet's conv3, identity, ReLU) and `layer(x) + z`
    (MobileNetV2's projection and its block's input), where a named layer without an
    activation is the one reader of its output, into `layer(x, z)`, and set the layer's
    `residual_relu`. SpconvConv2d.add_residual runs that as one kernel where the layer's
    kernel takes the residual (compiled so: pipeline.plan), as one cuDNN call when the layer
    is kept channels-last and a ReLU follows, and as before otherwise. Returns the layers
    fused."""
    modules = dict(gm.named_modules())
    fused = []
    for node in list(gm.graph.nodes):
        if node.op != "call_module" or node.target not in names or len(node.args) != 1:
            continue
        site = residual_add_site(node, modules)
        if site is None:
            continue
        add, other, relu = site
        # at the add: the residual (ResNet's downsample) may be computed after the layer
        with gm.graph.inserting_before(add):
            call = gm.graph.call_module(node.target, (node.args[0], other))
        (relu or add).replace_all_uses_with(call)
        for dead in (relu, add, node):
            if dead is not None:
                gm.graph.erase_node(dead)
        if hasattr(modules[node.target], "residual_relu"):  # a SpconvConv2d
            modules[node.target].residual_relu = relu is not None
        fused.append(call.target)
    if fused:
        gm.graph.lint()
        gm.recompile()
    return fused
