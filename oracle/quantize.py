"""Quantize: ``Tensor::quantize``'s checks, the backend's ``B::quantize`` and ``Tensor::quantize_dynamic`` (spec §5).

One pipeline, every profile:

1. *admit* (the kernel's own checks, in the backend's order): the given scales are converted to f32 and stored on
   the scale dtype's grid (``round_up``, §4.1; flex also replaces a non-positive or non-finite one), a global is
   accepted only by a two-level scheme, and the scales must cover the blocks;
2. the *effective* scale of each block, once: ``valid(f32(global * s))`` (global 1 for a one-level scheme; a
   per-tensor scheme is one block covering the tensor, so the levels differ in no other step);
3. each element divided by its block's effective scale, in the kernel's division dtype;
4. rounded, clamped and stored as a code (``encode.py``).

The CPU (ndarray, flex) and GPU (cubecl) kernels (:data:`KERNELS`) differ only in step 1 and in the dtype of
step 3's division.
A :class:`~oracle.stages.Stages` record, when given, receives every stage.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .blocks import BlockLayout, kernel_block_start, kernel_scale_index, layout_of, params_shape
from .calibration import SPLIT_PANICS, compute_range, ops_below_first_reduction
from .choices import DIVISION, KERNEL, FixedStep
from .codec import encode_scales
from .encode import encode
from .errors import BurnPanic, UndefinedBehaviour, panic, returned_by_backend_read
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .qparams import compute_q_params
from .qtensor import QTensor
from .rounding import dtype_name, round_up
from .scales import effective_scales, stored_scales, validated_scale
from .scheme import NATIVE, QuantScheme, ScaleDtype, list_debug, shape_debug
from .stages import Stages
from .support import check_quantize, native_vector_width, on_stream, read_below, strided_vector_width


def quantize(x: np.ndarray, scheme: QuantScheme, scales: np.ndarray, global_scale: np.ndarray | None = None, *,
             profile: str | Profile = DEFAULT_PROFILE, checked: bool = False,
             stages: Stages | None = None) -> QTensor:
    """``B::quantize(x, scheme, qparams)``; with ``checked=True``, ``Tensor::quantize`` (its asserts first)."""
    prof = get_profile(profile)
    x = np.asarray(x)
    require_dtypes(prof, x, scales, global_scale)
    if checked:
        tensor_checks(scheme, global_scale)
        scales = np.asarray(scales).ravel()  # through Tensor::quantize the scales are a flat tensor (docs/ops.md)
        with on_stream(prof):
            return _quantize(x, scheme, np.asarray(scales), global_scale, prof, stages)
    try:
        with on_stream(prof):
            return _quantize(x, scheme, np.asarray(scales), global_scale, prof, stages)
    except BurnPanic as p:
        raise returned_by_backend_read(p) from None


def quantize_dynamic(x: np.ndarray, scheme: QuantScheme, *, profile: str | Profile = DEFAULT_PROFILE,
                     stages: Stages | None = None, strides: tuple[int, ...] | None = None) -> QTensor:
    """``Tensor::quantize_dynamic``: MinMax ``compute_range`` → ``compute_q_params`` → ``B::quantize`` (§5.1).
    ``strides``: those of the view ``x`` is on the device (``None``: contiguous)."""
    prof = get_profile(profile)
    x = np.asarray(x)
    require_dtypes(prof, x)
    # A fused build runs compute_q_params' float ops as one elementwise kernel: a failed reduction (the range's first,
    # or the two-level split's max) is read past that kernel and the quantize, and past the range's own later ops (a
    # failed block split, one more);
    # the host-side checks of the q-params still run at the call before anything is read.
    with read_below(prof, 2 + ops_below_first_reduction(x.shape, scheme), SPLIT_PANICS), \
            _then_host_checks(x, scheme, prof), \
            on_stream(prof):
        lo, hi = compute_range(x, scheme, "minmax", profile=prof, strides=strides)
    if stages is not None:
        stages.min, stages.max = lo, hi
    with read_below(prof, 2):
        scales, glob = compute_q_params(lo, hi, scheme, profile=prof, stages=stages)
    if strides is not None and prof.max_vector_size <= 16:  # Native kernels vectorize: the strides bound the width
        prof = prof.with_(max_vector_size=min(prof.max_vector_size,
                                              strided_vector_width(x.shape, strides, x.dtype.itemsize, prof)))
    if strides is not None and prof.step(KERNELS).words_by_values:
        x = _packed_reads(x, strides, scheme)
    with on_stream(prof):
        return _quantize(x, scheme, scales, glob, prof, stages)


def _packed_reads(x: np.ndarray, strides: tuple[int, ...], scheme: QuantScheme) -> np.ndarray:
    """The values the GPU's packed quantize packs, in the row-major order its words take them (``_placed_by_words``),
    for a device view ``x`` with ``strides``. Where the view's packed axis has stride 1 (``can_vectorize``,
    cubek-quant-0.4.0-pre.1 src/quantize.rs:441-465, the same in 0.3.1 and 0.3.0-pre.3) word ``n`` is read as one
    vector of ``nq``: the one holding the memory offset of the view's row-major element ``n * nq``, that offset
    divided by the vector size (cubecl-std's permuted and pitched layouts, ``index_offset_contiguous_fastdivmod``), so
    on a view that is not row-major a word packs memory neighbours, not the view's row-major run (found by fuzzing
    0.23 WGSL: a transposed view packed along an outer axis wrote one value twice). Any other view is read element
    by element, or copied contiguous first: its row-major values."""
    if scheme.store.kind != "PackedU32" or not scheme.store.packs_outer_dim or not x.size:
        return x
    nq, axis = scheme.num_quants(), x.ndim - 1 - scheme.store.dim
    if strides[axis] != 1 or x.shape[axis] % nq:
        return x
    offsets = np.indices(x.shape).reshape(x.ndim, -1).T @ np.asarray(strides, np.int64)
    if np.array_equal(offsets, np.arange(x.size)):
        return x
    at = {int(o): i for i, o in enumerate(offsets)}
    vectors = offsets[::nq] // nq * nq
    wanted = (vectors[:, None] + np.arange(nq)).ravel()
    if not all(int(o) in at for o in wanted):
        raise UndefinedBehaviour("a packed word's vector read reaches memory outside the view")
    return x.reshape(-1)[[at[int(o)] for o in wanted]].reshape(x.shape)


@contextmanager
def _then_host_checks(x: np.ndarray, scheme: QuantScheme, profile: Profile):
    """A range whose reduction failed on a fused build's stream (``Profile.errored_handles``) is held in error, and
    ``compute_q_params`` still runs on it at the call: its host-side checks (a block dtype too wide for the global)
    raise there, first (found by fuzzing: seed 20261202, quantize_dynamic case 2)."""
    try:
        yield
    except BurnPanic as p:
        if profile.errored_handles and p.code == "fusion.deferred":
            held = np.zeros(params_shape(x.shape, scheme), np.float32)
            try:
                compute_q_params(held, held, scheme, profile=profile)
            except BurnPanic as q:
                if q.code not in profile.stream_panics:
                    raise q from None
        raise


def require_dtypes(profile: Profile, *tensors: np.ndarray | None) -> None:
    """A backend without f16/bf16 tensors (ndarray) fails when such a tensor is created (§8 #35)."""
    for t in tensors:
        if t is None:
            continue
        name = dtype_name(np.asarray(t).dtype)
        if name not in profile.input_dtypes:
            raise panic("ndarray.unsupported_dtype", dtype=name.upper())


# `{:?}` of `Option<Tensor<1>>` in Tensor::quantize's assert: a tensor prints its dispatch wrapper, not its data
# (read off real burn 0.22.0-pre.3 and 0.22.1 through the harness).
_GLOBAL_TENSOR_DEBUG = ("Some(Tensor { primitive: BridgeTensor { kind: Float }, "
                        "_kind: PhantomData<burn_tensor::bridge::kind::Float> })")


def tensor_checks(scheme: QuantScheme, global_scale: np.ndarray | None) -> None:
    """``Tensor::quantize``'s asserts, in order (§5.1, §8 #21-23)."""
    two_level = scheme.global_scale_dtype() is not None
    given = global_scale is not None
    if two_level != given:
        raise panic("quantize.global_mismatch", scheme=scheme.debug(),
                    global_scale=_GLOBAL_TENSOR_DEBUG if given else "None",
                    left=str(two_level).lower(), right=str(given).lower())
    if given:
        g = np.asarray(global_scale)
        dims = list(g.shape)
        if dims[0] != 1:
            raise panic("tensor.global_not_one", dims=list_debug(dims), left=dims[0], right=1)
        if g.dtype != np.float32:
            dt = dtype_name(g.dtype).upper()
            raise panic("tensor.global_not_f32", dtype=dt, left=dt, right="F32")


# --- the pipeline --------------------------------------------------------------------------------------------


def _quantize(x: np.ndarray, scheme: QuantScheme, scales: np.ndarray, global_scale: np.ndarray | None,
              profile: Profile, stages: Stages | None) -> QTensor:
    kernel = profile.step(KERNELS)
    held, glob, layout = kernel.admit(x, scheme, scales, global_scale, profile)
    grid = held[: layout.block_count()]
    dividend, effective = kernel.operands(x, effective_scales(grid, glob, profile), glob is None, profile)
    divide_block, divisor = profile.step(TWO_LEVEL_DIVISION)(
        lambda values: _spread(values, layout, scheme, profile), grid, glob, effective, profile)

    def scaled(xc: np.ndarray, dc: np.ndarray) -> np.ndarray:
        return kernel.settle(divide_block(xc, dc), x.dtype)

    dividend = layout.element_view(dividend)
    if stages is None:
        codes = _chunked(lambda xc, dc: encode(scaled(xc, dc), scheme, profile), dividend, divisor)
    else:
        v = scaled(dividend, divisor)
        stages.rounded_scales, stages.global_scale, stages.effective_scales = held, glob, effective
        stages.scaled = np.array(v, dtype=np.float32).reshape(x.shape)
        codes = stages.codes = encode(v, scheme, profile).reshape(x.shape)
    codes = codes.reshape(x.shape)
    if kernel.words_by_values and scheme.store.kind == "PackedU32" and scheme.store.packs_outer_dim:
        codes = _placed_by_words(codes, scheme)
    return _finish(codes, scheme, held, glob, profile)


def _placed_by_words(codes: np.ndarray, scheme: QuantScheme) -> np.ndarray:
    """Where the packed kernel's words put each code of a store packed along an outer axis (``Kernel.words_by_values``):
    word ``n`` of the word grid (the shape with the packed axis in words, row-major) holds the row-major codes
    ``n * nq ..``, its code ``t`` at that word's own position, ``t`` along the packed axis. Every later reader of the
    device's tensor sees them there: its read-back and its dequantize alike (measured on 0.22.1 SPIR-V and 0.23 WGSL:
    a per-tensor Q8S ``PackedU32(1)`` ``[8, 8]`` holding 0..63 dequantizes to ``[[0, 4, 8, ...], [1, 5, 9, ...]]``)."""
    nq, axis = scheme.num_quants(), codes.ndim - 1 - scheme.store.dim
    if codes.shape[axis] % nq:  # a partial word: the measured builds refuse it at the launch ("Can't store in u32")
        return codes
    words = list(codes.shape)
    words[axis] //= nq
    grid = np.array(np.unravel_index(np.arange(math.prod(words)), words))
    placed, values = np.empty_like(codes), codes.reshape(-1, nq)
    for t in range(nq):
        at = grid.copy()
        at[axis] = grid[axis] * nq + t
        placed[tuple(at)] = values[:, t]
    return placed


def _spread(grid: np.ndarray, layout, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """Per-block values broadcastable against ``layout.element_view(x)``."""
    return profile.step(BLOCK_LAYOUT)(grid, layout, scheme)


def _nd_blocks(grid: np.ndarray, layout, scheme: QuantScheme) -> np.ndarray:
    return layout.per_element(grid)


BLOCK_LAYOUT = FixedStep("block_layout", _nd_blocks, "blocks are N-D rectangles of the tensor (§1.8)")


def divide(x: np.ndarray, e: np.ndarray, profile: Profile) -> np.ndarray:
    """``x / e`` as the profile divides."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return profile.step(DIVISIONS)(x, e)


def _reciprocal(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    return x * (np.float32(1.0) / e)


DIVISIONS = DIVISION.steps({"divide": np.divide, "reciprocal": _reciprocal})


def _by_effective(spread, grid, glob, effective, profile):
    """Each element divided by its block's effective scale ``valid(f32(global * s))``."""
    return (lambda xc, ec: divide(xc, ec, profile)), spread(effective)


# How an element meets its block's scales: ``(divide_block(x_chunk, divisor_chunk), divisor)`` from the spread
# function, the held block scales, the global and the effective scales.
TWO_LEVEL_DIVISION = FixedStep("two_level_division", _by_effective,
                               "x / f32(global * s): one division by the product")


_CHUNK = 1 << 16  # elements per step: every temporary of the pipeline stays in the L2 cache


def _chunked(fn, xv: np.ndarray, aux: np.ndarray) -> np.ndarray:
    """``fn(xv, aux)`` computed over slices of axis 0, ``aux`` sliced alongside where it is not broadcast.
    Elementwise work gives the same bits in any slicing; the slicing only keeps temporaries cache-sized."""
    n0 = xv.shape[0] if xv.ndim else 1
    if xv.size <= _CHUNK or n0 == 1:
        return fn(xv, aux)
    aux = np.asarray(aux)
    sliced = aux.ndim == xv.ndim and aux.shape[0] == n0
    out = np.empty(xv.shape, np.int8)
    rows = max(1, _CHUNK * n0 // xv.size)
    for start in range(0, n0, rows):
        part = slice(start, start + rows)
        out[part] = fn(xv[part], aux[part] if sliced else aux)
    return out


def held_scheme(scheme: QuantScheme, rank: int, profile: Profile) -> QuantScheme:
    """The scheme of the tensor a quantize leaves on a rank-``rank`` tensor: stored Native where the backend stores
    so; on burn-cubecl (``outer_packed_presented``) a store packed along an outer axis is built as its stored twin
    and swapped back, two swaps of the block dims that compose to the identity but each rewrites the block at the
    rank (``new_quantized``, burn-cubecl-0.23.0-pre.1 src/ops/qtensor.rs:84-101; measured on 0.23 WGSL: a
    ``[7, 6, 5, 8]`` block on a ``[4, 5]`` tensor ``PackedU32(1)`` reads back, where a Native one is an invalid
    layout)."""
    if profile.stores_as_native:
        return scheme.with_store(NATIVE)
    if profile.outer_packed_presented and scheme.store.packs_outer_dim and scheme.store.dim < rank:
        return scheme.permute_block_dims(rank, range(rank))
    return scheme


def _finish(codes: np.ndarray, scheme: QuantScheme, held: np.ndarray, glob: np.ndarray | None,
            profile: Profile) -> QTensor:
    """What the backend keeps, after the byte-level checks of ``TensorData::quantized`` (ndarray) or
    ``FlexQTensor::new`` (flex)."""
    result_scheme = held_scheme(scheme, codes.ndim, profile)
    if profile.writes_bytes_at_quantize:  # QuantizedBytes::new: the block scales are encoded first, then the global
        encode_scales(held if scheme.block_size() is not None else held[:1], scheme.scale_dtype(), profile=profile)
        two_level = scheme.global_scale_dtype()
        if two_level is not None and glob is not None and two_level is not ScaleDtype.F32:
            raise panic("bytes.global_not_f32", scheme=scheme.debug(), left=two_level.name, right="F32")
    if profile.checks_qtensor:
        if held.size == 0:
            raise panic("flex.qtensor_no_scale")
        expects = result_scheme.global_scale_dtype() is not None
        if expects != (glob is not None):
            # Only a two-level scheme without a global gets here: a global for any other scheme panics earlier.
            raise panic("quantize.global_mismatch", scheme=result_scheme.debug(), global_scale="None",
                        left="true", right="false")
    return QTensor(codes, held, glob, result_scheme)


# --- the kernels: what differs between the CPU backends and the GPU kernel --------------------------------


def _held(stored: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """The scales a backend keeps: all of a block scheme's, the first of a per-tensor scheme's (flex: all)."""
    if scheme.block_size() is None and not profile.keeps_extra_scales:
        return stored[:1]
    return stored


def _admit_cpu(x: np.ndarray, scheme: QuantScheme, scales: np.ndarray, global_scale: np.ndarray | None,
               profile: Profile):
    """burn-ndarray (§5.2) and burn-flex (§5.3): stored scales, then the global, the support checks and the
    block checks, in that order."""
    stored = stored_scales(scales.astype(np.float32).ravel(), scheme.scale_dtype(), profile)
    glob = None
    if global_scale is not None:
        dtype = scheme.global_scale_dtype()
        if dtype is None:
            raise panic("quantize.global_without_two_level")
        g = np.asarray(global_scale).astype(np.float32).ravel()
        if g.size == 0:
            raise panic(profile.empty_global_panic, len=0, index=0)
        glob = stored_scales(g[:1], dtype, profile)
    check_quantize(scheme, x.shape, profile)
    layout = layout_of(x.shape, scheme)
    if scheme.block_size() is None:
        if stored.size == 0:
            raise panic("scale.index_out_of_bounds", len=0, index=0)
        return _held(stored, scheme, profile), glob, layout
    if scheme.is_two_level() and glob is None and profile.requires_two_level_global:
        raise panic("quantize.two_level_without_global")
    if profile.asserts_whole_blocks and not layout.divides():
        raise panic("flex.block_not_whole", shape=shape_debug(x.shape), block=scheme.block_size().debug())
    _check_block_count(layout, stored, x.shape, scheme, profile)
    return stored, glob, layout


def _check_block_count(layout: BlockLayout, stored: np.ndarray, shape, scheme: QuantScheme,
                       profile: Profile) -> None:
    """ndarray asserts the scale count; flex indexes (too few → out of bounds, extra kept)."""
    count = stored.size
    if profile.asserts_block_count and layout.block_count() != count:
        raise panic("ndarray.block_count", count=count, shape=shape_debug(shape),
                    block=scheme.block_size().debug(), left=layout.block_count(), right=count)
    if count < layout.block_count() and math.prod(shape) > 0:
        raise panic("scale.index_out_of_bounds", len=count, index=_first_missing_block(layout, count))


def _first_missing_block(layout: BlockLayout, count: int) -> int:
    """The block index of the first element (row-major) whose block has no scale (all elements' blocks at once:
    a loop over the elements cost milliseconds on a tensor of a few thousand)."""
    blocks = layout.blocks_of(np.arange(math.prod(layout.shape)))
    missing = np.flatnonzero(blocks >= count)
    if not missing.size:
        raise AssertionError("unreachable: fewer scales than blocks")
    return int(blocks[missing[0]])


def _admit_gpu(x: np.ndarray, scheme: QuantScheme, scales: np.ndarray, global_scale: np.ndarray | None,
               profile: Profile):
    """burn-cubecl (§5.4, very likely): the launch checks; the scales are rounded in the kernel; a scale buffer
    shorter than the blocks is read out of bounds (undefined behaviour)."""
    if global_scale is not None and np.asarray(global_scale).dtype != np.float32:
        dt = dtype_name(np.asarray(global_scale).dtype).upper()
        raise panic("cubecl.global_tensor_not_f32", dtype=dt, left=dt, right="F32")
    check_quantize(scheme, x.shape, profile, bindings=1 + (global_scale is not None))
    read = np.asarray(scales).ravel()
    no_kernel = profile.empty_keeps_given_bytes and x.size == 0  # the given bytes stay, as the storage dtype
    if profile.scales_read_as_input_dtype and not no_kernel:
        read = _as_input_dtype(read, x.dtype)
    stored = kernel_round_up(read.astype(np.float32), scheme.scale_dtype(), profile)
    glob = None if global_scale is None else np.asarray(global_scale, dtype=np.float32).ravel()[:1]
    layout = layout_of(x.shape, scheme)
    needed = layout.block_count()
    if stored.size < needed or (glob is not None and glob.size == 0):
        raise UndefinedBehaviour(f"the kernel reads {needed} scale(s) and a global from buffers holding "
                                 f"{stored.size} and {0 if glob is None else glob.size}: out of bounds")
    if profile.scales_by_strides and scheme.block_size() is not None and x.size:
        if profile.max_vector_size <= 16 or scheme.store.kind == "PackedU32":  # each unit's read, exactly
            stored = stored[_unit_scale_index(x, scheme, layout, np.asarray(scales).shape, profile)]
        else:
            stored = stored[_strided_scale_index(layout, scales.shape)]
    unfilled = np.asarray(scales).dtype.itemsize != scheme.scale_dtype().size
    if no_kernel and needed and unfilled:
        raise UndefinedBehaviour("no kernel runs for an empty tensor: the scale storage holds the given bytes, and "
                                 "the rest of the buffer is whatever memory it reused")
    if profile.empty_scales_uninitialized and x.size == 0 and (needed or glob is not None):
        # the kernel writes the global too (GlobalScale::write, cubek-quant quantize.rs:242-243): measured through
        # SPIR-V, an empty two-level tensor's global 1.0 read back as 0.0 on 0.22.1 and 4.0 on 0.23 (found by fuzzing)
        raise UndefinedBehaviour("no kernel runs for an empty tensor, and its scale storage is fresh memory")
    if scheme.block_size() is not None:  # the output's scale tensor holds the grid, whatever was given
        stored = stored[:needed]
    return _held(stored, scheme, profile), glob, layout


def _as_input_dtype(scales: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The kernel views the scales buffer as the input's float dtype (``ScalesView<F>``, cubek-quant
    ``quantize.rs:110-143``): scales of another dtype are reinterpreted, not converted (issue 9's prediction 2,
    measured on lavapipe: an f32 scale 1.0 under an f16 input reads its low half, 0x0000 = 0.0). Only as many
    entries as were given are ever addressed."""
    flat = np.ascontiguousarray(scales).ravel()
    if flat.dtype == dtype:
        return flat
    raw = flat.tobytes()
    view = np.frombuffer(raw, dtype=dtype, count=len(raw) // np.dtype(dtype).itemsize)
    if view.size < flat.size:
        raise UndefinedBehaviour(f"{flat.size} {flat.dtype} scales read as {dtype}: past the buffer")
    return view[: flat.size]


def _unit_scale_index(x: np.ndarray, scheme: QuantScheme, layout: BlockLayout, given: tuple[int, ...],
                      profile: Profile) -> np.ndarray:
    """Per block, the given scale the kernel reads for it: each unit (a packed word, or a Native vector of
    ``native_vector_width``) reads one scale through the given scale tensor's own layout (``kernel_scale_index``)
    and divides all its elements by it. Undefined where a unit straddles blocks, where units of one block read
    different scales (their scale writes race), or where no unit writes a block (measured on lavapipe)."""
    if len(given) > x.ndim:
        raise UndefinedBehaviour("a scale tensor of higher rank than the tensor: not observed")
    width = scheme.num_quants() if scheme.store.kind == "PackedU32" else \
        native_vector_width(x.shape, x.dtype.itemsize, profile)
    size, n = scheme.block_size(), x.size
    starts = np.arange(0, n, width)
    walked = _presented_word_grid(x.shape, scheme) if profile.outer_packed_presented else None
    read = kernel_scale_index(starts, walked or x.shape, size, given)
    blocks = layout.blocks_of(np.arange(n)).reshape(-1, width) if n % width == 0 else None
    if blocks is None or (blocks != blocks[:, :1]).any():
        raise UndefinedBehaviour("a kernel unit spans two blocks: a block's scale is read or written by another")
    index = np.full(layout.block_count(), -1, dtype=np.int64)
    for b, r in zip(blocks[:, 0], read):
        if index[b] not in (-1, r):
            raise UndefinedBehaviour(f"block {b}'s units read different scales: their scale writes race")
        index[b] = r
    elected = kernel_block_start(starts, walked or x.shape, size, given)
    if index.min(initial=0) < 0 or not np.isin(np.arange(index.size), blocks[elected, 0]).all():
        raise UndefinedBehaviour("no kernel unit writes some block's scale: it is uninitialized memory")
    if walked is not None:
        _check_presented_writes(starts[elected], blocks[elected, 0], walked, x.shape, scheme, layout)
    if index.size and index.max() >= math.prod(given):
        raise UndefinedBehaviour("the kernel reads past the given scales")
    return index


def _presented_word_grid(shape: tuple[int, ...], scheme: QuantScheme) -> tuple[int, ...] | None:
    """burn-cubecl 0.23 stores a tensor packed along an outer axis with that axis swapped innermost and presents it
    swapped back (``outer_packed_presented``): the kernel's scale layout walks the presented word grid (the shape
    with the packed axis in words) with its *last* dim times ``nq`` (cubek-quant-0.4.0-pre.1
    src/layout/scales.rs:218-252), whatever the packed axis. None for a store packed along the last dim."""
    if scheme.store.kind != "PackedU32" or not scheme.store.packs_outer_dim or not shape:
        return None
    axis, nq = len(shape) - 1 - scheme.store.dim, scheme.num_quants()
    words = list(shape)
    words[axis] //= nq
    words[-1] *= nq
    return tuple(words)


def _check_presented_writes(starts: np.ndarray, blocks: np.ndarray, walked: tuple[int, ...], shape: tuple[int, ...],
                            scheme: QuantScheme, layout: BlockLayout) -> None:
    """Each elected unit writes its scale through the output's scale tensor, the stored one (block dims swapped
    with the axes) presented swapped back, walked over ``walked``: where that is not its block's own slot, or past
    the buffer, the stored scales are not the blocks' (measured on both 0.23 lean builds: a [4] block of an [8, 8]
    tensor packed along dim 0 wrote 4 of its 16 scales)."""
    rank, axis = len(shape), len(shape) - 1 - scheme.store.dim
    order = list(range(rank))
    order[axis], order[-1] = order[-1], order[axis]
    stored_grid = [layout.blocks[d] for d in order]
    stored_strides = [math.prod(stored_grid[d + 1:]) for d in range(rank)]
    presented = [stored_strides[order.index(d)] for d in range(rank)]
    extents = scheme.block_size().to_dim_vec(rank)
    offs, written = np.asarray(starts, np.int64), np.zeros(len(starts), np.int64)
    for dim in reversed(range(rank)):
        offs, local = np.divmod(offs, walked[dim])
        written += local // extents[dim] * presented[dim]
    coords = np.stack(np.unravel_index(blocks, layout.blocks)) if len(blocks) else np.zeros((rank, 0), np.int64)
    own = (coords * np.asarray(presented)[:, None]).sum(axis=0)
    if not np.array_equal(written, own):
        raise UndefinedBehaviour("the kernel writes block scales through the presented word grid of a tensor packed "
                                 "along an outer axis, not into each block's own slot: some are never written, "
                                 "some written past the buffer")


def _strided_scale_index(layout: BlockLayout, given: tuple[int, ...]) -> np.ndarray:
    """The scale each block reads when the kernel indexes the given scales tensor by its own strides (its block
    coordinates dotted with the strides of ``given``, contiguous); a tensor of another rank than the block grid
    (a flat list for a rank >= 2 tensor) reads its first scale everywhere (measured on lavapipe)."""
    grid = tuple(layout.blocks)
    if len(given) != len(grid):
        return np.zeros(math.prod(grid), dtype=np.int64)
    strides = np.cumprod((1, *given[:0:-1]))[::-1]
    coords = np.indices(grid).reshape(len(grid), -1)
    index = (coords * strides[:, None]).sum(axis=0)
    if index.size and index.max() >= math.prod(given):
        raise UndefinedBehaviour("the kernel reads past the given scales")
    return index


def kernel_round_up(scales: np.ndarray, dtype: ScaleDtype, profile: Profile) -> np.ndarray:
    """The kernel rounds each given scale up onto its dtype's grid itself, then casts it to the storage type and
    divides by that (``write_scale``: ``FS::cast_from(round_up_to_dtype(..))``, cubek-quant ``quantize.rs:89-108``):
    the host rule, but a NaN takes the bit trick (``rounding.round_up``), and a value the round-up leaves off the
    grid (a negative scale past the maximum, -inf) becomes what the cast makes of it (:func:`as_storage`)."""
    if dtype is ScaleDtype.F32 or (dtype is ScaleDtype.UE8M0 and not profile.ue8m0):
        return stored_scales(scales, dtype, profile)
    rounded = round_up(scales, dtype, ue8m0=profile.ue8m0, in_kernel=True)
    return rounded if dtype is ScaleDtype.UE8M0 else as_storage(rounded, dtype)


def as_storage(values: np.ndarray, dtype: ScaleDtype) -> np.ndarray:
    """``FS::cast_from`` of an f32 value to a kernel's F16, BF16 or UE4M3 scale: IEEE round to nearest for the
    halves (past the maximum, an infinity), cubecl's software E4M3 conversion saturating at +-448 (measured on
    lavapipe: given scales -inf, -500 and -1000 divide as -448); a NaN stays as it is."""
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype is ScaleDtype.UE4M3:
            cast = np.clip(values, np.float32(-448.0), np.float32(448.0))
        else:
            cast = values.astype(np.float16 if dtype is ScaleDtype.F16 else ml_dtypes.bfloat16).astype(np.float32)
    return np.where(np.isnan(values), values, cast).astype(np.float32, copy=False)


def _cpu_operands(x: np.ndarray, effective: np.ndarray, one_level: bool, profile: Profile):
    """The CPU backends convert the input to f32 and divide in f32."""
    return x.astype(np.float32, copy=False), effective


def _gpu_operands(x: np.ndarray, effective: np.ndarray, one_level: bool, profile: Profile):
    """A one-level GPU kernel divides in the input dtype, the scale cast to it; two-level kernels in f32."""
    if one_level and profile.divide_in_input_dtype:
        return x, effective.astype(x.dtype)
    return x.astype(np.float32), effective


def _as_is(v: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return v


def _through_input_dtype(v: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The GPU kernel holds the quotient in the input dtype before rounding it."""
    return v.astype(dtype).astype(np.float32)


@dataclass(frozen=True)
class Kernel:
    admit: Callable
    """The checks, in the backend's order → (held scales, global, layout)."""
    operands: Callable
    """(x, effective per block, one-level?, profile) → the dividend and divisor in the division dtype."""
    settle: Callable
    """(x / e, input dtype) → the f32 value that is rounded."""
    words_by_values: bool
    """The packed kernel fills output word ``n`` (through the output's linear view) from the input's row-major values
    ``n * num_quants ..``, whatever the packed dim (cubek-quant-0.4.0-pre.1 src/quantize.rs:223-283, 0.3.1 alike):
    ``_placed_by_words``."""


KERNELS = KERNEL.steps({"cpu": Kernel(_admit_cpu, _cpu_operands, _as_is, False),
                        "gpu": Kernel(_admit_gpu, _gpu_operands, _through_input_dtype, True)})


# --- flex's own quantizer (its per-block layout ops) ---------------------------------------------------------


def flex_quantize_dynamic(x: np.ndarray, scheme: QuantScheme, profile: Profile) -> QTensor:
    """burn-flex's own ``QTensorOps::quantize_dynamic`` (``ops/qtensor.rs:67-142``), reached only from inside flex
    (its per-block layout ops). Per block ``alpha`` = the largest ``|x|``, folded from 0 with ``f32::max`` (a NaN is
    skipped); ``s = 2 * alpha / (b - a)``; two-level: ``global = validated(max(s) / M)``, blocks ``validated(s /
    global)``. The codes then follow flex's quantize arithmetic with those scales."""
    size = scheme.block_size()
    layout = BlockLayout(x.shape, size)
    index = _block_index(layout)
    peaks = np.zeros(layout.block_count(), dtype=np.float32)
    np.fmax.at(peaks, index.ravel(), np.abs(x.astype(np.float32)).ravel())
    a, b = scheme.value.range()
    with np.errstate(all="ignore"):
        raw = (np.float32(2.0) * peaks) / np.float32(b - a)
        glob = None
        if scheme.global_scale_dtype() is None:
            scales = validated_scale(raw, scheme.scale_dtype(), profile)
        else:
            peak = np.float32(max(0.0, float(np.nanmax(raw)) if raw.size else 0.0))
            glob = validated_scale(np.array([peak / np.float32(scheme.scale_dtype().max_representable())],
                                            dtype=np.float32), scheme.global_scale_dtype(), profile)
            scales = validated_scale(raw / glob[0], scheme.scale_dtype(), profile)
    return quantize(x, scheme, scales, glob, profile=profile)


def _block_index(layout: BlockLayout) -> np.ndarray:
    """``block_of`` of every element, as an array of the tensor's shape."""
    index = np.zeros(layout.shape, dtype=np.int64)
    stride = 1
    for dim in reversed(range(len(layout.shape))):
        coord = np.arange(layout.shape[dim]) // layout.block[dim]
        index += (coord * stride).reshape([-1 if d == dim else 1 for d in range(len(layout.shape))])
        stride *= layout.blocks[dim]
    return index
