"""Rounding: element codes (half away vs half even), float dtypes, and ``ScaleDtype::round_up`` (spec §4.1, §12).

Everything here works on float32 bit patterns or float32 arithmetic, which numpy performs with IEEE
round-to-nearest-even, so each function is exact for every input (see docs/verification.md).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .choices import TIE
from .scheme import QuantValue, ScaleDtype

# The ml_dtypes storage of fp8 codes (the GPU stores E4M3/E5M2 values as these bit patterns, §5.4).
FP8_DTYPES = {QuantValue.E4M3: ml_dtypes.float8_e4m3fn, QuantValue.E5M2: ml_dtypes.float8_e5m2}

# Every minifloat value's ml_dtypes storage (burn's own e4m3/e5m2/e2m1 types from 0.23.0-pre.1 on).
MINIFLOAT_DTYPES = {**FP8_DTYPES, QuantValue.E2M1: ml_dtypes.float4_e2m1fn}

FLOAT_DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16)}

# 0.5 - 2^-25: adding it (with x's sign) and truncating is Rust's f32::round for every f32; 0.5 itself fails at
# 0.49999997 and at odd integers in [2^23, 2^24) (spec §12).
_ALMOST_HALF = np.float32(0.49999997)


def float_dtype(name: str) -> np.dtype:
    """numpy dtype of a float dtype name (``f32``, ``f16``, ``bf16``)."""
    try:
        return FLOAT_DTYPES[name]
    except KeyError:
        raise ValueError(f"unknown float dtype {name!r} (expected one of {sorted(FLOAT_DTYPES)})") from None


def dtype_name(dtype: np.dtype) -> str:
    for name, dt in FLOAT_DTYPES.items():
        if dt == dtype:
            return name
    raise ValueError(f"not a float dtype qconform models: {dtype}")


def round_half_away(x: np.ndarray) -> np.ndarray:
    """Rust ``f32::round``: ties away from zero, sign of zero kept (CPU backends)."""
    x = np.asarray(x, dtype=np.float32)
    return np.trunc(add_signed_almost_half(x.copy()))


def add_signed_almost_half(v: np.ndarray) -> np.ndarray:
    """``v + copysign(0.49999997, v)`` in place; truncating the result is Rust's ``f32::round``. The sign is
    copied with integer ops on the bit pattern (``np.copysign`` is not vectorized and costs 5x more)."""
    half = v.view(np.uint32) & np.uint32(0x80000000)
    half |= _ALMOST_HALF.view(np.uint32)
    with np.errstate(invalid="ignore"):  # NaN inputs stay NaN; the caller applies its NaN rule
        v += half.view(np.float32)
    return v


def round_half_even(x: np.ndarray) -> np.ndarray:
    """``rint``: ties to even (CUDA ``rint``, WGSL ``round``, LLVM ``roundeven``)."""
    with np.errstate(invalid="ignore"):
        return np.rint(np.asarray(x, dtype=np.float32))


ROUNDERS = TIE.steps({"away": round_half_away, "even": round_half_even})


def _rint_in_place(v: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.rint(v, out=v)


# In place, for integer codes whose int cast truncates afterwards: truncating the result rounds (away: adding
# the signed almost-half; even: rint, which truncation leaves as it is).
ROUNDERS_BEFORE_TRUNCATION = TIE.steps({"away": add_signed_almost_half, "even": _rint_in_place})


def _bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def round_up(scales: np.ndarray, dtype: ScaleDtype, *, ue8m0: bool = False, in_kernel: bool = False) -> np.ndarray:
    """``ScaleDtype::round_up``: the smallest value of ``dtype`` not below each scale, saturating at
    ``max_representable()``; NaN stays NaN; F32 is the identity (§4.1). UE8M0 has no rule before burn 0.22.0
    (``ue8m0=False``: the caller raises), and from then on rounds up to a power of two (§11).

    Negative scales (release builds only, where the ``debug_assert!`` is off) follow the same arithmetic: the
    subnormal branch's ``ceil`` moves them toward zero, the bit trick away from it.

    ``in_kernel``: the GPU kernels' ``round_up_to_dtype`` (``cubecl-std-0.11.0-pre.3/src/quant/round.rs:30-64``)
    has no NaN test: a NaN fails both comparisons and takes the bit trick, whose u32 add wraps a large payload
    (``0x7FFFFFFF`` -> ``0x80000000`` = -0.0 for F16); measured on lavapipe.
    """
    s = np.array(scales, dtype=np.float32, copy=True)
    if dtype is ScaleDtype.F32:
        return s
    if dtype is ScaleDtype.UE8M0:
        if not ue8m0:
            raise ValueError("UE8M0 has no round-up rule in this release")
        return _round_up_ue8m0(s, in_kernel)
    grid = _grid_constants(dtype)
    out = ((s.view(np.uint32) + grid.add) & grid.mask).view(np.float32)
    if grid.min_normal is not None:
        below = s < grid.min_normal
        if below.any():  # the subnormal grid (computed only where some scale needs it; a NaN is not below)
            with np.errstate(invalid="ignore", over="ignore"):
                sub = np.ceil(s / grid.spacing) * grid.spacing  # power-of-two scaling: both steps exact
            out = np.where(below, sub, out)
    out = np.where(s >= grid.max, grid.max, out)
    if in_kernel:
        return out.astype(np.float32, copy=False)
    return np.where(np.isnan(s), s, out).astype(np.float32, copy=False)


@dataclass(frozen=True)
class _GridConstants:
    """A scale dtype's round-up grid as f32/u32 scalars, made once (numpy scalars cost a call each)."""
    add: np.uint32        # bit_step - 1: added to the bit pattern, then
    mask: np.uint32       # ~(bit_step - 1): the low bits cleared, so the value steps up onto the grid
    min_normal: np.float32 | None
    spacing: np.float32 | None
    max: np.float32


@functools.cache
def _grid_constants(dtype: ScaleDtype) -> _GridConstants:
    grid, step = dtype.grid, np.uint32(dtype.grid.bit_step)
    return _GridConstants(step - np.uint32(1), ~(step - np.uint32(1)),
                          None if grid.min_normal is None else np.float32(grid.min_normal),
                          None if grid.min_normal is None else np.float32(grid.spacing),
                          np.float32(dtype.max_representable()))


_UE8M0_MIN = np.float32(2.0**-127)
_UE8M0_MAX = np.float32(2.0**127)


def _round_up_ue8m0(s: np.ndarray, in_kernel: bool = False) -> np.ndarray:
    """Next power of two not below the scale; ``<= 2^-127`` → 2^-127, ``>= 2^127`` → 2^127, NaN → NaN (§11).

    ``in_kernel``: burn 0.22.1's kernel rule (``step_up_to_power_of_two``, cubecl-std-0.11.3
    ``src/quant/round.rs:35-47``) has no NaN test either: a NaN takes the bit trick, whose u32 add wraps to a
    zero, and the UE8M0 storage cast (``f32_to_ue8m0_bits``, cubecl-core-0.11.3 ``minifloat.rs:175-201``)
    saturates that zero to code 0, 2^-127."""
    with np.errstate(over="ignore"):
        up = ((_bits(s).astype(np.uint64) + 0x7FFFFF) & 0xFF800000).astype(np.uint32).view(np.float32)
    out = np.where(s <= _UE8M0_MIN, _UE8M0_MIN, np.where(s >= _UE8M0_MAX, _UE8M0_MAX, up))
    if in_kernel:
        return np.where(out <= _UE8M0_MIN, _UE8M0_MIN, out).astype(np.float32, copy=False)
    return np.where(np.isnan(s), s, out).astype(np.float32, copy=False)


def minifloat_codes(v: np.ndarray, value: QuantValue) -> np.ndarray:
    """burn's ``e4m3``/``e5m2``/``e2m1::from_f32`` (cubecl-common 0.12, after CUDA's conversions) of ``v`` as
    int8 codes: round to nearest even (exact through f64), signed zeros kept, values past the format's range
    (infinities included) saturated to its largest finite value. A NaN becomes what those
    conversions give it: E4M3 ``0x7F`` with the NaN's sign, E5M2 ``0x7E | (its top two f32 mantissa bits)`` with
    its sign (float8 0.7 ``convert_to_fp8``), E2M1 ``+6`` (``0x7``, sign dropped)."""
    v = np.asarray(v, dtype=np.float32)
    lo, hi = value.range()
    with np.errstate(invalid="ignore", over="ignore"):  # burn's conversions saturate (SatFinite); ml_dtypes' not
        codes = np.clip(v, np.float32(lo), np.float32(hi)).astype(MINIFLOAT_DTYPES[value]).view(np.uint8)
    nan = np.isnan(v)
    if nan.any():
        bits = v.view(np.uint32)
        sign = ((bits >> 24) & 0x80).astype(np.uint8)
        if value is QuantValue.E4M3:
            code = 0x7F | sign
        elif value is QuantValue.E5M2:
            code = 0x7E | ((bits >> 21) & 0x3).astype(np.uint8) | sign
        else:
            code = np.full(v.shape, 0x7, dtype=np.uint8)
        codes = np.where(nan, code.astype(np.uint8), codes)
    return codes.astype(np.uint8).view(np.int8)


# The one NaN burn's e4m3/e5m2 decoding gives for every NaN code: float8 0.7 widens an fp8 NaN to f16's canonical
# 0x7FFF (sign dropped, ``convert_fp8_to_fp16``), which reaches f32 as 0x7FFFE000. Its payload survives the scale
# multiplication and a layout op, so flex's requantization encodes it again (E5M2: 0x7F, never 0x7E or 0xFF).
BURN_FP8_NAN = np.array([0x7FFFE000], dtype=np.uint32).view(np.float32)[0]


def minifloat_values(codes: np.ndarray, value: QuantValue) -> np.ndarray:
    """The f32 value each minifloat code stands for (an E2M1 code is read from its low nibble; every NaN code is
    :data:`BURN_FP8_NAN`)."""
    raw = np.asarray(codes, dtype=np.int8).view(np.uint8)
    if value is QuantValue.E2M1:
        raw = raw & 0x0F
    out = raw.view(MINIFLOAT_DTYPES[value]).astype(np.float32)
    nan = np.isnan(out)
    if nan.any():
        out[nan] = BURN_FP8_NAN
    return out
