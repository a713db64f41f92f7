"""Named alternatives of burn's arithmetic, tested against a backend's own output (issue 21).

The diagnosis asks, output by output, which alternative reproduces what the backend returned. An alternative is
either a profile *override* relative to the judged profile (``tie: even``, ``zero_scale: none``: every value of
every arithmetic choice field, so a mutant is a difference from the profile under judgement whatever profile a
backend claims) or an *element model* for a step no profile has (ties toward zero, a cast through int32 before
the clamp, f64 arithmetic, the unrounded scale, a scale rounded down or to nearest, whatever the kernel).

Codes are judged against the backend's *own* scales: the request is re-derived as ``quantize(x, the backend's
scales)`` (:class:`Rederived`), so wrong scales with codes that follow from them are told apart from codes
that are wrong as well. An alternative explains an output when it reproduces every failing element; the ones it
gets wrong among the elements the backend got right are its *contradictions* (such a match never leads).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType

import ml_dtypes
import numpy as np

from oracle import Stages
from oracle import choices as c
from oracle.blocks import layout_of
from oracle.quantize import divide
from oracle.rounding import ROUNDERS, minifloat_codes, minifloat_values, round_half_away, round_up
from oracle.scheme import QuantScheme, QuantValue, ScaleDtype

from . import tensorio
from .backends.oracle import run_oracle
from .mutants import VARIANTS, Mutant
from .protocol import Result

# The behaviours whose every value is an alternative worth trying: a profile field's values (each a behaviour a
# real backend has) and the registered variants of it or of a fixed step (conformance.mutants.VARIANTS). Order =
# preference among alternatives that explain the same elements.
ARITHMETIC = ("tie", "division", "clamp", "zero_scale", "nan_code", "scale_rounding", "scale_arithmetic",
              "float_codes", "two_level_division", "normalized_dtype", "block_layout", "packing", "value_layout")
_CHOICES = {ch.field: ch for ch in (c.TIE, c.DIVISION, c.CLAMP, c.ZERO_SCALE, c.NAN_CODE, c.FLOAT_CODES,
                                    c.VALUE_LAYOUT)}


def _values(name: str) -> list[str]:
    """The field's own values, then its variants' (a missing step, "none", first)."""
    own = list(_CHOICES[name].values) if name in _CHOICES else []
    variants = [value for (f, value) in VARIANTS if f == name and value not in own]
    return sorted(own + variants, key=lambda v: v != "none")


# Short words for the values a report names most (else the Choice's own meaning).
PHRASES = {
    ("tie", "away"): "ties rounded away from zero", ("tie", "even"): "ties rounded to even",
    ("tie", "toward_zero"): "ties rounded toward zero",
    ("division", "divide"): "divides x / s", ("division", "reciprocal"): "multiplies by the reciprocal x * (1 / s)",
    ("division", "f64"): "divides and rounds in f64",
    ("clamp", "after_round"): "clamps after rounding", ("clamp", "before_round"): "clamps before rounding",
    ("clamp", "none"): "no clamp (codes wrap like an i8 cast)",
    ("clamp", "cast_then_clamp"): "casts to the minifloat without saturating, then clamps",
    ("clamp", "via_int32"): "casts to int32 before clamping (an x/s outside i32 becomes i32::MIN, as a C cast "
                            "on x86 gives)",
    ("zero_scale", "point_one"): "a zero scale divides as 0.1, as burn-ndarray does",
    ("zero_scale", "min_positive"): "a non-positive scale becomes the smallest positive one, as burn-flex does",
    ("zero_scale", "none"): "no zero-scale guard, as burn-cubecl's kernels do",
    ("scale_rounding", "up"): "scale rounded up to the scale dtype",
    ("scale_rounding", "nearest"): "scale rounded to nearest instead of up",
    ("scale_rounding", "down"): "scale rounded down instead of up",
    ("scale_rounding", "down_in_subnormals"): "scale rounded down in the scale dtype's subnormal range (up elsewhere)",
    ("scale_rounding", "unrounded"): "scale not rounded to the scale dtype",
    ("shared_scale", "ocp_mx"): "the OCP MX shared scale 2^(floor(log2(amax)) - emax_elem) (OCP MX v1.0, section 6.3), "
                                  "where burn rounds amax / max_elem up to a power of two (one UE8M0 step higher "
                                  "when amax's significand exceeds max_elem's)",
    ("scale_source", "unrounded"): "divided by the unrounded scale, which is rounded only when stored",
    ("scale_arithmetic", "f64"): "scales computed in f64",
    ("minifloat_tie", "away"): "ties between two minifloat codes rounded away from zero (burn's conversions round "
                               "them to even)",
    ("minifloat_tie", "toward_zero"): "ties between two minifloat codes rounded toward zero (burn's conversions "
                                      "round them to even)",
}
# The class a family of alternatives forms in ``qconform fuzz`` (one cause, one class).
FAMILIES = {"tie": "tie-breaking rule", "minifloat_tie": "tie-breaking rule", "division": "division",
            "clamp": "clamping", "zero_scale": "zero-scale guard",
            "nan_code": "NaN code", "scale_rounding": "scale rounding", "scale_source": "scale used for the codes",
            "scale_arithmetic": "scale arithmetic", "float_codes": "minifloat codes",
            "shared_scale": "MX shared scale rule"}


def phrase(field: str, value: str) -> str:
    if (field, value) in PHRASES:
        return PHRASES[field, value]
    if field in _CHOICES and value in _CHOICES[field].meanings:
        return _CHOICES[field].meanings[value]
    variant = VARIANTS.get((field, value))
    return variant.meaning if variant is not None else f"{field}: {value}"


@dataclass(frozen=True)
class Alternative:
    """One named alternative: ``overrides`` on the judged profile, or ``model`` (an element model)."""
    deciding: str                  # "tie: even" (the field and value that decide it)
    family: str                    # the field: the fuzz class of its cause
    text: str
    overrides: tuple = ()          # ((field, value), ...)
    model: object = None           # (Rederived) -> the codes it predicts, or None where it does not apply


def overrides_of(judged) -> list[Alternative]:
    """Every other value of every arithmetic behaviour, as an override of the judged profile."""
    out = []
    for name in ARITHMETIC:
        for value in _values(name):
            if with_overrides(judged, ((name, value),)) is not None:
                out.append(Alternative(f"{name}: {value}", name, phrase(name, value), ((name, value),)))
    return out


def with_overrides(judged, overrides):
    """The judged profile with ``overrides`` (field values or variants, applied like a mutant's), or None when
    they change nothing there or form no valid profile."""
    alternative = Mutant("alternative", "an alternative of the judged profile", judged.name,
                         MappingProxyType(dict(overrides)))
    try:
        return alternative.on(judged) if alternative.applies_to(judged) else None
    except (c.ProfileError, TypeError, ValueError, KeyError):
        return None


# --- the backend's own scales ---------------------------------------------------------------------------------

QUANTIZE_OPS = ("quantize", "quantize_dynamic")


@dataclass
class Rederived:
    """A quantize-family vector re-derived from the backend's returned scales under the judged profile."""
    vector: object
    judged: object
    scheme: QuantScheme
    request: tuple              # (op, params, inputs): quantize(x, backend scales[, backend global])
    stages: Stages              # the judged profile's stages of that request
    codes: np.ndarray           # the codes the judged profile gives with the backend's scales
    got: np.ndarray             # the backend's codes
    pre_round: np.ndarray | None  # the scales before rounding to the scale dtype (burn's)

    @property
    def scaled(self) -> np.ndarray:
        """``x / s`` with the backend's scale (the judged profile's division)."""
        return self.stages.scaled


def rederive(vector, judged, outcome) -> Rederived | None:
    """``quantize(x, the backend's scales)`` under the judged profile, if the vector is a quantize-family one
    whose re-derivation from its *expected* scales gives its expected codes (else the layout of scales is not one
    this re-derivation understands, and codes are judged as a whole)."""
    if vector.op not in QUANTIZE_OPS or not isinstance(outcome, Result) or "codes" not in outcome.outputs:
        return None
    exp = vector.expected[judged.name]
    if exp.error is not None or "scales" not in outcome.outputs or "x" not in vector.inputs:
        return None
    scheme = QuantScheme.from_json(vector.params["scheme"])

    def request(outputs):
        inputs = {"x": vector.inputs["x"], "scales": np.asarray(outputs["scales"], np.float32)}
        if "global" in outputs:
            inputs["global"] = np.asarray(outputs["global"], np.float32)
        params = {"scheme": vector.params["scheme"]}
        if vector.op == "quantize" and "api" in vector.params:
            params["api"] = vector.params["api"]
        return "quantize", params, inputs

    if not same_bits(codes_of(request(exp.outputs), judged), exp.outputs["codes"]):
        return None
    req = request(outcome.outputs)
    stages = Stages()
    mine = _run(req, judged, stages)
    if not isinstance(mine, Result) or stages.scaled is None:
        return None
    got = outcome.outputs["codes"]
    if mine.outputs["codes"].shape != got.shape:
        return None
    pre = _pre_round(vector, exp)
    return Rederived(vector, judged, scheme, req, stages, mine.outputs["codes"], got, pre)


def _pre_round(vector, exp) -> np.ndarray | None:
    """The scales as computed, before ``round_up`` onto the scale dtype: a two-level scheme's normalized block
    scales, else the computed (dynamic) or given (quantize) ones."""
    st = exp.stages
    if vector.op == "quantize_dynamic":
        return st.normalized_scales if st.normalized_scales is not None else st.raw_scales
    return np.asarray(vector.inputs["scales"], np.float32).ravel()


def _run(request, profile, stages=None):
    op, params, inputs = request
    try:
        return run_oracle(op, params, inputs, profile, stages=stages)
    except Exception:  # noqa: BLE001 - an alternative the oracle cannot run explains nothing
        return None


def codes_of(request, profile):
    r = _run(request, profile)
    return r.outputs.get("codes") if isinstance(r, Result) else None


def same_bits(a, b) -> bool:
    if a is None or b is None or a.shape != b.shape:
        return False
    return bool((tensorio.bits(a) == tensorio.bits(b)).all())


# --- element models: steps no profile has ---------------------------------------------------------------------


def _integer_codes(r: Rederived) -> bool:
    return not r.scheme.value.is_float and r.got.shape == r.scaled.shape


def _clip(rounded, r: Rederived):
    a, b = r.scheme.value.range()
    fin = np.isfinite(r.scaled)
    out = r.codes.copy()  # NaN positions keep the judged profile's NaN rule
    out[fin] = np.clip(rounded[fin], a, b).astype(np.int8)
    return out


def _ties_toward_zero(r: Rederived):
    if not _integer_codes(r):
        return None
    v = r.scaled.astype(np.float64)
    with np.errstate(invalid="ignore"):
        tie = np.abs(v - np.trunc(v)) == 0.5
        return _clip(np.where(tie, np.trunc(v), round_half_away(r.scaled).astype(np.float64)), r)


def _via_int32(r: Rederived):
    """``clamp(i32(round(x / s)))`` with a C cast on x86 (``cvttss2si``): a value outside i32, infinities
    included, becomes i32::MIN, which the clamp then takes to the low end of the range."""
    if not _integer_codes(r):
        return None
    a, b = r.scheme.value.range()
    with np.errstate(invalid="ignore"):
        rounded = ROUNDERS[r.judged.tie](r.scaled).astype(np.float64)
        fits = np.isfinite(rounded) & (rounded >= -(2.0**31)) & (rounded < 2.0**31)
    wrapped = np.where(fits, rounded, -(2.0**31))
    out = r.codes.copy()
    nan = np.isnan(r.scaled)
    out[~nan] = np.clip(wrapped[~nan], a, b).astype(np.int8)
    return out


def _per_element_scale(r: Rederived):
    """The effective scale each element was divided by, if spreading the judged stages reproduces their x/s."""
    eff = r.stages.effective_scales
    if eff is None:
        return None
    shape = r.scaled.shape
    try:
        e = np.asarray(layout_of(shape, r.scheme).spread(np.asarray(eff, np.float32)), np.float32)
    except (ValueError, IndexError):
        return None
    x = np.asarray(r.request[2]["x"])
    if e.shape != shape or x.dtype != np.float32 or not same_bits(divide(x, e, r.judged).astype(np.float32), r.scaled):
        return None
    return e


def _in_f64(r: Rederived):
    """``x / s`` and its rounding (the judged tie rule) in f64."""
    if not _integer_codes(r):
        return None
    e = _per_element_scale(r)
    if e is None:
        return None
    with np.errstate(all="ignore"):
        v = np.asarray(r.request[2]["x"], np.float64) / e.astype(np.float64)
        frac = np.abs(v - np.trunc(v))
        up = np.trunc(v) + np.sign(v)
        if r.judged.tie == "even":
            rounded = np.rint(v)
        else:
            rounded = np.where(frac >= 0.5, up, np.trunc(v))
    out = r.codes.copy()
    fin = np.isfinite(v)
    a, b = r.scheme.value.range()
    out[fin] = np.clip(rounded[fin], a, b).astype(np.int8)
    return out


def _unrounded_scale(r: Rederived):
    """Codes from the scale before its rounding: the re-derivation with the scales' dtype widened to F32."""
    if r.pre_round is None or r.scheme.is_two_level():
        return None
    scheme = dict(r.vector.params["scheme"])
    if scheme.get("block"):
        scheme["block"] = {**scheme["block"], "dtype": "F32"}
    else:
        scheme["tensor"] = None
    op, params, inputs = r.request
    return codes_of((op, {**params, "scheme": scheme}, {**inputs, "scales": r.pre_round}), r.judged)


def minifloat_midpoints(v: np.ndarray, value: QuantValue):
    """For scaled values ``v`` of a minifloat value (E4M3, E5M2, E2M1), clamped to its range as burn's conversions
    clamp them: ``(tie, below, above)``, where ``tie`` marks the values exactly halfway between two neighbouring
    codes of the format's grid and ``below``/``above`` are those two magnitudes (NaN and grid values are no tie)."""
    lo, hi = value.range()
    with np.errstate(invalid="ignore"):
        a = np.abs(np.clip(np.asarray(v, np.float32), np.float32(lo), np.float32(hi))).astype(np.float64)
    grid = _minifloat_grid(value)
    fin = np.isfinite(a)
    i = np.clip(np.searchsorted(grid, np.where(fin, a, 0.0)), 1, grid.size - 1)
    below, above = grid[i - 1], grid[i]
    tie = fin & (a > below) & (a < above) & (a - below == above - a)
    return tie, below, above


@functools.cache
def _minifloat_grid(value: QuantValue) -> np.ndarray:
    """The format's finite non-negative values, ascending (every code's value, as burn decodes it)."""
    values = minifloat_values(np.arange(256, dtype=np.uint8).view(np.int8), value).astype(np.float64)
    grid = np.unique(values[np.isfinite(values) & (values >= 0)])
    grid.flags.writeable = False  # shared by every call (cached)
    return grid


def is_minifloat_encoding(v: np.ndarray, codes: np.ndarray, value: QuantValue) -> bool:
    """Whether ``codes`` are burn's minifloat conversions of the scaled values ``v`` (clamped, nearest, ties to
    even): the judged profile encodes this value as a minifloat (``float_codes``), not as rounded integers."""
    if not value.is_float or np.shape(v) != np.shape(codes):
        return False
    lo, hi = value.range()
    with np.errstate(invalid="ignore"):
        mine = minifloat_codes(np.clip(np.asarray(v, np.float32), np.float32(lo), np.float32(hi)), value)
    fin = np.isfinite(np.asarray(v, np.float32))
    return bool((mine[fin] == np.asarray(codes)[fin]).all())


def _minifloat_ties(rule: str):
    def model(r: Rederived):
        value = r.scheme.value
        if not is_minifloat_encoding(r.scaled, r.codes, value):
            return None
        tie, below, above = minifloat_midpoints(r.scaled, value)
        if not tie.any():
            return None
        sign = np.where(np.signbit(np.asarray(r.scaled, np.float32)), -1.0, 1.0)
        out = r.codes.copy()
        chosen = (above if rule == "away" else below) * sign
        out[tie] = minifloat_codes(chosen[tie].astype(np.float32), value)
        return out
    return model


CODE_MODELS = [
    Alternative("minifloat_tie: away", "minifloat_tie", phrase("minifloat_tie", "away"),
                model=_minifloat_ties("away")),
    Alternative("minifloat_tie: toward_zero", "minifloat_tie", phrase("minifloat_tie", "toward_zero"),
                model=_minifloat_ties("toward_zero")),
    Alternative("tie: toward_zero", "tie", phrase("tie", "toward_zero"), model=_ties_toward_zero),
    Alternative("clamp: via_int32", "clamp", phrase("clamp", "via_int32"), model=_via_int32),
    Alternative("division: f64", "division", phrase("division", "f64"), model=_in_f64),
    Alternative("scale_source: unrounded", "scale_source", phrase("scale_source", "unrounded"),
                model=_unrounded_scale),
]


# --- scale models: the stored scales against the computed ones ------------------------------------------------


def _grid_dtype(dtype: ScaleDtype):
    return {ScaleDtype.F16: np.float16, ScaleDtype.BF16: ml_dtypes.bfloat16,
            ScaleDtype.UE4M3: ml_dtypes.float8_e4m3fn, ScaleDtype.UE8M0: ml_dtypes.float8_e8m0fnu}.get(dtype)


def _nearest(pre: np.ndarray, dtype: ScaleDtype):
    """A plain cast onto the dtype (nearest, ties to even; past F16's range, infinity as a cast gives it). The
    mutant scale-nearest, an override, saturates instead: both are "rounded to nearest"."""
    t = _grid_dtype(dtype)
    if t is None:
        return None
    with np.errstate(all="ignore"):
        if dtype is ScaleDtype.UE4M3:  # the e4m3fn cast has no infinity: it saturates, as burn's codec does
            pre = np.clip(pre, -dtype.max_representable(), dtype.max_representable())
        return pre.astype(t).astype(np.float32)


def _down(pre: np.ndarray, dtype: ScaleDtype):
    """The largest value of the dtype not above the scale (``round_up``'s mirror)."""
    if dtype is ScaleDtype.F32 or dtype is ScaleDtype.UE8M0:
        return None
    with np.errstate(all="ignore"):
        up = round_up(pre, dtype)
        return np.where(up > pre, step_below(up, dtype), up).astype(np.float32)


def _down_in_subnormals(pre: np.ndarray, dtype: ScaleDtype):
    """Rounded down (truncated) where the scale falls in the dtype's subnormal range, up elsewhere: a codec whose
    subnormal path truncates."""
    down, grid = _down(pre, dtype), dtype.grid
    if down is None or grid is None or grid.min_normal is None or not (pre < grid.min_normal).any():
        return None
    with np.errstate(all="ignore"):
        return np.where(pre < grid.min_normal, down, round_up(pre, dtype)).astype(np.float32)


def step_below(s: np.ndarray, dtype: ScaleDtype) -> np.ndarray:
    """The next value of the dtype's grid below each (on-grid, non-negative) scale."""
    t = _grid_dtype(dtype)
    bits = np.asarray(s, np.float32).astype(t).view(np.uint8 if np.dtype(t).itemsize == 1 else np.uint16)
    return np.where(bits > 0, bits - 1, bits).astype(bits.dtype).view(t).astype(np.float32)


def scale_models(vector, judged, got: np.ndarray) -> list[tuple[Alternative, np.ndarray]]:
    """Scale alternatives tested on the stored scales: rounded to nearest, rounded down, not rounded."""
    exp = vector.expected[judged.name]
    if vector.op not in QUANTIZE_OPS or exp.error is not None or exp.stages is None:
        return []
    pre = _pre_round(vector, exp)
    scheme = QuantScheme.from_json(vector.params["scheme"])
    if pre is None or pre.size != got.size:
        return []
    pre = pre.reshape(got.shape)
    dtype = scheme.scale_dtype()
    burns = np.asarray(exp.outputs.get("scales", pre), np.float32).reshape(got.shape)
    # a rounding rule decides only a positive finite scale: a zero block's or a non-finite scale is whatever the
    # backend's guards make of it, which these alternatives say nothing about (burn's answer stands there)
    decided = (pre > 0) & np.isfinite(pre)
    out = []
    for value, predicted in (("nearest", _nearest(pre, dtype)), ("down", _down(pre, dtype)),
                             ("down_in_subnormals", _down_in_subnormals(pre, dtype)),
                             ("unrounded", pre.astype(np.float32))):
        if predicted is not None:  # burn always rounds up
            out.append((_scale_rounding(value), np.where(decided, predicted, burns).astype(np.float32)))
    ocp = _ocp_mx(vector, exp, scheme, burns)
    if ocp is not None:
        out.append((Alternative("shared_scale: ocp_mx", "shared_scale", phrase("shared_scale", "ocp_mx")), ocp))
    return out


def _scale_rounding(value: str) -> Alternative:
    return Alternative(f"scale_rounding: {value}", "scale_rounding", phrase("scale_rounding", value))


def _ocp_mx(vector, exp, scheme: QuantScheme, burns: np.ndarray) -> np.ndarray | None:
    """The shared scale an OCP MX encoder computes for each block of a one-level minifloat scheme with UE8M0
    scales: ``2^(floor(log2(amax)) - emax_elem)``, ``emax_elem`` the exponent of the element format's largest
    normal (E4M3 8, E5M2 15, E2M1 2), clamped to E8M0's range. burn's ``round_up(amax / max_elem)`` is the same
    power of two or one above it. Decided by ``amax`` itself (burn's ``2 * amax`` may overflow where OCP's rule
    still gives a scale); a zero or non-finite ``amax`` keeps burn's."""
    st = exp.stages
    if vector.op != "quantize_dynamic" or scheme.scale_dtype() is not ScaleDtype.UE8M0 or \
            scheme.num_levels() != 1 or not scheme.value.is_float or st.min is None or st.max is None:
        return None
    amax = np.maximum(np.abs(np.asarray(st.min, np.float64)), np.abs(np.asarray(st.max, np.float64))).ravel()
    if amax.size != burns.size:
        return None
    emax = int(np.frexp(scheme.value.range()[1])[1]) - 1  # frexp: v = m * 2^e, m in [0.5, 1)
    decided = np.isfinite(amax) & (amax > 0)
    exponent = np.frexp(np.where(decided, amax, 1.0))[1] - 1 - emax
    shared = np.ldexp(1.0, np.clip(exponent, -127, 127)).astype(np.float32)
    return np.where(decided, shared, burns.ravel()).astype(np.float32).reshape(burns.shape)


# --- scale distance on the scale dtype's own grid -------------------------------------------------------------


def grid_index(s: np.ndarray, dtype: ScaleDtype) -> np.ndarray:
    """Each scale's position on the dtype's grid (consecutive values differ by 1; fractional off the grid)."""
    s = np.abs(np.asarray(s, np.float64))
    grid = dtype.grid
    if grid is None:
        return np.asarray(s, np.float32).view(np.int32).astype(np.float64)
    bits = np.abs(np.asarray(s, np.float32)).view(np.int32).astype(np.float64) / grid.bit_step
    if grid.min_normal is None:
        return bits
    normal_at = float(np.float32(grid.min_normal).view(np.int32)) / grid.bit_step
    below = grid.min_normal / grid.spacing
    return np.where(s < grid.min_normal, s / grid.spacing, below + bits - normal_at)


def is_subnormal(s: np.ndarray, dtype: ScaleDtype) -> np.ndarray:
    grid = dtype.grid
    if grid is None or grid.min_normal is None:
        return np.zeros(np.shape(s), bool)
    return (np.abs(s) < grid.min_normal) & (s != 0)


__all__ = ["ARITHMETIC", "CODE_MODELS", "FAMILIES", "Alternative", "Rederived", "codes_of", "grid_index",
           "is_minifloat_encoding", "is_subnormal", "minifloat_midpoints", "overrides_of", "phrase", "rederive", "same_bits", "scale_models", "with_overrides"]
