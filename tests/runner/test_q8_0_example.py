"""examples/q8_0_backend.py, a Q8_0-shaped codec written from docs/ alone, against the oracle bit for bit.

The core suite holds no vector of format q8_0 yet, so these weight-like tensors (rows x a few hundred columns)
and the exact ties below are what proves the example right; the expectation is the oracle's (burn-0.22.1/flex,
the profile the example claims), never the example's own output.
"""

import numpy as np
import pytest

from conformance import Unsupported
from conformance.backends.oracle import run_oracle
from conformance.formats import get_format
from conformance.protocol import Result
from examples.q8_0_backend import Backend

PROFILE = "burn-0.22.1/flex"
SCHEME = get_format("q8_0").scheme().to_json()


def weights(rng, rows, cols, scale):
    """Normal weights with a few outliers, as trained layers have."""
    w = rng.standard_normal((rows, cols)).astype(np.float32) * np.float32(scale)
    w.reshape(-1)[rng.integers(0, w.size, size=max(1, w.size // 200))] *= 8
    return w


def ties(rows=2):
    """Every block's largest |x| is 127·2^-7, so its scale is exactly 2^-7 (on the F16 grid: no round-up), and
    the other values are exact .5 ties of x/s, which burn rounds away from zero."""
    s = np.float32(2.0 ** -7)
    k = (np.arange(rows * 32) % 31 - 15).astype(np.float32) + np.float32(0.5)
    x = (k * s).reshape(rows, 32)
    x[:, 0] = 127 * s
    return x


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view({2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def expected(op, params, inputs):
    outcome = run_oracle(op, params, inputs, PROFILE)
    assert isinstance(outcome, Result), outcome
    return outcome.outputs


@pytest.mark.parametrize("rows, cols, scale", [(4, 256, 0.02), (3, 384, 1e-3), (2, 96, 40.0), (1, 32, 6e-5)])
def test_quantize_dynamic_and_dequantize_are_bit_exact(rows, cols, scale):
    x = weights(np.random.default_rng(rows * cols), rows, cols, scale)
    got = Backend().run("quantize_dynamic", {"scheme": SCHEME}, {"x": x})
    want = expected("quantize_dynamic", {"scheme": SCHEME}, {"x": x})
    assert np.array_equal(got["codes"].reshape(-1), want["codes"].reshape(-1))
    assert np.array_equal(bits(got["scales"].reshape(-1)), bits(want["scales"].reshape(-1)))
    for dtype in ("f32", "f16"):
        params, inputs = {"scheme": SCHEME, "dtype": dtype}, {"codes": want["codes"], "scales": want["scales"]}
        assert np.array_equal(bits(Backend().run("dequantize", params, inputs)["x"]),
                              bits(expected("dequantize", params, inputs)["x"]))


def test_exact_ties_go_away_from_zero_like_burn():
    x = ties()
    got = Backend().run("quantize_dynamic", {"scheme": SCHEME}, {"x": x})
    assert got["scales"].tolist() == [2.0 ** -7] * 2
    # x/s at [0, 1:4] is -13.5, -12.5, -11.5: away from zero -14, -13, -12 (to even would give -14, -12, -12)
    assert got["codes"][0, 1:4].tolist() == [-14, -13, -12]
    assert np.array_equal(got["codes"], expected("quantize_dynamic", {"scheme": SCHEME}, {"x": x})["codes"])


def test_what_it_does_not_implement_is_declined():
    b = Backend()
    x = np.full((1, 32), np.nan, np.float32)
    with pytest.raises(Unsupported, match="inf or NaN"):
        b.run("quantize_dynamic", {"scheme": SCHEME}, {"x": x})
    with pytest.raises(Unsupported, match="zero, negative or not finite"):
        b.run("quantize", {"scheme": SCHEME, "api": "backend"}, {"x": np.ones((1, 32), np.float32),
                                                                   "scales": np.zeros(1, np.float32)})
    with pytest.raises(Unsupported, match="op pack_u32"):
        b.run("pack_u32", {"value": "Q8S"}, {})
    assert b.hello()["capabilities"]["formats"] == ["q8_0"]
