"""The per-block min/max fold (oracle/calibration.py ``_fold_min_max``) against a scalar walk of burn's
selection rule: a NaN wins (the last one, payload and all), otherwise the strictly smaller (larger) value
replaces the running pick, so the first of equal values (+0 / -0) stays. Block lengths 1..130 (Q8_0's 32,
group-128), f32 / f16 / bf16, compared bit for bit."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from oracle.calibration import _fold_min_max


def _walk(column, smaller: bool):
    pick = column[0]
    for v in column[1:]:
        if np.isnan(v) or (not np.isnan(pick) and (v < pick if smaller else v > pick)):
            pick = v
    return pick


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint16)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 16, 31, 32, 33, 128, 130])
def test_pairwise_fold_picks_what_the_walk_picks(dtype, n):
    r = np.random.default_rng(n)
    x = r.choice(np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5], np.float32), size=(3, n)).astype(dtype)
    nan_bits = np.array([0x7FC00001, 0xFFC00002, 0x7FC00003], np.uint32).view(np.float32).astype(np.float32)
    for row in (1, 2):  # rows 1 and 2 hold NaNs of distinct payloads (in f32; narrower dtypes keep their sign)
        x[row, r.choice(n, size=min(n, row), replace=False)] = nan_bits[:min(n, row)].astype(dtype)
    lo, hi = _fold_min_max(x, x, axis=1)
    want_lo = np.array([[_walk(row, True)] for row in x], dtype=dtype)
    want_hi = np.array([[_walk(row, False)] for row in x], dtype=dtype)
    assert _bits(lo).tolist() == _bits(want_lo).tolist()
    assert _bits(hi).tolist() == _bits(want_hi).tolist()
