#!/usr/bin/env python3
"""usage: summarize.py results.json > docs/benchmarks-table.md

Markdown tables from spconv-bench results (suite.json from run_device.sh): per batch
size, one row per layer and sparsity with times, speedups, useful TFLOP/s and % of the
sparse roofline; then geomean speedups per batch size at sparsity 0.9; then failures.
Standard library only.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results as R  # noqa: E402

BASELINES = [("cudnn_fp32", "cuDNN FP32"), ("cudnn_tf32", "cuDNN TF32"), ("cusparse", "cuSPARSE")]


def f(v, spec):
    return format(v, spec) if R.num(v) else "-"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cases = R.load(sys.argv[1])
    good = R.ok(cases)
    out = []
    w = out.append
    w("# spconv benchmark results\n")
    if good:
        d = good[0].get("device", {})
        commits = sorted({str(c.get("commit")) for c in good if c.get("commit")})
        w("Device: %s, driver %s (CUDA %s), cuDNN %s, cuSPARSE %s%s.\n" % (
            d.get("name", "?"), d.get("driver", "?"), d.get("driver_version", "?"),
            d.get("cudnn_version", "?"), d.get("cusparse_version", "?"),
            (", commit " + ", ".join(commits)) if commits else ""))
    w("Times are the median over batches of back-to-back runs (ms per run). Speedup = "
      "baseline time / spconv time. Useful TFLOP/s = 2*N*P*Q*nnz(W)/t; roofline % = "
      "max(useful FLOP / 67 TFLOP/s, I/O bytes / 3.35 TB/s) / t. cuSPARSE includes im2col. "
      "max rel err = max|out - ref| / max|ref| against cuDNN FP32.\n")

    for n in sorted({R.batch(c) for c in good}):
        rows = sorted((c for c in good if R.batch(c) == n),
                      key=lambda c: (c.get("layer", ""), R.sparsity(c) or 0))
        w("\n## Batch %d\n" % n)
        w("| layer | sparsity | nnz | spconv ms | cuDNN FP32 ms | cuDNN TF32 ms | cuSPARSE ms "
          "| x FP32 | x TF32 | x cuSPARSE | TFLOP/s | roofline % | max rel err |")
        w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for c in rows:
            t = c.get("times_ms", {})
            w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                c.get("layer", "?"), f(R.sparsity(c), ".2f"), c.get("nnz", "-"),
                f(t.get("spconv"), ".4f"), f(t.get("cudnn_fp32"), ".4f"),
                f(t.get("cudnn_tf32"), ".4f"), f(t.get("cusparse"), ".4f"),
                f(R.speedup(c, "cudnn_fp32"), ".2f"), f(R.speedup(c, "cudnn_tf32"), ".2f"),
                f(R.speedup(c, "cusparse"), ".2f"), f(c.get("useful_tflops"), ".2f"),
                f(c.get("roofline_pct"), ".1f"), f(c.get("max_rel_err"), ".1e")))

    w("\n## Geomean speedups at sparsity 0.9\n")
    w("| N | layers | x cuDNN FP32 | x cuDNN TF32 | x cuSPARSE | min x FP32 | mean roofline % |")
    w("|---|---|---|---|---|---|---|")
    for n in sorted({R.batch(c) for c in good}):
        at = [c for c in good if R.batch(c) == n and R.num(R.sparsity(c))
              and abs(R.sparsity(c) - 0.9) < 1e-6]
        if not at:
            continue
        fp32 = [R.speedup(c, "cudnn_fp32") for c in at]
        fp32 = [v for v in fp32 if v is not None]
        roof = [c.get("roofline_pct") for c in at if R.num(c.get("roofline_pct"))]
        w("| %d | %d | %s | %s | %s | %s | %s |" % (
            n, len(at), f(R.geomean(fp32), ".2f"),
            f(R.geomean([R.speedup(c, "cudnn_tf32") for c in at]), ".2f"),
            f(R.geomean([R.speedup(c, "cusparse") for c in at]), ".2f"),
            f(min(fp32) if fp32 else None, ".2f"),
            f(sum(roof) / len(roof) if roof else None, ".1f")))

    bad = [c for c in cases if c.get("status") != "ok"]
    if bad:
        w("\n## Failures\n")
        w("| case | layer | N | sparsity | status | error |")
        w("|---|---|---|---|---|---|")
        for c in bad:
            err = str(c.get("error", "")).replace("|", "\\|").replace("\n", " ")[:200]
            w("| %s | %s | %s | %s | %s | %s |" % (c.get("case", "?"), c.get("layer", "?"),
                                                   R.batch(c) or "-", f(R.sparsity(c), ".2f"),
                                                   c.get("status"), err))
    print("\n".join(out))


if __name__ == "__main__":
    main()
