#!/usr/bin/env python3
"""usage: plot.py results.json out.svg

Speedup of the generated kernel over cuDNN FP32 against weight sparsity, one line per
layer, one panel per batch size (1 and 64, plus any other present). Log-scale y axis with
the 1x line marked. Writes SVG by hand: Python standard library only.
"""
import math
import os
import sys
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results as R  # noqa: E402

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"]
PW, PH = 420, 300            # plot area of one panel
ML, MR, MT, MB = 60, 20, 40, 50
LEGEND_W = 170


def nice_log_ticks(lo, hi):
    ticks = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10 ** e
            if lo <= v <= hi:
                ticks.append(v)
    return ticks


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    cases = R.ok(R.load(sys.argv[1]))
    batches = sorted({R.batch(c) for c in cases} | {1, 64})
    layers = sorted({c.get("layer", "?") for c in cases})
    color = {l: COLORS[i % len(COLORS)] for i, l in enumerate(layers)}

    pts = [(R.batch(c), c.get("layer", "?"), R.sparsity(c), R.speedup(c, "cudnn_fp32"))
           for c in cases]
    pts = [p for p in pts if R.num(p[2]) and p[3]]
    ys = [p[3] for p in pts] or [1.0]
    ylo = 10 ** math.floor(math.log10(min(min(ys), 1.0) * 0.9))
    yhi = 10 ** math.ceil(math.log10(max(max(ys), 1.0) * 1.1))
    xs = [p[2] for p in pts] or [0.5, 0.95]
    xlo = min(0.5, min(xs)) - 0.02
    xhi = max(0.95, max(xs)) + 0.02

    pw_total = ML + PW + MR
    width = pw_total * len(batches) + LEGEND_W
    height = MT + PH + MB
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>']
    for i, n in enumerate(batches):
        ox = i * pw_total + ML

        def sx(x):
            return ox + (x - xlo) / (xhi - xlo) * PW

        def sy(y):
            return MT + PH - (math.log10(y) - math.log10(ylo)) / (math.log10(yhi) - math.log10(ylo)) * PH

        svg.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="14" font-weight="bold">'
                   'batch %d</text>' % (ox + PW / 2, MT - 15, n))
        svg.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>'
                   % (ox, MT, PW, PH))
        for t in nice_log_ticks(ylo, yhi):
            y = sy(t)
            svg.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" %s/>' % (
                ox, y, ox + PW, y, "#000" if t == 1 else "#ddd",
                'stroke-dasharray="4,3"' if t == 1 else ""))
            svg.append('<text x="%d" y="%.1f" text-anchor="end">%gx</text>' % (ox - 5, y + 4, t))
        x = math.ceil(xlo * 20) / 20
        while x <= xhi + 1e-9:
            svg.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>'
                       % (sx(x), MT + PH, sx(x), MT + PH + 4))
            svg.append('<text x="%.1f" y="%d" text-anchor="middle">%.2f</text>'
                       % (sx(x), MT + PH + 18, x))
            x += 0.05
        svg.append('<text x="%.1f" y="%d" text-anchor="middle">weight sparsity</text>'
                   % (ox + PW / 2, MT + PH + 38))
        svg.append('<text transform="translate(%d,%.1f) rotate(-90)" text-anchor="middle">'
                   'speedup over cuDNN FP32</text>' % (ox - 45, MT + PH / 2))
        for layer in layers:
            line = sorted((p[2], p[3]) for p in pts if p[0] == n and p[1] == layer)
            if not line:
                continue
            path = " ".join("%.1f,%.1f" % (sx(a), sy(b)) for a, b in line)
            svg.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>'
                       % (path, color[layer]))
            for a, b in line:
                svg.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s p=%.2f: %.2fx'
                           '</title></circle>' % (sx(a), sy(b), color[layer], escape(layer), a, b))
        if not any(p[0] == n for p in pts):
            svg.append('<text x="%.1f" y="%.1f" text-anchor="middle" fill="#888">no results</text>'
                       % (ox + PW / 2, MT + PH / 2))
    lx = pw_total * len(batches) + 10
    for j, layer in enumerate(layers):
        y = MT + 10 + 18 * j
        svg.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>'
                   % (lx, y, lx + 20, y, color[layer]))
        svg.append('<text x="%d" y="%d">%s</text>' % (lx + 26, y + 4, escape(layer)))
    svg.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
