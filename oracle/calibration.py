"""``compute_range``: the calibrated ``(min, max)`` per tensor or per block (spec §2).

MinMax is exact (no arithmetic). AbsMean sums, so its last bit depends on the backend's summation order; the
oracle sums sequentially in ``T`` and divides by the count, per block axis, outermost first (``reduce_blocks``
folds one block axis at a time). See docs/oracle.md for what real burn was measured to do.
"""

from __future__ import annotations

import numpy as np

from .blocks import BlockLayout, params_shape
from .errors import panic
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .scheme import QuantScheme, list_debug, shape_debug

CALIBRATIONS = ("minmax", "absmean")


def compute_range(x: np.ndarray, scheme: QuantScheme, calibration: str = "minmax", *,
                  profile: str | Profile = DEFAULT_PROFILE) -> tuple[np.ndarray, np.ndarray]:
    """``(min, max)`` in ``x``'s dtype, shaped ``params_shape`` (``[1]`` per tensor)."""
    prof = get_profile(profile)
    x = np.asarray(x)
    if calibration not in CALIBRATIONS:
        raise ValueError(f"unknown calibration {calibration!r}; expected one of {CALIBRATIONS}")
    if calibration == "absmean" and scheme.global_scale_dtype() is not None:
        raise panic("range.absmean_two_level")
    if scheme.block_size() is None:
        if x.size == 0:
            raise panic("range.empty_ndarray" if prof.backend == "ndarray" else "range.empty_flex")
        if calibration == "minmax":
            return x.min(keepdims=False).reshape(1), x.max().reshape(1)
        gamma = _mean(np.abs(x).reshape(-1), axis=0).reshape(1)
        return -gamma, gamma
    blocks = _block_view(x, scheme, prof)
    reduce_axes = [axis for axis in range(1, blocks.ndim, 2) if blocks.shape[axis] > 1]
    grid = params_shape(x.shape, scheme)
    if calibration == "minmax":
        lo, hi = _block_min_max(blocks, reduce_axes)
        return lo.reshape(grid), hi.reshape(grid)
    gamma = np.abs(blocks)
    for axis in reduce_axes:
        gamma = _mean(gamma, axis=axis)
    gamma = gamma.reshape(grid)
    return -gamma, gamma


def _block_min_max(blocks: np.ndarray, axes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per-block min and max over the block axes (always odd, never axis 0), one slice of axis 0 at a time so
    the max reads what the min left in cache. Both are exact, so slicing cannot change a bit."""
    reduced = [1 if axis in axes else n for axis, n in enumerate(blocks.shape)]
    lo, hi = np.empty(reduced, blocks.dtype), np.empty(reduced, blocks.dtype)
    rows = max(1, (1 << 17) * blocks.shape[0] // max(blocks.size, 1))
    for start in range(0, blocks.shape[0], rows):
        part = slice(start, start + rows)
        lo_part = hi_part = blocks[part]
        for axis in axes:
            lo_part, hi_part = _fold(lo_part, axis, np.minimum), _fold(hi_part, axis, np.maximum)
        lo[part], hi[part] = lo_part, hi_part
    return lo, hi


def _fold(values: np.ndarray, axis: int, op: np.ufunc) -> np.ndarray:
    """``op``-reduce ``axis`` keeping it, by folding its slices: numpy's reduce over a short axis pays per-row
    overhead that dominated quantize_dynamic (measured 3x slower for 16-wide blocks)."""
    if values.shape[axis] > 32:
        return op.reduce(values, axis=axis, keepdims=True)
    index = [slice(None)] * values.ndim
    index[axis] = slice(0, 1)
    out = values[tuple(index)].copy()
    for j in range(1, values.shape[axis]):
        index[axis] = slice(j, j + 1)
        op(out, values[tuple(index)], out=out)
    return out


def _block_view(x: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """``x`` as ``[n0, b0, n1, b1, ...]``; calibration needs every dim to be a whole number of blocks, and the
    backend must hold a tensor of twice the rank."""
    layout = BlockLayout(x.shape, scheme.block_size())
    if not layout.divides():
        raise panic("range.block_not_divisible", shape=shape_debug(x.shape), block=list_debug(layout.block))
    split = layout.split_shape()
    if profile.max_reshape_dims is not None and len(split) > profile.max_reshape_dims:
        raise panic("ndarray.reshape_dims", dims=len(split))
    return x.reshape(split)


def _mean(values: np.ndarray, axis: int) -> np.ndarray:
    """Sequential sum along ``axis`` in the values' dtype, then one division by the count (keeps the axis)."""
    t = values.dtype
    moved = np.moveaxis(values, axis, 0)
    total = np.zeros(moved.shape[1:], dtype=t)
    for row in moved:
        total = (total + row).astype(t)
    return np.expand_dims((total / t.type(moved.shape[0])).astype(t), axis)
