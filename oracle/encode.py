"""Element encoding: ``x / e`` rounded, clamped to the value range, NaN handled, stored as a code (spec §5.2-5.4).

Each rule is a step keyed by a profile field: the clamp order (``clamp``), the tie rule (``tie``, in
``rounding.py``), what a minifloat value's code is (``float_codes``) and the NaN rule (``nan_code``);
``store_codes`` writes the integer a backend keeps.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .choices import CLAMP, FLOAT_CODES, NAN_CODE
from .errors import panic
from .profile import Profile
from .rounding import FP8_DTYPES, ROUNDERS, ROUNDERS_BEFORE_TRUNCATION, minifloat_codes
from .scheme import QuantScheme, QuantValue


def encode(v: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """Round and clamp ``v = x / e`` to the value range, then the stored code, with the profile's NaN rule
    (§5.2-5.4). ``v`` is a temporary the caller hands over: the integer path works in place."""
    return profile.step(ENCODERS)(v, scheme, profile)


def _round_then_clamp(v: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """``clamp(round(v), a, b)``."""
    a, b = scheme.value.range()
    if not scheme.value.is_float:
        return _encode_int(v, a, b, profile)
    return profile.step(FLOAT_ENCODERS)(v, scheme, profile)


def _clamp_then_round(v: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """``round(clamp(v, a, b))`` (flex >= 0.23.0-pre.1, ``burn-flex/src/quant_codes.rs:20-43``). With integer
    bounds and burn's saturating minifloat conversions the codes equal rounding first (every rounding keeps
    ±inf, which either order ends at ±b; see tests/suite/test_mutation_gate.py)."""
    a, b = scheme.value.range()
    np.clip(v, np.float32(a), np.float32(b), out=v)
    return _round_then_clamp(v, scheme, profile)


def _integer_float_codes(v: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """A minifloat value's scaled values rounded to integers like any value's, then stored (``store_codes``)."""
    a, b = scheme.value.range()
    r = np.clip(profile.step(ROUNDERS)(v), np.float32(a), np.float32(b))
    return store_codes(nan_codes(r, a, b, profile), scheme, profile)


def _format_codes(v: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """burn's own minifloat conversion of each scaled value; its NaN codes are the conversion's, not
    ``nan_code``'s."""
    return minifloat_codes(v, scheme.value)


def _kernel_codec_codes(v: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """burn 0.22.1's GPU kernels: the scaled value is clamped to the value range, unrounded (cubek-quant-0.3.1
    ``quantize.rs:34-49``: only the integer formats round), a NaN as the device's clamp returns it (``nan_code``),
    then encoded by cubecl's software codecs, round to nearest even and saturating (``f32_to_fp8_bits``,
    cubecl-core-0.11.3 ``post_processing/minifloat.rs:75-134``; ``float_to_e2m1_bits``, ``fp4.rs:115-160``): the
    same codes as burn's host conversions for every non-NaN value."""
    a, b = scheme.value.range()
    with np.errstate(invalid="ignore"):
        clamped = nan_codes(np.clip(v, np.float32(a), np.float32(b)), a, b, profile)
    return minifloat_codes(clamped, scheme.value)


FLOAT_ENCODERS = FLOAT_CODES.steps({"integer": _integer_float_codes, "format": _format_codes,
                                    "kernel_codecs": _kernel_codec_codes})


def _encode_int(v: np.ndarray, a: float, b: float, profile: Profile) -> np.ndarray:
    """Integer codes in place, the rounding's final ``trunc`` folded into the int8 cast (which truncates toward
    zero): exact because the clamp bounds are integers, so truncating and clamping commute (and, as they lie
    within i8, flex's saturating cast has nothing left to saturate)."""
    v = profile.step(ROUNDERS_BEFORE_TRUNCATION)(v)
    np.clip(v, np.float32(a), np.float32(b), out=v)
    return nan_codes(v, a, b, profile).astype(np.int8)


ENCODERS = CLAMP.steps({"after_round": _round_then_clamp, "before_round": _clamp_then_round})


def nan_codes(r: np.ndarray, a: float, b: float, profile: Profile) -> np.ndarray:
    """The profile's NaN rule applied to rounded, clamped values ``r`` (range ``[a, b]``)."""
    if r.size and np.isnan(r.max()):
        return profile.step(NAN_CODES)(r, a, b)
    return r


def _nan_panics(r: np.ndarray, a: float, b: float) -> np.ndarray:
    raise panic("ndarray.nan_code")


def _nan_to(code):
    return lambda r, a, b: np.where(np.isnan(r), np.float32(code(a, b)), r)


NAN_CODES = NAN_CODE.steps({"panic": _nan_panics, "zero": _nan_to(lambda a, b: 0.0), "hi": _nan_to(lambda a, b: b),
                            "lo": _nan_to(lambda a, b: a)})


def store_codes(r: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """The integer kept per element; on the GPU, a float value's Native/PackedNative code is the fp8/fp4 bit
    pattern of that integer, while PackedU32 keeps the integer's two's-complement bit field (§5.4)."""
    value = scheme.value
    if profile.saturate_codes_to_i8:  # flex: `as i8`
        return np.clip(r, -128.0, 127.0).astype(np.int8)
    if not value.is_float:
        with np.errstate(invalid="ignore"):
            return r.astype(np.int8)
    if scheme.store.kind == "PackedU32":
        field = r.astype(np.int32) & ((1 << value.size_bits) - 1)
        return field.astype(np.uint8).view(np.int8)
    if value is QuantValue.E2M1:
        return r.astype(ml_dtypes.float4_e2m1fn).view(np.uint8).astype(np.int8)
    return r.astype(FP8_DTYPES[value]).view(np.int8)
