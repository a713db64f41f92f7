"""``compute_q_params``: scales from a calibrated range, and the two-level split (spec §3, §3.1).

Every step is one backend tensor op in the tensor's own float dtype ``T`` (f32, f16 or bf16), correctly rounded;
numpy's float16 and ml_dtypes' bfloat16 ops compute in f32 and round once, which is correctly rounded for
``+ - * /`` because f32 carries more than twice their precision plus two bits.
"""

from __future__ import annotations

import numpy as np

from .choices import FixedStep
from .errors import panic
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .scheme import F16_MAX, F32_MIN_POSITIVE, QuantScheme, ScaleDtype
from .stages import Stages


def compute_q_params(min_: np.ndarray, max_: np.ndarray, scheme: QuantScheme, *,
                     profile: str | Profile = DEFAULT_PROFILE,
                     stages: Stages | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Scales ``f32(2 * max(|min|, |max|)) / (b - a)`` in ``T``; for a two-level scheme also the f32 global and
    block scales normalized against it. No rounding to the scale dtype happens here (that is quantize's job).
    ``stages`` receives ``raw_scales`` (before the two-level split) and, two-level, ``normalized_scales``."""
    prof = get_profile(profile)
    min_, max_ = np.asarray(min_), np.asarray(max_)
    t = min_.dtype
    a, b = scheme.value.range()
    min_abs, max_abs = np.abs(min_), np.abs(max_)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # `float_lower` then `mask_where`: a NaN max_abs compares false, so min_abs is taken (NaN ignored there).
        alpha = np.where(min_abs < max_abs, max_abs, min_abs)
        w = prof.step(SCALE_ARITHMETIC)(t).type
        values_range = alpha.astype(w, copy=False) * w(2.0)
        scales = (values_range / w(np.float32(b - a))).astype(t, copy=False)
    if stages is not None:
        stages.raw_scales = scales
    if scheme.global_scale_dtype() is None:
        return scales, None
    normalized, glob = normalize_scales(scales, scheme.scale_dtype(), prof)
    if stages is not None:
        stages.normalized_scales = normalized
    return normalized, glob


def normalize_scales(scales: np.ndarray, block_dtype: ScaleDtype, profile: Profile) -> tuple[np.ndarray, np.ndarray]:
    """Two-level split: ``global = max(f32(max(s) / M), f32::MIN_POSITIVE)``, block scales ``f32(s / global)``
    cast back to ``T`` (§3.1)."""
    if block_dtype.max_representable() > F16_MAX:
        raise panic("qparams.block_dtype_too_wide", dtype=block_dtype.name)
    if scales.size == 0:  # float_max of no block scales (an empty tensor): every backend's max panics
        raise panic(profile.empty_max_panic)
    t = scales.dtype
    w = profile.step(SCALE_ARITHMETIC)(np.dtype(np.float32)).type
    s32 = scales.astype(w, copy=False)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        peak = np.max(s32)
        glob = w(peak) / w(block_dtype.max_representable())
        clamp_min = np.fmax if profile.clamp_min_ignores_nan else np.maximum
        glob = clamp_min(glob, w(F32_MIN_POSITIVE))
        normalized = (s32 / glob).astype(np.float32, copy=False)
    return profile.step(NORMALIZED_DTYPE)(normalized, t), np.array([glob], dtype=np.float32)


def _to_tensor_dtype(normalized: np.ndarray, t: np.dtype) -> np.ndarray:
    return normalized.astype(t, copy=False)


NORMALIZED_DTYPE = FixedStep("normalized_dtype", _to_tensor_dtype,
                             "two-level block scales normalized in f32, cast back to the tensor dtype (§3.1)")


# The dtype a scale step computes in, given the dtype burn computes it in (a mutant computes wider).
SCALE_ARITHMETIC = FixedStep("scale_arithmetic", lambda t: t,
                             "every scale step is one tensor op in the tensor's float dtype (§3, §3.1)")
