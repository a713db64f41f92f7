"""Scale storage as each backend applies it at quantize time (spec §4.1, §5.2, §5.3).

``scale_to_dtype`` is burn-std's wrapper of ``ScaleDtype::round_up``; ``validated_scale`` is flex's guard on top
of it; ``effective_guard`` is the last word on the scale the division uses (ndarray's ``valid_scale``).
"""

from __future__ import annotations

import numpy as np

from .errors import panic
from .profiles import Profile
from .rounding import round_to_nearest, round_up
from .scheme import F32_MIN_POSITIVE, ScaleDtype


def scale_to_dtype(scales: np.ndarray, dtype: ScaleDtype, profile: Profile) -> np.ndarray:
    """``scale_to_dtype(s, dtype)`` = ``round_up(..).expect("UE8M0 scales are not yet supported")``."""
    s = np.asarray(scales, dtype=np.float32)
    if dtype is ScaleDtype.UE8M0 and not profile.ue8m0:
        if s.size:
            raise panic("scale.ue8m0")
        return s.copy()
    if profile.scale_rounding == "nearest" and dtype is not ScaleDtype.UE8M0:
        return round_to_nearest(s, dtype)
    if profile.bf16_grid_from_f16 and dtype is ScaleDtype.BF16:
        dtype = ScaleDtype.F16
    return round_up(s, dtype, ue8m0=profile.ue8m0)


def validated_scale(scales: np.ndarray, dtype: ScaleDtype, profile: Profile) -> np.ndarray:
    """flex: the rounded scale if it is positive and finite, else ``scale_to_dtype(f32::MIN_POSITIVE)``."""
    rounded = scale_to_dtype(scales, dtype, profile)
    tiny = scale_to_dtype(np.float32(F32_MIN_POSITIVE), dtype, profile)
    return np.where((rounded > 0) & np.isfinite(rounded), rounded, tiny).astype(np.float32, copy=False)


def stored_scales(scales: np.ndarray, dtype: ScaleDtype, profile: Profile) -> np.ndarray:
    """What the backend keeps as the tensor's scales: flex validates them (and keeps the validated ones), the
    others keep the rounded scales (ndarray's 0.1 guard touches only the divisor: an all-zero tensor stores 0)."""
    if profile.zero_scale == "min_positive":
        return validated_scale(scales, dtype, profile)
    return scale_to_dtype(scales, dtype, profile)


def effective_guard(effective: np.ndarray, profile: Profile) -> np.ndarray:
    """ndarray's ``valid_scale``: an effective scale equal to 0 (either sign) divides as 0.1; NaN, inf and
    negative scales pass through. flex validated earlier; the GPU kernel has no guard."""
    e = np.asarray(effective, dtype=np.float32)
    if profile.zero_scale != "point_one":
        return e
    return np.where(e == 0, np.float32(0.1), e).astype(np.float32, copy=False)
