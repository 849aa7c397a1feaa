"""Plots of per-layer benchmark results (matplotlib, Agg backend: no display needed).

Input: the JSON of bench/network_summary.py (`bench/run_network.sh` writes it as
OUTDIR/network.json) or of immconv.torch.benchmark_layers: a `layers` list whose rows have
`layer` and per-contender times in ms (`spconv`, `cudnn_fp32`, optional `cudnn_tf32`,
`cusparse`; missing or null = not measured).
"""
import json

CONTENDERS = ("spconv", "cudnn_fp32", "cudnn_tf32", "cusparse")


def _load(results):
    if isinstance(results, dict):
        return results
    with open(results) as f:
        return json.load(f)


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def speedup_per_layer(results_json, out_png, baseline="cudnn_fp32"):
    """Bar per layer: baseline time / spconv time (log scale, 1x line). Returns the speedups."""
    doc = _load(results_json)
    rows = [r for r in doc["layers"] if r.get("spconv") and r.get(baseline)]
    names = [r["layer"] for r in rows]
    speed = [r[baseline] / r["spconv"] for r in rows]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 0.25 * len(rows) + 2), 4))
    ax.bar(range(len(rows)), speed, color=["tab:green" if s >= 1 else "tab:red" for s in speed])
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(names, rotation=90, fontsize=6)
    ax.set_ylabel("speedup over %s (x)" % baseline)
    ax.set_title("spconv per layer%s" % (" (%s)" % doc["device"] if doc.get("device") else ""))
    fig.tight_layout()
    fig.savefig(out_png, dpi=120)
    plt.close(fig)
    return speed


def time_breakdown(results_json, out_png, contenders=CONTENDERS):
    """Stacked bar per contender: its summed time, split by layer. Returns {contender: ms}."""
    doc = _load(results_json)
    rows = doc["layers"]
    present = [c for c in contenders if rows and all(r.get(c) is not None for r in rows)]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    totals = {}
    for i, c in enumerate(present):
        bottom = 0.0
        for j, r in enumerate(rows):
            ax.bar(i, r[c], bottom=bottom, color="C%d" % (j % 10),
                   edgecolor="white", lw=0.2)
            bottom += r[c]
        totals[c] = bottom
        ax.text(i, bottom, "%.3g" % bottom, ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(present)))
    ax.set_xticklabels(present)
    ax.set_ylabel("summed conv time (ms)")
    ax.set_title("time by layer, %d convs" % len(rows))
    fig.tight_layout()
    fig.savefig(out_png, dpi=120)
    plt.close(fig)
    return totals
