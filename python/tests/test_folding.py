import numpy as np
import pytest

from immconv.folding import FoldRefused, fold_bn


def bn(k, gamma=None, beta=None, mean=None, var=None):
    return (np.full(k, 1.5) if gamma is None else gamma, np.zeros(k) if beta is None else beta,
            np.zeros(k) if mean is None else mean, np.ones(k) if var is None else var)


def test_zeros_stay_zero_bit_for_bit_and_values_are_float64_rounded():
    w = np.array([[0.0, 1.0], [-0.0, -2.5]], dtype=np.float32).reshape(2, 2, 1, 1)
    # channel 1 has a negative factor: multiplying its -0 weight would give +0
    g, b, m, v = np.array([3.0, -0.5]), np.array([0.1, -0.2]), np.array([1.0, 2.0]), \
        np.array([0.25, 4.0])
    w2, b2 = fold_bn(w, None, g, b, m, v, 1e-5)
    assert w2.dtype == np.float32 and b2.dtype == np.float32
    assert np.signbit(w2[1, 0, 0, 0]) and w2[1, 0, 0, 0] == 0  # -0 stays -0
    assert w2[0, 0, 0, 0] == 0 and not np.signbit(w2[0, 0, 0, 0])
    f = g / np.sqrt(v + 1e-5)
    assert w2[0, 1, 0, 0] == np.float32(1.0 * f[0])
    assert w2[1, 1, 0, 0] == np.float32(-2.5 * f[1])
    np.testing.assert_array_equal(b2, ((0 - m) * f + b).astype(np.float32))


def test_infinite_factor_refused_by_the_bias_and_huge_factor_keeps_zeros():
    w = np.array([0.0, 1e-10], np.float32).reshape(1, 2, 1, 1)
    # var + eps == 0: factor inf; the bias (b - mean) * f becomes non-finite: refused
    with pytest.raises(FoldRefused, match="bias"):
        fold_bn(np.zeros_like(w), None, *bn(1, mean=np.array([1.0]), var=np.array([-1e-5])),
                1e-5)
    with pytest.raises(FoldRefused, match="non-finite"):
        fold_bn(w, None, *bn(1, var=np.array([-1e-5])), 1e-5)
    w2, b2 = fold_bn(w, None, *bn(1, gamma=np.array([1e30])), 0.0)
    assert w2[0, 0, 0, 0] == 0 and w2[0, 1, 0, 0] == np.float32(1e20)


def test_refuses_underflow():
    w = np.array([1e-30, 0.0], np.float32).reshape(2, 1, 1, 1)
    with pytest.raises(FoldRefused, match="underflows"):
        fold_bn(w, None, *bn(2, gamma=np.array([1e-20, 1.0])), 1e-5)


def test_refuses_non_finite():
    w = np.array([1e30], np.float32).reshape(1, 1, 1, 1)
    with pytest.raises(FoldRefused, match="non-finite"):
        fold_bn(w, None, *bn(1, gamma=np.array([1e20])), 1e-5)


def test_gamma_zero_refused_for_nonzero_weights():
    w = np.array([2.0], np.float32).reshape(1, 1, 1, 1)
    with pytest.raises(FoldRefused):
        fold_bn(w, None, *bn(1, gamma=np.array([0.0])), 1e-5)
