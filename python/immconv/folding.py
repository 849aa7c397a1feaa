"""Folds an inference BatchNorm into conv weights without changing the zero pattern.

spconv compiles *which* weights are zero into the code, so a fold that turned a zero into a
nonzero (or the reverse) would silently change what is compiled. The rule, the same as
`spconv-translate --import-onnx` (docs/onnx-import.md):

    f = gamma / sqrt(var + eps);  w' = w * f[k];  b' = (b - mean) * f + beta

computed in float64 and rounded to float32, where

- a weight that is exactly zero is written back as it was (+0 or -0): it is never
  multiplied, so an infinite f cannot make it NaN;
- if a nonzero weight would round to zero (underflow) or become non-finite, or a bias would
  become non-finite from finite inputs, the BN is **not folded** (`FoldRefused`, whose message
  names the channel, weight and factor): the caller leaves it as a separate op and warns.
"""
import numpy as np


class FoldRefused(ValueError):
    pass


def fold_bn(w, b, gamma, beta, mean, var, eps):
    """(w', b') float32, or raises FoldRefused. w: K x ... float32; b: K or None."""
    w = np.asarray(w, dtype=np.float32)
    k = w.shape[0]
    gamma = np.ones(k) if gamma is None else np.asarray(gamma, dtype=np.float64)
    beta = np.zeros(k) if beta is None else np.asarray(beta, dtype=np.float64)
    mean = np.asarray(mean, dtype=np.float64)
    var = np.asarray(var, dtype=np.float64)
    if not (gamma.shape == beta.shape == mean.shape == var.shape == (k,)):
        raise FoldRefused("BN parameters are not of length K = %d" % k)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f = gamma / np.sqrt(var + float(eps))
        w64 = w.astype(np.float64)
        scaled = (w64 * f.reshape((k,) + (1,) * (w.ndim - 1))).astype(np.float32)
    nonzero = w != 0
    bad = nonzero & ((scaled == 0) | ~np.isfinite(scaled))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        why = "underflows to zero" if np.isfinite(scaled[idx]) else "becomes non-finite"
        raise FoldRefused("weight %s = %r times factor %r of channel %d %s" % (
            list(idx), float(w[idx]), float(f[idx[0]]), idx[0], why))
    w_out = np.where(nonzero, scaled, w).astype(np.float32)  # zeros stay bit-for-bit
    b64 = np.zeros(k) if b is None else np.asarray(b, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        b_out = ((b64 - mean) * f + beta).astype(np.float32)
    inputs_finite = np.isfinite(b64) & np.isfinite(mean) & np.isfinite(beta)
    badb = inputs_finite & ~np.isfinite(b_out)
    if badb.any():
        c = int(np.argwhere(badb)[0][0])
        raise FoldRefused("bias of channel %d becomes non-finite (factor %r)" % (c, float(f[c])))
    return w_out, b_out
