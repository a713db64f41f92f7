"""``compute_q_params``: scales from a calibrated range and the two-level split (spec §3, §3.1)."""

from __future__ import annotations

import numpy as np

from oracle.vocabulary import VALUES

from . import bf16, case, f16, f32, scheme

MINS = f32([[-1.8], [-0.5], [0.01], [-0.04]])
MAXS = f32([[0.5], [1.8], [0.04], [-0.01]])


def _qp(alias, sch, lo, hi, *, tags=(), spec=("§3",), reason=""):
    return case(alias, "compute_q_params", {"scheme": sch}, {"min": lo, "max": hi}, tags=tags, spec=spec,
                reason=reason)


def cases():
    out = [
        _qp("compute_q_params/q8s/tensor/spec-example", scheme("Q8S"), f32(0.5), f32(1.8), spec=("§3", "§10"),
            reason="burn test per_tensor_symmetric_int8: 3.6/254 = 0.014173228, not 1.8/127"),
        _qp("compute_q_params/q8s/block-4/spec-example", scheme("Q8S", block=[4]), MINS, MAXS,
            spec=("§3", "§10"), reason="burn test per_block_symmetric_int8: one scale per block, grid [4, 1]"),
        _qp("compute_q_params/q8s/two-level-ue4m3/spec-example",
            scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F32"), MINS, MAXS, spec=("§3.1", "§10"),
            reason="burn test block_tensor_symmetric_int8: global = max/448, normalized scales [448, 448, "
                   "9.955555, 9.955555] (rounded up only at quantize time)"),
        _qp("compute_q_params/q8s/two-level-ue4m3/all-zero",
            scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F32"), np.zeros((2, 1), np.float32),
            np.zeros((2, 1), np.float32), tags=("class:zero-range",), spec=("§3.1",),
            reason="an all-zero tensor: global 0/448 is lifted to f32::MIN_POSITIVE, block scales stay 0"),
        _qp("compute_q_params/q8s/two-level-f16/tiny-global",
            scheme("Q8S", block=[4], block_dtype="F16", tensor="F32"), f32([[-1e-36], [0.0]]),
            f32([[1e-37], [2e-40]]), spec=("§3.1",),
            reason="a global below f32::MIN_POSITIVE (subnormal) is lifted to it; F16 block scales normalize "
                   "against 65504"),
        _qp("compute_q_params/q8s/two-level-f32-blocks/refused",
            scheme("Q8S", block=[4], block_dtype="F32", tensor="F32"), MINS, MAXS, spec=("§3.1", "§8 #20"),
            reason="F32 block scales reach f32's range: normalize_scales asserts"),
        _qp("compute_q_params/q8s/two-level-bf16-blocks/refused",
            scheme("Q8S", block=[4], block_dtype="BF16", tensor="F32"), MINS, MAXS, spec=("§3.1", "§8 #20"),
            reason="BF16 block scales reach f32's range too"),
        _qp("compute_q_params/q8s/tensor/nan-max-ignored", scheme("Q8S"), f32(-1.0), f32(np.nan),
            spec=("§3",), reason="max_abs NaN compares false, so |min| is chosen and the NaN is ignored"),
        _qp("compute_q_params/q8s/tensor/nan-min-propagates", scheme("Q8S"), f32(np.nan), f32(1.0),
            spec=("§3",), reason="min_abs NaN: the mask picks min_abs, the scale is NaN"),
        _qp("compute_q_params/q8s/two-level-ue4m3/nan-global", scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F32"),
            f32([[np.nan], [-2.0]]), f32([[np.nan], [3.0]]), spec=("§3.1", "§11"),
            reason="a NaN block makes the global NaN before normalize_scales' float_clamp_min(global, MIN_POSITIVE): "
                   "burn-flex 0.22.0-pre.3's x.max(min) returns MIN_POSITIVE, flex >= 0.22.1 tests is_nan first "
                   "and keeps the NaN (burn-flex-0.22.1/src/ops/float.rs:689-699), as ndarray does"),
        _qp("compute_q_params/q8s/block-4/overflow", scheme("Q8S", block=[4]), f32([[-3.4028235e38], [-1.0]]),
            f32([[1.0], [np.inf]]), spec=("§3",),
            reason="2 * f32::MAX overflows to inf before the division; an infinite max gives an infinite scale"),
        _qp("compute_q_params/q8s/block-4/f16", scheme("Q8S", block=[4]), f16(MINS), f16(MAXS), spec=("§3",),
            reason="the arithmetic happens in the tensor dtype: f16 scales (ndarray has no f16 tensors)"),
        _qp("compute_q_params/q8s/two-level-ue4m3/f16-cast-back",
            scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F32"), f16(MINS), f16(MAXS),
            tags=("class:cast-back",), spec=("§3.1",),
            reason="normalized block scales are cast back to the tensor dtype (f16), the global stays f32"),
        _qp("compute_q_params/q8s/two-level-f16/bf16-cast-back",
            scheme("Q8S", block=[4], block_dtype="F16", tensor="F32"), bf16(MINS), bf16(MAXS),
            tags=("class:cast-back",), spec=("§3.1",),
            reason="bf16 tensors lose precision when the normalized scales are cast back, before any round-up"),
    ]
    for value in VALUES:
        out.append(_qp(f"compute_q_params/{value.lower()}/block-4/value-range", scheme(value, block=[4]),
                       f32([[-1.8], [-0.5], [-7.0], [0.0]]), f32([[0.5], [1.8], [6.0], [0.0]]), spec=("§3", "§1.2"),
                       reason=f"scale = f32(2*max(|min|,|max|)) / (b-a) with {value}'s range (b-a); the *F "
                              "values are asymmetric yet still scale-only"))
    return out
