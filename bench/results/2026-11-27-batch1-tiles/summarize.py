"""Round 33's table: python3 summarize.py r33/r33.json > summary.md (one row per case,
grouped by layer, each against its layer's -base case from the same call)."""
import json, re, sys

runs = json.load(open(sys.argv[1]))
def best(v):
    return min(v[x]['times_ms']['spconv'] for x in ('run1', 'run2') if x in v)
layers = {}
for name in runs:
    layers.setdefault(re.sub(r'[rc]$', '', name.split('-')[0]), []).append(name)
print("| case | pairing | threads (q x p) x split | block-k | grid | regs | spconv ms | vs base | legacy cuDNN FP16 ms |")
print("|---|---|---|---|---|---|---|---|---|")
for layer, names in layers.items():
    base = best(runs[layer + '-base'])
    for n in sorted(names, key=lambda n: (not n.endswith('-base'), best(runs[n]))):
        v = runs[n]['run1']
        t = v['tiling']
        g = v['grid']
        print(f"| {n} | {v['numerics']['pairing']} | {t['threads_q']}x{t['tile_p']} x {t['split_c']} "
              f"| {t['block_k']} | {g[0]}x{g[1]}x{g[2]} | {v['kernel_attributes']['registers']} "
              f"| {best(runs[n]):.4f} | {base / best(runs[n]):.2f}x "
              f"| {v['times_ms']['best_cudnn_half']:.4f} |")
