"""Loads spconv-bench results for plot.py and summarize.py (standard library only).

Accepts a merged suite.json ({"cases": [...]}) from run_device.sh, a JSON list of
results, or a single spconv-bench result.
"""
import json
import math


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if isinstance(doc, dict) and "cases" in doc:
        return doc["cases"]
    if isinstance(doc, list):
        return doc
    return [doc]


def ok(cases):
    """Cases that passed verification and have a time for the generated kernel."""
    return [c for c in cases if c.get("status") == "ok" and num(c.get("times_ms", {}).get("spconv"))]


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def batch(c):
    return int(c.get("N") or c.get("shape", {}).get("N") or 0)


def sparsity(c):
    s = c.get("sparsity")
    return s if num(s) else c.get("measured_sparsity")


def speedup(c, baseline):
    v = c.get("speedup", {}).get(baseline + "_over_ours")
    return v if num(v) else None


def geomean(values):
    values = [v for v in values if num(v) and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))
