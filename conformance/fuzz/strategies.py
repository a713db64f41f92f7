"""Hypothesis strategies for every op of docs/ops.md: the one place that says what the fuzzer asks.

A strategy draws a :class:`FuzzCase` (op, params, inputs) in the very form a vector carries, so a case is judged
like a golden vector and, once shrunk, written as one. Layout ops (and anything else added later) register
their strategy in :data:`OPS` next to the ones here.

Shrinking: every draw is arranged so that Hypothesis's shrinker moves toward the *simplest* request (the first
entry of each ``sampled_from`` list is the plain choice: Q8S, Native, Symmetric, per-tensor F32, f32, rank 1).
Tensor values come from one ``binary`` draw (a *recipe*, two bytes per element: value class + magnitude),
which keeps a case cheap to draw (a handful of choices, not one per element) and shrinks element by element
toward ``0.0``. The value classes are the ones that matter for quantization: codes ``k*s``, exact ties
``(k+1/2)*s`` and their neighbours in the tensor's own dtype (``s`` on the scale dtype's grid, so the ties are
real), signed zeros, subnormals, f32/f16/bf16 extremes, infinities, NaN, and huge/tiny outliers.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

import oracle
from oracle import QuantScheme, QuantValue, ScaleDtype, float_ops, get_profile, layout, vocabulary
from oracle.blocks import params_shape
from oracle.rounding import FLOAT_DTYPES
from oracle.support import check_quantize

from .scope import draw_scheme, draw_shape, finish_scheme


def _draw_order(words: tuple[str, ...], order: str) -> tuple[str, ...]:
    """``words`` (a list of oracle/vocabulary.py) in the order the fuzzer draws them. The order is the shrinker's
    (its plain choice first) and part of every seed's cases, so it stays as the recorded campaigns drew it; the
    words are the vocabulary's: a word added there and not here (or gone from there) fails at import."""
    drawn = tuple(order.split())
    if sorted(drawn) != sorted(words):
        raise ValueError(f"fuzz draw order {drawn} is not a permutation of the vocabulary's {words}")
    return drawn


FLOATS = {name: FLOAT_DTYPES[name] for name in vocabulary.FLOAT_DTYPES}
VALUES = _draw_order(vocabulary.VALUES, "Q8S Q8F Q4S Q4F Q2S Q2F E4M3 E5M2 E2M1")
SCALE_DTYPES = _draw_order(vocabulary.SCALE_DTYPES, "F32 F16 BF16 UE4M3 UE8M0")
SCALE_BYTES = {name: ScaleDtype[name].size for name in SCALE_DTYPES}
MAX_ELEMENTS = 96  # per tensor: enough for several blocks of several dims, small enough to stay fast


@dataclass(frozen=True)
class FuzzCase:
    op: str
    params: dict
    inputs: dict[str, np.ndarray]

    def describe(self) -> str:
        shapes = ", ".join(f"{k}: {a.dtype}{list(a.shape)}" for k, a in self.inputs.items())
        return f"{self.op} {self.params} ({shapes})"


# ---- schemes and shapes -------------------------------------------------------------------------------------

def _favoured(d, preferred, everything):
    """Mostly a value from ``preferred`` (what the profile supports), sometimes anything (expected panics)."""
    preferred = [v for v in everything if v in preferred] or list(everything)
    return d.pick(preferred) if d.integer(0, 7) else d.pick(list(everything))


def block_sizes(d) -> list[int]:
    """A block list as a user writes it: 1-6 extents in 1..8, sometimes leading 1s (canonicalized away)."""
    size = [d.pick([2, 4, 1, 3, 8, 5, 6, 7]) for _ in range(d.integer(1, 4))]
    leading = d.pick([0, 0, 0, 1, 2])
    return [1] * leading + size


def schemes(d, profile, *, level: str | None = None) -> dict:
    """A QuantScheme JSON: value, store, mode, level (per-tensor / per-tensor with a dtype / block /
    two-level), block list and scale dtypes. A scheme the profile's backend refuses to quantize is redrawn
    (up to twice) 3 times in 4, so most cases reach the arithmetic and some test the refusal."""
    for _ in range(3):
        scheme = _any_scheme(d, profile, level)
        if _supported(scheme, profile) or not d.integer(0, 3):
            break
    return scheme


def _supported(scheme: dict, profile) -> bool:
    obj = scheme_obj(scheme)
    return obj is not None and _quantizes(obj, profile)


@functools.lru_cache(maxsize=4096)
def _quantizes(obj: QuantScheme, profile) -> bool:
    """Whether the profile's backend quantizes a whole block (or 4 values) of ``obj``, with outer dims of 16 up to
    the rank a store packed along an outer axis needs (memoized: a pure function of the scheme and the profile,
    asked on every scheme drawn). Without them every such store of a 1-D block or per-tensor scheme was refused
    here, and the fuzzer drew an outer packed axis in about 1 case of 1,000 (docs/findings.md, "A tensor quantized
    on the device along an outer axis")."""
    probe = tuple(obj.block_size().dims) if obj.block_size() else (4,)
    if obj.store.kind != "Native":
        probe = (16,) * (obj.store.dim + 1 - len(probe)) + probe
    try:
        check_quantize(obj, probe, profile, bindings=obj.num_levels())
    except oracle.BurnPanic:
        return False
    return True


def _any_scheme(d, profile, level: str | None) -> dict:
    value = _favoured(d, profile.block_values | profile.tensor_values, VALUES)
    store = d.pick(["Native"] * 8 + [{"PackedU32": 0}, {"PackedNative": 0}, {"PackedU32": 1}])
    mode = d.pick(["Symmetric"] * 15 + ["Lookup"])
    level = level or d.pick(["tensor", "block", "block", "two-level", "tensor-dtype"])
    supported = [t for t in SCALE_DTYPES if t != "UE8M0" or profile.ue8m0]
    scheme = {"value": value, "store": store, "mode": mode, "tensor": None, "block": None}
    if level == "tensor-dtype":
        scheme["tensor"] = _favoured(d, supported, SCALE_DTYPES)
    elif level in ("block", "two-level"):
        dtype = _favoured(d, supported, SCALE_DTYPES) if level == "block" else \
            _favoured(d, [t for t in ("UE4M3", "F16", "UE8M0") if t in supported], SCALE_DTYPES)
        scheme["block"] = {"size": block_sizes(d), "dtype": dtype}
        if level == "two-level":
            scheme["tensor"] = d.pick(["F32", "F32", "F32", "F16", "BF16"])
    obj = scheme_obj(scheme)  # canonical (burn's BlockSize::new), unless burn cannot express it: then the
    return scheme if obj is None else obj.to_json()  # backend must reject it like the oracle


def shapes(d, scheme: dict | None = None, *, whole_blocks: bool = True, max_rank: int = 8) -> tuple:
    """Rank 1..max_rank (mostly small), dims 0..8, at most MAX_ELEMENTS elements. With a block scheme, most
    shapes are whole multiples of the block on its trailing dims; some are partial, some have fewer dims
    than the block list."""
    rank = d.pick([1, 2, 1, 2, 3, 4, 3, 5, 6, 7, 8][:max(1, min(max_rank, 8) + 3)])
    rank = min(rank, max_rank)
    block = (scheme or {}).get("block") or None
    obj = scheme_obj(scheme) if block else None
    if obj is not None and obj.block_size() is not None and whole_blocks and d.pick([True, True, True, False]):
        size = obj.block_size().to_dim_vec(rank)  # burn's own per-dim extents for this rank
        mult = [d.integer(1, 3) for _ in size]
        while math.prod(m * b for m, b in zip(mult, size)) > MAX_ELEMENTS and max(mult) > 1:
            mult[mult.index(max(mult))] -= 1
        dims = [m * b for m, b in zip(mult, size)]
    else:
        dims = [d.pick([1, 2, 3, 4, 5, 6, 7, 8]) for _ in range(rank)]
    if d.pick([False] * 24 + [True]):  # an empty dimension
        dims[d.integer(0, rank - 1)] = 0
    while math.prod(dims) > MAX_ELEMENTS:
        dims[dims.index(max(dims))] //= 2
    return tuple(dims)


# ---- values ---------------------------------------------------------------------------------------------------

def _bits_float(bits: int, dtype) -> float:
    width = {2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]
    return float(np.array([bits], dtype=width).view(dtype)[0])


# Extremes of each float dtype (both signs are drawn): max, smallest normal, smallest subnormal.
EXTREMES = np.array([
    float(np.finfo(np.float32).max), float(np.finfo(np.float32).tiny), _bits_float(1, np.float32),
    65504.0, float(np.finfo(np.float16).tiny), _bits_float(1, np.float16),
    float(ml_dtypes.finfo(ml_dtypes.bfloat16).max), _bits_float(1, ml_dtypes.bfloat16),
    448.0, 57344.0, 6.0, 2.0**-127, 2.0**127, 1 / 3,
], dtype=np.float64)

# Value classes, in shrink order (class 0 = a code k*s, which with k = 0 is 0.0): index = recipe byte % 32.
CODE, TIE, TIE_UP, TIE_DOWN, FRACTION, NEG_ZERO, SUBNORMAL, EXTREME, INF, NAN, HUGE, TINY, ANCHOR = range(13)
_CLASS_OF_BYTE = np.array([CODE, TIE, CODE, TIE, TIE_UP, TIE_DOWN, FRACTION, ANCHOR, CODE, TIE, FRACTION, ANCHOR,
                           TIE_UP, TIE_DOWN, NEG_ZERO, SUBNORMAL, CODE, TIE, FRACTION, ANCHOR, HUGE, TINY, EXTREME,
                           NEG_ZERO, TIE, CODE, SUBNORMAL, EXTREME, HUGE, TINY, INF, NAN])
_SPECIAL = (INF, NAN)


def scale_bases(d, scale_dtype: str | None = None) -> float:
    """A scale on the grid of ``scale_dtype``: at most 4 significant bits (3 for UE4M3, 1 for UE8M0), so ties
    of x/s are exact and the stored scale is ``s`` itself."""
    bits = {"UE8M0": 1, "UE4M3": 4}.get(scale_dtype or "F32", 4)
    mant = d.integer(1 << (bits - 1), (1 << bits) - 1) if bits > 1 else 1
    exp = d.integer(-12, 6)
    return float(mant) * 2.0 ** (exp - bits + 1)


# Per class: value = sign * s * (K*k + HALF/2 + FRAC*fraction*span + ANCHOR*half_span) for the classes built
# around the scale; the rare classes are filled in afterwards, only when present.
_K = np.zeros(13); _K[[CODE, TIE, TIE_UP, TIE_DOWN]] = 1
_HALF = np.zeros(13); _HALF[[TIE, TIE_UP, TIE_DOWN]] = 0.5
_FRAC = np.zeros(13); _FRAC[FRACTION] = 1
_ANCH = np.zeros(13); _ANCH[ANCHOR] = 1
_SUBNORMAL_F32 = float(np.finfo(np.float32).smallest_subnormal)


_RARE = (NEG_ZERO, SUBNORMAL, EXTREME, INF, NAN, HUGE, TINY)


def _rare_value(c: int, sign: np.ndarray, half: np.ndarray, s: float) -> np.ndarray:
    if c == NEG_ZERO:
        return np.full(sign.shape, -0.0)
    if c == SUBNORMAL:
        return sign * half * _SUBNORMAL_F32
    if c == EXTREME:
        return sign * EXTREMES[half % len(EXTREMES)]
    if c == INF:
        return sign * np.inf
    if c == NAN:
        return np.full(sign.shape, np.nan)
    return sign * s * np.exp2(half % 64 if c == HUGE else -(half % 64))


def values_from_recipe(recipe: bytes, n: int, dtype, s: float, value: str, specials: bool) -> np.ndarray:
    """``n`` values of ``dtype`` built from two recipe bytes each (class, magnitude) around the scale ``s``."""
    # A big-endian u16 per pair is (class byte << 8 | magnitude byte): masked, the pair's index in 0..8191.
    pair = np.frombuffer(recipe.ljust(2 * n, b"\0")[:2 * n], dtype=">u2").astype(np.intp)
    pair &= 0x1FFF
    t = _recipe_table(value, specials)
    # take with an intp index: [] (or a uint16 index) converts the index on every call, a few times slower
    out = t.signed.take(pair)  # a fresh array (a gather), scaled in place:
    out *= s                   # = (sign * s) * around: the sign is +-1, so both products round alike
    flags = t.flags.take(pair)
    marked = np.flatnonzero(flags)  # the few pairs that are not a plain multiple of s
    if marked.size:
        flags = flags.take(marked)
        fixed = marked[flags == _FIXED]
        out[fixed] = t.value.take(pair.take(fixed))
    with np.errstate(over="ignore", invalid="ignore"):
        x = out.astype(np.float32).astype(dtype, copy=False)  # f32 tensors: no second copy
        if marked.size:
            is_tie = flags >= _TIE_UP
            tie = marked[is_tie]
            if tie.size:  # a tie's neighbour in the tensor's own dtype, up or down (one call for both)
                x[tie] = np.nextafter(x[tie], _toward(dtype).take(flags[is_tie]))
    return x


_TOWARDS: dict = {}


def _toward(dtype) -> np.ndarray:
    """Per flag, the direction of a tie's neighbour in ``dtype`` (+inf for _TIE_UP, -inf for _TIE_DOWN)."""
    found = _TOWARDS.get(dtype)
    if found is None:
        found = _TOWARDS[dtype] = np.array([0, 0, np.inf, -np.inf]).astype(dtype)
    return found


_FIXED, _TIE_UP, _TIE_DOWN = 1, 2, 3  # _RecipeTable.flags


@dataclass(frozen=True)
class _RecipeTable:
    """Every recipe pair's value worked out once per (value, specials), so a tensor is a few table lookups:
    ``s * signed[pair]`` (``signed`` = ``sign[mag] * around``), except where ``flags[pair]`` is ``_FIXED`` (a
    class whose value does not scale with ``s``: signed zero, subnormal, extreme, inf, NaN), which is
    ``value[pair]``, and a tie's neighbour where it is ``_TIE_UP``/``_TIE_DOWN``. The arithmetic is the
    per-class formula above (``_K``, ``_HALF``, ...), elementwise in f64, so the values are the same bits."""
    signed: np.ndarray
    flags: np.ndarray
    value: np.ndarray


_TABLES: dict[tuple[str, bool], _RecipeTable] = {}


def _recipe_table(value: str, specials: bool) -> _RecipeTable:
    found = _TABLES.get((value, specials))
    if found is None:
        found = _TABLES[value, specials] = _build_recipe_table(value, specials)
    return found


def _build_recipe_table(value: str, specials: bool) -> _RecipeTable:
    cls = np.repeat(_CLASS_OF_BYTE, 256)
    if not specials:
        cls = np.where(cls >= INF, np.where(cls <= NAN, CODE, cls), cls)
    mag = np.tile(np.arange(256, dtype=np.int64), 32)
    half = mag >> 1
    sign = 1.0 - 2.0 * (mag & 1)
    lo, hi = QuantValue[value].range() if value in QuantValue.__members__ else (-127, 127)
    span = max(int(hi), 1)
    k = half % (span + 1)
    around = _K[cls] * k + _HALF[cls] + _FRAC[cls] * (mag * (span / 255.0)) + _ANCH[cls] * ((hi - lo) / 2)
    values = np.zeros(cls.shape)
    for c in _RARE:
        mask = cls == c
        if c in (HUGE, TINY):  # sign * s * 2^(+-j): scales with s
            around[mask] = np.exp2(half[mask] % 64 if c == HUGE else -(half[mask] % 64))
        else:
            values[mask] = _rare_value(c, sign[mask], half[mask], 1.0)
    flags = np.zeros(cls.shape, dtype=np.uint8)
    flags[np.isin(cls, [c for c in _RARE if c not in (HUGE, TINY)])] = _FIXED
    flags[cls == TIE_UP], flags[cls == TIE_DOWN] = _TIE_UP, _TIE_DOWN
    return _RecipeTable(sign * around, flags, values)


def tensors(d, shape: tuple, *, dtype="f32", scale_dtype: str | None = None, value: str = "Q8S",
            zero_blocks: bool = True) -> np.ndarray:
    """A float tensor of ``shape`` whose values are built around one scale on ``scale_dtype``'s grid; one
    tensor in 5 may hold inf/NaN, one in 6 is all zeros."""
    n = math.prod(shape)
    s = scale_bases(d, scale_dtype)
    specials = d.pick([False, False, False, False, True])
    recipe = d.bytes(0, 2 * n)
    x = values_from_recipe(recipe, n, FLOATS[dtype], s, value, specials)
    if zero_blocks and n and d.pick([False] * 5 + [True]):  # an all-zero region (blocks of 0)
        start = d.integer(0, n - 1)
        x[start:start + max(1, n // 2)] = 0
    return x.reshape(shape)


def float_dtypes(d, profile) -> str:
    return _favoured(d, profile.input_dtypes, list(FLOATS))


def scale_values(d, count: int, s: float) -> np.ndarray:
    """Explicit scales: ``s * 2^j`` on the grid, one in 6 replaced by a value burn's guards must handle."""
    odd = _odd_scales(s)
    out = []
    for _ in range(count):
        if d.pick([False] * 5 + [True]):
            out.append(d.pick(odd))
        else:
            out.append(s * 2.0 ** d.integer(-2, 2))
    return np.array(out, dtype=np.float32)


def _odd_scales(s: float) -> list[float]:
    return [0.0, -0.0, -s, float("nan"), float("inf"), 2.0**-149, float(np.finfo(np.float32).tiny),
            float(np.finfo(np.float32).max), 1 / 3, -float("inf")]


# A scale byte's power of two (0 first: the byte the shrinker reaches, 0, is the plain scale).
_EXPONENTS = np.array([0, -1, 1, -2, 2], dtype=np.float64)


def _byte_tables() -> tuple[np.ndarray, ...]:
    """What each of the 256 scale bytes means, worked out once, so that a tensor of scales is one lookup and one
    product: an explicit scale is ``s * MULT[b]`` (``2^j``, or -1 for ``-s``) unless ``FIXED[b]``, where it is
    ``ODD[b]`` (a value that does not scale with ``s``); a stored scale is ``s * STORED[b]`` (0 for a zero).
    The meanings are the ones the two functions below document."""
    b = np.arange(256)
    mult = np.exp2(_EXPONENTS[b // 6 % 5])
    odd = np.array(_odd_scales(1.0))[b // 6 % 10]
    replaced = b % 6 == 5
    minus_s = replaced & (b // 6 % 10 == 2)  # _odd_scales' -s: s * -1, exactly
    mult[minus_s] = -1.0
    fixed = replaced & ~minus_s
    stored = np.where(b % 10 == 9, 0.0, np.exp2(_EXPONENTS[b // 10 % 5]))
    return mult, fixed, np.where(fixed, odd, 0.0), stored


_SCALE_MULT, _SCALE_FIXED, _SCALE_ODD, _STORED_MULT = _byte_tables()


def scale_values_bytewise(d, count: int, s: float) -> np.ndarray:
    """:func:`scale_values`' kinds from one recorded byte per scale (a few numpy calls instead of two choices
    per scale): ``s * 2^j`` (j in -2..2), about one in 6 replaced by a value burn's guards must handle. Drawn
    inside a scope; the default stream keeps :func:`scale_values` (its seeds draw the cases they always did)."""
    b = np.frombuffer(d.bytes(count, count), dtype=np.uint8)
    out = s * _SCALE_MULT.take(b)  # take: a few times faster than [] with a uint8 index
    fixed = _SCALE_FIXED.take(b)
    out[fixed] = _SCALE_ODD.take(b[fixed])
    return out.astype(np.float32)


def stored_scales(d, count: int, s: float, *, bytewise: bool = False) -> np.ndarray:
    """Stored scales on the grid, one in 10 zero: ``s * 2^j`` (j in -2..2); ``bytewise`` as in
    :func:`scale_values_bytewise`."""
    if not bytewise:
        return np.array([0.0 if d.pick([False] * 9 + [True]) else s * 2.0 ** d.integer(-2, 2)
                         for _ in range(count)], dtype=np.float32)
    return (s * _STORED_MULT.take(np.frombuffer(d.bytes(count, count), dtype=np.uint8))).astype(np.float32)


# ---- one strategy per op ------------------------------------------------------------------------------------

def _scale_level_dtype(scheme: dict) -> str:
    block = scheme.get("block")
    return block["dtype"] if isinstance(block, dict) else (scheme.get("tensor") or "F32")


def scheme_obj(scheme: dict) -> QuantScheme | None:
    """``QuantScheme.from_json`` (memoized there), or None if burn cannot express the scheme."""
    try:
        return QuantScheme.from_json(scheme)
    except ValueError:
        return None


def _grid(shape, scheme: dict) -> list[int]:
    obj = scheme_obj(scheme)
    return [1] if obj is None else params_shape(tuple(shape), obj)


def scale_cases(d, profile, op: str) -> FuzzCase:
    """round_up / encode_scales: any f32 (ties of the grids, extremes, negatives, NaN) to a scale dtype."""
    dtype = d.pick(SCALE_DTYPES)
    n = d.integer(1, 12)
    x = values_from_recipe(d.bytes(0, 2 * n), n, np.float32, scale_bases(d), "Q8S",
                           bool(d.integer(0, 1)))
    return FuzzCase(op, {"dtype": dtype}, {"scales": x})


def decode_scales_cases(d, profile) -> FuzzCase:
    dtype = d.pick(SCALE_DTYPES)
    n = d.integer(1, 12) * SCALE_BYTES[dtype]
    raw = d.bytes(n, n)
    return FuzzCase("decode_scales", {"dtype": dtype}, {"bytes": np.frombuffer(raw, dtype=np.uint8).copy()})


def compute_range_cases(d, profile) -> FuzzCase:
    scheme = schemes(d, profile)
    shape = shapes(d, scheme)
    return compute_range_in(d, profile, scheme, shape, float_dtypes(d, profile))


# Each ``*_in`` draws the rest of a case once its scheme, shape and float dtype are chosen: the default strategies
# choose them from the profile (above), a scope from what the backend declares (``scoped_case``).

def compute_range_in(d, profile, scheme: dict, shape: tuple, dtype: str, floats=None) -> FuzzCase:
    x = tensors(d, shape, dtype=dtype, scale_dtype=_scale_level_dtype(scheme), value=scheme["value"])
    calibration = d.pick(["minmax", "minmax", "absmean"])
    if calibration == "absmean":  # dyadic values whose partial sums are exact: any summation order agrees
        x = _dyadic(x)
    return FuzzCase("compute_range", {"scheme": scheme, "calibration": calibration}, {"x": x})


def _dyadic(x: np.ndarray) -> np.ndarray:
    """Values rounded to multiples of 2^-8 within +-2^10 (NaN/inf kept): exact sums in any order."""
    v = x.astype(np.float32)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(v)
        d = np.where(finite, np.clip(np.round(v * 256) / 256, -1024, 1024), v)
    return d.astype(x.dtype)


def compute_q_params_cases(d, profile) -> FuzzCase:
    scheme = schemes(d, profile)
    shape = shapes(d, scheme)
    return compute_q_params_in(d, profile, scheme, shape, float_dtypes(d, profile))


def compute_q_params_in(d, profile, scheme: dict, shape: tuple, dtype: str, floats=None) -> FuzzCase:
    grid = tuple(_grid(shape, scheme))
    a = tensors(d, grid, dtype=dtype, scale_dtype=_scale_level_dtype(scheme), value=scheme["value"])
    b = tensors(d, grid, dtype=dtype, scale_dtype=_scale_level_dtype(scheme), value=scheme["value"])
    with np.errstate(invalid="ignore"):
        lo, hi = np.minimum(a, -np.abs(b)), np.maximum(a, np.abs(b))
    if d.pick([False] * 9 + [True]):
        lo, hi = hi, lo  # min > max: what a backend's arithmetic does with it
    return FuzzCase("compute_q_params", {"scheme": scheme}, {"min": lo.astype(a.dtype), "max": hi.astype(a.dtype)})


def quantize_dynamic_cases(d, profile) -> FuzzCase:
    scheme = schemes(d, profile)
    shape = shapes(d, scheme)
    return quantize_dynamic_in(d, profile, scheme, shape, float_dtypes(d, profile))


def quantize_dynamic_in(d, profile, scheme: dict, shape: tuple, dtype: str, floats=None) -> FuzzCase:
    x = tensors(d, shape, dtype=dtype, scale_dtype=_scale_level_dtype(scheme), value=scheme["value"])
    return FuzzCase("quantize_dynamic", {"scheme": scheme}, {"x": x})


def quantize_cases(d, profile) -> FuzzCase:
    """Explicit scales (``api: "tensor"`` with its asserts, or ``"backend"``: ``B::quantize`` directly), the
    caller's choice of scale dtype, grid or flat shape, and globals including the invalid combinations (§8):
    a global without a two-level scheme, none with one, an empty or a multi-element global, a wrong count."""
    scheme = schemes(d, profile)
    shape = shapes(d, scheme, whole_blocks=bool(d.integer(0, 1)))
    return quantize_in(d, profile, scheme, shape, float_dtypes(d, profile))


def quantize_in(d, profile, scheme: dict, shape: tuple, dtype: str, floats=None, *,
                bytewise: bool = False) -> FuzzCase:
    """``floats``: how the scales' float dtype is drawn (default: mostly one the profile takes); ``bytewise``:
    the scales from one byte each (:func:`scale_values_bytewise`, inside a scope)."""
    level_dtype = _scale_level_dtype(scheme)
    s = scale_bases(d, level_dtype)
    x = tensors(d, shape, dtype=dtype, scale_dtype=level_dtype, value=scheme["value"])
    grid = _grid(shape, scheme)
    count = math.prod(grid)
    wrong = d.pick([0] * 11 + [1, -1])
    scales = (scale_values_bytewise if bytewise else scale_values)(d, max(0, count + wrong), s)
    scales = scales.reshape(grid) if wrong == 0 and d.integer(0, 1) else scales
    scales = scales.astype(FLOATS[(floats or _profile_floats(profile))(d)])
    inputs = {"x": x, "scales": scales}
    two_level = scheme.get("tensor") is not None and scheme.get("block") is not None
    want_global = d.pick([True] * 9 + [False]) == two_level
    if want_global:
        g = d.pick([1.0, 0.5, 2.0**-6, 4.0, 1 / 3, 0.0, 2.0**-149, -1.0, float("nan")])
        n = d.pick([1] * 10 + [0, 2])
        inputs["global"] = np.full(n, g, dtype=np.float32)
    api = d.pick(["tensor", "backend"])
    return FuzzCase("quantize", {"scheme": scheme, "api": api}, inputs)


def _profile_floats(profile):
    return lambda d: _favoured(d, profile.input_dtypes, list(FLOATS))


def _code_range(value: str) -> tuple[int, int]:
    if value in ("E4M3", "E5M2"):
        return -128, 127  # any bit pattern
    if value == "E2M1":
        return 0, 15
    lo, hi = QuantValue[value].range() if value in QuantValue.__members__ else (-128, 127)
    return int(lo), int(hi)


def _parts(d, profile, *, whole_blocks: bool = True):
    """The parts of a quantized tensor (codes, stored scales, global): dequantize / to_bytes inputs."""
    scheme = schemes(d, profile)
    shape = shapes(d, scheme, whole_blocks=whole_blocks)
    return scheme, shape, _parts_in(d, scheme, shape)


def _parts_in(d, scheme: dict, shape: tuple, *, bytewise: bool = False) -> dict:
    lo, hi = _code_range(scheme["value"])
    n = math.prod(shape)
    raw = d.bytes(0, n)
    codes = np.frombuffer(raw.ljust(n, b"\0")[:n], dtype=np.uint8).astype(np.int64)
    codes = (lo + codes % (hi - lo + 1)).astype(np.int8).reshape(shape)
    count = math.prod(_grid(shape, scheme))
    s = scale_bases(d, _scale_level_dtype(scheme))
    scales = stored_scales(d, count, s, bytewise=bytewise)
    inputs = {"codes": codes, "scales": scales}
    if scheme.get("tensor") is not None and scheme.get("block") is not None:
        inputs["global"] = np.array([d.pick([1.0, 0.5, 2.0**-10, 1 / 3])], dtype=np.float32)
    return inputs


def dequantize_cases(d, profile) -> FuzzCase:
    scheme, shape, inputs = _parts(d, profile)
    return _dequantize_of(d, scheme, inputs, _favoured(d, profile.output_dtypes, list(FLOATS)))


def _dequantize_of(d, scheme, inputs, dtype: str) -> FuzzCase:
    return FuzzCase("dequantize", {"scheme": scheme, "dtype": dtype}, inputs)


def dequantize_in(d, profile, scheme: dict, shape: tuple, dtype: str, floats=None, *,
                  bytewise: bool = False) -> FuzzCase:
    """``dtype`` is the output's here (the codes are integers)."""
    return _dequantize_of(d, scheme, _parts_in(d, scheme, shape, bytewise=bytewise), dtype)


def to_bytes_cases(d, profile) -> FuzzCase:
    scheme, _, inputs = _parts(d, profile)
    return FuzzCase("to_bytes", {"scheme": scheme}, inputs)


def to_bytes_in(d, profile, scheme: dict, shape: tuple, dtype: str, floats=None) -> FuzzCase:
    return FuzzCase("to_bytes", {"scheme": scheme}, _parts_in(d, scheme, shape))


def from_bytes_cases(d, profile) -> FuzzCase:
    """Bytes of a real quantized tensor (the oracle's to_bytes), sometimes corrupted or cut short."""
    scheme, shape, inputs = _parts(d, profile)
    return _from_bytes_of(d, profile, scheme, shape, inputs)


def from_bytes_in(d, profile, scheme: dict, shape: tuple, dtype: str, floats=None) -> FuzzCase:
    return _from_bytes_of(d, profile, scheme, shape, _parts_in(d, scheme, shape))


def _from_bytes_of(d, profile, scheme, shape, inputs) -> FuzzCase:
    try:
        with np.errstate(all="ignore"):
            blob = np.asarray(oracle.run("to_bytes", {"scheme": scheme}, inputs, profile=profile)["bytes"])
    except Exception:  # noqa: BLE001 - no bytes for this scheme under this profile: any bytes will do
        blob = np.frombuffer(d.bytes(0, 64), dtype=np.uint8)
    blob = np.array(blob, dtype=np.uint8).ravel()
    if blob.size and d.pick([False] * 7 + [True]):
        blob = blob[:d.integer(0, blob.size - 1)]
    return FuzzCase("from_bytes", {"scheme": scheme, "shape": list(shape)}, {"bytes": blob})


def load_quantized_cases(d, profile) -> FuzzCase:
    """A loader's bytes: a real quantized tensor's as the profile's release writes them, sometimes cut short."""
    case = from_bytes_cases(d, profile)
    dtype = _favoured(d, profile.output_dtypes, list(FLOATS))
    return FuzzCase("load_quantized", dict(case.params, dtype=dtype), case.inputs)


def pack_u32_cases(d, profile) -> FuzzCase:
    value = d.pick(VALUES)
    lo, hi = _code_range(value)
    n = d.integer(0, 40)
    raw = np.frombuffer(d.bytes(n, n), dtype=np.uint8).astype(np.int64)
    return FuzzCase("pack_u32", {"value": value}, {"codes": (lo + raw % (hi - lo + 1)).astype(np.int8)})


def unpack_u32_cases(d, profile) -> FuzzCase:
    value = d.pick(VALUES)
    numel = d.integer(0, 40)
    bits = {"Q4S": 4, "Q4F": 4, "E2M1": 4, "Q2S": 2, "Q2F": 2}.get(value, 8)
    words = -(-numel * bits // 32)
    raw = d.bytes(4 * words, 4 * words)
    return FuzzCase("unpack_u32", {"value": value, "numel": numel},
                    {"words": np.frombuffer(raw, dtype="<u4").astype(np.uint32)})


def ternary_matmul_cases(d, profile) -> FuzzCase:
    lead = [d.integer(1, 3) for _ in range(d.integer(1, 2))]  # rank >= 2: burn's matmul takes same-rank operands
    k, n = d.integer(1, 12), d.integer(1, 6)
    # finite values within +-2^60: a GEMM whose partial sums overflow answers inf or NaN in its own order
    lhs = tensors(d, tuple(lead) + (k,), zero_blocks=False)
    lhs = np.where(np.isfinite(lhs), np.clip(lhs, -2.0**60, 2.0**60), lhs).astype(np.float32)
    raw = np.frombuffer(d.bytes(k * n, k * n), dtype=np.uint8)
    codes = (raw.astype(np.int64) % 3 - 1).astype(np.int8).reshape(k, n)
    scale = np.array([scale_bases(d)], dtype=np.float32)
    return FuzzCase("ternary_matmul", {}, {"lhs": lhs, "rhs_codes": codes, "rhs_scale": scale})


def scheme_info_cases(d, profile) -> FuzzCase:
    scheme = schemes(d, profile)
    return FuzzCase("scheme_info", {"scheme": scheme, "shape": list(shapes(d, scheme))}, {})


def scheme_info_in(d, profile, scheme: dict, shape: tuple, dtype: str, floats=None) -> FuzzCase:
    return FuzzCase("scheme_info", {"scheme": scheme, "shape": list(shape)}, {})


# op -> the rest of a case inside a scope (``conformance/fuzz/scope.py``), every op scope.SCOPED_OPS names
SCOPED: dict[str, Callable] = {
    # explicit and stored scales one byte each inside a scope (blocks of 16-128 make hundreds of scales)
    "quantize_dynamic": quantize_dynamic_in, "quantize": functools.partial(quantize_in, bytewise=True),
    "dequantize": functools.partial(dequantize_in, bytewise=True),
    "to_bytes": to_bytes_in, "from_bytes": from_bytes_in, "compute_range": compute_range_in,
    "compute_q_params": compute_q_params_in, "scheme_info": scheme_info_in,
}


# ---- layout ops: quantized tensors in motion, quantizing views ------------------------------------------------
# A chain is drawn step by step against the current shape (a zero probe follows it through
# ``oracle.layout.apply``), so every step's params are valid for the tensor it meets: what burn does with a
# valid call is the question, not how it rejects a malformed one. The harness serves input ranks 1-4 and
# intermediate ranks 1-6; a result may be empty (burn-tensor then answers with a float tensor, and the steps after
# it are float steps).

LAYOUT_MAX_RANK = 6
LAYOUT_MAX_ELEMENTS = 192
VIEW_STEPS = ("reshape", "transpose", "swap_dims", "permute", "flip", "slice", "expand")  # views, not copies


def _layout_scheme(d, profile) -> dict:
    """A scheme the profile quantizes (Native store mostly, like the golden cases): per-tensor, per-block (on
    its own scale dtype) or two-level, so the codes, the scale grid and the block dims all have to move."""
    level = d.pick(["block", "tensor", "block", "two-level"])
    for _ in range(4):
        scheme = _any_scheme(d, profile, level)
        scheme["mode"] = "Symmetric"
        if scheme["store"] != "Native" and d.integer(0, 3):
            scheme["store"] = "Native"
        obj = scheme_obj(scheme)
        if obj is not None and _supported(obj.to_json(), profile):
            return obj.to_json()
    return {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}


def _grid_scale(d, dtype: str) -> float:
    """A positive finite scale exactly on ``dtype``'s grid (normal range, so it is stored as drawn)."""
    if dtype == "UE8M0":
        return 2.0 ** d.integer(-12, 6)
    if dtype == "UE4M3":
        e = d.integer(-6, 8)
        return float(d.integer(8, 14 if e == 8 else 15)) * 2.0 ** (e - 3)
    return scale_bases(d, dtype) * 2.0 ** d.integer(-2, 2)


def _layout_shape(d, scheme: dict) -> tuple:
    """An input shape of rank 1-4 (the harness's); one in 25 has an empty dim (``shapes``' own rate)."""
    return shapes(d, scheme, max_rank=4)


def _quantized_parts(d, scheme: dict, shape: tuple) -> dict:
    """Codes anywhere in the value's code range, one positive finite scale per block on the level's grid, a
    global for two-level: any tensor a backend can hold, not only what quantize makes."""
    lo, hi = _code_range(scheme["value"])
    n = math.prod(shape)
    raw = np.frombuffer(d.bytes(n, n), dtype=np.uint8).astype(np.int64)
    codes = (lo + raw % (hi - lo + 1)).astype(np.int8).reshape(shape)
    dtype = _scale_level_dtype(scheme)
    scales = np.array([_grid_scale(d, dtype) for _ in range(math.prod(_grid(shape, scheme)))], dtype=np.float32)
    inputs = {"codes": codes, "scales": scales}
    if scheme.get("tensor") is not None and scheme.get("block") is not None:
        inputs["global"] = np.array([d.pick([1.0, 0.5, 2.0**-10, 0.375, 2.0**-15])], dtype=np.float32)
    return inputs


def _perm(d, n: int) -> list[int]:
    """A permutation of range(n) (Fisher-Yates on recorded integers: the identity shrinks first)."""
    axes = list(range(n))
    for i in range(n - 1, 0, -1):
        j = d.integer(0, i)
        axes[i], axes[j] = axes[j], axes[i]
    return axes


def _reshape_step(d, shape: tuple) -> dict:
    """Flatten, unsqueeze, squeeze a unit dim, merge two neighbours or split a dim into two factors."""
    dims, rank = list(shape), len(shape)
    kind = d.pick(["unsqueeze", "merge", "split", "flatten", "squeeze"])
    if kind == "merge" and rank >= 2:
        i = d.integer(0, rank - 2)
        dims[i:i + 2] = [dims[i] * dims[i + 1]]
    elif kind == "split" and rank < LAYOUT_MAX_RANK:
        i = d.integer(0, rank - 1)
        factors = [f for f in range(1, dims[i] + 1) if dims[i] % f == 0] or [1, 2]  # an empty dim: [f, 0]
        f = d.pick(factors)
        dims[i:i + 1] = [f, dims[i] // f]
    elif kind == "squeeze" and 1 in dims and rank >= 2:
        dims.pop(dims.index(1))
    elif kind == "flatten":
        dims = [math.prod(dims)]
    elif rank < LAYOUT_MAX_RANK:
        dims.insert(d.integer(0, rank), 1)
    return {"op": "reshape", "shape": dims}


def _slice_range(d, n: int) -> list[int]:
    """One ``[start, end, step]`` that burn's ``Tensor::slice`` accepts on a dim of ``n``: mostly a non-empty
    forward range; one in four the same range spelt from the end (negative bounds, the end as ``n``) with a step of
    either sign; one in four any bounds burn clamps (beyond either end, empty, reversed), any signed step. An end
    past ``n`` is burn's panic, not a form (``TensorCheck::slice``); ``end: None`` cannot be sent (the harness
    reads three integers), but ``n`` means the same for every step."""
    form = d.integer(0, 3)
    if form == 3 or n == 0:
        return [d.integer(-n - 2, n + 1), d.integer(-n - 2, n), d.pick([1, 2, 3, -1, -2, -3])]
    start = d.integer(0, n - 1)
    end = d.integer(start + 1, n)
    if form == 2:
        return [start - n, end if end == n or d.integer(0, 1) else end - n, d.pick([1, 2, 3, -1, -2, -3])]
    return [start, end, d.pick([1, 1, 2, 3])]


def _slice_step(d, shape: tuple) -> dict:
    return {"op": "slice", "ranges": [_slice_range(d, n) for n in shape[:d.integer(1, len(shape))]]}


def _select_step(d, shape):
    """Indices in any order, repeated at times, sometimes none (burn's ``Int`` tensors cannot be negative here:
    the harness reads them as ``usize``); a dim of size 0 gets none."""
    dim = d.integer(0, len(shape) - 1)
    count = d.pick([0, 1, 1, 2, 3, 4]) if shape[dim] else 0
    return {"op": "select", "dim": dim, "indices": [d.integer(0, shape[dim] - 1) for _ in range(count)]}


def _gather_step(d, shape: tuple) -> dict:
    dim = d.integer(0, len(shape) - 1)
    index_shape = list(shape)
    index_shape[dim] = d.pick([0, 1, 1, 2, 3, 4]) if shape[dim] else 0
    n = math.prod(index_shape)
    return {"op": "gather", "dim": dim, "indices": [d.integer(0, shape[dim] - 1) for _ in range(n)],
            "shape": index_shape}


def _expand_step(d, shape: tuple) -> dict:
    """Unit dims broadcast to 1-3, sometimes a new leading dim."""
    dims = [d.integer(1, 3) if n == 1 else n for n in shape]
    if len(dims) < LAYOUT_MAX_RANK and d.integer(0, 1):
        dims.insert(0, d.integer(1, 3))
    return {"op": "expand", "shape": dims}


def _matmul_step(d, shape: tuple) -> dict:
    """Times a float rhs of the same rank and batch dims: dyadic values, so the product is nearly exact; one rhs in
    8 has huge entries (``±2^100..2^127``), whose products with the codes' values overflow f32 while their exact
    sum may not (a GEMM's partial sums then decide)."""
    rhs_shape = list(shape[:-1]) + [d.integer(1, 4)]
    rhs_shape[-2] = shape[-1]
    n = math.prod(rhs_shape)
    if d.integer(0, 7) == 0:
        return {"op": "matmul", "rhs": [d.pick([1, -1, 0]) * 2.0 ** d.integer(100, 127) for _ in range(n)],
                "shape": rhs_shape}
    return {"op": "matmul", "rhs": [d.integer(-8, 8) / 4 for _ in range(n)], "shape": rhs_shape}


_STEP_DRAWS: dict[str, Callable] = {
    "reshape": _reshape_step,
    "transpose": lambda d, shape: {"op": "transpose"},
    "swap_dims": lambda d, shape: {"op": "swap_dims", "dims": [d.integer(0, len(shape) - 1),
                                                               d.integer(0, len(shape) - 1)]},
    "permute": lambda d, shape: {"op": "permute", "axes": _perm(d, len(shape))},
    "flip": lambda d, shape: {"op": "flip", "axes": sorted({d.integer(0, len(shape) - 1)
                                                           for _ in range(d.integer(1, len(shape)))})},
    "slice": _slice_step,
    "select": _select_step,
    "gather": _gather_step,
    "repeat_dim": lambda d, shape: {"op": "repeat_dim", "dim": d.integer(0, len(shape) - 1),
                                    "times": d.pick([1, 2, 3, 0])},
    "cat": lambda d, shape: {"op": "cat", "dim": d.integer(0, len(shape) - 1), "copies": d.integer(1, 3)},
    "expand": _expand_step,
    "mul_scalar": lambda d, shape: {"op": "mul_scalar", "value": d.pick([2.0, 0.5, -1.0, 3.0, 0.0, 0.25])},
    "matmul": _matmul_step,
}
# The moves burn routes per backend come first (and more often): they are where the scale grid must follow.
_QLAYOUT_STEPS = ("transpose", "permute", "swap_dims", "reshape", "flip", "slice", "select", "transpose",
                  "permute", "slice", "select", "reshape", "gather", "repeat_dim", "cat", "expand", "mul_scalar",
                  "matmul")


def _zero_keeps(d, s: dict, shape: tuple) -> dict:
    """A reshape target with some dims spelt 0 (one reshape in 4), at indices whose dim the reshape keeps: burn
    until 0.22.1 reads such a 0 as the source's dim (``Profile.reshape_zero_keeps_dim``), 0.23.0-pre.1 as an empty
    dim, which its element-count check refuses (``tensor.reshape_count``)."""
    if s["op"] != "reshape":
        return s
    kept = [i for i, n in enumerate(s["shape"]) if i < len(shape) and shape[i] == n]
    if not kept or d.integer(0, 3):
        return s
    return dict(s, shape=[0 if i in kept and d.integer(0, 1) else n for i, n in enumerate(s["shape"])])


def layout_steps(d, shape: tuple, allowed=_QLAYOUT_STEPS, zero_keeps_dim: bool = False) -> list[dict]:
    """1-3 steps, each valid for the shape it meets (a step that would need rank 2, grow the tensor past
    LAYOUT_MAX_ELEMENTS or leave the harness's ranks is drawn again as a plain transpose or reshape). Empty
    results are cases too (burn answers an empty slice with a float tensor)."""
    probe, steps = np.zeros(shape, dtype=np.float32), []
    for _ in range(d.integer(1, 3)):
        op = d.pick(list(allowed))
        if op in ("transpose", "matmul") and probe.ndim < 2:
            op = "reshape"
        s = _zero_keeps(d, _STEP_DRAWS[op](d, probe.shape), probe.shape)
        try:
            after = layout.apply(probe, layout.resolved(probe.shape, [s], zero_keeps_dim)[0])
        except oracle.BurnPanic:  # burn refuses the 0s as this release reads them: that panic ends the chain
            return steps + [s]
        if not 1 <= after.ndim <= LAYOUT_MAX_RANK or not after.size <= LAYOUT_MAX_ELEMENTS:
            s = {"op": "reshape", "shape": list(probe.shape)}
            after = probe
        steps.append(s)
        probe = np.zeros(after.shape, dtype=np.float32)
    return steps


def qlayout_cases(d, profile) -> FuzzCase:
    scheme = _layout_scheme(d, profile)
    shape = _layout_shape(d, scheme)
    inputs = _quantized_parts(d, scheme, shape)
    steps = layout_steps(d, shape, zero_keeps_dim=profile.reshape_zero_keeps_dim)
    return FuzzCase("qlayout", {"scheme": scheme, "steps": steps}, inputs)


def quantize_view_cases(d, profile) -> FuzzCase:
    """``quantize_dynamic`` of a view: 1-3 view steps (no copies) of a contiguous f32 tensor."""
    scheme = _layout_scheme(d, profile)
    shape = _layout_shape(d, scheme)
    x = tensors(d, shape, scale_dtype=_scale_level_dtype(scheme), value=scheme["value"])
    view = layout_steps(d, shape, VIEW_STEPS, zero_keeps_dim=profile.reshape_zero_keeps_dim)
    return FuzzCase("quantize_view", {"scheme": scheme, "view": view}, {"x": x})


# --- float_ops: burn's float ops on a quantized tensor (oracle/float_ops.py) -----------------------------------


def _dyadics(d, n: int, nonzero: bool = False) -> list[float]:
    """Multiples of 1/4 in [-2, 2]: exact in f32, and their products with dyadic values stay exact."""
    return [(d.integer(1, 8) * d.pick([1, -1]) if nonzero else d.integer(-8, 8)) / 4 for _ in range(n)]


def _float_operand(d, shape: tuple, nonzero: bool = False) -> dict:
    """A float other side: the tensor's own shape, or one row broadcast over the leading dims."""
    other = list(shape) if d.integer(0, 1) else [1] * (len(shape) - 1) + [shape[-1]]
    return {"rhs": _dyadics(d, math.prod(other), nonzero), "shape": other}


def _float_matmul_step(d, shape: tuple) -> dict:
    """A quantized rhs (a float lhs), both sides the held tensor (when its last two dims are square) or a float rhs."""
    if len(shape) < 2:
        return {"op": "abs"}
    form = d.integer(0, 2)
    if form == 0 and shape[-1] == shape[-2]:
        return {"op": "matmul", "rhs": "self"}
    if form == 1:
        lhs = [*shape[:-2], d.integer(1, 4), shape[-2]]
        return {"op": "matmul", "lhs": _dyadics(d, math.prod(lhs)), "shape": lhs}
    rhs = [*shape[:-1], d.integer(1, 4)]
    rhs[-2] = shape[-1]
    return {"op": "matmul", "rhs": _dyadics(d, math.prod(rhs)), "shape": rhs}


def _dim(d, shape: tuple) -> int:
    return d.integer(0, len(shape) - 1)


# Bounds burn's `clamp` takes that dyadics miss: -0.0, past f32's range (inf once `as f32`), ones that round.
_CLAMP_BOUNDS = (-0.0, 0.1, -0.1, 1e39, -1e39, 3.4028235e38)


def _clamp_step(d) -> dict:
    """Any two f32 bounds (JSON holds no NaN): one in six a bound of :data:`_CLAMP_BOUNDS`, in order but one in
    eight reversed (min > max)."""
    lo, hi = sorted(d.pick(_CLAMP_BOUNDS) if d.integer(0, 5) == 0 else _dyadics(d, 1)[0] for _ in range(2))
    return {"op": "clamp", "min": hi, "max": lo} if d.integer(0, 7) == 0 and lo != hi else \
        {"op": "clamp", "min": lo, "max": hi}


_FLOAT_STEP_DRAWS: dict[str, Callable] = {
    **{op: (lambda op: lambda d, shape: {"op": op})(op) for op in ("abs", "neg", "sqrt", "sum", "prod")},
    "add_scalar": lambda d, shape: {"op": "add_scalar", "value": d.pick([0.5, -1.25, 3.0, 0.0, 2.0**-7])},
    "clamp": lambda d, shape: _clamp_step(d),
    **{op: (lambda op: lambda d, shape: {"op": op, **({"rhs": "self"} if op != "div" and d.integer(0, 2) == 0
                                                     else _float_operand(d, shape, nonzero=op == "div"))})(op)
       for op in ("add", "sub", "mul", "div")},
    "mask_fill": lambda d, shape: {"op": "mask_fill", "compare": d.pick(list(float_ops.COMPARISONS)),
                                   "value": _dyadics(d, 1)[0], "fill": _dyadics(d, 1)[0]},
    "mask_where": lambda d, shape: {"op": "mask_where", "compare": d.pick(list(float_ops.COMPARISONS)),
                                    "value": _dyadics(d, 1)[0],
                                    **({"rhs": "self"} if d.integer(0, 3) == 0 else
                                       {"rhs": _dyadics(d, math.prod(shape)), "shape": list(shape)})},
    **{op: (lambda op: lambda d, shape: {"op": op, "value": _dyadics(d, 1)[0]})(op) for op in float_ops.COMPARISONS},
    **{op: (lambda op: lambda d, shape: {"op": op, "dim": _dim(d, shape)})(op)
       for op in ("sum_dim", "mean_dim", "prod_dim", "cumsum", "cumprod", "max_dim", "min_dim", "argmax", "argmin")},
    **{op: (lambda op: lambda d, shape: {"op": op, "dim": _dim(d, shape), "descending": bool(d.integer(0, 1))})(op)
       for op in ("sort", "argsort")},
    "topk": lambda d, shape: (lambda dim: {"op": "topk", "dim": dim, "k": d.integer(1, shape[dim])})(_dim(d, shape)),
    "stack": lambda d, shape: {"op": "stack", "dim": d.integer(0, len(shape)), "copies": d.integer(1, 3)},
    "matmul": _float_matmul_step,
}


_OPERAND_OPS = ("add", "sub", "mul", "div", "mask_where", "matmul")
"""Float ops whose float other side may be a second quantized tensor (``"rhs_scheme"``)."""


def _quantized_operand(d, s: dict, profile) -> dict:
    """One in three float other sides of :data:`_OPERAND_OPS` quantized on the device under a scheme of their own:
    for an elementwise op any scheme the profile quantizes whose blocks tile the operand (its values as drawn); for a
    matmul a per-tensor integer scheme and values ``k * 2^e`` (``k`` in quarters) with one ``+-qmax * 2^e``, so the
    scale is ``2^e`` and every dequantized value, product and sum is exact (others' sums depend on the order)."""
    if s["op"] not in _OPERAND_OPS or not isinstance(s.get("rhs"), list) or d.integer(0, 2):
        return s
    shape = s["shape"]
    if s["op"] == "matmul":
        value = d.pick([v for v in ("Q8S", "Q4S", "Q2S") if _supported(_per_tensor(v), profile)] or ["Q8S"])
        qmax, unit = int(QuantValue[value].range()[1]), 2.0 ** d.integer(-7, -2)
        k = [min(max(d.integer(-4 * qmax, 4 * qmax) / 4, -qmax), qmax) for _ in s["rhs"]]
        k[d.integer(0, len(k) - 1)] = qmax * d.pick([1, -1])
        return {**s, "rhs": [v * unit for v in k], "rhs_scheme": _per_tensor(value)}
    for _ in range(4):
        scheme = _layout_scheme(d, profile)
        block = (scheme.get("block") or {}).get("size")
        if block is None or (len(block) <= len(shape) and all(
                n % b == 0 for n, b in zip(shape[len(shape) - len(block):], block))):
            return {**s, "rhs_scheme": scheme}
    return {**s, "rhs_scheme": _per_tensor("Q8S")}


def _per_tensor(value: str) -> dict:
    return {"value": value, "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}


def _float_steps(d, shape: tuple, profile) -> list[dict]:
    """1-2 float-op steps, each valid for the shape it meets (a matmul needs rank 2, a stack a rank to spare and
    room for its copies: drawn again as ``abs``), a float other side sometimes a second quantized tensor."""
    steps = []
    for _ in range(d.integer(1, 2)):
        s = _quantized_operand(d, _FLOAT_STEP_DRAWS[d.pick(list(_FLOAT_STEP_DRAWS))](d, shape), profile)
        after = _float_shape(shape, s)
        if after is None or not len(after) <= LAYOUT_MAX_RANK or math.prod(after) > LAYOUT_MAX_ELEMENTS:
            s, after = {"op": "abs"}, shape
        steps.append(s)
        shape = after
    return steps


def _float_shape(shape: tuple, s: dict) -> tuple | None:
    """The shape after float step ``s`` (None: the step does not apply to ``shape``)."""
    if s["op"] == "matmul":
        if len(shape) < 2:
            return None
        if "lhs" in s:
            return (*s["shape"][:-1], shape[-1])
        return (*shape[:-1], shape[-1]) if s["rhs"] == "self" else (*shape[:-1], s["shape"][-1])
    if s["op"] == "stack":
        return (*shape[:s["dim"]], s["copies"], *shape[s["dim"]:])
    if s["op"] in ("sum", "prod"):
        return (1,)
    if s["op"] in ("sum_dim", "mean_dim", "prod_dim", "max_dim", "min_dim", "argmax", "argmin"):
        return tuple(1 if i == s["dim"] else n for i, n in enumerate(shape))
    if s["op"] == "topk":
        return tuple(s["k"] if i == s["dim"] else n for i, n in enumerate(shape))
    return shape


def float_ops_cases(d, profile) -> FuzzCase:
    """A quantized tensor (its parts, or one in 4 an f32/f16/bf16 ``x`` quantized on the device), 0-2 layout
    steps, then 1-2 float-op steps. No empty dim (what burn's reductions do with one is not modelled yet); one
    tensor in two has power-of-two scales, so that sums and products are exact in every order (the oracle declares
    the others' order-dependent answers undefined, and the fuzzer skips those). fp8 NaN and inf codes stay as drawn
    and sqrt meets negative values: the NaN it makes is the machine's default one, on the oracle's machine as on
    burn's."""
    scheme = _layout_scheme(d, profile)
    shape = tuple(n or 1 for n in _layout_shape(d, scheme))
    if d.integer(0, 3) == 0:
        dtype = d.pick([t for t in ("f32", "f16", "bf16") if t in profile.input_dtypes] or ["f32"])
        inputs = {"x": tensors(d, shape, dtype=dtype, scale_dtype=_scale_level_dtype(scheme), value=scheme["value"])}
    else:
        inputs = _quantized_parts(d, scheme, shape)
        if d.integer(0, 1):
            inputs["scales"] = np.array([2.0 ** d.integer(-6, 2) for _ in inputs["scales"]], dtype=np.float32)
    moves = layout_steps(d, shape, _FLOAT_OPS_MOVES, zero_keeps_dim=profile.reshape_zero_keeps_dim)[:d.integer(0, 2)]
    moved = _moved_shape(shape, moves, profile)
    if moved is None:  # a panicking or emptying move: the float ops are this strategy's subject
        moves, moved = [], shape
    return FuzzCase("float_ops", {"scheme": scheme, "steps": moves + _float_steps(d, moved, profile)}, inputs)


# The moves a float_ops chain may start with (its layout steps; arithmetic ones are float_ops' own).
_FLOAT_OPS_MOVES = ("transpose", "permute", "swap_dims", "reshape", "flip", "slice", "select", "gather", "repeat_dim",
                    "cat")


def _moved_shape(shape: tuple, moves: list[dict], profile) -> tuple | None:
    """The shape after the layout ``moves`` as the profile's release reads them (None: a panic or an empty
    result)."""
    probe = np.zeros(shape, np.float32)
    try:
        for s in layout.resolved(shape, moves, profile.reshape_zero_keeps_dim):
            probe = layout.apply(probe, s)
    except (oracle.BurnPanic, ValueError):
        return None
    return None if probe.size == 0 else probe.shape


# op -> strategy factory (profile -> strategy of FuzzCase).
OPS: dict[str, Callable] = {
    "round_up": lambda d, profile: scale_cases(d, profile, "round_up"),
    "encode_scales": lambda d, profile: scale_cases(d, profile, "encode_scales"),
    "decode_scales": decode_scales_cases,
    "compute_range": compute_range_cases,
    "compute_q_params": compute_q_params_cases,
    "quantize": quantize_cases,
    "quantize_dynamic": quantize_dynamic_cases,
    "dequantize": dequantize_cases,
    "to_bytes": to_bytes_cases,
    "from_bytes": from_bytes_cases,
    "pack_u32": pack_u32_cases,
    "unpack_u32": unpack_u32_cases,
    "ternary_matmul": ternary_matmul_cases,
    "scheme_info": scheme_info_cases,
    "qlayout": qlayout_cases,
    "quantize_view": quantize_view_cases,
    "load_quantized": load_quantized_cases,
    "float_ops": float_ops_cases,
}
# Ops without a strategy yet: the checkpoint ops' vectors are the save matrix, each release's files and the hostile
# files (conformance/cases/checkpoint.py); a strategy mutating files byte by byte is the next step.
PENDING: tuple[str, ...] = ("save_checkpoint", "load_checkpoint")
# Ops drawn only when asked for (``--ops``), not in the default set CI fuzzes every build with: an op whose
# strategy still finds divergences on a real build waits here until the oracle models them (qlayout did, until
# burn-ndarray's kept scale lists and burn-tensor's identity short-cuts were modelled: docs/fuzzing.md).
OPT_IN: tuple[str, ...] = ("load_quantized",)  # until fuzzed against every real build (float_ops joined 2026-12-02)
DEFAULT_OPS = tuple(op for op in OPS if op not in OPT_IN)
# Where quantization's arithmetic lives: drawn more often than the codec and bookkeeping ops.
WEIGHTS = {"quantize_dynamic": 4, "quantize": 4, "dequantize": 2, "compute_q_params": 2, "compute_range": 2}


def draw_case(d, profile, ops: list[str] | None = None, scope=None) -> FuzzCase:
    """One case of one of ``ops`` (default: all but OPT_IN), ops that do arithmetic weighted up; inside
    ``scope`` (what a backend declares) when one is given."""
    if scope is not None:
        with np.errstate(all="ignore"):
            return scoped_case(d, get_profile(profile), scope)
    chosen = list(ops or DEFAULT_OPS)
    unknown = [op for op in chosen if op not in OPS]
    if unknown:
        raise ValueError(f"no fuzz strategy for {', '.join(unknown)}; known: {', '.join(OPS)}")
    weighted = [op for op in chosen for _ in range(WEIGHTS.get(op, 1))]
    with np.errstate(all="ignore"):  # overflow to inf and NaN are drawn on purpose
        return OPS[d.pick(weighted)](d, get_profile(profile))


def scoped_case(d, profile, scope) -> FuzzCase:
    """A case built inside one of the scope's targets: the op, then a scheme, a shape and float dtypes the
    target declares, then the op's own draws."""
    op = d.pick(scope.weighted_ops)
    target = d.pick(scope.targets[op])
    scheme, block = draw_scheme(d, target)
    shape = draw_shape(d, target, block)
    scheme = finish_scheme(scheme, block, shape)
    obj = scheme_obj(scheme)
    scheme = scheme if obj is None else obj.to_json()
    floats = lambda d: d.pick(target.input_dtypes)  # noqa: E731
    dtype = d.pick(target.output_dtypes if op == "dequantize" else target.input_dtypes)
    return SCOPED[op](d, profile, scheme, shape, dtype, floats)


# ---- where the choices come from ------------------------------------------------------------------------------
# A drawer has integer(lo, hi) and bytes(lo, hi): the two kinds of Hypothesis choices (IR nodes) used here, so a
# case drawn fast from Python's random replays exactly under Hypothesis (same choices, same constraints) and
# Hypothesis's shrinker can work on it.

class _Picks:
    def pick(self, seq):
        return seq[self.integer(0, len(seq) - 1)]


class RandomDraw(_Picks):
    """Choices from ``random.Random(seed)`` (well under a microsecond each), recorded for the shrinker."""

    def __init__(self, seed):
        self._rnd, self.choices = random.Random(seed), []
        self._random = self._rnd.random

    def pick(self, seq):
        v = int(self._random() * len(seq))  # integer(0, len(seq) - 1), the same choice, one call fewer
        self.choices.append(v)
        return seq[v]

    def integer(self, lo: int, hi: int) -> int:
        v = lo + int(self._random() * (hi - lo + 1))  # random() < 1: v <= hi (randint is 4x slower)
        self.choices.append(v)
        return v

    def bytes(self, lo: int, hi: int) -> bytes:
        v = self._rnd.randbytes(lo + int(self._random() * (hi - lo + 1)))
        self.choices.append(v)
        return v


class DataDraw(_Picks):
    """Choices from a Hypothesis ``ConjectureData`` (generation, replay of recorded choices, shrinking)."""

    def __init__(self, data):
        self.data = data

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw_integer(lo, hi)

    def bytes(self, lo: int, hi: int) -> bytes:
        return self.data.draw_bytes(lo, hi)


class _StrategyDraw(_Picks):
    def __init__(self, draw):
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def bytes(self, lo: int, hi: int) -> bytes:
        return self.draw(st.binary(min_size=lo, max_size=hi))


def cases(profile, ops: list[str] | None = None) -> st.SearchStrategy:
    """The same cases as a public Hypothesis strategy (for ``@given`` in tests)."""
    get_profile(profile)
    return st.composite(lambda draw: draw_case(_StrategyDraw(draw), profile, ops))()
