"""Hand-written backends with one real bug each (issue 21): the oracle under a claimed profile, with one step
redone the wrong way in a few lines of plain numpy, the way a third-party quantizer gets it wrong. They share
no code with the diagnosis (conformance/hypotheses.py), so naming their bug is a real test of it.

``PLANTED[name](profile)`` builds one; ``python:planted_backends:Env`` with ``PLANTED=name PLANTED_PROFILE=p``
(and ``PYTHONPATH=.:tests`` from the repository root: ``tests/oracle`` would shadow the oracle otherwise) serves one to ``qconform run`` / ``qconform fuzz``.
"""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np

from conformance.backends.oracle import run_oracle
from conformance.protocol import Result
from oracle import QuantScheme, Stages, get_profile
from oracle.blocks import layout_of
from oracle.encode import encode
from oracle.rounding import minifloat_codes, round_up

Q = ("quantize", "quantize_dynamic")
NEAREST = {"F16": np.float16, "BF16": ml_dtypes.bfloat16, "UE4M3": ml_dtypes.float8_e4m3fn}


class Planted:
    """The oracle under ``profile`` with ``change(request, result, stages, profile) -> outputs`` applied to the
    results of ``ops``; ``caps``: the vectors it takes (the rest are not applicable)."""

    def __init__(self, name, profile, change, ops=Q, caps=None):
        self.name, self.profile, self.change, self.ops = name, profile, change, ops
        self.caps = {"ops": list(ops), "input_dtypes": ["f32"], **(caps or {})}

    def hello(self):
        return {"name": f"planted-{self.name}", "version": "1", "profile": self.profile, "capabilities": self.caps}

    def run(self, op, params, inputs):
        st = Stages()
        r = run_oracle(op, params, inputs, self.profile, stages=st)
        if isinstance(r, Result) and op in self.ops:
            try:
                r = self.change((op, params, inputs), r, st, get_profile(self.profile))
            except (ValueError, IndexError, TypeError):
                pass  # a layout these few lines do not handle (extra scales, packed codes): the oracle answers
        if not isinstance(r, Result):
            raise_error(r)
        return {**r.outputs, **r.values}


def raise_error(outcome):
    from conformance.protocol import BackendError
    raise BackendError(outcome.code, outcome.message)


def _scheme(request) -> QuantScheme:
    return QuantScheme.from_json(request[1]["scheme"])


def _pre_round(request, st):
    """The scales before the backend rounds them (computed, or given to quantize)."""
    if request[0] == "quantize":
        return np.asarray(request[2]["scales"], np.float32).ravel()
    return st.raw_scales


def _requantize(request, scales, profile, scheme_json=None):
    """Codes from ``scales``, the rest of the oracle's pipeline as it is."""
    _, params, inputs = request
    q = {"x": inputs["x"], "scales": np.asarray(scales, np.float32)}
    return run_oracle("quantize", {"scheme": scheme_json or params["scheme"]}, q, profile)


def _with_scales(request, r, st, profile, scales):
    again = _requantize(request, scales, profile)
    if not isinstance(again, Result):
        return again
    return Result({**r.outputs, "codes": again.outputs["codes"], "scales": np.asarray(scales, np.float32)}, r.values)


def _per_element(request, st):
    x = np.asarray(request[2]["x"], np.float32)
    return x, np.asarray(layout_of(x.shape, _scheme(request)).spread(st.effective_scales), np.float32)


def _codes(r, codes):
    return Result({**r.outputs, "codes": codes.astype(np.int8).reshape(r.outputs["codes"].shape)}, r.values)


def _clip(request, rounded, fallback):
    a, b = _scheme(request).value.range()
    ok = np.isfinite(rounded)
    return np.where(ok, np.clip(np.where(ok, rounded, 0), a, b), fallback)


# --- the bugs --------------------------------------------------------------------------------------------------


def scale_nearest(request, r, st, profile):
    """The scale cast to its dtype (round to nearest) instead of rounded up; codes from that scale."""
    dtype = _scheme(request).scale_dtype().name
    pre = _pre_round(request, st)
    if dtype not in NEAREST or pre is None or pre.size != r.outputs["scales"].size:
        return r
    pre = pre.reshape(r.outputs["scales"].shape)
    near = np.clip(pre, -448, 448) if dtype == "UE4M3" else pre
    near = near.astype(NEAREST[dtype]).astype(np.float32)
    ok = (pre > 0) & np.isfinite(pre)
    return _with_scales(request, r, st, profile, np.where(ok, near, r.outputs["scales"]))


def unrounded_codes(request, r, st, profile):
    """Codes divided by the scale as computed; only the stored scale is rounded (scales right, codes wrong)."""
    pre = _pre_round(request, st)
    scheme = dict(request[1]["scheme"])
    if scheme.get("block"):
        scheme["block"] = {**scheme["block"], "dtype": "F32"}
    else:
        scheme["tensor"] = None
    again = _requantize(request, pre, profile, scheme)
    return _codes(r, again.outputs["codes"]) if isinstance(again, Result) else r


def nearest_and_unrounded(request, r, st, profile):
    """Two independent bugs: scales rounded to nearest, codes from the unrounded scale."""
    codes = unrounded_codes(request, r, st, profile)
    scales = scale_nearest(request, r, st, profile)
    if not (isinstance(codes, Result) and isinstance(scales, Result)):
        return r
    return Result({**r.outputs, "codes": codes.outputs["codes"], "scales": scales.outputs["scales"]}, r.values)


def in_f64(request, r, st, profile):
    """x / s and its rounding in f64 (the backend's tie rule kept)."""
    x, e = _per_element(request, st)
    v = x.astype(np.float64) / e.astype(np.float64)
    rounded = np.rint(v) if profile.tie == "even" else np.trunc(v + np.copysign(0.5, v))
    return _codes(r, _clip(request, rounded, r.outputs["codes"]))


def other_division(request, r, st, profile):
    """Reciprocal where the profile divides, division where it multiplies by the reciprocal."""
    x, e = _per_element(request, st)
    with np.errstate(all="ignore"):
        v = x * (np.float32(1) / e) if profile.division == "divide" else x / e
    return _codes(r, encode(v.astype(np.float32), _scheme(request), profile))


def _ties(rule):
    def change(request, r, st, profile):
        v = st.scaled.astype(np.float64)
        tie = np.abs(v - np.trunc(v)) == 0.5
        return _codes(r, np.where(tie, _clip(request, rule(v), r.outputs["codes"]), r.outputs["codes"]))
    return change


ties_even = _ties(np.rint)
ties_away = _ties(lambda v: np.trunc(v) + np.sign(v))
ties_toward_zero = _ties(np.trunc)


def int32_before_clip(request, r, st, profile):
    """round, then a C cast to int32 (wraps; x86 gives INT_MIN for what does not fit), then the clamp."""
    rounded = np.rint(st.scaled.astype(np.float64)) if profile.tie == "even" else \
        np.trunc(st.scaled.astype(np.float64) + np.copysign(0.5, st.scaled))
    fits = np.isfinite(rounded) & (np.abs(rounded) < 2.0**31)
    as_int = np.where(fits, rounded, -(2.0**31))
    a, b = _scheme(request).value.range()
    return _codes(r, np.where(np.isnan(st.scaled), r.outputs["codes"], np.clip(as_int, a, b)))


def no_zero_guard(request, r, st, profile):
    """No guard of a zero (or, against flex, non-positive) scale: x / 0 as IEEE gives it."""
    pre = _pre_round(request, st)
    scheme = _scheme(request)
    guarded = (pre == 0) if profile.zero_scale == "point_one" else ~((pre > 0) & np.isfinite(pre))
    if pre is None or scheme.is_two_level() or not guarded.any():
        return r
    stored = round_up(pre, scheme.scale_dtype()) if scheme.scale_dtype().name != "F32" else pre
    x = np.asarray(request[2]["x"], np.float32)
    held = stored if scheme.block_size() is not None else stored[:1]
    e = np.asarray(layout_of(x.shape, scheme).spread(held), np.float32)
    with np.errstate(all="ignore"):
        v = x * (np.float32(1) / e) if profile.division == "reciprocal" else x / e
    try:
        codes = encode(v.astype(np.float32), scheme, profile)
    except Exception as p:  # burn's NaN panic, reached now that 0 / 0 happens
        from oracle import BurnPanic
        if isinstance(p, BurnPanic):
            from conformance.protocol import Error
            return Error(p.code, p.message)
        raise
    out = {**r.outputs, "codes": codes.reshape(x.shape)}
    if r.outputs["scales"].size == stored.size:
        out["scales"] = stored.astype(np.float32).reshape(r.outputs["scales"].shape)
    return Result(out, r.values)


def negative_zero_decode(request, r, st, profile):
    """A decode table whose entry for code 0 is -0.0."""
    x = r.outputs["x"]
    codes = np.asarray(request[2]["codes"]).reshape(-1)
    if codes.size != x.size:
        return r
    zero = (codes.reshape(x.shape) == 0) & (x == 0)
    return Result({**r.outputs, "x": np.where(zero, np.array(-0.0, x.dtype), x)}, r.values)


def nan_code_ff(request, r, st, profile):
    """Every E4M3 NaN written as 0xFF (burn: 0x7F with the NaN's sign)."""
    codes = r.outputs["codes"].view(np.uint8)
    nan = (codes & 0x7F) == 0x7F
    return _codes(r, np.where(nan, np.uint8(0xFF), codes).astype(np.uint8).view(np.int8))


def cast_before_clamp(request, r, st, profile):
    """x/s cast to the minifloat first (a plain cast: E4M3 has no infinity, so past its range it is NaN) and
    clamped after, where burn's conversion saturates."""
    value = _scheme(request).value
    fp8 = {"E4M3": ml_dtypes.float8_e4m3fn, "E5M2": ml_dtypes.float8_e5m2}[value.name]
    a, b = value.range()
    with np.errstate(all="ignore"):
        cast = st.scaled.astype(np.float32).astype(fp8).astype(np.float32)
    return _codes(r, minifloat_codes(np.clip(cast, a, b), value))


def f16_subnormal_step(request, r, st, profile):
    """F16 round_up one step short in the subnormal range (it truncates there); codes from that scale."""
    pre = _pre_round(request, st)
    if pre is None or pre.size != r.outputs["scales"].size:
        return r
    pre = pre.reshape(r.outputs["scales"].shape)
    up = round_up(pre, _scheme(request).scale_dtype())
    short = (up < 2.0**-14) & (up > pre)
    if not short.any():
        return r
    return _with_scales(request, r, st, profile, np.where(short, up - np.float32(2.0**-24), r.outputs["scales"]))


def ocp_mx_scale(request, r, st, profile):
    """The OCP MX v1.0 shared scale (section 6.3): 2^(floor(log2(amax)) - emax_elem) per block, emax_elem the exponent of
    the element format's largest normal, instead of burn's amax / max_elem rounded up; codes from that scale."""
    scheme = _scheme(request)
    if request[0] != "quantize_dynamic" or scheme.scale_dtype().name != "UE8M0":
        return r
    amax = np.maximum(np.abs(st.min.astype(np.float64)), np.abs(st.max.astype(np.float64))).ravel()
    emax = int(np.floor(np.log2(scheme.value.range()[1])))  # 448 -> 8, 57344 -> 15, 6 -> 2: not near a power
    ok = np.isfinite(amax) & (amax > 0)
    _, e = np.frexp(np.where(ok, amax, 1.0))  # amax = m * 2^e with m in [0.5, 1): floor(log2(amax)) = e - 1
    shared = np.ldexp(1.0, np.clip(e - 1 - emax, -127, 127)).astype(np.float32)
    scales = np.where(ok, shared, r.outputs["scales"].ravel()).reshape(r.outputs["scales"].shape)
    return _with_scales(request, r, st, profile, scales)


def given_scales(request, r, st, profile):
    """dequantize as code x the given f32 scale, skipping burn's round trip through the stored scale dtype."""
    _, params, inputs = request
    scheme = QuantScheme.from_json(params["scheme"])
    codes = np.asarray(inputs["codes"])
    value = scheme.value
    if value.is_float:
        table = {"E4M3": ml_dtypes.float8_e4m3fn, "E5M2": ml_dtypes.float8_e5m2, "E2M1": ml_dtypes.float4_e2m1fn}
        raw = codes.view(np.uint8) & (0x0F if value.name == "E2M1" else 0xFF)
        values = raw.view(table[value.name]).astype(np.float32)
    else:
        values = codes.astype(np.float32)
    scales = np.asarray(inputs["scales"], np.float32).ravel()
    per = np.broadcast_to(layout_of(codes.shape, scheme).per_element(scales), codes.shape) \
        if scales.size == 1 else layout_of(codes.shape, scheme).spread(scales)
    x = (values * per).astype(np.float32).astype(r.outputs["x"].dtype)
    return Result({**r.outputs, "x": x}, r.values)


INTEGER = {"values": ["Q8S", "Q8F", "Q4S", "Q4F", "Q2S", "Q2F"], "stores": ["Native"]}
ONE_LEVEL = {"levels": ["tensor", "block"]}
PLANTED = {
    "scale-nearest": lambda p: Planted("scale-nearest", p, scale_nearest, caps=ONE_LEVEL),
    "unrounded-codes": lambda p: Planted("unrounded-codes", p, unrounded_codes, caps=ONE_LEVEL),
    "nearest-and-unrounded": lambda p: Planted("nearest-and-unrounded", p, nearest_and_unrounded, caps=ONE_LEVEL),
    "f64": lambda p: Planted("f64", p, in_f64, caps=INTEGER),
    "other-division": lambda p: Planted("other-division", p, other_division, caps=INTEGER),
    "ties-even": lambda p: Planted("ties-even", p, ties_even, caps=INTEGER),
    "ties-away": lambda p: Planted("ties-away", p, ties_away, caps=INTEGER),
    "ties-toward-zero": lambda p: Planted("ties-toward-zero", p, ties_toward_zero, caps=INTEGER),
    "int32-before-clip": lambda p: Planted("int32-before-clip", p, int32_before_clip, caps=INTEGER),
    "no-zero-guard": lambda p: Planted("no-zero-guard", p, no_zero_guard, caps={**INTEGER, **ONE_LEVEL}),
    "negative-zero-decode": lambda p: Planted("negative-zero-decode", p, negative_zero_decode, ops=("dequantize",)),
    "nan-code-ff": lambda p: Planted("nan-code-ff", p, nan_code_ff, caps={"values": ["E4M3"]}),
    "f16-subnormal-step": lambda p: Planted("f16-subnormal-step", p, f16_subnormal_step,
                                            caps={**ONE_LEVEL, "scale_dtypes": ["F16"]}),
    "given-scales": lambda p: Planted("given-scales", p, given_scales, ops=("dequantize",), caps=ONE_LEVEL),
    "ocp-mx-scale": lambda p: Planted("ocp-mx-scale", p, ocp_mx_scale, ops=("quantize_dynamic",),
                                      caps={"values": ["E4M3", "E5M2", "E2M1"], "levels": ["block"],
                                            "scale_dtypes": ["UE8M0"]}),
    "cast-before-clamp": lambda p: Planted("cast-before-clamp", p, cast_before_clamp,
                                           caps={"values": ["E4M3", "E5M2"]}),
}


def Env():
    return PLANTED[os.environ["PLANTED"]](os.environ.get("PLANTED_PROFILE", "burn-0.22.1/flex"))
