"""``compute_range``: MinMax and AbsMean calibration per tensor and per block (spec §2)."""

from __future__ import annotations

import numpy as np

from . import bf16, case, f16, f32, rng, scheme

Q8S = scheme("Q8S")
ROWS = f32([[-1.8, -1.0, 0.0, 0.5], [1.8, 1.0, 0.0, -0.5], [0.01, 0.02, 0.03, 0.04], [-0.01, -0.02, -0.03, -0.04]])


def _range(alias, sch, x, calibration="minmax", *, tags=(), spec=("§2",), reason=""):
    return case(alias, "compute_range", {"scheme": sch, "calibration": calibration}, {"x": x}, tags=tags,
                spec=spec, reason=reason)


def cases():
    out = [
        _range("compute_range/minmax/tensor/spec-example", Q8S, f32(-1.8, -1.0, 0.0, 0.5), spec=("§2", "§10"),
               reason="burn test min_max_calibration_range_per_tensor: min [-1.8], max [0.5]"),
        _range("compute_range/minmax/block-4/spec-example", scheme("Q8S", block=[4]), ROWS, spec=("§2", "§10"),
               reason="burn test min_max_calibration_range_per_block: a [4, 1] grid of per-row ranges"),
        _range("compute_range/minmax/block-2x4-on-4x8/nd", scheme("Q8S", block=[2, 4]),
               np.arange(-16, 16, dtype=np.float32).reshape(4, 8) * np.float32(0.25), spec=("§2", "§1.8"),
               reason="N-D blocks are rectangles: each 2x4 block reduces over two rows and four columns"),
        _range("compute_range/minmax/block-2x2x2-on-2x4x4/rank-3", scheme("Q8S", block=[2, 2, 2]),
               rng("compute_range/minmax/block-2x2x2-on-2x4x4/rank-3").standard_normal((2, 4, 4)).astype(np.float32),
               spec=("§2",), reason="a rank-3 block grid [1, 2, 2]: nested reductions over three block axes"),
        _range("compute_range/minmax/block-4-on-2x6/not-divisible", scheme("Q8S", block=[4]),
               np.ones((2, 6), np.float32), spec=("§2", "§8 #18"),
               reason="calibration never sees partial blocks: a [2, 6] tensor with blocks of 4 panics (the "
                      "message prints the expanded block [1, 4])"),
        _range("compute_range/minmax/tensor/empty", Q8S, np.zeros((0,), np.float32), spec=("§2", "§8 #34"),
               reason="min of an empty tensor panics, with each backend's own message"),
        _range("compute_range/minmax/tensor/nan", Q8S, f32(1.0, np.nan, -2.0, 3.0), spec=("§2",),
               reason="min/max propagate NaN on the CPU backends"),
        _range("compute_range/minmax/block-2/signed-zero-ties", scheme("Q8S", block=[2]),
               f32([[0.0, -0.0, -0.0, 0.0], [-0.0, -0.0, 0.0, 0.0]]), spec=("§2",),
               reason="+0 and -0 compare equal: which one a block's min/max returns is the reducer's tie rule "
                      "(ndarray's argmin/argmax keep the first)"),
        _range("compute_range/minmax/block-4/nan-positions", scheme("Q8S", block=[4]),
               f32([[np.nan, 1, 2, 3], [1, np.nan, -2, 3], [1, 2, 3, np.nan], [4, 5, 6, 7]]), spec=("§2",),
               reason="a NaN anywhere in a block, first or later, is the block's min and max on ndarray"),
        _range("compute_range/minmax/tensor/signed-zero-ties", Q8S, f32(0.0, -0.0, -0.0, 0.0), spec=("§2",),
               reason="the per-tensor min/max reducers' tie rule between +0 and -0 (ndarray keeps the last)"),
        _range("compute_range/absmean/block-2x32/random", scheme("Q2S", block=[2, 32]),
               rng("compute_range/absmean/block-2x32/random").standard_normal((4, 64)).astype(np.float32),
               "absmean", spec=("§2",),
               reason="nested means: the outer block axis by in-order sub-array sums, then the contiguous one"),
        _range("compute_range/absmean/tensor/random-1003", scheme("Q2S"),
               rng("compute_range/absmean/tensor/random-1003").standard_normal(1003).astype(np.float32),
               "absmean", spec=("§2",), reason="a long sum with leftover elements after the eight-way unrolling"),
        _range("compute_range/absmean/tensor/f16-random", scheme("Q2S"),
               rng("compute_range/absmean/tensor/f16-random").standard_normal(300).astype(np.float16), "absmean",
               spec=("§2",), reason="flex sums an f16 mean in f32 and rounds once (ndarray has no f16 tensors)"),
        _range("compute_range/absmean/block-32/bf16-random", scheme("Q2S", block=[32]),
               rng("compute_range/absmean/block-32/bf16-random").standard_normal((2, 64)).astype(np.float32)
               .astype(bf16(0.0).dtype), "absmean",
               spec=("§2",), reason="a bf16 per-block mean, accumulated in f32 on flex"),
        _range("compute_range/absmean/tensor/random-100", scheme("Q2S"),
               rng("compute_range/absmean/tensor/random-100").standard_normal(100).astype(np.float32), "absmean",
               spec=("§2",), reason="inexact partial sums: the mean's last bit is the backend's summation order"),
        _range("compute_range/absmean/block-32/random", scheme("Q2S", block=[32]),
               rng("compute_range/absmean/block-32/random").standard_normal((2, 64)).astype(np.float32), "absmean",
               spec=("§2",), reason="per-block means of inexact sums: the reducer's summation order per block"),
        _range("compute_range/minmax/tensor/specials", Q8S, f32(-0.0, 1e-45, -np.inf, 3.4028235e38, 0.0),
               spec=("§2",), reason="min/max are exact selections: -0.0, subnormals, infinities pass through"),
        _range("compute_range/minmax/tensor/f16", Q8S, f16(-1.5, 0.25, 65504.0, -6e-8), spec=("§2",),
               reason="calibration runs in the tensor's dtype (f16); ndarray has no f16 tensors"),
        _range("compute_range/minmax/block-4/bf16", scheme("Q8S", block=[4]), bf16(ROWS), spec=("§2",),
               reason="per-block calibration of a bf16 tensor stays in bf16"),
        # AbsMean: inputs are multiples of 1/16 with small sums, so every partial sum is exact and the result
        # does not depend on the backend's summation order (spec §2 "Bit-exactness notes").
        _range("compute_range/absmean/tensor/spec-example", scheme("Q2S"), f32(-0.9, -0.3, 0.0, 0.6), "absmean",
               spec=("§2", "§10"), reason="burn test abs_mean_calibration_range_per_tensor: +-0.45"),
        _range("compute_range/absmean/block-4/spec-example", scheme("Q2S", block=[4]),
               f32([[-0.9, -0.3, 0, 0.6], [0.1, 0.2, 0.3, 0.4]]), "absmean", spec=("§2", "§10"),
               reason="burn test abs_mean_calibration_range_per_block: +-[[0.45], [0.25]]"),
        _range("compute_range/absmean/block-2x4-on-4x8/exact-sums", scheme("Q2S", block=[2, 4]),
               (np.arange(32, dtype=np.float32).reshape(4, 8) - 13) / np.float32(16), "absmean",
               spec=("§2",), reason="nested means over two block axes (outer axis first); sums of multiples of "
                                   "1/16 are exact in any order, so the result is summation-order free"),
        _range("compute_range/absmean/two-level/refused", scheme("Q2S", block=[4], block_dtype="UE4M3",
                                                                 tensor="F32"),
               f32(0.5, -0.25, 0.125, 1.0), "absmean", spec=("§2", "§8 #19"),
               reason="AbsMean has no two-level form: the assert fires before any arithmetic"),
    ]
    return out
