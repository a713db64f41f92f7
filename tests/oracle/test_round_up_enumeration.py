"""``round_up`` against ml_dtypes by enumerating every representable scale (spec §4.1, §11, §12).

The expected side never uses the oracle's algorithm: the grid is every non-negative finite value of the dtype,
enumerated from ml_dtypes bit patterns and sorted, and the expected round-up of x is
``grid[searchsorted(grid, x, "left")]`` (the smallest representable value >= x), saturating at the maximum.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import oracle
from oracle import ScaleDtype

PRE3 = ("burn-0.22.0-pre.3/ndarray", "burn-0.22.0-pre.3/flex", "burn-0.22.0-pre.3/cubecl")
V0221 = "burn-0.22.1/ndarray"
ALL_PROFILES = (*PRE3, V0221)

F32_MAX = np.finfo(np.float32).max


def _grid(dtype: str) -> np.ndarray:
    if dtype == "F16":
        bits = np.arange(0, 0x8000, dtype=np.uint16)
        vals = bits.view(np.float16).astype(np.float32)
    elif dtype == "BF16":
        bits = np.arange(0, 0x8000, dtype=np.uint16)
        vals = bits.view(ml_dtypes.bfloat16).astype(np.float32)
    elif dtype == "UE4M3":
        bits = np.arange(0, 0x80, dtype=np.uint8)
        vals = bits.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    else:
        raise ValueError(dtype)
    vals = vals[np.isfinite(vals)]
    vals = np.unique(vals)  # sorted, +0 only
    assert vals[0] == 0 and (np.diff(vals) > 0).all()
    return vals


EXPECTED_MAX = {"F16": np.float32(65504.0), "BF16": np.uint32(0x7F7F0000).view(np.float32),
                "UE4M3": np.float32(448.0)}
GRID_SIZES = {"F16": 0x7C00, "BF16": 0x7F80, "UE4M3": 0x7F}


def _inputs(grid: np.ndarray) -> np.ndarray:
    up = np.nextafter(grid, np.float32(np.inf))
    down = np.nextafter(grid[1:], np.float32(0))
    mids = ((grid[:-1].astype(np.float64) + grid[1:].astype(np.float64)) / 2).astype(np.float32)
    assert (mids.astype(np.float64) == (grid[:-1].astype(np.float64) + grid[1:]) / 2).all(), "midpoints exact"
    extra = np.array([np.inf, F32_MAX, 1e-45, 0.0, np.finfo(np.float32).tiny], dtype=np.float32)
    return np.concatenate([grid, up, down, mids, extra]).astype(np.float32)


def _expected(grid: np.ndarray, xs: np.ndarray) -> np.ndarray:
    idx = np.searchsorted(grid, xs, side="left")
    return grid[np.minimum(idx, len(grid) - 1)]  # beyond the maximum: saturate


def _assert_bits(got, want, xs, what):
    got = np.asarray(got)
    assert got.dtype == np.float32 and got.shape == want.shape, (got.dtype, got.shape, want.shape)
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    if not same.all():
        bad = np.flatnonzero(~same)[:8]
        rows = [f"x={xs[i]!r} (0x{xs.view(np.uint32)[i]:08X}): got {got[i]!r} (0x{got.view(np.uint32)[i]:08X}), "
                f"expected {want[i]!r} (0x{want.view(np.uint32)[i]:08X})" for i in bad]
        raise AssertionError(f"{what}: {int((~same).sum())} of {len(xs)} differ:\n" + "\n".join(rows))


@pytest.mark.parametrize("dtype", ["F16", "BF16", "UE4M3"])
def test_grid_enumeration_itself(dtype):
    grid = _grid(dtype)
    assert len(grid) == GRID_SIZES[dtype]
    assert grid[-1].view(np.uint32) == EXPECTED_MAX[dtype].view(np.uint32)


@pytest.mark.parametrize("profile", ALL_PROFILES)
@pytest.mark.parametrize("dtype", ["F16", "BF16", "UE4M3"])
def test_round_up_is_smallest_representable_not_below(dtype, profile):
    grid = _grid(dtype)
    xs = _inputs(grid)
    got = oracle.scale_to_dtype(xs, ScaleDtype[dtype], profile=profile)
    _assert_bits(got, _expected(grid, xs), xs, f"round_up {dtype} ({profile})")
    nan = oracle.scale_to_dtype(np.array([np.nan], dtype=np.float32), ScaleDtype[dtype], profile=profile)
    assert np.isnan(nan).all(), "NaN scales pass through"


@pytest.mark.parametrize("profile", ALL_PROFILES)
def test_round_up_f32_is_identity(profile):
    xs = np.concatenate([_inputs(_grid("F16")), -_inputs(_grid("UE4M3"))]).astype(np.float32)
    got = oracle.scale_to_dtype(xs, ScaleDtype.F32, profile=profile)
    _assert_bits(got, xs.copy(), xs, f"round_up F32 ({profile})")


def _ue8m0_inputs() -> np.ndarray:
    powers = np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32)  # incl. f32 subnormal powers
    up = np.nextafter(powers, np.float32(np.inf))
    down = np.nextafter(powers, np.float32(0))
    extra = np.array([0.0, -0.0, -1.0, -1e-45, 1e-45, F32_MAX, np.inf, -np.inf, 3.0, 1.5 * 2.0**127,
                      1.5 * 2.0**-127, 0.75], dtype=np.float32)
    return np.concatenate([powers, up, down, extra]).astype(np.float32)


def test_round_up_ue8m0_0_22_1():
    """§11: NaN -> NaN; <= 2^-127 (incl. 0, negatives) -> 2^-127; >= 2^127 -> 2^127; else the next power of
    two >= scale."""
    xs = _ue8m0_inputs()
    grid = np.ldexp(np.float32(1), np.arange(-127, 128)).astype(np.float32)
    want = _expected(grid, xs)
    want = np.where(xs <= grid[0], grid[0], want).astype(np.float32)
    got = oracle.scale_to_dtype(xs, ScaleDtype.UE8M0, profile=V0221)
    _assert_bits(got, want, xs, "round_up UE8M0 (0.22.1)")
    assert np.isnan(oracle.scale_to_dtype(np.array([np.nan], np.float32), ScaleDtype.UE8M0, profile=V0221)).all()


@pytest.mark.parametrize("profile", PRE3)
def test_round_up_ue8m0_unsupported_before_0_22(profile):
    with pytest.raises(oracle.BurnPanic) as info:
        oracle.scale_to_dtype(np.array([1.0], np.float32), ScaleDtype.UE8M0, profile=profile)
    assert info.value.message == "UE8M0 scales are not yet supported"
