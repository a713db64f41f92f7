"""Plausible wrong implementations of burn's quantization, each one profile field away from a real profile.

The mutation gate (``tests/suite/test_mutation_gate.py``) asserts that the committed suite catches every mutant; the
divergence diagnosis tries them on a failing backend's outputs and names the one that matches ("ties rounded to
even"). Because a profile is data, a mutant is ``base.with_(field=wrong value)``. A wrong value no real backend
has is a *variant*: its small step function lives here and is added to the oracle's step table for that field
(``oracle.choices``), so the reference itself holds only what burn does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from oracle import Profile, ScaleDtype, get_profile
from oracle import choices as c
from oracle.codec import PackedLines
from oracle.encode import ENCODERS, nan_codes, store_codes
from oracle.layout import PERMUTES, ROUTES, view
from oracle.quantize import divide
from oracle.rounding import MINIFLOAT_DTYPES, ROUNDERS, minifloat_codes, round_up
from oracle.scales import effective_guard

# --- wrong step variants --------------------------------------------------------------------------------


def _no_clamp(v, scheme, profile):
    """Out-of-range codes wrap like an integer cast would."""
    r = ROUNDERS[profile.tie](v)
    with np.errstate(invalid="ignore"):
        r = np.clip(r, -(2.0**31), 2.0**31 - 1).astype(np.int32).astype(np.int8).astype(np.float32)
    return store_codes(nan_codes(r, *scheme.value.range(), profile), scheme, profile)


def _cast_then_clamp(v, scheme, profile):
    """Rounds first and clamps after, with a plain (IEEE-like, non-saturating) cast for the minifloat formats:
    an E4M3 value past 464 becomes its NaN, an E5M2 one past 61440 infinity (which the clamp brings back). Integer
    codes come out as the reference's: their bounds are integers and every rounding keeps ±inf (see
    tests/suite/test_mutation_gate.py)."""
    a, b = scheme.value.range()
    if not (scheme.value.is_float and profile.float_codes == "format"):
        return ENCODERS["after_round"](v, scheme, profile)
    with np.errstate(invalid="ignore", over="ignore"):
        cast = np.asarray(v, np.float32).astype(MINIFLOAT_DTYPES[scheme.value]).astype(np.float32)
    return minifloat_codes(np.clip(cast, np.float32(a), np.float32(b)), scheme.value)


def _round_to_nearest(scales, dtype, ue8m0):
    """A cast (round to nearest even) onto the scale dtype instead of ``round_up``, saturating like the codecs."""
    if dtype is ScaleDtype.F32:
        return scales.copy()
    if dtype is ScaleDtype.F16:
        with np.errstate(over="ignore"):
            return scales.astype(np.float16).astype(np.float32)
    if dtype is ScaleDtype.BF16:
        return scales.astype(ml_dtypes.bfloat16).astype(np.float32)
    if dtype is ScaleDtype.UE4M3:
        return np.clip(scales, -448.0, 448.0).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    return round_up(scales, dtype, ue8m0=ue8m0)


def _bf16_on_f16_grid(scales, dtype, ue8m0):
    return round_up(scales, ScaleDtype.F16 if dtype is ScaleDtype.BF16 else dtype, ue8m0=ue8m0)


def _sequential(spread, grid, glob, effective, profile):
    """``(x / s) / global`` instead of ``x / (global * s)``."""
    if glob is None:
        return (lambda xc, ec: divide(xc, ec, profile)), spread(effective)
    return ((lambda xc, sc: divide(divide(xc, effective_guard(sc, profile), profile), glob[0], profile)),
            spread(grid))


def _flat_chunks(grid, layout, scheme):
    """Consecutive runs of ``block.num_elements()`` flat elements share a scale (a per-tensor scheme has no
    blocks to flatten)."""
    if scheme.block_size() is None:
        return layout.per_element(grid)
    numel = math.prod(layout.shape)
    run = np.repeat(np.asarray(grid).ravel(), scheme.block_size().num_elements())
    if run.size < numel:
        run = np.concatenate([run, np.repeat(run[-1:], numel - run.size)])
    return layout.element_view(run[:numel].reshape(layout.shape))


def _msb_first(per_word, bits):
    return (np.arange(per_word, dtype=np.uint32) * np.uint32(bits))[::-1]


def _kept_in_f32(normalized, t):
    return normalized


def _in_f64(t):
    return np.dtype(np.float64)


def _divide_and_round_in_f64(x, e):
    """``x / e`` and its rounding (ties away) in f64, the integer handed back in f32 (rounding it again is a
    no-op)."""
    v = np.asarray(x, dtype=np.float64) / np.asarray(e, dtype=np.float64)
    r = np.where(np.abs(v - np.trunc(v)) >= 0.5, np.trunc(v) + np.sign(v), np.trunc(v))
    return np.clip(r, -(2.0**30), 2.0**30).astype(np.float32)


def _floor_block_index(grid, layout, scheme):
    """Blocks per dim counted as ``dim // block`` when striding the row-major block index (the partial block
    left out), so a partial block's elements read a later block's scale (the last one past the end)."""
    if layout.divides():
        return layout.per_element(grid)
    grid = np.asarray(grid).ravel()
    counts = [max(d // b, 1) for d, b in zip(layout.shape, layout.block)]
    index = np.zeros(layout.shape, dtype=np.int64)
    stride = 1
    for axis in reversed(range(len(layout.shape))):
        coord = np.arange(layout.shape[axis]) // layout.block[axis]
        index += (coord * stride).reshape([-1 if a == axis else 1 for a in range(len(layout.shape))])
        stride *= counts[axis]
    return grid[np.clip(index, 0, max(grid.size - 1, 0))] if grid.size else np.zeros(layout.shape, np.float32)


c.CLAMP.add("none", "no clamp: codes wrap like an integer cast", _no_clamp)
c.CLAMP.add("cast_then_clamp", "rounded (a plain minifloat cast) first, clamped after", _cast_then_clamp)
c.VALUE_LAYOUT.add("packed_flat", "packed words over the flattened tensor, one padded end instead of a padded "
                   "line per packed-dim line", PackedLines(padded=False))
c.SCALE_ROUNDING.add("nearest", "rounded to nearest instead of up", _round_to_nearest)
c.SCALE_ROUNDING.add("bf16_on_f16_grid", "BF16 scales rounded up on the F16 grid", _bf16_on_f16_grid)
c.TWO_LEVEL_DIVISION.add("sequential", "(x / s) / global", _sequential)
c.BLOCK_LAYOUT.add("flat", "flat chunks of block.num_elements() elements", _flat_chunks)
c.PACKING.add("msb_first", "code k of a word at the most significant end first", _msb_first)
c.NORMALIZED_DTYPE.add("f32", "normalized block scales kept in f32", _kept_in_f32)
c.SCALE_ARITHMETIC.add("f64", "scales and the two-level split computed in f64, then stored as f32", _in_f64)
c.DIVISION.add("f64", "x / e and its rounding in f64", _divide_and_round_in_f64)
c.BLOCK_LAYOUT.add("floor_index", "blocks per dim counted as dim // block in the block index", _floor_block_index)

# Layout: one route of a real row replaced (oracle/layout.py ROUTES).
c.LAYOUT.add("ndarray/grid-not-permuted", "a permute moves the block dims but not the scale grid",
             {**ROUTES["ndarray"], **{k: ("move", "move_dims") for k in PERMUTES}})
c.LAYOUT.add("ndarray/block-dims-not-permuted", "a permute moves the scale grid but not the block dims",
             {**ROUTES["ndarray"], **{k: ("move", "move_grid_only") for k in PERMUTES}})
c.LAYOUT.add("flex/scales-not-sliced", "slice/select move the codes of a block tensor and keep every scale",
             {**ROUTES["flex"], "slice": ("move", "move"), "select": ("move", "move")})



def _storage_order(x, steps):
    """The view's strides ignored: its elements taken from the source buffer in storage order (burn #4491's
    wrong reconstruction on wgpu), cycling where a broadcast view has more elements than the buffer."""
    shape = view(np.zeros(x.shape, np.float32), steps).shape
    return np.resize(np.ascontiguousarray(x).ravel(), shape)


c.VIEW_READ.add("storage", "a non-contiguous input read in storage order", _storage_order)
c.PACKING_DIM.add("fixed", "a kept packed store's dim index left as it was when the axes move",
                  lambda scheme, step, rank: scheme)


# --- the mutants -----------------------------------------------------------------------------------------

NDARRAY = "burn-0.22.0-pre.3/ndarray"
FLEX = "burn-0.22.0-pre.3/flex"
CUBECL = "burn-0.22.0-pre.3/cubecl"
FLEX_0_23 = "burn-0.23.0-pre.1/flex"


@dataclass(frozen=True)
class Mutant:
    name: str
    description: str
    base: str
    changes: tuple[tuple[str, object], ...]
    ops: tuple[str, ...] = ()
    """The ops on which it answers differently from its base for some input (found with ``qconform fuzz``);
    the per-op mutation gate requires a vector of each of them to catch it."""

    @property
    def profile(self) -> Profile:
        return get_profile(self.base).with_(name=f"mutant:{self.name}", description=self.description,
                                            **dict(self.changes))


def _m(name: str, description: str, base: str, ops: tuple[str, ...], **changes: object) -> Mutant:
    return Mutant(name, description, base, tuple(sorted(changes.items())), ops)


Q = ("quantize", "quantize_dynamic")


_ALL = [
    _m("ties-even", "ties rounded to even instead of away from zero", NDARRAY, Q, tie="even"),
    _m("ties-away-on-gpu", "ties rounded away from zero instead of to even", CUBECL, Q, tie="away"),
    _m("reciprocal", "multiplies by the reciprocal x*(1/s) instead of dividing x/s", NDARRAY, Q,
       division="reciprocal"),
    _m("divide-on-flex", "divides x/s where flex multiplies by the reciprocal", FLEX, Q, division="divide"),
    _m("scale-nearest", "scale rounded to nearest instead of up", NDARRAY, ("round_up", *Q), scale_rounding="nearest"),
    _m("no-clamp", "clamp to the value range skipped (codes wrap)", NDARRAY, Q, clamp="none"),
    _m("flat-blocks", "blocks taken as flat chunks instead of N-D rectangles", NDARRAY, Q, block_layout="flat"),
    _m("reversed-nibbles", "sub-byte codes packed most-significant first", NDARRAY, ("from_bytes", "pack_u32", "unpack_u32"), packing="msb_first"),
    _m("no-zero-guard", "missing 0 -> 0.1 substitution of a zero scale", NDARRAY, (*Q, "dequantize"), zero_scale="none"),
    _m("sequential-two-level", "divides by the block scale then by the global instead of by their product",
       NDARRAY, ("quantize",), two_level_division="sequential"),
    _m("bf16-via-f16", "BF16 scales rounded on the F16 grid", NDARRAY, ("round_up", *Q), scale_rounding="bf16_on_f16_grid"),
    _m("no-cast-back", "normalized block scales not cast back to the tensor dtype", FLEX, ("compute_q_params",),
       normalized_dtype="f32"),
    _m("nan-to-zero", "NaN quantized to 0 instead of panicking", NDARRAY, Q, nan_code="zero"),
    _m("f64-scale", "scales (and the two-level split) computed in f64, then stored as f32", NDARRAY,
       ("compute_q_params", "quantize_dynamic"), scale_arithmetic="f64"),
    _m("f64-everywhere", "the whole computation in f64: scales, x / s and its rounding", NDARRAY,
       ("compute_q_params", *Q), scale_arithmetic="f64", division="f64"),
    _m("block-index-off-by-one", "partial blocks counted out of the block index (dim // block blocks per dim), "
       "so their elements use a later block's scale", NDARRAY, ("quantize",), block_layout="floor_index"),
    _m("grid-not-permuted", "a permuted block tensor keeps its scale grid in the old order (block dims permuted)",
       NDARRAY, ("qlayout",), layout="ndarray/grid-not-permuted"),
    _m("block-dims-not-permuted", "a permuted block tensor keeps the scheme's block dims (scale grid permuted)",
       NDARRAY, ("qlayout",), layout="ndarray/block-dims-not-permuted"),
    _m("scales-not-sliced", "slicing a block tensor moves the codes and keeps every block scale", FLEX,
       ("qlayout",), layout="flex/scales-not-sliced"),
    _m("view-in-storage-order", "a non-contiguous input is quantized in storage order, not its logical order (#4491)",
       NDARRAY, ("quantize_view",), view_read="storage"),
    _m("gpu-zero-guard", "a zero scale divides as 0.1 on the GPU path", CUBECL, (*Q, "dequantize"), zero_scale="point_one"),
    # burn 0.23.0-pre.1: what a backend that half-follows the release would get wrong.
    _m("round-then-clamp-0-23", "rounds (casts E4M3/E5M2 without saturating) before clamping: an E4M3 x/s past "
       "464 gets the NaN code", FLEX_0_23, ("quantize",), clamp="cast_then_clamp"),
    # (not quantize_dynamic: its scale is rounded up from the tensor's own max, so |x / s| never passes the
    # format's max and the order of the cast and the clamp cannot show)
    _m("unpadded-lines", "packs a packed store over the flattened tensor instead of in padded lines along the "
       "packed dim", FLEX_0_23, ("to_bytes", "from_bytes"), value_layout="packed_flat"),
    _m("ties-away-0-23", "ties rounded away from zero, as burn 0.22's CPU backends did", FLEX_0_23, Q, tie="away"),
    _m("reciprocal-0-23", "multiplies by the reciprocal, as burn 0.22's flex did", FLEX_0_23, Q,
       division="reciprocal"),
    _m("integer-minifloats", "E4M3/E5M2/E2M1 scaled values rounded to integers instead of converted to the "
       "format", FLEX_0_23, Q, float_codes="integer"),
    _m("unchecked-length", "from_bytes accepts quantized data of any length", FLEX_0_23, ("from_bytes",),
       validates_data_length=False),
    _m("packed-dim-not-moved", "a transposed or permuted packed tensor keeps its store's packed dim index, so it "
       "names another axis", FLEX_0_23, ("qlayout",), packing_dim="fixed"),
]

MUTANTS: dict[str, Mutant] = {m.name: m for m in _ALL}
