"""``compute_q_params``: scales from a calibrated range, and the two-level split (spec §3, §3.1).

Every step is one backend tensor op in the tensor's own float dtype ``T`` (f32, f16 or bf16), correctly rounded;
numpy's float16 and ml_dtypes' bfloat16 ops compute in f32 and round once, which is correctly rounded for
``+ - * /`` because f32 carries more than twice their precision plus two bits.
"""

from __future__ import annotations

import numpy as np

from .choices import NORMALIZED_DTYPE
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
        values_range = alpha * t.type(2.0)
        scales = (values_range / t.type(np.float32(b - a))).astype(t, copy=False)
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
    t = scales.dtype
    s32 = scales.astype(np.float32, copy=False)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        peak = np.max(s32) if s32.size else np.float32(np.nan)
        glob = np.float32(peak) / np.float32(block_dtype.max_representable())
        clamp_min = np.fmax if profile.clamp_min_ignores_nan else np.maximum
        glob = clamp_min(glob, np.float32(F32_MIN_POSITIVE))
        normalized = s32 / glob
    return NORMALIZED_CASTS[profile.normalized_dtype](normalized, t), np.array([glob], dtype=np.float32)


def _to_tensor_dtype(normalized: np.ndarray, t: np.dtype) -> np.ndarray:
    return normalized.astype(t, copy=False)


NORMALIZED_CASTS = NORMALIZED_DTYPE.steps({"tensor": _to_tensor_dtype})
