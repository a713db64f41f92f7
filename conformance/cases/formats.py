"""Vectors of each named real-world format (``conformance/formats.py``): ``quantize_dynamic``, ``quantize`` and
``dequantize`` on weight-like tensors, plus every value class that decides bits under the format's scale grid.

A backend that implements one format (GGUF Q8_0, OCP MXFP4, ...) finds here at least 20 vectors per op of
exactly that format: its block length, scale dtype and store, on rows x a few hundred columns. The weights are
drawn from a fixed-seed generator per alias (:func:`rng`) from the distributions real weights have (normal,
heavy-tailed student-t, normal with outliers, uniform, rows of very different magnitudes). The value classes are
built on the scale the format's grid gives: exact ties and near-ties of ``x / s`` (``s`` worked out from the
oracle's effective scale for ``quantize_dynamic``, chosen on the grid for ``quantize``), all-zero blocks, scales
above the scale dtype's largest value and below its smallest, subnormal scales and inputs, inf and NaN. What each
profile answers is the generator's business, like every other case.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

import oracle
from oracle import ScaleDtype
from oracle.blocks import params_shape

from ..formats import FORMATS, ROW, Format
from ..tags import code_midpoints
from . import F32_DENORM, F32_MAX, case, rng

# (name, rows, cols): weight-like shapes; every last dim divides into blocks of 16 and 32, and the per-row
# format's rows fit burn's u8 block extent (<= 255).
SHAPES = ((4, 256), (8, 128), (3, 320), (16, 64), (2, 512), (6, 192))
ROW_SHAPES = ((8, 128), (16, 64), (4, 240), (6, 160), (3, 224), (32, 32))
DISTRIBUTIONS = ("normal", "student-t", "outliers", "uniform", "row-spread", "laplace")
SMALL = (4, 64)  # the value-class vectors: a few blocks per row, small enough to read
WEIGHT_LIKE = ("class:weight-like",)  # declared: how the data was drawn, not a property the generator can read
SPEC = {"quantize_dynamic": ("§2", "§3", "§5.1"), "quantize": ("§5.1", "§5.2"), "dequantize": ("§6",)}


def slug(fmt: Format) -> str:
    """The alias segment of a format (aliases take no underscore after the op)."""
    return "format-" + fmt.name.replace("_", "-")


def _shapes(fmt: Format):
    return ROW_SHAPES if fmt.block == ROW else SHAPES


def weights(dist: str, shape, r: np.random.Generator) -> np.ndarray:
    """Weight-like f32 values: what a layer's weights look like after training, not adversarial data."""
    if dist == "normal":
        w = r.normal(0.0, 0.02, shape)
    elif dist == "student-t":  # heavy tails: a few large weights set each block's scale
        w = 0.01 * r.standard_t(3.0, shape)
    elif dist == "outliers":  # LLM-style outlier features: a handful of entries ~100x the rest
        w = r.normal(0.0, 0.02, shape)
        hit = r.choice(w.size, size=max(2, w.size // 200), replace=False)
        w.flat[hit] *= r.uniform(50, 150, hit.size) * r.choice([-1, 1], hit.size)
    elif dist == "uniform":
        w = r.uniform(-0.1, 0.1, shape)
    elif dist == "row-spread":  # rows (channels) whose magnitudes differ by up to 2^12 either way
        w = r.normal(0.0, 1.0, shape) * np.exp2(r.uniform(-12, 12, (shape[0], 1)))
    elif dist == "laplace":
        w = r.laplace(0.0, 0.05, shape)
    else:
        raise ValueError(f"unknown distribution {dist!r}")
    return w.astype(np.float32)


# ---- the format's grids -----------------------------------------------------------------------------------

def on_scale_grid(s, dtype: ScaleDtype) -> np.ndarray:
    """``s`` moved onto ``dtype``'s grid by numpy's own conversions (what a caller computing scales does;
    burn's round-up is the oracle's business): nearest F16/BF16/UE4M3, the next power of two for UE8M0."""
    s = np.asarray(s, dtype=np.float32)
    with np.errstate(all="ignore"):
        if dtype is ScaleDtype.F16:
            return s.astype(np.float16).astype(np.float32)
        if dtype is ScaleDtype.BF16:
            return s.astype(ml_dtypes.bfloat16).astype(np.float32)
        if dtype is ScaleDtype.UE8M0:
            return np.exp2(np.ceil(np.log2(s))).astype(np.float32)
        if dtype is ScaleDtype.UE4M3:
            return np.minimum(s, 448).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    return s


def smallest(dtype: ScaleDtype) -> float:
    """The smallest positive value of a scale dtype."""
    return {ScaleDtype.F32: F32_DENORM, ScaleDtype.F16: 2.0**-24, ScaleDtype.BF16: F32_DENORM,
            ScaleDtype.UE8M0: 2.0**-127, ScaleDtype.UE4M3: 2.0**-9}[dtype]


def _blocks(fmt: Format, shape) -> list[tuple[slice, slice]]:
    """(row, column) slices of each block of the format on a 2-D ``shape``."""
    rows, cols = shape
    if fmt.block is None:
        return [(slice(0, rows), slice(0, cols))]
    width = cols if fmt.block == ROW else fmt.block
    return [(slice(i, i + 1), slice(j, j + width)) for i in range(rows) for j in range(0, cols, width)]


# ---- the three ops --------------------------------------------------------------------------------------------

def _qd(fmt, name, x, reason, *, spec=(), store=None, tags=()):
    sch = fmt.scheme(x.shape, store).to_json()
    return case(f"quantize_dynamic/{slug(fmt)}/{name}", "quantize_dynamic", {"scheme": sch}, {"x": x},
                tags=tags, spec=SPEC["quantize_dynamic"] + tuple(spec), reason=f"{fmt.name}: {reason}")


def _q(fmt, name, x, scales, glob, reason, *, api="tensor", spec=(), store=None, tags=()):
    sch = fmt.scheme(x.shape, store).to_json()
    inputs = {"x": x, "scales": scales}
    if glob is not None:
        inputs["global"] = glob
    return case(f"quantize/{slug(fmt)}/{name}", "quantize", {"scheme": sch, "api": api}, inputs, tags=tags,
                spec=SPEC["quantize"] + tuple(spec), reason=f"{fmt.name}: {reason}")


def _dq(fmt, name, codes, scales, glob, reason, *, dtype="f32", spec=(), store=None, tags=()):
    sch = fmt.scheme(codes.shape, store).to_json()
    inputs = {"codes": codes, "scales": scales}
    if glob is not None:
        inputs["global"] = glob
    return case(f"dequantize/{slug(fmt)}/{name}", "dequantize", {"scheme": sch, "dtype": dtype}, inputs,
                tags=tags, spec=SPEC["dequantize"] + tuple(spec), reason=f"{fmt.name}: {reason}")


def caller_scales(fmt: Format, x: np.ndarray, on_grid: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """The scales a caller computes for ``x`` (max |x| / half span per block, on the scale dtype's grid unless
    ``on_grid`` is False), in the block-grid shape, and the global of a two-level format."""
    sch = fmt.scheme(x.shape)
    hs = np.float32(sch.value.range()[1])
    amax = np.array([np.max(np.abs(x[b])) for b in _blocks(fmt, x.shape)], np.float32)
    amax = np.where(amax > 0, amax, np.float32(1.0))
    glob = None
    if fmt.tensor_dtype is not None and fmt.block is not None:  # two-level: the global takes the block dtype's top
        top = np.float32(sch.scale_dtype().max_representable())
        glob = np.array([np.max(amax) / hs / top], np.float32)
        amax = amax / glob[0]
    s = amax / hs
    s = on_scale_grid(s, sch.scale_dtype()) if on_grid else s
    return s.astype(np.float32).reshape(params_shape(x.shape, sch)), glob


def dynamic_scales(fmt: Format, x: np.ndarray) -> np.ndarray:
    """Per element, the effective scale ``quantize_dynamic`` of the format divides ``x`` by (the oracle's, under
    its default profile: the vectors built on it hold their classes under that profile, the tags say which)."""
    stages = oracle.Stages()
    sch = fmt.scheme(x.shape)
    oracle.run("quantize_dynamic", {"scheme": sch.to_json()}, {"x": x}, stages=stages)
    e = stages.effective_scales.ravel()
    if sch.block_size() is None:
        return np.full(x.shape, e[0], np.float32)
    layout = oracle.BlockLayout(x.shape, sch.block_size())
    return layout.spread(e[: layout.block_count()]).astype(np.float32)


def tie_tensor(fmt: Format, alias: str, shift: int = 0) -> np.ndarray:
    """A weight tensor whose non-maximal elements are replaced by ``m * e`` for midpoints ``m`` of the format's
    code grid (``e`` the effective dynamic scale), moved ``shift`` f32 steps; each block keeps its max |x|, so
    its scale stays ``e``. With ``shift`` 0, only the elements where ``m * e / e`` is ``m`` exactly are ties."""
    r = rng(alias)
    shape = SMALL
    x = weights("normal", shape, r)
    e = dynamic_scales(fmt, x)
    mids = code_midpoints(fmt.value)
    out = x.copy()
    for rows, cols in _blocks(fmt, shape):
        block = x[rows, cols]
        keep = np.abs(block) == np.max(np.abs(block))
        eb = e[rows, cols]
        m = r.choice(mids, size=block.shape) * r.choice(np.float32([-1, 1]), size=block.shape)
        t = (m * eb).astype(np.float32)
        if shift:
            t = np.nextafter(t, np.float32(np.inf if shift > 0 else -np.inf) * np.sign(t))
        fits = (np.abs(t) < np.max(np.abs(block))) & ~keep
        out[rows, cols] = np.where(fits, t, block)
    return out


def _with_blocks(x: np.ndarray, fmt: Format, fill) -> np.ndarray:
    """``x`` with its first block (the whole tensor when per-tensor) set by ``fill(block_shape)``."""
    x = x.copy()
    rows, cols = _blocks(fmt, x.shape)[0]
    x[rows, cols] = fill(x[rows, cols].shape)
    return x


def dynamic_cases(fmt: Format) -> list:
    out = []
    for i, dist in enumerate(DISTRIBUTIONS):
        for shape in (_shapes(fmt)[i], _shapes(fmt)[(i + 3) % len(_shapes(fmt))]):
            name = f"{dist}-{shape[0]}x{shape[1]}"
            x = weights(dist, shape, rng(f"{slug(fmt)}/{name}"))
            out.append(_qd(fmt, name, x, f"{dist} weights, {shape[0]}x{shape[1]}: the codes and scales burn "
                                         "stores for a layer", tags=WEIGHT_LIKE))
    base = f"quantize_dynamic/{slug(fmt)}"
    sd = fmt.scheme(SMALL).scale_dtype()
    hs = float(fmt.value.range()[1])
    small = weights("normal", SMALL, rng(f"{base}/small"))
    if fmt.block is not None and fmt.tensor_dtype is not None:  # two-level: the block's scale is normalized against the global: a tiny block underflows
        underflow = float(np.max(np.abs(small))) * 2.0**-24
    else:
        underflow = max(hs * smallest(sd) / 8, F32_DENORM)
    out += [
        _qd(fmt, "ties", tie_tensor(fmt, f"{base}/ties"), "exact midpoints of the code grid times the block's "
            "own scale: the tie rule decides every such code"),
        _qd(fmt, "near-ties-up", tie_tensor(fmt, f"{base}/near-ties-up", 1),
            "one f32 step above the midpoints: rounds away from the tie on every backend that divides exactly"),
        _qd(fmt, "near-ties-down", tie_tensor(fmt, f"{base}/near-ties-down", -1),
            "one f32 step below the midpoints"),
        _qd(fmt, "zero-block", _with_blocks(small, fmt, lambda s: np.zeros(s, np.float32)),
            "an all-zero block (the whole tensor when per-tensor): a scale of 0 and what each backend does with it"),
        _qd(fmt, "scale-overflow", _with_blocks(small, fmt, lambda s: _alternating(s, min(
            4 * hs * sd.max_representable(), F32_MAX))),
            f"a block whose max |x| / {hs:g} is past {sd.name}'s largest value ({sd.max_representable():g}) (a "
            "two-level split normalizes it back under the top): the scale saturates or overflows"),
        _qd(fmt, "scale-underflow", _with_blocks(small, fmt, lambda s: _alternating(s, underflow)),
            f"a block whose scale is below {sd.name}'s smallest positive value ({smallest(sd):g}): the scale "
            "rounds up to it or to 0"),
        *([_qd(fmt, "scale-subnormal", _with_blocks(small, fmt, lambda s: _alternating(s, hs * 2.0**-130 if sd is
                                                              ScaleDtype.F32 else hs * 2.0**-17)),
               f"a block whose scale lands in {sd.name}'s subnormal range")] if sd in (ScaleDtype.F32, ScaleDtype.F16)
          else []),
        _qd(fmt, "subnormal-inputs", np.where(np.arange(small.size).reshape(SMALL) % 3 == 0,
                                               np.float32(F32_DENORM * 7), small).astype(np.float32),
            "f32 subnormals among normal weights: they quantize to 0 unless a flush changes the scale"),
        _qd(fmt, "inf", _put(small, (0, 5), np.inf), "+inf in a block: the scale is inf, the block's codes are "
            "what each backend's division and NaN rule make of x / inf"),
        _qd(fmt, "nan", _put(small, (1, 3), np.nan), "a NaN in a block: min/max skip or propagate it"),
        _qd(fmt, "f16-input", small.astype(np.float16), "f16 weights: the dynamic scale is computed in f16"),
        _qd(fmt, "bf16-input", small.astype(ml_dtypes.bfloat16), "bf16 weights: the dynamic scale is "
            "computed in bf16"),
    ]
    if fmt.block is not None and fmt.tensor_dtype is not None:
        out += global_rounding_cases(fmt)
    if len(fmt.stores) > 1:
        x = weights("normal", SMALL, rng(f"{base}/store"))
        out.append(_qd(fmt, f"store-{fmt.stores[1].lower()}", x, f"the format stored {fmt.stores[1]}",
                       store=fmt.stores[1]))
    return out


def global_rounding_tensor(fmt: Format, dist: str, shape, alias: str) -> np.ndarray:
    """Weights whose largest ``|x|`` (``a``) is moved up, one f32 step at a time, to the first value at which the
    two-level global burn computes, ``f32(f32(2a / span) / M)`` (§3.1: the block scale first, then the block
    dtype's top ``M``), differs from both one-step shortcuts a port writes, ``f32(a / (h · M))`` and
    ``f32(a · f32(1 / (h · M)))`` (``h`` half the code span): about one tensor in six is such a tensor."""
    x = weights(dist, shape, rng(alias))
    h = np.float32(fmt.value.range()[1])
    top = np.float32(fmt.scheme(shape).scale_dtype().max_representable())
    where = np.unravel_index(np.argmax(np.abs(x)), shape)
    a = np.abs(x[where])
    while True:
        burn = np.float32(np.float32(np.float32(2) * a / (2 * h)) / top)
        if burn != np.float32(a / (h * top)) and burn != np.float32(a * (np.float32(1) / (h * top))):
            break
        a = np.nextafter(a, np.float32(np.inf))
    x[where] = np.copysign(a, x[where])
    return x


def global_rounding_cases(fmt: Format) -> list:
    """A two-level format's global, on weights whose amax the shortcuts round differently (see above)."""
    out = []
    for dist, shape in zip(("normal", "student-t", "outliers", "laplace"), SHAPES):
        name = f"global-rounding-{dist}-{shape[0]}x{shape[1]}"
        x = global_rounding_tensor(fmt, dist, shape, f"{slug(fmt)}/{name}")
        out.append(_qd(fmt, name, x, f"{dist} weights whose amax a gives a global f32(f32(2a / span) / M) one f32 "
                                     "step from a / (h · M) in one division and from a times its reciprocal: the "
                                     "order of the global's divisions decides its bits", spec=("§3.1",),
                       tags=WEIGHT_LIKE))
    return out


def _alternating(shape, v: float) -> np.ndarray:
    """``+v, -v, +v, ...`` of ``shape`` (in f32)."""
    signs = np.where(np.arange(math.prod(shape)) % 2, -1.0, 1.0).reshape(shape)
    return (signs * v).astype(np.float32)


def _put(x: np.ndarray, where, value) -> np.ndarray:
    x = x.copy()
    x[where] = value
    return x


def explicit_cases(fmt: Format) -> list:
    out = []
    for i, dist in enumerate(DISTRIBUTIONS):
        for j, shape in enumerate((_shapes(fmt)[i], _shapes(fmt)[(i + 3) % len(_shapes(fmt))])):
            name = f"{dist}-{shape[0]}x{shape[1]}"
            x = weights(dist, shape, rng(f"{slug(fmt)}/{name}/q"))
            on_grid = j == 0
            s, g = caller_scales(fmt, x, on_grid)
            out.append(_q(fmt, name + ("" if on_grid else "-raw-scales"), x, s, g,
                          f"{dist} weights with the caller's max|x|/half-span scales "
                          + ("on the scale dtype's grid" if on_grid else "as raw f32 (off the grid): burn holds "
                             "them as given or rounds them, per backend"), api="tensor" if i % 2 else "backend",
                          tags=WEIGHT_LIKE))
    base = f"quantize/{slug(fmt)}"
    sd = fmt.scheme(SMALL).scale_dtype()
    small = weights("normal", SMALL, rng(f"{base}/small"))
    s, g = caller_scales(fmt, small)
    mids = code_midpoints(fmt.value)
    r = rng(f"{base}/ties")
    e = _spread(fmt, s, g, SMALL)
    m = r.choice(mids, size=SMALL) * r.choice(np.float32([-1, 1]), size=SMALL)
    tie = (m * e).astype(np.float32)
    first = np.unravel_index(0, s.shape)

    def scales_with(v):
        t = s.copy()
        t[first] = v
        return t

    out += [
        _q(fmt, "ties", tie, s, g, "midpoints of the code grid times scales on the grid: exact ties of x / s"),
        _q(fmt, "near-ties-up", np.nextafter(tie, np.float32(np.inf) * np.sign(tie)), s, g,
           "one f32 step above each midpoint"),
        _q(fmt, "near-ties-down", np.nextafter(tie, np.float32(0)), s, g, "one f32 step below each midpoint"),
        _q(fmt, "zero-scale", small, scales_with(0.0), g, "a scale of 0 for the first block: burn's guards",
           api="backend"),
        _q(fmt, "scale-overflow", small, scales_with(np.float32(np.inf if sd is ScaleDtype.F32 else
                                                                 min(2 * sd.max_representable(), F32_MAX))), g,
           f"a scale past {sd.name}'s largest value ({sd.max_representable():g}): held as given or saturated"),
        _q(fmt, "scale-underflow", small, scales_with(np.float32(max(smallest(sd) / 4, F32_DENORM))), g,
           f"a scale below {sd.name}'s smallest positive value: held as given, rounded up, or 0"),
        _q(fmt, "subnormal-inputs", np.where(np.arange(small.size).reshape(SMALL) % 3 == 0,
                                             np.float32(F32_DENORM * 5), small).astype(np.float32), s, g,
           "f32 subnormal inputs: x / s rounds to 0 (or not, if the backend flushes)"),
        _q(fmt, "inf", _put(small, (0, 1), np.inf), s, g, "+inf in x: saturates to the largest code or NaN rule"),
        _q(fmt, "nan", _put(small, (2, 7), np.nan), s, g, "NaN in x: what each backend's NaN rule stores"),
        _q(fmt, "f16-input", small.astype(np.float16), s, g, "f16 x with f32 scales"),
    ]
    if sd is not ScaleDtype.UE8M0:  # UE8M0 has no subnormals
        sub = smallest(sd) * 3 if sd is not ScaleDtype.UE4M3 else 2.0**-8
        out.append(_q(fmt, "subnormal-scale", small, scales_with(np.float32(sub)), g,
                      f"a scale in {sd.name}'s subnormal range"))
    if len(fmt.stores) > 1:
        out.append(_q(fmt, f"store-{fmt.stores[1].lower()}", small, s, g, f"the format stored {fmt.stores[1]}",
                      store=fmt.stores[1]))
    return out


def _spread(fmt: Format, s: np.ndarray, g, shape) -> np.ndarray:
    """Per element, the effective scale ``g * s`` (or ``s``) of its block."""
    e = s.ravel() * (g[0] if g is not None else np.float32(1))
    out = np.empty(shape, np.float32)
    for k, (rows, cols) in enumerate(_blocks(fmt, shape)):
        out[rows, cols] = e[k]
    return out


def codes_of(fmt: Format, v: np.ndarray) -> np.ndarray:
    """Codes for scaled values ``v`` (about ``x / s``), as the i8 codes dequantize takes: integers rounded and
    clamped, E4M3 bit patterns, E2M1 nibbles in the low four bits."""
    name = fmt.value.name
    if name == "E4M3":
        return np.clip(v, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.int8)
    if name == "E2M1":
        return np.clip(v, -6, 6).astype(ml_dtypes.float4_e2m1fn).view(np.uint8).astype(np.int8) & 0x0F
    lo, hi = fmt.value.range()
    return np.clip(np.rint(v), lo, hi).astype(np.int8)


def dequantize_cases(fmt: Format) -> list:
    out = []
    hs = float(fmt.value.range()[1])
    for i, dist in enumerate(DISTRIBUTIONS):
        for shape in (_shapes(fmt)[i], _shapes(fmt)[(i + 3) % len(_shapes(fmt))]):
            name = f"{dist}-{shape[0]}x{shape[1]}"
            x = weights(dist, shape, rng(f"{slug(fmt)}/{name}/dq"))
            s, g = caller_scales(fmt, x)
            with np.errstate(divide="ignore", invalid="ignore"):  # a block scale of 0: its codes are 0
                codes = codes_of(fmt, np.nan_to_num(x / _spread(fmt, s, g, shape), posinf=0, neginf=0))
            out.append(_dq(fmt, name, codes, s, g, f"the codes and scales of {dist} weights, as a loader "
                                                   "reads them: dequantize is e * code", tags=WEIGHT_LIKE))
    base = f"dequantize/{slug(fmt)}"
    sd = fmt.scheme(SMALL).scale_dtype()
    small = weights("normal", SMALL, rng(f"{base}/small"))
    s, g = caller_scales(fmt, small)
    codes = codes_of(fmt, small / _spread(fmt, s, g, SMALL))
    first = np.unravel_index(0, s.shape)

    def scales_with(v):
        t = s.copy()
        t[first] = v
        return t

    top = codes_of(fmt, np.where(np.arange(small.size).reshape(SMALL) % 2, -hs, hs).astype(np.float32))
    out += [
        _dq(fmt, "zero-scale", codes, scales_with(0.0), g, "a stored scale of 0: ndarray substitutes, others "
            "multiply by 0", tags=("class:zero-scale",)),
        _dq(fmt, "scale-max", top, scales_with(np.float32(sd.max_representable())), g,
            f"{sd.name}'s largest scale ({sd.max_representable():g}) times the largest codes"),
        _dq(fmt, "scale-smallest", top, scales_with(np.float32(smallest(sd))), g,
            f"{sd.name}'s smallest positive scale ({smallest(sd):g}): products in the subnormal range"),
        _dq(fmt, "extreme-codes", top, s, g, "every code at the top or bottom of the value's range"),
        _dq(fmt, "zero-codes", np.zeros(SMALL, np.int8), s, g, "all-zero codes: +0 (or -0 from a negative "
            "zero code pattern) times the scale"),
        _dq(fmt, "f16-output", top, scales_with(np.float32(min(sd.max_representable(), 2.0**20))), g,
            "f16 output: products past 65504 overflow to inf, in the backend's rounding order", dtype="f16"),
        _dq(fmt, "bf16-output", codes, s, g, "bf16 output: one rounding of the f32 product (or two)",
            dtype="bf16"),
        _dq(fmt, "f16-output-weights", codes, s, g, "f16 output of ordinary weights", dtype="f16"),
        _dq(fmt, "alternating-scales", codes, np.where(np.arange(s.size).reshape(s.shape) % 2,
                                                        np.float32(smallest(sd)), np.float32(sd.max_representable())),
            g, "block scales alternating between the dtype's largest and smallest: a scale read from the wrong "
               "block is off by the whole range"),
        _dq(fmt, "sparse-codes", np.where(np.arange(small.size).reshape(SMALL) % 9 == 0, top, 0).astype(np.int8),
            s, g, "pruned weights: mostly zero codes, a few at the range's ends"),
    ]
    if sd is not ScaleDtype.UE8M0:
        sub = smallest(sd) * 3 if sd is not ScaleDtype.UE4M3 else 2.0**-8
        out.append(_dq(fmt, "subnormal-scale", codes, scales_with(np.float32(sub)), g,
                       f"a scale in {sd.name}'s subnormal range"))
    if fmt.value.name == "E4M3":
        nan = codes.copy()
        nan.flat[::7] = np.int8(0x7F)
        out.append(_dq(fmt, "nan-codes", nan, s, g, "E4M3 code 0x7F is NaN: decoded by value, or read as the "
                                                     "integer 127"))
    if g is not None:
        out.append(_dq(fmt, "tiny-global", codes, s, np.float32([2.0**-120]), "a global near the bottom of f32: "
                                                                              "global * s underflows"))
    if len(fmt.stores) > 1:
        out.append(_dq(fmt, f"store-{fmt.stores[1].lower()}", codes, s, g, f"the format stored {fmt.stores[1]}",
                       store=fmt.stores[1]))
    return out


def cases():
    out = []
    for fmt in FORMATS.values():
        out += dynamic_cases(fmt) + explicit_cases(fmt) + dequantize_cases(fmt)
    return out
