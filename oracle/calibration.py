"""``compute_range``: the calibrated ``(min, max)`` per tensor or per block (spec §2).

MinMax is exact (no arithmetic) but for which of ``+0``/``-0`` a block returns. AbsMean sums, so its last bit
depends on the backend's summation order (profile field ``mean_summation``), per block axis, outermost first
(``reduce_blocks`` folds one block axis at a time). Both were pinned against real burn-ndarray and burn-flex.
"""

from __future__ import annotations

import functools

import numpy as np

from .blocks import BlockLayout, params_shape
from .choices import MEAN_SUMMATION, TENSOR_EXTREMUM
from .errors import panic
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .scheme import QuantScheme, list_debug, shape_debug
from .gpu_reduce import gather, memory, reduce_dim_reads, reduce_order
from .strides import is_contiguous, reshape_action
from .support import io_vector_sizes

CALIBRATIONS = ("minmax", "absmean")


def compute_range(x: np.ndarray, scheme: QuantScheme, calibration: str = "minmax", *,
                  profile: str | Profile = DEFAULT_PROFILE,
                  strides: tuple[int, ...] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(min, max)`` in ``x``'s dtype, shaped ``params_shape`` (``[1]`` per tensor). ``strides``: those of the
    view ``x`` is on the device, where the profile reshapes by strides (``None``: contiguous)."""
    prof = get_profile(profile)
    x = np.asarray(x)
    if calibration not in CALIBRATIONS:
        raise ValueError(f"unknown calibration {calibration!r}; expected one of {CALIBRATIONS}")
    if calibration == "absmean" and scheme.global_scale_dtype() is not None:
        raise panic("range.absmean_two_level")
    if scheme.block_size() is None:
        if calibration == "minmax":
            if x.size == 0:
                raise panic(prof.empty_range_panic)
            read = _read_on_device(x, strides, next(iter(reduce_order(x.shape)), None), prof)
            return _tensor_extremum(read, np.min, prof), _tensor_extremum(read, np.max, prof)
        gamma = _mean(np.abs(x).reshape(-1), 0, prof).reshape(1)  # of nothing: 0 / 0 = NaN, no panic
        return -gamma, gamma
    blocks = _block_view(x, scheme, prof, strides)
    reduce_axes = [axis for axis in range(1, blocks.ndim, 2) if blocks.shape[axis] > 1]
    grid = params_shape(x.shape, scheme)
    if calibration == "minmax":
        lo, hi = _block_min_max(blocks, reduce_axes)
        return lo.reshape(grid), hi.reshape(grid)
    gamma = np.abs(blocks)
    for axis in reduce_axes:
        gamma = _mean(gamma, axis, prof)
    gamma = gamma.reshape(grid)
    return -gamma, gamma


def _tensor_extremum(x: np.ndarray, reduce, profile: Profile) -> np.ndarray:
    """``float_min``/``float_max`` of the whole tensor, shape ``[1]``: a NaN wins, and a zero result is the
    first or the last zero of the tensor (the profile's ``tensor_extremum``), whose sign numpy would not pin."""
    flat = x.reshape(-1)
    m = reduce(flat)
    if m == 0:
        zeros = np.flatnonzero(flat == 0)
        m = flat[zeros[profile.step(ZERO_PICKS)]]
    return np.asarray(m, dtype=x.dtype).reshape(1)


# Which of the equal zeros a per-tensor fold keeps: its index among them.
ZERO_PICKS = TENSOR_EXTREMUM.steps({"first": 0, "last": -1, "unpinned": 0})


def _block_min_max(blocks: np.ndarray, axes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per-block min and max over the block axes (always odd, never axis 0), one cache-sized slice of axis 0 at
    a time. Both are exact selections, so slicing cannot change a bit."""
    reduced = [1 if axis in axes else n for axis, n in enumerate(blocks.shape)]
    lo, hi = np.empty(reduced, blocks.dtype), np.empty(reduced, blocks.dtype)
    rows = max(1, (1 << 17) * blocks.shape[0] // max(blocks.size, 1))
    for start in range(0, blocks.shape[0], rows):
        part = slice(start, start + rows)
        lo_part = hi_part = blocks[part]
        for axis in axes:
            lo_part, hi_part = _fold_min_max(lo_part, hi_part, axis)
        lo[part], hi[part] = lo_part, hi_part
    return lo, hi


def _fold_min_max(lows: np.ndarray, highs: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Min of ``lows`` and max of ``highs`` along ``axis`` (kept), as burn's ``min_dim`` / ``max_dim`` select: a
    NaN wins (the last of several), and among equal values (``+0`` and ``-0``) the *first* stays (ndarray's
    ``argmin``/``argmax`` and flex's ``extremum_dim`` replace their pick only on a strict improvement).

    That selection is associative (a total preorder with position as the tie-break), so neighbours are folded
    pairwise, earlier against later, in log2(n) rounds of whole-array ufuncs instead of n one-slice steps: the
    same element is picked, and a 32- or 128-long block (Q8_0, MXFP4, group-128 weights) costs 5 or 7 rounds,
    not 31 or 127 calls. numpy's reduce over a short inner axis is slower still, and its choice between equal
    zeros is not burn's."""
    keep = _keep_first(lows.dtype)
    lo, hi = lows, highs
    while lo.shape[axis] > 1:
        lo, hi = _fold_pairs(keep, np.minimum, lo, axis), _fold_pairs(keep, np.maximum, hi, axis)
    return lo, hi


def _fold_pairs(keep, ufunc, values: np.ndarray, axis: int) -> np.ndarray:
    """Elements ``2i`` and ``2i + 1`` along ``axis`` folded into one (the earlier kept on a tie), an odd last
    element carried over after them: the order of the survivors is the order of the elements."""
    def along(s: slice) -> np.ndarray:
        index = [slice(None)] * values.ndim
        index[axis] = s
        return values[tuple(index)]

    n = values.shape[axis]
    pairs = n // 2
    running = along(slice(0, 2 * pairs, 2)).copy()
    keep(ufunc, along(slice(1, 2 * pairs, 2)), running)
    return running if n % 2 == 0 else np.concatenate([running, along(slice(n - 1, n))], axis=axis)


def _keep_first(dtype: np.dtype):
    """``running = extremum(new, running)`` keeping ``running`` on a tie. numpy's ``minimum``/``maximum`` return
    their second argument on a tie for float32 and bfloat16 (the fast path), but their first for float16; a
    dtype whose numpy loop does not keep the second is folded by explicit strict improvement instead."""
    if _tie_keeps_second(np.dtype(dtype)):
        return lambda ufunc, new, running: ufunc(new, running, out=running)

    def strict(ufunc, new, running):
        better = (new < running) if ufunc is np.minimum else (new > running)
        np.copyto(running, new, where=better | np.isnan(new))
    return strict


@functools.cache
def _tie_keeps_second(dt: np.dtype) -> bool:
    """Whether numpy's minimum and maximum return their second argument for ``-0`` against ``+0`` (probed)."""
    plus, minus = np.zeros(1, dt), np.array([-0.0], np.float32).astype(dt)

    def sign(a):
        return bool(np.signbit(a.astype(np.float32))[0])
    return all(sign(f(a, b)) == sign(b) for f in (np.minimum, np.maximum) for a, b in ((plus, minus), (minus, plus)))


def ops_below_first_reduction(shape: tuple[int, ...], scheme: QuantScheme) -> int:
    """How many ops of a MinMax range follow its first reduction: ``reduce_blocks`` reduces each axis whose block
    extent exceeds 1 in turn and reshapes the result to the scale grid (burn-backend-0.22.1
    src/quantization/scheme.rs:34-41); a per-tensor range is one reduction."""
    if scheme.block_size() is None:
        return 0
    return sum(1 for b in BlockLayout(shape, scheme.block_size()).block if b > 1)


# The panics of reduce_blocks' split reshape, the op before its first reduction.
SPLIT_PANICS = frozenset({"cubecl.reshape_analysis_index", "cubecl.binding_tiling_rank"})


def _block_view(x: np.ndarray, scheme: QuantScheme, profile: Profile, strides=None) -> np.ndarray:
    """``x`` as ``[n0, b0, n1, b1, ...]``; calibration needs every dim to be a whole number of blocks, and the
    backend must hold a tensor of twice the rank. A device view (``strides``) is split as burn-cubecl reshapes it,
    and its first block axis read as the kernel reads it (:func:`_read_on_device`)."""
    layout = BlockLayout(x.shape, scheme.block_size())
    if not layout.divides():
        raise panic("range.block_not_divisible", shape=shape_debug(x.shape), block=list_debug(layout.block))
    split = layout.split_shape()
    too_many = profile.max_reshape_dims is not None and len(split) > profile.max_reshape_dims
    split_strides = None
    if strides is not None and profile.strided_views:
        # burn-cubecl restrides the view or copies it (a copy into a buffer past cubecl's dims fails to bind; a copy
        # out of one, the reshape back to params_shape of a strided split, binds: measured); the analysis may panic
        split_strides = reshape_action(x.shape, strides, split, profile.contiguity_ignores_unit_dims)
        if too_many and split_strides is None:
            raise panic("cubecl.binding_tiling_rank", dims=len(split))
    if too_many and (not profile.dims_limit_on_reduce or max(layout.block, default=1) > 1):
        raise panic(profile.reshape_dims_panic, dims=len(split))
    axes = [axis for axis in range(1, len(split), 2) if split[axis] > 1]
    return _read_on_device(x.reshape(split), split_strides, axes[0] if axes else None, profile)


def _read_on_device(x: np.ndarray, strides, axis: int | None, profile: Profile) -> np.ndarray:
    """``x`` as the first reduction of ``axis`` reads it on the device, where ``x`` is a view with ``strides``
    (``oracle.gpu_reduce``): each output's elements along ``axis``; the reductions after it read contiguous
    tensors. ``x`` itself elsewhere."""
    if strides is None or axis is None or not profile.strided_views or not x.size:
        return x
    if is_contiguous(x.shape, strides, unit_free=False):
        return x
    reads = reduce_dim_reads(x.shape, strides, axis, io_vector_sizes(x.dtype.itemsize, profile))
    return np.moveaxis(gather(*memory(x, strides), reads).squeeze(axis), -1, axis)


def _mean(values: np.ndarray, axis: int, profile: Profile) -> np.ndarray:
    """``sum / count`` along ``axis``, keeping the axis, in the values' dtype (flex: f32 for f16/bf16 values,
    rounded to their dtype once at the end). The sum's order is the profile's ``mean_summation``: ndarray sums
    a contiguous lane (the whole tensor, or the innermost block axis) with the ``ndarray`` crate's eight-way
    ``unrolled_fold`` and any other axis by adding sub-arrays in order; otherwise the oracle adds in order."""
    t = values.dtype
    acc = np.dtype(np.float32) if profile.half_mean_in_f32 and t.itemsize == 2 else t
    values = values.astype(acc, copy=False)
    total = profile.step(SUMS)(values, axis)
    return np.expand_dims((total / acc.type(values.shape[axis])).astype(acc).astype(t), axis)


def _sum_in_order(lanes: np.ndarray) -> np.ndarray:
    """``((x0 + x1) + x2) + ...`` along the last axis: ``cumsum`` accumulates in order, in the array's dtype."""
    if lanes.shape[-1] == 0:
        return np.zeros(lanes.shape[:-1], lanes.dtype)
    return np.cumsum(lanes, axis=-1, dtype=lanes.dtype)[..., -1]


def _sum_unrolled8(lanes: np.ndarray) -> np.ndarray:
    """``ndarray::numeric_util::unrolled_fold(lane, 0, add)`` along the last axis: accumulators ``p0..p7`` take
    every eighth element in order, then ``acc = 0 + (p0+p4) + (p1+p5) + (p2+p6) + (p3+p7)``, then the (at most
    seven) leftover elements in order."""
    t = lanes.dtype
    n = lanes.shape[-1]
    whole = n - n % 8
    p = [_sum_in_order(lanes[..., j:whole:8]) for j in range(8)]
    acc = np.zeros(lanes.shape[:-1], t)
    for a, b in ((0, 4), (1, 5), (2, 6), (3, 7)):
        acc = (acc + (p[a] + p[b]).astype(t)).astype(t)
    for j in range(whole, n):
        acc = (acc + lanes[..., j]).astype(t)
    return acc


def _sum_as_ndarray(values: np.ndarray, axis: int) -> np.ndarray:
    """A contiguous lane (the last axis) by ``unrolled_fold``, another axis by sub-arrays in order."""
    if axis == values.ndim - 1:
        return _sum_unrolled8(values)
    return _sum_in_order(np.moveaxis(values, axis, -1))


def _sum_any_order(values: np.ndarray, axis: int) -> np.ndarray:
    return _sum_in_order(np.moveaxis(values, axis, -1))


SUMS = MEAN_SUMMATION.steps({"unrolled8": _sum_as_ndarray, "any_order": _sum_any_order})
