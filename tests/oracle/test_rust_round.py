"""The oracle's element rounding against an exact, Fraction-based definition (spec §5.2, §5.4, §12).

Rust ``f32::round`` is round-half-away-from-zero with the sign of zero kept; the GPU's ``rint`` is
round-half-to-even. Both are defined here on exact rationals, never with float arithmetic, and compared
with the oracle bit for bit (NaN equals NaN).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from oracle import rounding


def _exact(x: float, ties: str) -> float:
    if math.isnan(x) or math.isinf(x):
        return x
    a = abs(Fraction(x))
    n = math.floor(a)
    rem = a - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and (ties == "away" or n % 2 == 1)):
        n += 1
    return math.copysign(float(n), x)


def _expected(xs: np.ndarray, ties: str) -> np.ndarray:
    return np.array([_exact(float(v), ties) for v in xs], dtype=np.float32)


def _assert_bits_equal(got: np.ndarray, want: np.ndarray, xs: np.ndarray, what: str) -> None:
    got = np.asarray(got)
    assert got.dtype == np.float32, f"{what}: dtype {got.dtype}, expected float32"
    assert got.shape == want.shape
    gb, wb = got.view(np.uint32), want.view(np.uint32)
    same = (gb == wb) | (np.isnan(got) & np.isnan(want))
    if not same.all():
        bad = np.flatnonzero(~same)[:10]
        rows = [f"x={xs[i]!r} (0x{xs.view(np.uint32)[i]:08X}): got {got[i]!r} (0x{gb[i]:08X}), "
                f"expected {want[i]!r} (0x{wb[i]:08X})" for i in bad]
        raise AssertionError(f"{what}: {int((~same).sum())} mismatches, first: \n" + "\n".join(rows))


def _f32(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def _hazards() -> np.ndarray:
    base = [0.49999997, 0.5, 1.5, 2.5, 3.5, 0.50000006, 1.4999999, 2.4999998, 1e-45, 1.1754944e-38,
            0.0, 8388608.0, 8388609.0, 8388607.5, 16777215.0, 16777216.0, 16777217.0,
            4194303.5, 4194304.5, 3.4028235e38, np.inf, np.nan]
    xs = [*base, *[-v for v in base]]
    # every odd integer near 2^23 (the trunc(x + 0.5) failure) and near 2^24, and every half-integer below 2^23
    for centre in (2**23, 2**24):
        xs += [float(centre + k) for k in range(-257, 258)]
        xs += [-float(centre + k) for k in range(-257, 258)]
    xs += [k + 0.5 for k in range(-300, 300)]
    xs += [(2**22 + k) + 0.5 for k in range(-64, 64)]
    out = _f32(xs)
    # f32 neighbours of every tie
    ties = out[np.isfinite(out) & (np.abs(out) < 2**23)]
    up = np.nextafter(ties, np.float32(np.inf))
    down = np.nextafter(ties, np.float32(-np.inf))
    return np.concatenate([out, up, down]).astype(np.float32)


def _random_patterns(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    # plus values of moderate magnitude, where rounding actually happens
    small = (rng.standard_normal(n) * 300).astype(np.float32)
    return np.concatenate([bits.view(np.float32), small])


def test_hazard_values_keep_signed_zero():
    got = rounding.round_half_away(_f32([-0.4, -0.0, 0.0, 0.4, -0.49999997]))
    assert list(np.signbit(got)) == [True, True, False, False, True]
    got = rounding.round_half_even(_f32([-0.5, -0.0, 0.5, -0.4]))
    assert list(np.signbit(got)) == [True, True, False, True]
    assert (got == 0).all()


def test_spec_examples():
    # §5.2: 2.5 -> 3, -2.5 -> -3, 0.49999997 -> 0; §5.4 GPU: ties to even
    assert rounding.round_half_away(_f32([2.5, -2.5, 0.49999997, 8388609.0])).tolist() == [3, -3, 0, 8388609]
    assert rounding.round_half_even(_f32([2.5, -2.5, 0.5, 1.5, -1.5])).tolist() == [2, -2, 0, 2, -2]


@pytest.mark.parametrize("ties", ["away", "even"])
def test_hazards(ties):
    xs = _hazards()
    fn = rounding.round_half_away if ties == "away" else rounding.round_half_even
    _assert_bits_equal(fn(xs), _expected(xs, ties), xs, f"round_half_{ties} on hazard values")


@pytest.mark.parametrize("ties", ["away", "even"])
def test_random_bit_patterns(ties):
    xs = _random_patterns(20_000, seed=20260821)
    fn = rounding.round_half_away if ties == "away" else rounding.round_half_even
    _assert_bits_equal(fn(xs), _expected(xs, ties), xs, f"round_half_{ties} on random f32 patterns")


def test_away_and_even_differ_exactly_on_ties():
    """Sanity of the test's own definitions: the two rules differ exactly on x = k + 0.5 with even k."""
    xs = _f32([k + 0.5 for k in range(-20, 20)])
    diff = _expected(xs, "away") != _expected(xs, "even")
    assert diff.tolist() == [math.floor(abs(v)) % 2 == 0 for v in xs.tolist()]
