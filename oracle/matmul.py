"""``q_matmul`` with a BitNet b1.58 ternary weight: burn-ndarray's multiply-free fast path (spec §9.4).

``out[i][j]`` starts at 0.0 and, for ``k`` ascending, adds ``a[i][k]`` where ``w[k][j] == 1`` and subtracts it where
``w[k][j] == -1`` (zeros are skipped); one f32 multiply by the stored scale ``gamma`` ends it. No 0 → 0.1 guard:
an all-zero weight gives exactly 0. Other backends dequantize and run a float GEMM, whose blocking and FMA order
are theirs: the oracle answers with the exact product rounded once, and vectors compare it with a tolerance.

Through ``Tensor::matmul`` both operands have the same rank, and the fast path wants a rank-2 weight: so a rank-3
activation (the weight unsqueezed to ``[1, K, N]``) takes the float path on ndarray too (found against real burn).
"""

from __future__ import annotations

import numpy as np

from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .qtensor import QTensor
from .support import check_from_data, fused_read


def takes_fast_path(lhs_shape: tuple[int, ...], profile: str | Profile) -> bool:
    """Whether the result is the exact multiply-free sum (else a GEMM, inexact in the last bits)."""
    return get_profile(profile).ternary_fast_path and len(lhs_shape) == 2


def ternary_matmul(lhs: np.ndarray, rhs: QTensor, *, profile: str | Profile = DEFAULT_PROFILE) -> np.ndarray:
    """``lhs [..., K] @ rhs`` for a per-tensor Q2S ``rhs`` of shape ``[K, N]`` (its stored scale is gamma)."""
    prof = get_profile(profile)
    # The harness quantizes the weight on the device; a fused build's matmul fuser meets its scheme first, while
    # the quantize is still queued (measured: burn-cubecl-fusion's sub-byte panic, not burn-cubecl's).
    fused_read(rhs.scheme, prof)
    check_from_data(rhs.scheme, rhs.codes.shape, prof)  # the weight is loaded from its parts first
    a = np.asarray(lhs, dtype=np.float32)
    w = np.asarray(rhs.codes, dtype=np.int8)
    gamma = np.float32(np.asarray(rhs.scales, dtype=np.float32).ravel()[0])
    k_dim, n_dim = w.shape
    flat = a.reshape(-1, k_dim)
    if takes_fast_path(a.shape, prof):
        out = np.zeros((flat.shape[0], n_dim), dtype=np.float32)
        for k in range(k_dim):
            column = flat[:, k : k + 1]
            step = np.where(w[k] == 1, column, np.where(w[k] == -1, -column, np.float32(0.0)))
            out = (out + step).astype(np.float32)
        out = (out * gamma).astype(np.float32)
    else:
        dequantized = (w.astype(np.float32) * gamma).astype(np.float64)
        out = (flat.astype(np.float64) @ dequantized).astype(np.float32)
    return out.reshape(*a.shape[:-1], n_dim)
