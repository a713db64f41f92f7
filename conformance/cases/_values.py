"""Adversarial value constructions shared by the quantize cases (spec §12): exact ties at even and
odd codes of both signs, their f32 neighbours, 0.49999997, data on the grid, and deterministic searches for
inputs where two plausible arithmetic forms round differently."""

from __future__ import annotations

import numpy as np

from oracle import round_half_away

from . import down, f32, half_span, up, value_range


def ties(value: str, parity: int, n: int = 16) -> np.ndarray:
    """``±(k + 0.5)`` with ``k % 2 == parity``, both neighbours inside the value range, alternating signs."""
    a, b = value_range(value)
    pos = [k + 0.5 for k in range(int(b)) if k % 2 == parity and k + 1 <= b]
    neg = [-(k + 0.5) for k in range(int(-a)) if k % 2 == parity and k + 1 <= -a]
    out = []
    for i in range(max(len(pos), len(neg))):
        out += pos[i:i + 1] + neg[i:i + 1]
    return _fill(_spread_pick(out, n), n)


def _spread_pick(values: list[float], n: int) -> list[float]:
    """At most ``n`` values, small and large magnitudes both kept."""
    if len(values) <= n:
        return values
    idx = np.unique(np.linspace(0, len(values) - 1, n).round().astype(int))
    return [values[i] for i in idx]


def _fill(values: list[float], n: int) -> np.ndarray:
    values = values or [0.0]
    return f32([values[i % len(values)] for i in range(n)])


def on_grid(value: str, n: int = 16) -> np.ndarray:
    """Integers spread over ``[a, b]`` (already-quantized weights), the extremes included."""
    a, b = value_range(value)
    return f32(np.linspace(a, b, n).round())


def grid_with_ties(value: str, n: int = 16) -> np.ndarray:
    """``±half_span`` first (so a dynamic scale is exact), then ties of both parities and signs, then integers."""
    hs = half_span(value)
    a, b = value_range(value)
    out = [hs, -hs, 0.0]
    k = 0
    while len(out) < n and k + 0.5 < hs:
        for v in (k + 0.5, -(k + 0.5)):
            if a <= v <= b and len(out) < n:
                out.append(v)
        k += 1 if k < 8 else max(1, int(hs) // 6)
    i = 1
    while len(out) < n:
        out.append(float(min(i, b)))
        i += 1
    return f32(out[:n])


def split_search(e_values, b: float, alt, per_scale: int) -> list[list[float]]:
    """For each scale ``e``: positive x (|x/e| < b) where ``round(x / e) != round(alt(x, e))`` in f32, found by
    walking k = 1, 2, ... and the 4 f32 neighbours on each side of ``(k + 0.5) * e``. Deterministic."""
    found = []
    for e in e_values:
        e = np.float32(e)
        hits: list[float] = []
        k = 1
        while len(hits) < per_scale and k < b - 1:
            x0 = np.float32((k + 0.5) * e)
            for x in np.concatenate([down(x0, 4)[None], down(x0, 3)[None], down(x0, 2)[None], down(x0)[None],
                                     x0[None], up(x0)[None], up(x0, 2)[None], up(x0, 3)[None], up(x0, 4)[None]]):
                if len(hits) < per_scale and round_half_away(x / e) != round_half_away(alt(x, e)):
                    hits.append(float(x))
            k += 1
        found.append(hits)
    return found


def reciprocal(x, e):
    return np.float32(x) * (np.float32(1.0) / np.float32(e))
