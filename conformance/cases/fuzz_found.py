"""Cases that ``qconform fuzz`` found: each is the shrunk minimal case of one divergence class (against real
burn, or a mutant that escaped the vectors of an op it changes), kept so the golden suite asks it forever.
The reason says what was found and where burn's source decides it (docs/findings.md, "Found by fuzzing")."""

from __future__ import annotations

import numpy as np

from . import case, f16, f32, i8, scheme, u32

BURN = "burn-backend 0.22.0-pre.3"


def cases():
    return (_mutant_escapes() + _real_burn() + _layout_ndarray() + _layout_flex() + _real_wgpu() + _real_gpu_0_22_1() +
            _real_gpu_0_23() + _real_fused_0_22_1() + _real_fused_0_23() + _float_ops())


def _float_ops():
    return [
        case("float_ops/fuzz/e5m2-zero-block-sort", "float_ops",
             {"scheme": scheme("E5M2", block=[2], block_dtype="F16", tensor="F32"),
              "steps": [{"op": "sort", "dim": 0}]}, {"x": f32(0.0, 0.0)}, spec=("§9.5", "§5.1"),
             reason="found by fuzzing burn-flex 0.23.0-pre.1 (seed 20261203, case 2893): a block of zeros quantizes "
                    "to NaN codes (0/0), which decode to f32 0x7FFFE000; burn's sort (sort_unstable_by(f32::total_cmp), "
                    "burn-flex-0.23.0-pre.1 src/ops/sort.rs:40-43) moves those bits and the requantization writes 0x7F; "
                    "the oracle had sorted with numpy, which rewrites a NaN to 0x7FC00000 (then 0x7E)"),
        case("float_ops/fuzz/nan-block-neg-sort", "float_ops",
             {"scheme": scheme("Q8S", block=[2, 2, 2, 2], block_dtype="F32"),
              "steps": [{"op": "neg"}, {"op": "sort", "dim": 0}]},
             {"x": np.where(np.arange(16).reshape(4, 2, 2) == 6, np.float32(3.4028235e38), np.float32(0))},
             spec=("§9.5",),
             reason="found by fuzzing burn-ndarray 0.22.0-pre.3 (seed 20261207, case 17340): f32::MAX overflows its "
                    "block's scale to inf, whose zeros dequantize to NaN (0 * inf); burn-backend's float_neg default "
                    "is float_mul_scalar(x, -1), which keeps the NaN's sign on x86, so the sort puts the NaNs "
                    "before the -0.0 of the other block; burn-flex's -x flips it (profile field neg)"),
        case("float_ops/fuzz/sum-past-f32-range", "float_ops", {"scheme": scheme("Q8S"), "steps": [{"op": "sum"}]},
             {"codes": i8(127, 127, -127), "scales": f32(2.0**120)}, spec=("§9.5",),
             reason="found by fuzzing burn-flex 0.22.1 (seed 20261208, case 18852, a Q2S tensor with UE8M0 scales near "
                    "2^127): the exact sum 127 * 2^120 is an f32, but an order that adds the two positive terms first "
                    "overflows to inf (burn gave -inf), so the sum is undefined; the oracle had checked the terms' "
                    "exactness but not the partial sums' range"),
        case("float_ops/fuzz/past-buffer-scales-then-block-check", "float_ops",
             {"scheme": scheme("Q8S", block=[2, 1, 2], block_dtype="F32"),
              "steps": [{"op": "reshape", "shape": [1, 2]}, {"op": "slice", "ranges": [[0, 1, 1]]}, {"op": "neg"}]},
             {"x": f32(0.0, 0.0)}, spec=("§9.3", "§9.5"),
             reason="found by fuzzing float_ops on burn-wgpu 0.22.1 SPIR-V (seed 20261205): quantized on the device "
                    "(one block of [2]), the reshape to [1, 2] gives the scale tensor a [1, 2] grid over a buffer of "
                    "one scale, so its kernels read past it (undefined); q_slice's requantize asserts [1, 2] against "
                    "the block [2, 1] on the host first, and every run panics there"),
        *[case(f"float_ops/fuzz/oversized-upload-{name}", "float_ops", {"scheme": _E2M1_ND_BLOCK, "steps": steps},
               {"codes": i8(*(np.arange(96) % 15 - 7)).reshape(6, 16), "scales": f32(1.0, 2.0)},
               spec=("§9.5", "§8"), reason=why)
          for name, (steps, why) in _OVERSIZED_UPLOAD.items()],
    ]


# An E2M1 PackedU32 upload wgpu refuses ("provided range was outside slice") only when the queue is flushed: found by
# fuzzing float_ops on burn-wgpu 0.22.1 SPIR-V (seed 20261130, case 310), where the oracle had raised it at the load.
_E2M1_ND_BLOCK = scheme("E2M1", store=("PackedU32", 0), block=[6, 8], block_dtype="UE4M3")
_OVERSIZED_UPLOAD = {
    "reshape": ([{"op": "reshape", "shape": [6, 1, 16]}],
                "the reshape's host-side refusal of an N-D block (burn-cubecl) comes before the deferred upload's"),
    "topk-reshape": ([{"op": "topk", "dim": 1, "k": 8}, {"op": "reshape", "shape": [6, 1, 8]}],
                     "topk is a kernel: nothing flushes, and the reshape's refusal still comes first"),
    "sort-reshape": ([{"op": "sort", "dim": 1}, {"op": "reshape", "shape": [6, 1, 16]}],
                     "burn-backend's float_sort reads the tensor back (try_read_sync): that flush meets the upload's "
                     "panic before the reshape runs"),
}


def _mutant_escapes():
    bf16_tensor = scheme("Q8S", tensor="BF16")
    return [
        # mutant bf16-via-f16 escaped quantize and quantize_dynamic (found by fuzzing, seed 2)
        case("quantize_dynamic/fuzz/bf16-scale-grid", "quantize_dynamic", {"scheme": bf16_tensor}, {"x": f32(0.5)},
             spec=("§4.1", "§5.1"),
             reason="per-tensor BF16 scale: f32 1/254 = 0.003937008 = 2^-8 * 1.00787 lies between the bf16 values "
                    "2^-8 * (1 + 1/128) and 2^-8 * (1 + 2/128) = 0.00396728515625, which round-up picks; "
                    "0.5 / 0.003967285 = 126.03 -> code 126. On the F16 grid (2^-8 * (1 + 9/1024) = 0.0039405823) "
                    "the code would be 127"),
        case("quantize/fuzz/bf16-scale-grid", "quantize", {"scheme": bf16_tensor, "api": "tensor"},
             {"x": f32(0.5), "scales": f32([1 / 254])}, spec=("§4.1", "§5.2"),
             reason="the same scale given explicitly: stored as bf16 round-up 0.00396728515625, code 126 "
                    "(an F16-grid scale 0.0039405823 would give 127)"),
    ]


def _real_burn():
    two_level = scheme("Q8S", block=[2], block_dtype="F16", tensor="F32")
    tensor = scheme("Q8S")
    empty = np.zeros((0,), np.float32)
    return [
        case("compute_q_params/fuzz/two-level-empty", "compute_q_params", {"scheme": two_level},
             {"min": empty, "max": empty}, spec=("§3.1", "§8"),
             reason=f"found by fuzzing real burn: the two-level split takes float_max of the block scales "
                    f"({BURN} quantization/scheme.rs normalize_scales), which panics on an empty tensor with each "
                    "backend's wording (ndarray ops/base.rs:1213 'Cannot compute max of empty tensor', flex "
                    "ops/reduce.rs:432 'max: cannot reduce an empty tensor'); the oracle returned empty scales"),
        case("quantize_dynamic/fuzz/two-level-empty", "quantize_dynamic", {"scheme": two_level}, {"x": empty},
             spec=("§3.1", "§5.1", "§8"),
             reason="the same through quantize_dynamic: per-block MinMax of an empty tensor is empty (no panic), "
                    "then the split's float_max panics before any of quantize's own checks"),
        case("compute_range/fuzz/absmean-empty", "compute_range", {"scheme": tensor, "calibration": "absmean"},
             {"x": empty}, spec=("§2",),
             reason="found by fuzzing real burn: AbsMean is float_mean(float_abs(x)), and the mean of nothing is "
                    "0/0 = NaN on both CPU backends (no panic: only min/max assert a non-empty tensor); gamma = "
                    "NaN, range [-NaN, NaN]"),
        case("compute_range/fuzz/minmax-tensor-zeros-neg-first", "compute_range",
             {"scheme": tensor, "calibration": "minmax"}, {"x": f32(-0.0, 0.0)}, spec=("§2",),
             reason="found by fuzzing real burn-flex: of equal values a per-tensor min/max keeps the later on "
                    "ndarray (ops/base.rs min_float_view/max_float_view fold `if a < b {a} else {b}`: +0, +0) and "
                    "the first on flex (ops/reduce.rs select_float_extremum keeps the current unless the "
                    "candidate is strictly better: -0, -0)"),
        case("compute_range/fuzz/minmax-tensor-zeros-pos-first", "compute_range",
             {"scheme": tensor, "calibration": "minmax"}, {"x": f32(0.0, -0.0)}, spec=("§2",),
             reason="the other order: ndarray keeps the later zero (-0, -0), flex the first (+0, +0)"),
        case("compute_range/fuzz/minmax-tensor-zero-max", "compute_range",
             {"scheme": tensor, "calibration": "minmax"}, {"x": f32(-1.0, 0.0, -0.0)}, spec=("§2",),
             reason="max of [-1, +0, -0]: ndarray keeps the later zero (-0), flex the first (+0)"),
        case("compute_range/fuzz/minmax-tensor-f16-zeros", "compute_range",
             {"scheme": tensor, "calibration": "minmax"}, {"x": f16(-0.0, 0.0)}, spec=("§2",),
             reason="flex's f16 per-tensor fold (reduce_scalar_half from -inf/+inf with select_float_extremum) "
                    "keeps the first zero: -0, -0; ndarray has no f16 tensors"),
        case("compute_range/fuzz/minmax-block-f16-zeros", "compute_range",
             {"scheme": scheme("Q8S", block=[2]), "calibration": "minmax"}, {"x": f16(-0.0, 0.0, 0.0, -0.0)},
             spec=("§2",),
             reason="found by fuzzing real burn-flex: per block, flex's min_dim/max_dim (extremum_dim_half) "
                    "replace only on a strict improvement, so the first zero stays: blocks [-0, -0], [+0, +0]. "
                    "The oracle's fold used numpy's minimum/maximum, whose float16 loops keep their first "
                    "argument on a tie (float32's keep the second): it answered the later zero"),
        case("unpack_u32/fuzz/e4m3", "unpack_u32", {"value": "E4M3", "numel": 4}, {"words": u32(0x40383038)},
             spec=("§7.2", "§7.3"),
             reason="found by fuzzing real burn: on the CPU a user reaches unpack_q_to_i8s only through "
                    "QuantizedBytes::into_vec_i8 (burn-std tensor/quantization.rs), whose PackedU32 branch has "
                    "no fp8/fp4 path: unimplemented!('Not yet supported')"),
        case("dequantize/fuzz/q4s-packed-empty", "dequantize",
             {"scheme": scheme("Q4S", store=("PackedU32", 0), block=[2]), "dtype": "f32"},
             {"codes": np.zeros((0,), np.int8), "scales": empty}, spec=("§6", "§7.2"),
             reason="found by fuzzing real burn-flex: an empty Q4S PackedU32 tensor has an empty byte buffer, "
                    "whose pointer is dangling and 1-aligned, and into_vec_i8's bytemuck::cast_slice to u32 "
                    "refuses it ('cast_slice>TargetAlignmentGreaterAndInputNotAligned') before flex's "
                    "scale-count assert"),
        case("quantize/fuzz/ue8m0-no-scale", "quantize", {"scheme": scheme("Q8S", tensor="UE8M0"), "api": "tensor"},
             {"x": f32(0.0), "scales": empty}, spec=("§4.1", "§5.3", "§8"),
             reason="found by fuzzing real burn-flex 0.22.0-pre.3: UE8M0 has no round-up rule before 0.22.0, but "
                    "round-up (and flex's validated_scale replacement round_up(f32::MIN_POSITIVE), needed only "
                    "for a non-positive or non-finite scale) runs per scale: with no scale nothing panics there, "
                    "and flex's read of scale 0 is out of bounds"),
        case("dequantize/fuzz/e2m1-packed-empty", "dequantize",
             {"scheme": scheme("E2M1", store=("PackedU32", 0), block=[2]), "dtype": "f32"},
             {"codes": np.zeros((0,), np.int8), "scales": empty}, spec=("§6", "§7.2"),
             reason="found by a digest run against real burn-flex: into_vec_i8's PackedU32 branch refuses fp8/fp4 "
                    "values (unimplemented 'Not yet supported') before any cast, so an empty E2M1 tensor never "
                    "reaches the alignment check of dequantize/fuzz/q4s-packed-empty"),
        case("quantize/fuzz/ue8m0-blocks-f16-global-empty", "quantize",
             {"scheme": scheme("Q8S", block=[2], block_dtype="UE8M0", tensor="F16"), "api": "tensor"},
             {"x": empty, "scales": empty, "global": f32([1.0])}, spec=("§7.1", "§8"),
             reason="found by a digest run against real burn-ndarray 0.22.0-pre.3, which writes TensorData::"
                    "quantized at quantize time: QuantizedBytes::new (burn-std tensor/quantization.rs) encodes "
                    "the block scales first (UE8M0: unimplemented before 0.22.0, even for no scale) and asserts "
                    "an f32 global only after; the oracle checked the global first"),
        case("compute_q_params/fuzz/two-level-nan-global", "compute_q_params", {"scheme": two_level},
             {"min": f32(np.nan), "max": f32(np.nan)}, spec=("§3.1",),
             reason="found by fuzzing real burn-flex 0.22.1: normalize_scales clamps the global with "
                    "float_clamp_min(global, f32::MIN_POSITIVE); flex 0.22.0-pre.3 computes x.max(min), which maps "
                    "a NaN global to MIN_POSITIVE, flex 0.22.1 tests is_nan first (ops/float.rs:689-699) and "
                    "keeps the NaN, like ndarray"),
        case("quantize_dynamic/fuzz/two-level-nan-block", "quantize_dynamic",
             {"scheme": scheme("Q8S", block=[4, 2], block_dtype="F16", tensor="F32")},
             {"x": f32([[0, 0, 0, np.nan], [0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0, 0, 0]])}, spec=("§3.1", "§5.3"),
             reason="the same through quantize_dynamic on flex: a NaN in one block makes the global NaN on 0.22.1, "
                    "every normalized block scale NaN, and validated_scale replaces each by round_up(MIN_POSITIVE) "
                    "on the F16 grid (5.96e-8); on 0.22.0-pre.3 the global is MIN_POSITIVE and the other block's "
                    "normalized scale rounds up to F16's maximum, 65504"),
        case("ternary_matmul/fuzz/inf-activation", "ternary_matmul", {},
             {"lhs": f32([[0.50000006, 1.0, -1.0], [0.0, np.inf, 0.0]]),
              "rhs_codes": np.array([[-1, -1], [-1, -1], [-1, 0]], np.int8), "rhs_scale": f32([1.0])},
             spec=("§9.4",),
             reason="found by fuzzing real burn-flex: with an inf in the activation the GEMM tolerance bound was "
                    "computed over inf * 0 = NaN, so no answer could pass; outputs fed by inf or NaN compare as "
                    "such and the bound covers the finite ones (the GEMM's -0.5 vs the exact -0.50000006)"),
    ]


def _real_wgpu():
    """Found by fuzzing burn-wgpu (WGSL, lavapipe; seed 20261130) against burn-0.22.0-pre.3/wgpu."""
    packed = scheme("Q8S", store=("PackedU32", 0))
    return [
        case("quantize/fuzz/f16-input-f32-scale-reinterpreted", "quantize", {"scheme": packed, "api": "tensor"},
             {"x": f16([4.0] * 4), "scales": u32(0x3F804000).view(np.float32)}, spec=("§5.4",),
             reason="an f16 input with an f32 scale 1.001953125 (bits 0x3F804000): the GPU kernel views the scales "
                    "buffer as the input dtype (ScalesView<F>, cubek-quant quantize.rs) and reads the low half "
                    "0x4000 = 2.0, so 4 / 2 -> code 2 and the stored scale is 2.0; the CPU backends convert (4)"),
        case("dequantize/fuzz/e4m3-packed-integers", "dequantize",
             {"scheme": scheme("E4M3", store=("PackedU32", 0)), "dtype": "f32"},
             {"codes": i8([-128, 3, 0, 127]), "scales": f32([1.0])}, spec=("§6",),
             reason="a PackedU32 word holds integers, for E4M3 too: burn-wgpu dequantizes code -128 to -128.0, "
                    "not E4M3's 0x80 (-0.0)"),
        case("quantize/fuzz/block-longer-than-rank", "quantize",
             {"scheme": scheme("E4M3", store=("PackedU32", 0), block=[2, 4, 2]), "api": "tensor"},
             {"x": f32(np.zeros((2, 4))), "scales": f32([1.0])}, spec=("§8 #59",),
             reason="per_block([2, 4, 2]) on a [2, 4] tensor: cubek-quant asserts on the block's own last entry "
                    "(lib.rs:30, 2), not on the block cut to the tensor's rank (4) (issue 9, prediction 8)"),
        case("dequantize/fuzz/packed-word-shares-a-scale", "dequantize",
             {"scheme": scheme("Q8S", store=("PackedU32", 0), block=[2]), "dtype": "f32"},
             {"codes": i8([-127] * 4), "scales": f32([0.0, 1.0])}, spec=("§6",),
             reason="per_block([2]) Q8S codes in one u32 word: burn-wgpu's packed dequantize reads one scale per "
                    "word, the first value's (0), so all four give -0.0; the CPU backends give -0, -0, -127, -127"),
        case("dequantize/fuzz/ue4m3-scales-packed", "dequantize",
             {"scheme": scheme("Q8S", store=("PackedU32", 0), block=[4], block_dtype="UE4M3"), "dtype": "f32"},
             {"codes": i8([-127] * 4), "scales": f32([1.0])}, spec=("§6",),
             reason="UE4M3 block scales: burn-wgpu's dequantize kernel reads a scalar fp8, which WGSL cannot "
                    "compile (reported at read-back); the CPU backends decode the byte"),
        case("dequantize/fuzz/packed-dim-beyond-rank", "dequantize",
             {"scheme": scheme("Q8S", store=("PackedU32", 1), block=[4]), "dtype": "f32"},
             {"codes": i8([-127, 1, 2, 3]), "scales": f32([1.0])}, spec=("§7.6",),
             reason="PackedU32(1) on a rank-1 tensor: burn-wgpu indexes the shape at rank - 1 - 1, which wraps "
                    "(index out of bounds ... 18446744073709551615); the CPU reader asserts the packed dim"),
        # found by fuzzing burn-wgpu, seed 1130 (30,000 cases): docs/findings.md, "PackedU32 along an outer dim"
        case("dequantize/fuzz/packed-outer-dim-words-row-major", "dequantize",
             {"scheme": scheme("Q8S", store=("PackedU32", 1), block=[2, 4]), "dtype": "f32"},
             {"codes": i8([[-127, -126, -127, -127], [-127, -127, -127, -127]]), "scales": f32([1.0])},
             spec=("§6", "§7.6"),
             reason="PackedU32(1) on [2, 4]: q_from_data packs the bytes row-major along the last dim (new_quantized, "
                    "ops/qtensor.rs:85-92); dequantize swaps the packed axis innermost and reads the words of a [4, 1] "
                    "view through those strides (kernel/quantization/dequantize.rs:16-37), writing word w to the "
                    "[4, 2] output's elements 4w..4w+3: row 0's -126 lands at [1, 0] and [0, 1] reads -127"),
        # found by fuzzing float_ops on burn-wgpu 0.22.1, seed 20261210: docs/findings.md, "the stored twin's bytes"
        case("dequantize/fuzz/packed-outer-dim-read-as-stored", "dequantize",
             {"scheme": scheme("Q8S", store=("PackedU32", 1)), "dtype": "f32"},
             {"codes": i8(np.arange(32).reshape(8, 4) - 16), "scales": f32([0.5])}, spec=("§6", "§7.6"),
             reason="burn-cubecl 0.22.1 holds a tensor packed along an outer axis as its stored twin (that axis swapped "
                    "innermost, new_quantized, ops/qtensor.rs:70-121) and takes the bytes as the twin's row-major "
                    "memory, but burn-std 0.22.1 writes TensorData::quantized in the logical row-major order: the "
                    "[8, 4] values come back transposed (row 0 holds codes 0, 8, 16, 24 of the flat order); burn-std "
                    "0.23.0-pre.1 writes the stored order itself"),
        case("dequantize/fuzz/packed-outer-dim-read-as-stored-blocks", "dequantize",
             {"scheme": scheme("Q8S", store=("PackedU32", 1), block=[4]), "dtype": "f32"},
             {"codes": i8((np.arange(96).reshape(8, 12) % 61) - 30), "scales": f32([2.0 ** (k % 5 - 2) for k in range(24)])},
             spec=("§6", "§7.6"),
             reason="the same with blocks of 4 along the last dim: the twin's blocks are [4, 1] and its [3, 8] scale "
                    "grid is read from the logical [8, 3] grid's row-major order, so the scales move too"),
        case("dequantize/fuzz/packed-outer-dim-block-longer-than-rank", "dequantize",
             {"scheme": scheme("Q8S", store=("PackedU32", 1), block=[3, 6, 3, 5]), "dtype": "f32"},
             {"codes": i8(np.arange(72).reshape(6, 12) - 36), "scales": f32([0.5, 1.0, 2.0, 4.0])},
             spec=("§6", "§7.6"),
             reason="the first fuzz class (per_block([3, 6, 3, 5]) on [6, 12], cut to [3, 6]: a 2 x 2 grid): each "
                    "word of the swapped [12, 2] view takes the scale of the element it names in the swapped shape, "
                    "while its values come from memory row-major; values and scales both move"),
        _ql("qlayout/fuzz/packed-outer-dim-expand", scheme("Q8S", store=("PackedU32", 1), block=[4, 4]),
            [{"op": "expand", "shape": [8, 4]}], [[-127] * 4] * 7 + [[-127, -127, -127, -126]], [1.0, 1.0],
            spec=("§6", "§9.1"),
            reason="seed 1130 case 16: expand dequantizes the loaded PackedU32(1) [8, 4] tensor; word (i, j) of the "
                   "swapped [4, 2] view is memory word i + j, so row 7 is never read and its -126 is lost"),
        _ql("qlayout/fuzz/packed-outer-dim-transposed", scheme("Q8S", store=("PackedU32", 1), block=[4, 4]),
            [{"op": "transpose"}, {"op": "expand", "shape": [4, 8]}], np.arange(32).reshape(8, 4) - 16,
            [1.0, 2.0], spec=("§6", "§9.1"),
            reason="a transpose moves the packed dim to 0 and swaps the strides: the dequantize then reads the "
                   "row-major memory in the transposed order, the logical tensor again"),
        _ql("qlayout/fuzz/reshape-packed-dim-unaligned", scheme("Q8S", store=("PackedU32", 0)),
            [{"op": "reshape", "shape": [1, 4, 1]}], [[-127, -127, -127, -127]], [1.0], spec=("§7.6", "§9.3"),
            reason="seed 1130 case 17742: q_reshape refuses a new shape whose packed dim (the last, PackedU32(0)) is "
                   "not whole words: 'not implemented: Cannot reshape packed tensor: inner dimension 1 is not "
                   "aligned with packing factor 4' (burn-cubecl ops/base.rs:302-316); the oracle reloaded the "
                   "moved tensor and expected new_quantized's 'Can't store in u32'"),
        _ql("qlayout/fuzz/held-tensor-no-reload-checks", scheme("Q8S", store=("PackedU32", 0)),
            [{"op": "reshape", "shape": [1, 4]}, {"op": "transpose"}], [-127, -127, -127, -127], [1.0],
            spec=("§7.4", "§9.3"),
            reason="seed 1130 case 25497: the transposed [4, 1] tensor stays on the device (no new_quantized, so "
                   "no 'Can't store in u32'); it dequantizes, and reading it back meets burn-std's packed-dim "
                   "assert"),
        _ql("qlayout/fuzz/reshape-recomputes-packed-outer-dim", scheme("Q8S", store=("PackedU32", 1), block=[2, 4]),
            [{"op": "reshape", "shape": [2, 4, 1]}], [[-127] * 4] * 2, [1.0], spec=("§9.3",),
            reason="seeds 1 and 3 (wgpu): the words view of a PackedU32(1) [2, 4] tensor is [1, 4] with the memory's "
                   "strides [1, 1] (new_quantized divided the last dim), not contiguous, and [2, 1, 1] is no split of "
                   "it: reshape_analysis says HighlyPermuted (burn-std tensor/mod.rs:216-275), so q_reshape skips its "
                   "N-D block check and refuses to recompute a buffer with 4 block scales (ops/base.rs:413-428)"),
        # found by fuzzing the SPIR-V build (burn-0.22.0-pre.3/vulkan), seed 1: q_reshape's checks follow the analysis
        _ql("qlayout/fuzz/reshape-same-shape-nd-block", scheme("Q8S", block=[2, 2]),
            [{"op": "reshape", "shape": [2]}, {"op": "flip", "axes": [0]}], [-127, -127], [1.0], spec=("§9.3",),
            reason="vulkan seed 1 cases 1041, 1478, 2912: a reshape to the tensor's own shape reaches q_reshape, "
                   "whose contiguous values take the N-D block check (per_block([2, 2]) has two extents): 'Reshape of "
                   "ND block-quantized tensor is not yet supported.' before the flip's refusal"),
        _ql("qlayout/fuzz/reshape-split-nd-block", scheme("Q8S", block=[2]),
            [{"op": "transpose"}, {"op": "reshape", "shape": [2, 1, 1]}], [[-127, -127]], [1.0], spec=("§9.3",),
            reason="vulkan seed 1 case 8357: the transpose makes the block [2, 1] (two extents) and the values "
                   "strided; [2, 1] -> [2, 1, 1] only splits dims, so reshape_analysis says Split and q_reshape "
                   "refuses it: 'Split reshape of ND block-quantized tensor is not yet supported.' (ops/base.rs:347)"),
        # found by fuzzing the SPIR-V build (burn-0.22.1/vulkan), seed 20261205: the scale grid follows the new shape
        _ql("qlayout/fuzz/reshape-keeps-the-first-scales", scheme("Q8S", store=("PackedU32", 0), block=[2, 4, 4]),
            [{"op": "reshape", "shape": [1, 3, 4]}], np.arange(12).reshape(3, 4) - 6, [0.5, 2.0], spec=("§9.3",),
            reason="per_block([2, 4, 4]) on [3, 4] takes its first two extents ([2, 4]: a [2, 1] grid, 2 scales); "
                   "the unsqueeze to [1, 3, 4] takes all three (a [1, 1, 1] grid), and q_reshape gives the scale "
                   "tensor that shape over the same buffer (ops/base.rs:426-445): the first scale alone, so row 2 "
                   "reads 0.5 where it read 2.0 (values 1, 1.5, 2, 2.5 instead of 4, 6, 8, 10)"),
        _ql("qlayout/fuzz/fp8-packed-matmul-wgsl", scheme("E4M3", store=("PackedU32", 0), block=[4]),
            [{"op": "matmul", "rhs": [1.0] * 4, "shape": [4, 1]}], [[1] * 4] * 2, [1.0, 1.0], spec=("§9.4",),
            reason="seed 2 case 12521: burn-cubecl's q_matmul hands the quantized lhs to the matmul kernel "
                   "(ops/qtensor.rs:325-353), which reads E4M3 codes as scalar fp8 even from u32 words: WGSL cannot "
                   "compile it (reported at read-back), as for a Native fp8 lhs; Q8S words compile"),
        # found by fuzzing the SPIR-V build (burn-0.22.0-pre.3/vulkan), seed 20261130
        case("quantize_view/fuzz/strided-view-one-element-units", "quantize_view",
             {"scheme": scheme("Q8S", block=[2]), "view": [{"op": "transpose"}, {"op": "flip", "axes": [0]},
                                                           {"op": "transpose"}]},
             {"x": f32(np.arange(4).reshape(1, 4))}, spec=("§5.4", "§9"),
             reason="seed 20261130 case 604: the flip writes a fresh [4, 1] tensor (strides [1, 1]), the transpose "
                    "views it as [1, 4] with strides [1, 1]; tensor_vector_size_parallel wants every other stride a "
                    "multiple of the width (cubecl-core lib.rs:128-168), so the Native kernel reads one element per "
                    "unit and per_block([2]) passes the width check a contiguous [1, 4] fails ('divisible by 4')"),
        case("quantize/fuzz/empty-f16-keeps-given-f32-scale", "quantize",
             {"scheme": scheme("Q8S"), "api": "tensor"}, {"x": f16(np.zeros(0)), "scales": f32([0.5])},
             spec=("§5.4",),
             reason="seed 20261130 case 731: no kernel runs for an empty tensor, so the given f32 scale's bytes are "
                    "the F32 storage as they are (0.5; measured three times); the kernel's f16 view of the scale "
                    "(which would read 0x0000 = 0.0) never happens"),
        _ql("qlayout/fuzz/upload-panic-after-host-checks", scheme("E2M1", store=("PackedU32", 0), block=[8]),
            [{"op": "gather", "dim": 0, "indices": [0], "shape": [1]}], [0] * 8, [1.0], spec=("§7.4", "§9.1"),
            reason="seed 1130 case 25164: the 4-bit codes' oversized upload panics only when wgpu flushes the "
                   "queued copy; the gather's requantization refuses the [1] tensor's block [8] on the host first"),
    ]


def _real_gpu_0_22_1():
    """Found by fuzzing burn 0.22.1's WGSL binary (lavapipe; seed 20261130) against burn-0.22.1/wgpu."""
    ones = scheme("Q8S", block=[1, 1, 1, 1, 1])
    return [
        case("compute_range/fuzz/rank-5-block-of-ones", "compute_range", {"scheme": ones, "calibration": "minmax"},
             {"x": f32(np.full((1, 1, 1, 1, 2), 0.5))}, spec=("§2",),
             reason="a block of 1s on a rank-5 tensor: reduce_blocks reshapes to 10 dims, which burn-cubecl 0.22.1 "
                    "holds, and reduces no axis (each block extent is 1), so min = max = x; cubecl's 8-dim limit "
                    "panics only in a reduction (burn-backend-0.22.1 quantization/scheme.rs:34-40)"),
        case("quantize/fuzz/empty-tensor-scale-uninitialized", "quantize", {"scheme": scheme("Q8S"), "api": "tensor"},
             {"x": f32(np.zeros((0,))), "scales": f32([1.0])}, spec=("§5.4",),
             reason="found by fuzzing burn 0.22.1's SPIR-V binary (seed 20261130, case 695): no kernel runs for an "
                    "empty tensor and the per-tensor scale it keeps is fresh memory (0.0 in a fresh process, 0.1875 "
                    "after other requests), undefined; 0.22.0-pre.3 kept the given bytes (1.0)"),
        case("quantize/fuzz/scale-cast-saturates-ue4m3", "quantize",
             {"scheme": scheme("Q8F", block=[4], block_dtype="UE4M3"), "api": "backend"},
             {"x": f32(240, 100, -100, 230, 448, -1, 0, 1), "scales": f32(-np.inf, -1000.0)}, spec=("§5.4", "§4.1"),
             reason="found by fuzzing burn 0.22.1's SPIR-V binary (seed 20261212, quantize cases 2551, 8458, 19994): "
                    "write_scale divides by FS::cast_from(round_up_to_dtype(s)) (cubek-quant quantize.rs:89-108), the "
                    "scale in its storage type; a negative scale the round-up leaves off the grid (-inf, -1000) casts "
                    "to -448 (cubecl's saturating E4M3 conversion), so 240 / -448 rounds to -1; the oracle had divided "
                    "by the rounded f32 (-inf: every code 0)"),
        case("quantize/fuzz/scale-cast-f16-overflows", "quantize",
             {"scheme": scheme("Q8F", block=[4], block_dtype="F16"), "api": "backend"},
             {"x": f32(65504, 1e6, -1e6, 3e5, 65504, 1e6, -1e6, 3e5), "scales": f32(-70000.0, -65519.0)},
             spec=("§5.4", "§4.1"),
             reason="the F16 twin of scale-cast-saturates-ue4m3: the cast to f16 rounds to nearest, so -70000 "
                    "becomes -inf (every code of its block 0) and -65519 becomes -65504 (measured on 0.22.1 SPIR-V)"),
        _ql("qlayout/fuzz/unwritten-matmul-read-empty", scheme("Q8S"),
            [{"op": "matmul", "rhs": [0.25, -1.5], "shape": [2, 1]}, {"op": "select", "dim": 0, "indices": []}],
            [[51, -74], [-47, 1], [111, 58]], [0.25], spec=("§9.1", "§9.4"),
            reason="found by fuzzing burn 0.22.1's WGSL binary (seed 20261216, qlayout case 25, 67 cases): the Native "
                   "i8 matmul fails to compile and its launch returns, its output never written; a select of no "
                   "index is an empty tensor, whose read reads no bytes: an empty result, no failure"),
        _ql("qlayout/fuzz/unwritten-matmul-then-reshape-count", scheme("Q8S"),
            [{"op": "matmul", "rhs": [0.25, -1.5], "shape": [2, 1]}, {"op": "reshape", "shape": [2, 2]}],
            [[51, -74], [-47, 1], [111, 58]], [0.25], spec=("§9.1", "§9.4"),
            reason="the same failed matmul, then a reshape to the wrong count: the reshape's host-side panic comes "
                   "first, the unwritten bytes are never read (seed 20261216, qlayout cases 14639 and 15854)"),
        _ql("qlayout/fuzz/repeat-unit-dim-is-a-view", scheme("Q8S", block=[4, 1]),
            [{"op": "repeat_dim", "dim": 1, "times": 4}], [[-7], [3], [5], [127], [-2], [9], [0], [64]], [0.5, 0.25],
            spec=("§9.1", "§5.4"),
            reason="found by fuzzing burn 0.22.1's SPIR-V binary (seed 20261213, float_ops case 816): burn-cubecl "
                   "repeats a dim of size 1 as a view with stride 0 (kernel/index/repeat_dim.rs:47-53), so the "
                   "requantization reads [8, 4] one element per unit and the block's last extent 1 passes the vector "
                   "check that a contiguous [8, 4] (width 4) fails"),
        _ql("qlayout/fuzz/upload-flushed-by-launches", scheme("Q4F", store=("PackedU32", 0), block=[5, 2, 1, 8],
                                                                block_dtype="UE8M0"),
            [{"op": "select", "dim": 1, "indices": [0, 0, 1, 0]}, {"op": "cat", "dim": 0, "copies": 1}],
            np.arange(80).reshape(5, 2, 1, 8) % 15 - 7, [1.0], spec=("§7.4", "§9.1"),
            reason="found by fuzzing burn 0.22.1's SPIR-V binary (seed 20261212, qlayout case 10461): the 4-bit "
                   "codes' oversized upload is copied when cubecl-wgpu's stream flushes, and the two requantizing "
                   "steps queue its 32 tasks (tasks_max) before the read, so the range assert panics inside a launch "
                   "and the read reports it torn down (cubecl-runtime TornDown); with a [8] block two steps do not, "
                   "three do: undefined there (upload_flushed_by_launches), the assert elsewhere"),
        case("quantize/fuzz/empty-block-tensor-holds-no-scales", "quantize",
             {"scheme": scheme("Q8F", block=[4]), "api": "backend"},
             {"x": f32(np.zeros((0, 4))), "scales": f32([1.75])}, spec=("§5.4",),
             reason="found by fuzzing burn 0.22.1's SPIR-V binary (seed 20261212, quantize case 5793): the output's "
                    "scale tensor is the block grid, here empty, whatever was given; the oracle had kept the given "
                    "scale, whose 4 bytes the read-back then took for codes"),
        _ql("qlayout/fuzz/same-shape-reshape-nd-block", scheme("Q8S", block=[2, 2]), [{"op": "reshape", "shape": [2]}],
            [-127, -127], [1.0], spec=("§9.3",),
            reason="found by fuzzing burn 0.22.1's SPIR-V binary (seed 20261130, case 1815): a reshape to the tensor's "
                   "own shape still meets q_reshape's N-D block check (`Reshape of ND block-quantized tensor "
                   "is not yet supported.`), on 0.22.0-pre.3 too (the oracle let a same-shape reshape through)"),
        # found by fuzzing burn 0.22.1's SPIR-V binary, seed 20261212 (qlayout)
        _ql("qlayout/fuzz/unsqueezed-transpose-stays-strided", scheme("Q8S", block=[3, 1]),
            [{"op": "transpose"}, {"op": "reshape", "shape": [1, 2, 6]}], np.arange(12).reshape(6, 2) * 9 - 50,
            [0.5, 2.0, 0.25, 4.0], spec=("§9.3", "§5.4"),
            reason="cases 93, 1180, 1503: the transposed [2, 6] (strides [1, 2]) unsqueezed is Broadcasted, so "
                   "q_reshape only rewrites its strides (ops/base.rs:434-458) and the dequantize kernel still reads it "
                   "one element per unit; the oracle had taken the reshaped tensor as contiguous, read in pairs "
                   "sharing the first element's scale, so [0, 3] took block 0's 0.5 instead of block 1's 0.25"),
        _ql("qlayout/fuzz/kept-scale-rank-transpose", scheme("Q8S", block=[4]),
            [{"op": "reshape", "shape": [1, 3]}, {"op": "transpose"}], [78, -6, -58], [36.0], spec=("§9.3",),
            reason="case 1193: [3] -> [1, 3] under per_block([4]) keeps the scale tensor's shape (a block longer "
                   "than the new last dim), at rank 1; the transpose swaps dims 0 and 1 of that metadata too "
                   "(ops/base.rs:156): 'index out of bounds: the len is 1 but the index is 1'; the oracle only "
                   "checked that the scale count covers the new grid (1 of 1 here)"),
        _ql("qlayout/fuzz/kept-scale-rank-permute", scheme("Q8S", block=[4]),
            [{"op": "reshape", "shape": [1, 3]}, {"op": "permute", "axes": [1, 0]}], [78, -6, -58], [36.0],
            spec=("§9.3",),
            reason="the permute twin: the scale metadata's permute returns RankMismatch, unwrapped (ops/base.rs:187, "
                   "cubecl-zspace-0.11.3 src/shape.rs:242-248; measured)"),
        _ql("qlayout/fuzz/packed-dim-past-a-flat-reshape", scheme("Q8S", store=("PackedU32", 0)),
            [{"op": "transpose"}, {"op": "reshape", "shape": [8]}], [[1, 2, 3, 4], [5, 6, 7, 8]], [0.5],
            spec=("§9.3",),
            reason="seed 20261212, float_ops case 2732: the transpose carries the packed dim to 1, and q_reshape's "
                   "`rank - packed_dim - 1` for the rank-1 target wraps (a release build) before it indexes the new "
                   "shape (ops/base.rs:350): 'index out of bounds: the len is 1 but the index is "
                   "18446744073709551615' on every GPU build (measured on 0.22.0-pre.3 and 0.22.1, WGSL and SPIR-V); "
                   "the oracle skipped the words check for a packed dim past the rank"),
        # found by fuzzing burn 0.22.1's SPIR-V binary, seed 20261212 (quantize_view): burn-std's reshape analysis
        case("quantize_view/fuzz/zero-dim-split-scan-out-of-bounds", "quantize_view",
             {"scheme": scheme("Q8S", block=[4]), "view": [{"op": "permute", "axes": [0, 2, 1]}]},
             {"x": f32(np.zeros((2, 0, 4)))}, spec=("§2", "§9"),
             reason="26 cases: the permuted [2, 4, 0] view (strides [0, 1, 4]) is not contiguous, so reduce_blocks' "
                    "split to [2, 1, 4, 1, 0, 4] takes reshape_analysis' split scan (burn-std-0.22.1 "
                    "src/tensor/mod.rs:262-275), where the 0 matches the last old dim and the 4 after it reads "
                    "shape[3]: 'index out of bounds: the len is 3 but the index is 3', on every GPU build (measured "
                    "on 0.22.0-pre.3 and 0.22.1, WGSL and SPIR-V); the CPU backends copy the view first"),
        case("quantize_view/fuzz/expanded-view-copied-past-8-dims", "quantize_view",
             {"scheme": scheme("Q8S", block=[2]),
              "view": [{"op": "expand", "shape": [2, 2]}, {"op": "reshape", "shape": [2, 1, 1, 1, 2]}]},
             {"x": f32([[1.0, 2.0]])}, spec=("§2",),
             reason="22 cases: the expanded row (stride 0) reshaped to rank 5 keeps its strides (a split), but its "
                    "block split to 10 dims cannot (a new 2 meets an old unit dim: HighlyPermuted), so burn-cubecl "
                    "copies it, and the copy kernel's rank-10 output fails to bind (cubecl-std-0.11.3 "
                    "src/tensor/view/launch.rs:305: 'a binding's tiling ...'), before the reduction whose tensor "
                    "check a contiguous rank-5 view meets ('a tensor's tiling ...')"),
        case("quantize_view/fuzz/perpendicular-vectors-read-half", "quantize_view",
             {"scheme": scheme("Q8S"), "view": [{"op": "permute", "axes": [0, 1, 3, 2]}]},
             {"x": f32(np.arange(32).reshape(4, 1, 2, 4) - 8)}, spec=("§2", "§9"),
             reason="7 cases: float_max of the permuted [4, 1, 4, 2] view (strides [8, 8, 1, 4]) reduces the unit dim "
                    "first, perpendicular; cubek-reduce bounds its vectors by axes 0 (counted though axes 2 and 3 "
                    "come in another order in the output) and takes vectors of 4 elements adjacent in memory, "
                    "starting each unit's at a whole vector below its first output's element (src/launch/utils.rs:"
                    "57-95, src/components/readers/perpendicular.rs:40-67): the reduction reads elements 0-3, 8-11, "
                    "16-19, 24-27 (each twice), so the max is 19, not 23, and 20..23 saturate; measured with one "
                    "1000.0 moved over every element on 0.22.1 SPIR-V"),
        case("quantize_view/fuzz/empty-slice-is-a-fresh-tensor", "quantize_view",
             {"scheme": scheme("E5M2", block=[5]),
              "view": [{"op": "slice", "ranges": [[4, -2, -2], [0, -3, -3], [-7, 2, -1]]},
                       {"op": "permute", "axes": [0, 2, 1]}, {"op": "slice", "ranges": [[0, -1, 1]]}]},
             {"x": f32(np.zeros((3, 2, 5)))}, spec=("§5.4", "§9"),
             reason="2 cases: Tensor::slice returns a fresh empty tensor when the result has a 0 dim (burn-tensor-0.22.1 "
                    "src/tensor/api/base.rs:1357-1360), here twice, so the [0, 2, 0] view is contiguous: no split "
                    "scan panic, and the Native kernel's vector width 4 refuses block [5] ('divisible by 4'); the "
                    "oracle had kept the permuted strides through the second (empty) slice, and expected the scan's panic"),
    ]


def _real_fused_0_22_1():
    """Found by fuzzing burn 0.22.1's default (fused) WGSL binary (lavapipe; seed 20261202) against
    burn-0.22.1/wgpu-fused."""
    return [
        case("quantize/fuzz/packed-dim-beyond-rank-on-the-stream", "quantize",
             {"scheme": scheme("Q4F", store=("PackedU32", 1)), "api": "tensor"},
             {"x": f32(np.ones(8)), "scales": f32([1.0])}, spec=("§7.6",),
             reason="found by fuzzing the fused 0.22.1 WGSL binary (seed 20261202, quantize case 127): B::quantize's "
                    "packed-axis swap (burn-cubecl-0.22.1 ops/qtensor.rs:106-110) runs on burn-fusion's stream, so "
                    "the fused build reports it at the read; the lean builds at the call"),
        case("quantize_dynamic/fuzz/q-params-checks-past-a-failed-range", "quantize_dynamic",
             {"scheme": scheme("Q8S", block=[2, 1, 1, 2, 4], block_dtype="UE8M0", tensor="F32")},
             {"x": f32(np.ones((2, 1, 1, 2, 4)))}, spec=("§2", "§3.1"),
             reason="found by fuzzing the fused 0.22.1 WGSL binary (seed 20261202, quantize_dynamic case 2): the "
                    "rank-5 range fails in its first reduction (cubecl's tiling holds 8 dims) on the stream, held "
                    "in error; compute_q_params still runs at the call, so its UE8M0 two-level assert comes first "
                    "on the fused build, the reduction's panic on the lean ones"),
    ]


def _real_fused_0_23():
    """Found by fuzzing burn 0.23.0-pre.1's default (fused) WGSL binary (lavapipe; seed 20261216) against
    burn-0.23.0-pre.1/wgpu-fused: B::quantize's launch checks run on burn-fusion's stream, all of them."""
    return [
        case("quantize_dynamic/fuzz/lookup-mode-refused-on-the-stream", "quantize_dynamic",
             {"scheme": scheme("Q8S", store=("PackedU32", 1), mode="Lookup")}, {"x": f32(np.arange(8).reshape(4, 2))},
             spec=("§7.6",),
             reason="found by fuzzing the fused 0.23 WGSL binary (seed 20261216, quantize_dynamic case 2534, quantize "
                    "case 1271): the quantize launch refuses a scheme that is not Symmetric ('Unsupported "
                    "quantization scheme'), on burn-fusion's stream on the fused build, so it surfaces at the read; "
                    "the lean builds panic at the call"),
        case("quantize/fuzz/empty-block-unwrap-on-the-stream", "quantize",
             {"scheme": scheme("Q8S", store=("PackedU32", 0), raw_block=[], tensor="F32"), "api": "tensor"},
             {"x": f32(np.ones((2, 4))), "scales": f32(np.ones((2, 4))), "global": f32([1.0])}, spec=("§7.6",),
             reason="found by fuzzing the fused 0.23 WGSL binary (seed 20261216, quantize case 998, quantize_dynamic "
                    "case 942): check_block_size_compat's `last().unwrap()` of an empty block is part of the same "
                    "launch, on the stream on the fused build"),
        _ql("qlayout/fuzz/fused-i8-read-then-empty-repeat", scheme("Q8S"),
            [{"op": "mul_scalar", "value": 0.5}, {"op": "repeat_dim", "dim": 1, "times": 0}],
            [[-9, 96, 73, 8], [5, -3, 2, 1]], [0.8125], spec=("§9.3",),
            reason="found by fuzzing the fused 0.23 WGSL binary (seed 20261216, qlayout case 235 and 171 more): the "
                   "fused read of Native i8 codes fails to compile, but repeat_dim 0 times is answered by burn-tensor "
                   "alone, so nothing reads the unwritten bytes and the empty result comes back (two rows: on a "
                   "tensor with a dim of size 1 the fused read is the process's pick)"),
        _ql("qlayout/fuzz/fp8-per-tensor-packed-matmul-fused", scheme("E4M3", store=("PackedU32", 0)),
            [{"op": "matmul", "rhs": [0.5] * 32, "shape": [8, 4]}], np.arange(32).reshape(4, 8) % 50, [0.5],
            spec=("§9.4",),
            reason="found by fuzzing the fused 0.23 WGSL binary (seed 20261216, qlayout case 6588): the fused "
                   "matmul reads a per-block E4M3 tensor's u32 words itself (qlayout/fuzz/fp8-packed-matmul-wgsl), "
                   "but a per-tensor one meets the lean build's scalar-fp8 compile failure"),
        _ql("qlayout/fuzz/select-partial-block-on-the-stream", scheme("E5M2", store=("PackedU32", 1), block=[8]),
            [{"op": "select", "dim": 1, "indices": [0]}], [[51], [-31], [14], [72]],
            [0.75, 0.0146484375, 120.0, 0.5625], spec=("§9.3", "§5.1"),
            reason="found by fuzzing the fused 0.23 WGSL binary (seed 20261216, qlayout case 1007, float_ops case "
                   "7127): burn-fusion queues q_select as one stream op, so the requantize's block assert inside "
                   "burn-cubecl's q_select runs on the stream and surfaces at the read; lean builds panic at the call"),
        _ql("qlayout/fuzz/empty-select-failure-dropped-by-empty-cat", scheme("E4M3", store=("PackedU32", 0)),
            [{"op": "select", "dim": 0, "indices": [0]}, {"op": "cat", "dim": 1, "copies": 2}],
            np.zeros((7, 0), np.int8), [0.0859375], spec=("§9.3",),
            reason="found by fuzzing the fused 0.23 WGSL binary (seed 20261216, qlayout cases 18119 and 13685): "
                   "the requantize of an empty select fails in its reduction on the stream, and a cat of tensors "
                   "empty along the dim is answered by burn-tensor alone, which leaves the failure behind"),
    ]


def _ql(alias, sch, steps, codes, scales, *, reason, spec):
    return case(alias, "qlayout", {"scheme": sch, "steps": steps},
                {"codes": np.asarray(codes, np.int8), "scales": f32(scales)}, spec=spec, reason=reason)


def _layout_ndarray():
    """qlayout classes found by ``qconform fuzz --ops qlayout`` against real burn (seed 7), each as its minimal
    case (docs/findings.md, "Found by fuzzing"; spec §9.1, §9.3, §9.4)."""
    block2 = scheme("Q8S", block=[2])
    rows = [[1, 2], [3, 4]]
    return [
        _ql("qlayout/fuzz/ndarray-permute-kept-scales-too-many", block2,
            [{"op": "slice", "ranges": [[0, 1, 1]]}, {"op": "transpose"}], rows, [0.5, 0.25],
            spec=("§8 #64", "§9.3"),
            reason="found by fuzzing real burn-ndarray (seed 7 case 140 and 43 more classes of 5,000): the slice "
                   "keeps both scales of the [2, 2] tensor for a [1, 2] tensor whose grid is [1, 1]; q_permute "
                   "rebuilds the grid with ArrayD::from_shape_vec(..).unwrap() (ops/qtensor.rs:316), whose "
                   "ShapeError is IncompatibleShape for too many scales. The oracle crashed (numpy reshape)"),
        _ql("qlayout/fuzz/ndarray-permute-kept-scales-too-few", block2,
            [{"op": "reshape", "shape": [2, 1]}, {"op": "transpose"}], [1, 2], [0.5],
            spec=("§8 #64", "§9.3"),
            reason="the other ShapeError: reshaping [2] to [2, 1] keeps one scale, but blocks [1, 2] (the block's "
                   "first extents, right-aligned) give a [2, 1] grid; from_shape_vec finds too few scales: "
                   "OutOfBounds ('out of bounds indexing')"),
        _ql("qlayout/fuzz/ndarray-reshape-kept-scales-too-short", block2,
            [{"op": "reshape", "shape": [2, 1]}], [1, 2], [0.5], spec=("§8 #9", "§8 #29", "§9.3"),
            reason="found by fuzzing real burn-ndarray (seed 7 case 237: Q8S block [8] on [16], reshape [16, 1]): "
                   "dequantize writes the 2 codes and the one F32 scale it holds (6 bytes) into QuantizedBytes, "
                   "whose reader takes the [2, 1] grid's 2 scales (8 bytes) off the end: 'quantized tensor data "
                   "is shorter than its scheme's parameters' before the block-count assert the oracle expected"),
        _ql("qlayout/fuzz/ndarray-reshape-kept-scales-bf16", scheme("Q8S", block=[2], block_dtype="BF16"),
            [{"op": "reshape", "shape": [2, 1]}], [1, 2], [0.5], spec=("§8 #29", "§9.3"),
            reason="the same reshape with a BF16 scale: 2 code bytes + 2 scale bytes are exactly the 2 x 2 bytes "
                   "the reader takes, so it passes (taking the codes as scales) and the strategy's block-count "
                   "assert fires: 1 scale for 2 blocks"),
        _ql("qlayout/fuzz/swap-dims-same-dim-keeps-block", scheme("Q8S", block=[2, 3]),
            [{"op": "swap_dims", "dims": [0, 0]}], [1, 2], [0.5], spec=("§1.11", "§9.1"),
            reason="found by fuzzing real burn (every CPU build; seed 7 case 55: block [4, 5, 6] on [8, 10], "
                   "swap_dims(1, 1)): Tensor::swap_dims(d, d) returns the tensor untouched (burn-tensor "
                   "api/base.rs:470), so the block list [2, 3], longer than the rank, stays; the oracle ran "
                   "permute_block_dims, which keeps the first extent only: [2]"),
        _ql("qlayout/fuzz/permute-identity-keeps-block", scheme("Q8S", block=[2, 3]),
            [{"op": "permute", "axes": [0]}], [1, 2], [0.5], spec=("§1.11", "§9.1"),
            reason="the same for Tensor::permute by the identity (burn-tensor api/base.rs:515, no_op)"),
        _ql("qlayout/fuzz/matmul-rank3-unit-rows-swaps-lhs", block2,
            [{"op": "slice", "ranges": [[0, 1, 1]]}, {"op": "reshape", "shape": [1, 1, 2]},
             {"op": "matmul", "rhs": [1.0, 1.0], "shape": [1, 2, 1]}], rows, [0.5, 0.25],
            spec=("§8 #64", "§9.4"),
            reason="found by fuzzing real burn-ndarray (seed 7 case 658): Tensor::matmul of [.., b, 1, k] by "
                   "[.., 1, k, n] swaps the lhs's last two batch/row dims first (burn-tensor api/numeric.rs:817-838), "
                   "a q_swap_dims on a quantized lhs: q_permute meets the 2 scales the slice kept for a [1, 1, 1] "
                   "grid and panics (IncompatibleShape), where the plain matmul would dequantize and assert the "
                   "block count"),
    ]


_VECMAT_RHS = [1.0, 1.0, -1.75, 2.0, -0.75, 0.25, -1.5, -0.5, 0.0, -1.25, 0.0, 0.5, 0.5, 0.75, 0.25, 1.5, 1.75, -1.5,
               0.5, -0.75, 1.25, -1.0, 0.75, 2.0, -0.5, -0.5, 0.25]


def _layout_flex():
    """Found by fuzzing ``qlayout`` against the burn-flex builds (seed 7; docs/findings.md, "Found by fuzzing")."""
    block2 = scheme("Q8S", block=[2], block_dtype="F16")
    codes = [[-40, 115, 51, 103], [10, 82, 34, 121]]
    vecmat = {"op": "matmul", "rhs": _VECMAT_RHS, "shape": [1, 1, 9, 3]}
    return [
        _ql("qlayout/fuzz/identity-swap-dims", block2, [{"op": "swap_dims", "dims": [0, 0]}], codes,
            [0.75, 11.0, 0.25, 1.875], spec=("§9.1", "§9.3"),
            reason="found by fuzzing real burn-flex: Tensor::swap_dims(d, d) returns the tensor itself "
                   "(burn-tensor tensor/api/base.rs:470), so flex's block_safe_layout_op never runs and the codes "
                   "and scales stay; the oracle requantized (no block holds a +-127 code, so the scales change)"),
        _ql("qlayout/fuzz/identity-permute", scheme("Q8S", block=[2], block_dtype="UE4M3", tensor="F32"),
            [{"op": "permute", "axes": [0, 1]}], codes, [0.75, 10.0, 0.25, 1.875], spec=("§9.1", "§9.3"),
            reason="the same for an identity Tensor::permute (base.rs:511-520: no_op), on a two-level tensor "
                   "whose global flex would recompute"),
        _ql("qlayout/fuzz/matmul-then-move", scheme("Q2S", block=[3, 3, 2], block_dtype="F16"),
            [{"op": "reshape", "shape": [7, 1]},
             {"op": "matmul", "rhs": [-1.25, 0.25, -0.25, -0.5], "shape": [1, 4]},
             {"op": "swap_dims", "dims": [1, 0]}],
            [1, -1, 0, -1, 0, 1, 0], [0.0029296875, 0.0001983642578125, 0.04296875], spec=("§9.4",),
            reason="found by fuzzing real burn-flex: a GEMM's sign of an exact zero (0 * -1.25: flex -0.0, the "
                   "oracle's f64 product +0.0) and its rounding are its own also when a move follows the matmul; "
                   "the allclose contract now covers every chain holding a matmul, its bound carried through "
                   "the later steps"),
        _ql("qlayout/fuzz/vecmat-swaps-quantized-lhs", scheme("E5M2", block=[3], block_dtype="F16"), [vecmat],
            [[[[-123, 106, -91, -20, -20, -77, 79, 88, 47]]]], [0.01953125, 0.0390625, 4.5],
            spec=("§9.3", "§9.4"),
            reason="found by fuzzing real burn-flex: Tensor::matmul computes [.., B, 1, K] @ [.., 1, K, N] as "
                   "[.., 1, B, K] @ [.., 1, K, N] (burn-tensor tensor/api/numeric.rs:817-838), swapping dims D-3 "
                   "and D-2 of the *quantized* lhs first; flex requantizes a block tensor on swap_dims, and "
                   "under 0.22 the E5M2 integer codes then saturate at 127: [-0.87, -0.46, 3.09] instead of "
                   "[-323.5, -84.3, 1297.9]. ndarray's swap moves the scale grid: exact"),
        _ql("qlayout/fuzz/vecmat-swaps-quantized-lhs-q8s", scheme("Q8S", block=[3], block_dtype="F16"), [vecmat],
            [[[[-123, 106, -91, -20, -20, -77, 79, 88, 47]]]], [0.01953125, 0.0390625, 4.5],
            spec=("§9.3", "§9.4"),
            reason="the same with Q8S: flex's requantization drifts within a code step ([-323.93, -84.55, "
                   "1298.41] instead of [-323.52, -84.29, 1297.90]), beyond the GEMM's error bound"),
        _ql("qlayout/fuzz/e5m2-nan-requantized", scheme("E5M2", block=[2]), [{"op": "flip", "axes": [1]}],
            [[0x7D, 0x3C]], [1.0], spec=("§6", "§9.3"),
            reason="found by fuzzing real burn-flex 0.23.0-pre.1: the NaN code 0x7D decodes (float8 0.7 via f16) "
                   "to f16's canonical NaN, f32 0x7FFFE000, and flex's requantization encodes that NaN as "
                   "0x7E | 0b11 = 0x7F; the oracle decoded with ml_dtypes' NaN and answered 0x7E"),
    ]


def _real_gpu_0_23():
    """Found by fuzzing the burn-wgpu 0.23.0-pre.1 binaries (WGSL and SPIR-V on lavapipe, seed 20261202): burn-std 0.23
    reads a store packed along an outer axis back, which 0.22.1's reader refused (docs/findings.md, "burn 0.23.0-pre.1
    on the GPU route")."""
    one = np.zeros((8, 2), np.float32)
    one[0, 1] = 0.5
    grid = np.zeros((8, 8), np.float32)
    grid[0, 1], grid[0, 2], grid[3, 5] = 0.5, 1.0, -0.5
    return [
        case("quantize/fuzz/e2m1-packed-d1-words-by-values", "quantize",
             {"scheme": scheme("E2M1", store=("PackedU32", 1)), "api": "tensor"},
             {"x": f32(one), "scales": f32([0.5])}, spec=("§7.3", "§11"),
             reason="found by fuzzing real burn 0.23 (seed 20261202 case 360, WGSL): the packed kernel fills word n of "
                    "the word grid from the row-major values 8n.., not from the word's own line along dim 0 "
                    "(cubek-quant quantize.rs:223-283), and q_into_data hands the words back as the lines burn-std "
                    "reads: x[0, 1]'s code 2 (1.0) reads back at [1, 0]"),
        case("quantize/fuzz/q8s-packed-d1-words-by-values", "quantize",
             {"scheme": scheme("Q8S", store=("PackedU32", 1)), "api": "tensor"},
             {"x": f32(grid), "scales": f32([0.5])}, spec=("§7.3", "§11"),
             reason="the same for 8-bit codes, four a word: the word grid is [2, 8], so x[0, 1] and x[0, 2] (word 0) "
                    "read back at [1, 0], [2, 0] and x[3, 5] (word 7, the grid's [0, 7], memory word 14) at [1, 7]; "
                    "Q4S and E2M1 on this [8, 8] read back transposed (measured on WGSL)"),
        case("float_ops/fuzz/device-quantized-outer-packed-words", "float_ops",
             {"scheme": scheme("Q8S", store=("PackedU32", 1)), "steps": [{"op": "add_scalar", "value": 0.0}]},
             {"x": f32(np.arange(1, 65, dtype=np.float32).reshape(8, 8))}, spec=("§7.3", "§11"),
             reason="found by fuzzing real burn 0.22.1 (SPIR-V, seed 20261215 float_ops case 2488): the device's own "
                    "dequantize reads the codes where those words put them, not only the read-back: [8, 8] holding "
                    "1..64, quantized on the device per tensor, dequantizes to [[1, 5, 9, ..], [2, 6, 10, ..], ..] "
                    "(measured on 0.22.1 WGSL and SPIR-V and on 0.23 WGSL with fusion)"),
        *_strided_dequantize_topk(),
        case("quantize_view/fuzz/outer-packed-vector-reads-memory-neighbours", "quantize_view",
             {"scheme": scheme("Q8S", store=("PackedU32", 1)), "view": [{"op": "transpose"}]},
             {"x": f32(np.arange(32).reshape(8, 4) - 16)}, spec=("§7.3", "§11"),
             reason="found by fuzzing real burn 0.23 (WGSL, seed 20261216 quantize_view cases 723 and 9027): the "
                    "[4, 8] transposed view's packed axis 0 has stride 1, so the packed quantize reads each word as "
                    "one vector, the one holding the memory offset of the view's element 4n (cubek-quant "
                    "quantize.rs:441-465, cubecl-std's offset / vector size): word 1 packs column 4 of the view, "
                    "not column 1"),
        _ql("qlayout/fuzz/outer-packed-reshape-reads-words", scheme("Q8S", store=("PackedU32", 1)),
            [{"op": "reshape", "shape": [4, 4, 1]}], np.arange(16).reshape(4, 4) - 8, [0.5], spec=("§9.3",),
            reason="found by fuzzing real burn 0.23 (WGSL, seed 20261216 float_ops case 12536, there through stack): "
                   "q_reshape reshapes the values' words, each holding 4 codes along the packed axis 0, to the new "
                   "shape's words with the packed dim counted in the new rank (axis 1; ops/base.rs:345-363); the "
                   "lanes then run along axis 1, so [4, 4] -> [4, 4, 1] transposes the tensor (SPIR-V alike)"),
        case("float_ops/fuzz/outer-packed-stack-transposes", "float_ops",
             {"scheme": scheme("Q8S", store=("PackedU32", 1)), "steps": [{"op": "stack", "dim": 2, "copies": 1}]},
             {"codes": i8(np.arange(16).reshape(4, 4) - 8), "scales": f32([0.5])}, spec=("§9.3", "§11"),
             reason="found by fuzzing real burn 0.23 (WGSL, seed 20261216 float_ops case 12536): stack unsqueezes "
                    "each copy (q_reshape to [4, 4, 1]), which reads a PackedU32(1) tensor's words along the new "
                    "packed axis, so the tensor comes back transposed (one copy: two requantize their cat, "
                    "float_ops/fuzz/fused-cat-in-operand-order)"),
        *_fused_cat_layout(),
    ]


def _fused_cat_layout():
    """Fuzz seed 20261216 float_ops case 12536's class on the fused 0.23 WGSL build: a requantized ``cat`` whose
    operands hold a packed axis innermost, laid out by burn-cubecl-fusion's planner (``Profile.fused_cat_layout``)."""
    q8s = scheme("Q8S", store=("PackedU32", 1))
    loaded = {"codes": i8(np.arange(16).reshape(4, 4) - 8), "scales": f32([0.5])}
    return [
        case("float_ops/fuzz/fused-cat-in-operand-order", "float_ops",
             {"scheme": q8s, "steps": [{"op": "stack", "dim": 2, "copies": 2}]}, loaded, spec=("§9.3", "§11"),
             reason="found by fuzzing real burn 0.23 with fusion (WGSL, seed 20261216 float_ops case 12536's class): "
                    "a stack of two copies requantizes their cat; the lean builds pack the row-major cat's memory "
                    "neighbours along the outer axis, while burn-cubecl-fusion's layout planner may write a fused "
                    "cat in its operands' memory order (the dequantized packed axis innermost; "
                    "launch/output.rs preferred_dim_order), as it does here: undefined on the fused builds, whose "
                    "pick between the two is not modelled"),
        case("float_ops/fuzz/fused-cat-row-major-without-unit-dim", "float_ops",
             {"scheme": q8s, "steps": [{"op": "cat", "dim": 0, "copies": 2}]}, loaded, spec=("§9.3", "§11"),
             reason="measured on real burn 0.23 with fusion (WGSL): a requantized cat of a tensor with no dim of "
                    "extent 1 ([4, 4] here; [2, 4, 4] and [2, 2, 4, 4] alike) is written row-major, so the fused "
                    "build packs it as the lean builds do"),
    ]


def _strided_dequantize_topk():
    """Fuzz seed 20261216 float_ops case 6305 (0.22.1 WGSL): a float tensor dequantized on the GPU from a store
    packed along an outer axis holds that axis innermost, and an elementwise op keeps that memory order."""
    q8f = scheme("Q8F", store=("PackedU32", 1), block=[4, 4])
    codes = {"codes": i8([[[125, -78, -117, 111, -123, 87, 21, -65], [98, -3, -1, 17, -97, 59, 31, 8],
                           [33, -13, -93, -21, 112, -68, -42, 14], [107, -127, 34, -8, -18, -9, 114, 68]]]),
             "scales": f32([2.0 ** -8, 2.0 ** -7])}
    return [
        case("float_ops/fuzz/outer-packed-dequantize-strided-topk", "float_ops",
             {"scheme": q8f, "steps": [{"op": "add", "rhs": "self"}, {"op": "topk", "dim": 2, "k": 7}]}, codes,
             spec=("§7.3", "§11"),
             reason="found by fuzzing real burn 0.22.1 (WGSL, seed 20261216 float_ops case 6305): burn-cubecl's "
                    "dequantize of a PackedU32(1) [1, 4, 8] tensor writes it with dim 1 innermost and hands back the "
                    "permuted view (dequantize.rs:21-45, :66-69); q + q keeps that memory order (in place), so dim 2 "
                    "has stride 4 and cubek-reduce's perpendicular TopK gave rows that are not even sorted: "
                    "undefined on the GPU profiles, a host sort's answer on the CPU ones"),
        case("float_ops/fuzz/outer-packed-dequantize-topk-along-packed-axis", "float_ops",
             {"scheme": q8f, "steps": [{"op": "add", "rhs": "self"}, {"op": "topk", "dim": 1, "k": 3}]}, codes,
             spec=("§7.3", "§11"),
             reason="the same tensor's topk along the packed axis, dim 1, which the device holds innermost (stride 1): "
                    "the parallel TopK, exact on every GPU build (measured on 0.22.1 and 0.23 WGSL)"),
    ]
