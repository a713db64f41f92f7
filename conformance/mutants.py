"""Plausible wrong implementations of burn's quantization: each a few field overrides, applied to any profile.

The mutation gate (``tests/suite/test_mutation_gate.py``) asserts that the committed suite catches every mutant on its
default base; the divergence diagnosis tries them on a failing backend's outputs and names the one that matches
("ties rounded to even"). A :class:`Mutant` is data: ``overrides`` maps a profile field (or a fixed step of the
oracle, ``oracle.choices.FixedStep``) to a value. A value the field has in the oracle's vocabulary is a plain
``Profile.with_``; a value no real backend has is a :class:`Variant`, whose wrong step lives here and is answered by
the mutant's own profile (:class:`MutantProfile`, whose ``step`` replaces one table's step). Nothing here changes
the oracle: its step tables and its profile validation are the same whether or not this module is imported
(``tests/oracle/test_mutants_outside_the_oracle.py``).

``Mutant.on(profile)`` applies a mutant to any profile (``applies_to`` says whether it changes anything there);
``Mutant.profile`` is the mutant on its default ``base``.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import ml_dtypes
import numpy as np

from oracle import Profile, ScaleDtype, get_profile
from oracle.choices import FixedStep, ProfileError, Steps
from oracle.codec import LAYOUTS, PACKING, PackedLines
from oracle.encode import ENCODERS, nan_codes, store_codes
from oracle.packing import word_layout
from oracle.qparams import NORMALIZED_DTYPE, SCALE_ARITHMETIC
from oracle.quantize import BLOCK_LAYOUT, DIVISIONS, TWO_LEVEL_DIVISION, divide
from oracle.rounding import MINIFLOAT_DTYPES, ROUNDERS, minifloat_codes, round_up
from oracle.routes import PACKING_DIM, ROUTES, move, permuted, scale_grid
from oracle.scales import SCALE_ROUNDING, effective_guard
from oracle.views import PERMUTES, VIEW_READ, axes_of, view

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


@dataclass(frozen=True)
class _FlatLines(PackedLines):
    """A packed store packed over the flattened tensor: one line, padded once at its end."""

    def lines(self, shape, scheme):
        return np.arange(math.prod(shape), dtype=np.int64).reshape(1, -1)

    def value_bytes(self, shape, scheme):
        if not self._packed(scheme):
            return math.prod(shape)
        _, per_word, word_bytes = word_layout(scheme)
        return -(-math.prod(shape) // per_word) * word_bytes


def _grid_left_behind(s, held, profile):
    """A permute that moves the block dims but not the scale grid."""
    axes = axes_of(s, held.codes.ndim)
    return permuted(s, held, profile, held.scales, held.scheme.permute_block_dims(held.codes.ndim, axes))


def _dims_left_behind(s, held, profile):
    """A permute that moves the scale grid but not the scheme's block dims."""
    axes = axes_of(s, held.codes.ndim)
    scales = held.scales if held.scheme.block_size() is None else scale_grid(held).transpose(axes).ravel()
    return permuted(s, held, profile, scales, held.scheme)


def _storage_order(x, steps):
    """The view's strides ignored: its elements taken from the source buffer in storage order (burn #4491's
    wrong reconstruction on wgpu), cycling where a broadcast view has more elements than the buffer."""
    shape = view(np.zeros(x.shape, np.float32), steps).shape
    return np.resize(np.ascontiguousarray(x).ravel(), shape)


# --- the variants: wrong values of a field, each with its wrong step -------------------------------------------


@dataclass(frozen=True)
class Variant:
    """``table``'s field (or fixed step) set to ``value``, a behaviour no real backend has: ``wrong(reference)`` is
    the step it takes instead of the reference's step ``reference`` (most ignore it). ``where``: the field values a
    profile must have for the variant to differ from it (elsewhere it would be the reference, or meaningless)."""

    table: Steps | FixedStep
    value: str
    meaning: str
    wrong: Callable[[object], object]
    where: Mapping[str, frozenset] = field(default_factory=dict)

    @property
    def field(self) -> str:
        return self.table.field if isinstance(self.table, Steps) else self.table.name

    def applies_to(self, profile: Profile) -> bool:
        return all(getattr(profile, f) in allowed for f, allowed in self.where.items())


def _v(table, value: str, meaning: str, step=None, *, row=None, **where) -> Variant:
    """A variant whose wrong step is ``step``, or, for a route row, ``row(reference row)``. Never a value the
    field has: when burn adopts a variant, the reference's step wins and the variant must go (it fails here
    instead of shadowing burn's step)."""
    if isinstance(table, Steps) and value in table:
        raise AssertionError(f"{table.field!r} already has the value {value!r} in the oracle")
    wrong = row if row is not None else (lambda reference: step)
    return Variant(table, value, meaning, wrong, MappingProxyType({f: frozenset(v) for f, v in where.items()}))


_VARIANTS = [
    _v(ENCODERS, "none", "no clamp: codes wrap like an integer cast", _no_clamp),
    _v(ENCODERS, "cast_then_clamp", "rounded (a plain minifloat cast) first, clamped after", _cast_then_clamp,
       float_codes={"format"}),
    _v(LAYOUTS, "packed_flat", "packed words over the flattened tensor, one padded end instead of a padded line per "
       "packed-dim line", _FlatLines(), value_layout={"packed_lines"}),
    _v(SCALE_ROUNDING, "nearest", "rounded to nearest instead of up", _round_to_nearest),
    _v(SCALE_ROUNDING, "bf16_on_f16_grid", "BF16 scales rounded up on the F16 grid", _bf16_on_f16_grid),
    _v(TWO_LEVEL_DIVISION, "sequential", "(x / s) / global", _sequential),
    _v(BLOCK_LAYOUT, "flat", "flat chunks of block.num_elements() elements", _flat_chunks),
    _v(BLOCK_LAYOUT, "floor_index", "blocks per dim counted as dim // block in the block index", _floor_block_index),
    _v(PACKING, "msb_first", "code k of a word at the most significant end first", _msb_first),
    _v(NORMALIZED_DTYPE, "f32", "normalized block scales kept in f32", _kept_in_f32),
    _v(SCALE_ARITHMETIC, "f64", "scales and the two-level split computed in f64, then stored as f32", _in_f64),
    _v(DIVISIONS, "f64", "x / e and its rounding in f64", _divide_and_round_in_f64),
    # Layout: routes of the base's row replaced (oracle/routes.py ROUTES).
    _v(ROUTES, "grid-not-permuted", "a permute moves the block dims but not the scale grid",
       row=lambda r: {**r, **{k: (move, _grid_left_behind) for k in PERMUTES}}, layout={"ndarray"}),
    _v(ROUTES, "block-dims-not-permuted", "a permute moves the scale grid but not the block dims",
       row=lambda r: {**r, **{k: (move, _dims_left_behind) for k in PERMUTES}}, layout={"ndarray"}),
    _v(ROUTES, "scales-not-sliced", "slice/select move the codes of a block tensor and keep every scale",
       row=lambda r: {**r, "slice": (move, move), "select": (move, move)}, layout={"flex"}),
    _v(VIEW_READ, "storage", "a non-contiguous input read in storage order", _storage_order),
    _v(PACKING_DIM, "fixed", "a kept packed store's dim index left as it was when the axes move",
       lambda scheme, step, rank: scheme, moves_packing_dim={True}),
]
VARIANTS: dict[tuple[str, str], Variant] = {(v.field, v.value): v for v in _VARIANTS}


_MUTANT_NAME = re.compile(r"mutant:[a-z0-9-]+")


@dataclass(frozen=True)
class MutantProfile(Profile):
    """A profile whose ``step`` answers with a wrong step for some tables (``wrong``: (table, step) pairs); every
    other table, and every field, is the profile's own."""

    wrong: tuple[tuple[Steps | FixedStep, object], ...] = field(default=(), compare=False,
                                                                 metadata={"check": lambda name, v: tuple(v)})

    def _check_name(self) -> None:
        if not _MUTANT_NAME.fullmatch(self.name):
            raise ProfileError(f"profile field 'name': {self.name!r} is not 'mutant:<name>'")

    def step(self, table: Steps | FixedStep) -> object:
        for replaced, step in self.wrong:
            if replaced is table:
                return step
        return super().step(table)


# --- the mutants -----------------------------------------------------------------------------------------------

NDARRAY = "burn-0.22.0-pre.3/ndarray"
FLEX = "burn-0.22.0-pre.3/flex"
CUBECL = "burn-0.22.0-pre.3/cubecl"
FLEX_0_23 = "burn-0.23.0-pre.1/flex"


@dataclass(frozen=True)
class Mutant:
    name: str
    description: str
    base: str
    """The profile it is a mutant of by default (``profile``, and the mutation gate's truth)."""
    overrides: Mapping[str, object]
    """Field (or fixed step) -> value: a value of the field's vocabulary, or a :data:`VARIANTS` value."""
    ops: tuple[str, ...] = ()
    """The ops on which it answers differently from its base for some input (found with ``qconform fuzz``);
    the per-op mutation gate requires a vector of each of them to catch it."""

    def _variants(self) -> list[Variant]:
        return [VARIANTS[item] for item in self.overrides.items() if item in VARIANTS]

    def _fields(self) -> dict[str, object]:
        return {f: v for f, v in self.overrides.items() if (f, v) not in VARIANTS}

    def applies_to(self, profile: str | Profile) -> bool:
        """Whether the mutant changes ``profile``: a field override to another value than the profile's, or a
        variant whose ``where`` the profile meets (and no variant whose ``where`` it does not)."""
        p = get_profile(profile)
        variants = self._variants()
        changed = any(getattr(p, f) != v for f, v in self._fields().items())
        return (changed or bool(variants)) and all(v.applies_to(p) for v in variants)

    def on(self, profile: str | Profile) -> MutantProfile:
        """The mutant applied to ``profile``: its field overrides, then its variants' wrong steps."""
        p = get_profile(profile).with_(**self._fields())
        wrong = tuple((v.table, v.wrong(p.step(v.table))) for v in self._variants())
        own = {f.name: getattr(p, f.name) for f in dataclasses.fields(Profile)}
        return MutantProfile(**{**own, "name": f"mutant:{self.name}", "description": self.description}, wrong=wrong)

    @property
    def profile(self) -> MutantProfile:
        return self.on(self.base)


def _m(name: str, description: str, base: str, ops: tuple[str, ...], **overrides: object) -> Mutant:
    for f, v in overrides.items():
        if (f, v) not in VARIANTS:
            get_profile(base).with_(**{f: v})  # a value of the field's vocabulary, or a ProfileError naming it
    return Mutant(name, description, base, MappingProxyType(dict(sorted(overrides.items()))), ops)


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
       NDARRAY, ("qlayout",), layout="grid-not-permuted"),
    _m("block-dims-not-permuted", "a permuted block tensor keeps the scheme's block dims (scale grid permuted)",
       NDARRAY, ("qlayout",), layout="block-dims-not-permuted"),
    _m("scales-not-sliced", "slicing a block tensor moves the codes and keeps every block scale", FLEX,
       ("qlayout",), layout="scales-not-sliced"),
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
