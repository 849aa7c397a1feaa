#!/usr/bin/env python3
"""Prints spconv-translate flags that pin a measured case's whole tiling (for a sanitizer
spec at a smaller batch): python3 pin_tiling.py RESULT.json CASE."""
import json
import sys

run = json.load(open(sys.argv[1]))[sys.argv[2]]["run1"]
t = run["tiling"]
switch = lambda on: 2 if on else 1
flags = {
    "block-k": t["block_k"], "channel-vector": t.get("channel_vector", 1),
    "min-blocks-per-sm": t["min_blocks_per_sm"], "tile-p": t["tile_p"],
    "threads-q": t["threads_q"], "chunk-c": t["chunk_c"], "split-c": t["split_c"],
    "images-per-block": t["images_per_block"], "outputs-per-thread": t["outputs_per_thread"],
    "sm-affinity": switch(t["sm_affine"]), "async-staging": switch(t["async_staging"]),
    "chunk-loop": switch(t["chunk_loop"]), "block-order": switch(t["channel_block_major"]),
    "direct-inputs": switch(t["direct_inputs"]), "column-order": switch(t["adjacent_columns"]),
}
print("--tuning-table=none " + " ".join(f"--{k}={v}" for k, v in flags.items()))
