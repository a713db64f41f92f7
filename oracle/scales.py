"""Scale storage as each backend applies it at quantize time (spec §4.1, §5.2, §5.3).

``scale_to_dtype`` is burn-std's wrapper of ``ScaleDtype::round_up``; ``validated_scale`` is flex's guard on top
of it; ``effective_guard`` is the last word on the scale the division uses (ndarray's ``valid_scale``).
"""

from __future__ import annotations

import numpy as np

from .choices import ZERO_SCALE, FixedStep
from .errors import panic
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .rounding import round_up
from .scheme import F32_MIN_POSITIVE, ScaleDtype


def scale_to_dtype(scales: np.ndarray, dtype: ScaleDtype, profile: str | Profile = DEFAULT_PROFILE) -> np.ndarray:
    """burn-std's ``scale_to_dtype(s, dtype)``: the dtype's ``round_up`` (``rounding.round_up``) as the profile's
    release applies it (``.expect("UE8M0 scales are not yet supported")`` before burn 0.22.0, §4.1, §11)."""
    profile = get_profile(profile)
    s = np.asarray(scales, dtype=np.float32)
    if dtype is ScaleDtype.UE8M0 and not profile.ue8m0:
        if s.size:
            raise panic("scale.ue8m0")
        return s.copy()
    return profile.step(SCALE_ROUNDING)(s, dtype, profile.ue8m0)


def _round_up(scales: np.ndarray, dtype: ScaleDtype, ue8m0: bool) -> np.ndarray:
    return round_up(scales, dtype, ue8m0=ue8m0)


SCALE_ROUNDING = FixedStep("scale_rounding", _round_up,
                           "ScaleDtype::round_up: the smallest value of the dtype not below")


def validated_scale(scales: np.ndarray, dtype: ScaleDtype, profile: Profile) -> np.ndarray:
    """flex: the rounded scale if it is positive and finite, else ``scale_to_dtype(f32::MIN_POSITIVE)``."""
    rounded = scale_to_dtype(scales, dtype, profile)
    if not ((rounded > 0) & np.isfinite(rounded)).all():  # the replacement is rounded only when needed: a
        # UE8M0 scale dtype before 0.22.0 panics in it, so with no scale at all nothing panics here
        tiny = scale_to_dtype(np.float32(F32_MIN_POSITIVE), dtype, profile)
    else:
        return rounded.astype(np.float32, copy=False)
    return np.where((rounded > 0) & np.isfinite(rounded), rounded, tiny).astype(np.float32, copy=False)


def stored_scales(scales: np.ndarray, dtype: ScaleDtype, profile: Profile) -> np.ndarray:
    """What the backend keeps as the tensor's scales: flex validates them (and keeps the validated ones), the
    others keep the rounded scales (ndarray's 0.1 guard touches only the divisor: an all-zero tensor stores 0)."""
    return profile.step(STORED)(scales, dtype, profile)


STORED = ZERO_SCALE.steps({"point_one": scale_to_dtype, "min_positive": validated_scale, "none": scale_to_dtype})


def effective_guard(effective: np.ndarray, profile: Profile) -> np.ndarray:
    """ndarray's ``valid_scale``: an effective scale equal to 0 (either sign) divides as 0.1; NaN, inf and
    negative scales pass through. flex validated earlier; the GPU kernel has no guard."""
    return profile.step(GUARDS)(np.asarray(effective, dtype=np.float32))


def effective_scales(grid: np.ndarray, glob: np.ndarray | None, profile: Profile) -> np.ndarray:
    """Per block, the scale the division (or the dequantizing product) uses: ``valid(f32(global * s))``, with
    ``global`` = 1 for a one-level scheme."""
    multiplier = np.float32(1.0) if glob is None else glob[0]
    return effective_guard(multiplier * np.asarray(grid, dtype=np.float32), profile)


def _point_one(e: np.ndarray) -> np.ndarray:
    return np.where(e == 0, np.float32(0.1), e).astype(np.float32, copy=False)


def _unguarded(e: np.ndarray) -> np.ndarray:
    return e


GUARDS = ZERO_SCALE.steps({"point_one": _point_one, "min_positive": _unguarded, "none": _unguarded})
