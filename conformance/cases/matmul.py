"""``ternary_matmul``: a float lhs times a per-tensor Q2S rhs (BitNet b1.58), spec §9.4."""

from __future__ import annotations

import numpy as np

from . import case, f32, i8, rng


def _mm(alias, lhs, codes, scale, *, reason, spec=("§9.4",)):
    return case(alias, "ternary_matmul", {}, {"lhs": lhs, "rhs_codes": codes, "rhs_scale": f32([scale])},
                spec=spec, reason=reason)


def cases():
    w = i8([[1, 0, 1], [-1, 0, 1], [0, 1, 0], [0, -1, 0]])
    a = f32([[0.5, -1.2, 0.3, 2.0], [1, 0, -0.7, 0.4], [-2, 1.5, 0.1, -0.3]])
    r = rng("ternary_matmul/rank-3/random")
    return [
        _mm("ternary_matmul/spec-example", a, w, 0.9, spec=("§9.4", "§10"),
            reason="burn test q2s_ternary_matmul_matches_dequantized: the fast path sums +-a then multiplies once"),
        _mm("ternary_matmul/all-zero-weight", f32([[1, -2, 3]]), i8([[0], [0], [0]]), 0.0,
            reason="an all-zero weight with a zero scale gives exactly 0 (no 0.1 substitution)"),
        _mm("ternary_matmul/cancellation", f32([[1e8, 1.0, -1e8, 3.0]]), i8([[1], [1], [1], [-1]]), 1.0,
            reason="the fast path's sequential f32 sum loses the 1 (1e8 + 1 = 1e8): exact for ndarray, within "
                   "the GEMM bound elsewhere"),
        _mm("ternary_matmul/rank-3/random", r.standard_normal((2, 3, 8)).astype(np.float32),
            r.integers(-1, 2, size=(8, 5)).astype(np.int8), 0.0372, reason="leading dims are flattened into M"),
    ]
