"""``round_up``: ``ScaleDtype::round_up`` as ``scale_to_dtype`` applies it (spec §4.1; UE8M0 §11)."""

from __future__ import annotations

import numpy as np

from . import F32_DENORM, F32_MAX, F32_TINY, case, down, f32, rng, up

SPEC_TABLE = f32(0.3, 1 / 3, 500.0, 1e-3, 7.7e-4, 0.014173228, 0.035433073, F32_TINY, 0.0)

# Points of each dtype's grid where the rule changes: smallest subnormal step, subnormal/normal boundary,
# binade edges, the largest value.
GRID_POINTS = {
    "F16": [2.0**-24, 3 * 2.0**-24, 2.0**-15, 2.0**-14, 1.0, 1.0009765625, 1.5, 2048.0, 65504.0],
    "BF16": [2.0**-133, 2.0**-126, 1.0, 1.0078125, 3.0, 2.0**100, float(np.float32(3.3895314e38))],
    "UE4M3": [2.0**-9, 3 * 2.0**-9, 7 * 2.0**-9, 2.0**-6, 1.0, 1.125, 15.0, 240.0, 256.0, 448.0],
    "UE8M0": [2.0**-127, 2.0**-126, 0.5, 1.0, 2.0, 2.0**100, 2.0**127],
}


def _neighbours(points) -> np.ndarray:
    p = f32(points)
    return np.stack([down(p), p, up(p)], axis=1).ravel()


def cases():
    out = []
    for dt in ("F32", "F16", "BF16", "UE4M3", "UE8M0"):
        low = dt.lower()
        out.append(case(
            f"round_up/{low}/spec-table", "round_up", {"dtype": dt}, {"scales": SPEC_TABLE},
            spec=("§4.1",) if dt != "UE8M0" else ("§4.1", "§11"),
            reason="the reference table of spec §4.1 (0.3, 1/3, 500, 1e-3, 7.7e-4, 3.6/254, 9/254, "
                   "f32::MIN_POSITIVE, 0): round *up* onto the grid, never to nearest"
                   + ("; UE8M0 has no rule before burn 0.22.0 (panics) and rounds up to a power of two after"
                      if dt == "UE8M0" else "")))
        if dt == "F32":
            out.append(case(
                "round_up/f32/identity-specials", "round_up", {"dtype": "F32"},
                {"scales": f32(np.nan, np.inf, -np.inf, -0.3, -0.0, F32_DENORM, F32_MAX, 1.0000001)},
                spec=("§4.1",), reason="F32 round-up is the identity, for NaN, infinities and negatives too"))
            continue
        out.append(case(
            f"round_up/{low}/grid-neighbours", "round_up", {"dtype": dt}, {"scales": _neighbours(GRID_POINTS[dt])},
            tags=("class:on-grid",), spec=("§4.1",) + (("§11",) if dt == "UE8M0" else ()),
            reason="each grid point and its two f32 neighbours: on-grid values stay, one ulp above steps to "
                   "the next grid point, one ulp below stays on the point; includes the subnormal/normal "
                   "boundary and the largest value"))
        specials = [np.nan, np.inf, F32_MAX, 1e30, F32_DENORM, 1e-45, 0.0, -0.0]
        if dt != "UE8M0":
            specials += [-0.3, -1e-3]
        out.append(case(
            f"round_up/{low}/specials", "round_up", {"dtype": dt}, {"scales": f32(specials)},
            tags=("class:saturate",), spec=("§4.1",) + (("§11",) if dt == "UE8M0" else ()),
            reason="NaN stays NaN, values at or above the max saturate to it (+inf included), 0 and -0 stay, "
                   "f32 subnormals round up to the smallest positive grid value"
                   + ("; negative scales follow the release-build arithmetic (the debug_assert is off): the "
                      "subnormal ceil moves toward zero, the bit trick away from it" if dt != "UE8M0" else "")))
        alias = f"round_up/{low}/log-uniform-256"
        r = rng(alias)
        values = np.exp2(r.uniform(-30.0, 20.0, 256)).astype(np.float32)
        out.append(case(alias, "round_up", {"dtype": dt}, {"scales": values}, spec=("§4.1",),
                        reason="256 log-uniform scales between 2^-30 and 2^20 (PCG64 seeded from the alias): the "
                               "bulk of the grid, both subnormal and normal ranges"))
    return out
