"""burn-0.22.0-pre.3/wgpu: burn's GPU kernels as WGSL on Mesa lavapipe (docs/findings.md, "The
burn-0.22.0-pre.3/wgpu profile"); what every GPU profile shares is test_gpu_profiles.py. Expectations are worked
by hand from the measured behaviour and the cited sources, not taken from the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import oracle as o
from burn_panics import burn_raises, raises
from oracle import QuantScheme, QuantValue, ScaleDtype
from oracle.profiles import get_profile

WGPU = "burn-0.22.0-pre.3/wgpu"
FLEX = "burn-0.22.1/flex"
Q8S = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S)
PACKED = Q8S.with_store(o.QuantStore.packed_u32(0))


def bits(a) -> list[int]:
    return np.asarray(a, np.float32).view(np.uint32).tolist()


def test_the_scale_bindings_are_counted_before_the_round_up_rule():
    # UE8M0 has no round-up rule in 0.22.0-pre.3, and a global for a one-level scheme is one binding too many:
    # cubek-quant launch_ref counts first (quantize.rs:218), so that is the message.
    scheme = PACKED.per_block([4], ScaleDtype.UE8M0)
    raises("cubecl.scale_bindings",
           "a scheme with 1 scale level(s) takes as many scale bindings, but 2 were provided",
           o.quantize, np.ones((2, 4), np.float32), scheme, np.ones(2, np.float32), np.ones(1, np.float32),
           profile=WGPU)


def test_the_kernel_round_up_wraps_a_full_payload_nan_and_the_nan_code_is_the_low_end():
    # F16's grid keeps 10 of f32's 23 mantissa bits: bias 0x1FFF, mask ~0x1FFF. 0x7FFFFFFF + 0x1FFF wraps to
    # 0x80001FFE, masked to 0x80000000 (-0.0); the host rule keeps the NaN.
    nan = np.array([0x7FFFFFFF], np.uint32).view(np.float32)
    assert bits(o.round_up(nan, ScaleDtype.F16)) == [0x7FFFFFFF]
    scheme = PACKED.per_block([4], ScaleDtype.F16)
    x = np.array([[1.0, -1.0, 0.5, 0.0], [1.0, 2.0, 3.0, 4.0]], np.float32)
    # scales shaped like the [2, 1] block grid (a flat list would be read as its first entry: see below)
    qt = o.quantize(x, scheme, np.array([[nan[0]], [0.25]], np.float32), profile=WGPU)
    assert bits(qt.scales) == [0x80000000, 0x3E800000]
    # x / -0.0: 1 -> -inf -> -127, -1 -> +inf -> 127, 0.5 -> -inf, 0 / -0.0 = NaN -> lavapipe's clamp gives lo
    assert qt.codes.tolist() == [[-127, 127, -127, -127], [4, 8, 12, 16]]


def test_block_scales_are_read_through_the_given_tensors_strides():
    # [2, 8] under per_block([4]): a [2, 2] grid, block (r, c) at row-major index 2r + c.
    x = np.ones((2, 8), np.float32)
    scheme = PACKED.per_block([4], ScaleDtype.F32)
    given = np.array([0.25, 0.5, 0.125, 1.0], np.float32)
    # a [4, 1] tensor has strides [1, 1]: block (r, c) reads index r + c -> 0, 1, 1, 2
    qt = o.quantize(x, scheme, given.reshape(4, 1), profile=WGPU)
    assert qt.scales.tolist() == [0.25, 0.5, 0.5, 0.125]
    assert qt.codes.tolist() == [[4, 4, 4, 4, 2, 2, 2, 2], [2, 2, 2, 2, 8, 8, 8, 8]]
    # a flat list for a rank-2 tensor: every block reads the first scale
    qt = o.quantize(x, scheme, given, profile=WGPU)
    assert qt.scales.tolist() == [0.25] * 4 and (qt.codes == 4).all()
    # the grid's own shape, and a rank-1 tensor, read as meant; the CPU backends always read row-major
    assert o.quantize(x, scheme, given.reshape(2, 2), profile=WGPU).codes[1].tolist() == [8] * 4 + [1] * 4
    assert o.quantize(np.ones(16, np.float32), scheme, given, profile=WGPU).codes.tolist() == (
        [4] * 4 + [2] * 4 + [8] * 4 + [1] * 4)
    assert o.quantize(x, scheme, given, profile=FLEX).codes[1].tolist() == [8] * 4 + [1] * 4


# What qconform-burn-pre3-wgpu answered on lavapipe (2026-11-30): cubecl-environment's read-back `expect` around
# the whole error chain of the failed compilation.
FP8_SCALAR = 'bytes: host access failed: Read("The server is in an invalid state\\nCaused by:\\n  A launch error happened\\nCaused by:\\n  A compilation error happened during launch\\nCaused by:\\n  A validation error caused the compilation to fail\\nCaused by:\\n  Compilation error: invalid input program.\\nfp8 on WGSL is packed 4 lanes to a u32, a scalar has no representation: use vectors of 4, 8 or 16 lanes\\nBacktrace:\\nNo backtrace available")'
MATMUL_I8 = 'bytes: host access failed: Read("The server is in an invalid state\\nCaused by:\\n  A launch error happened\\nCaused by:\\n  A compilation error happened during launch\\nCaused by:\\n  An error caused the compilation to fail\\nCaused by:\\n  WGSL compilation failed for kernel `matmul_entry_lhs_f32_lhs_size_1_rhs_f32_rhs_size_1_acc_f32_acc_size_1`: Validation Error\\n\\nCaused by:\\n  In Device::create_shader_module, label = \'matmul_entry_lhs_f32_lhs_size_1_rhs_f32_rhs_size_1_acc_f32_acc_size_1\'\\n    \\nShader \'matmul_entry_lhs_f32_lhs_size_1_rhs_f32_rhs_size_1_acc_f32_acc_size_1\' parsing error: no definition in scope for identifier: `i8`\\n  ┌─ wgsl:7:58\\n  │\\n7 │ @group(0) @binding(0) var<storage, read_write> v5: array<i8>;\\n  │                                                          ^^ unknown identifier\\n\\n\\n\\nBacktrace:\\nNo backtrace available")'


def test_ue4m3_scales_do_not_compile_to_wgsl():
    scheme = PACKED.per_block([4], ScaleDtype.UE4M3)
    raises("wgsl.fp8_scalar", FP8_SCALAR, o.quantize, np.ones((1, 4), np.float32), scheme, np.ones(1, np.float32),
           profile=WGPU)
    # no element, no kernel, nothing to compile
    assert o.quantize(np.ones((0, 4), np.float32), scheme, np.ones(0, np.float32), profile=WGPU).codes.size == 0


def test_a_native_tensors_matmul_does_not_compile_to_wgsl():
    from oracle.layout import run_steps
    qt = o.QTensor(np.ones((2, 4), np.int8), np.ones(1, np.float32), None, Q8S)
    # the kernel's name and naga's variable are opaque in the expectation; burn's own text matches it
    burn_raises("wgsl.matmul_i8", MATMUL_I8, run_steps, qt, [{"op": "matmul", "rhs": [1.0] * 4, "shape": [4, 1]}],
                get_profile(WGPU))


def test_loading_packed_sub_byte_codes_overflows_the_device_buffer():
    # TensorData::quantized writes one byte per value (8 bytes for 8 Q4S codes); the device holds one u32 word.
    scheme = PACKED.with_value(QuantValue.Q4S)
    qt = o.QTensor(np.arange(-4, 4, dtype=np.int8), np.ones(1, np.float32), None, scheme)
    raises("wgpu.write_range", "provided range was outside slice", o.dequantize, qt, profile=WGPU)


def test_an_empty_min_is_a_reduce_error():
    raises("cubecl.reduce_empty",
           "called `Result::unwrap()` on an `Err` value: ReduceAxisTooSmall { axis_length: 0, k: 1 }",
           o.compute_range, np.zeros(0, np.float32), Q8S, profile=WGPU)


def test_reshape_limits_of_block_quantized_tensors():
    from oracle.layout import run_steps
    codes = np.ones((4, 8), np.int8)
    nd = o.QTensor(codes, np.ones(4, np.float32), None, PACKED.per_block([2, 4], ScaleDtype.F32))
    raises("cubecl.reshape_nd_block", "not implemented: Reshape of ND block-quantized tensor is not yet supported.",
           run_steps, nd, [{"op": "reshape", "shape": [8, 4]}], get_profile(WGPU))
    # an unsqueeze (a new leading unit dim) keeps every block whole
    x, _ = run_steps(nd, [{"op": "reshape", "shape": [1, 4, 8]}], get_profile(WGPU))
    assert x.shape == (1, 4, 8)
    rows = o.QTensor(codes, np.ones(4, np.float32), None, PACKED.per_block([8], ScaleDtype.F32))
    raises("cubecl.reshape_split_block", "not implemented: Reshape would split a block across multiple rows.",
           run_steps, rows, [{"op": "reshape", "shape": [8, 4]}], get_profile(WGPU))
    # q_reshape checks the packed dim first (ops/base.rs:302-316): rows of 2 are half a word of Q8S
    raises("cubecl.reshape_packed_dim",
           "not implemented: Cannot reshape packed tensor: inner dimension 2 is not aligned with packing factor 4",
           run_steps, rows, [{"op": "reshape", "shape": [16, 2]}], get_profile(WGPU))


# Found by `qconform fuzz` (seed 1130): PackedU32 along an outer dim. The device holds the codes row-major, four to a
# word along the last dim (new_quantized); dequantize swaps the packed axis innermost and reads the words of the
# swapped view through the memory's strides, writing word w to output elements 4w..4w+3 of the swapped shape.

def test_packed_outer_dim_reads_the_row_major_words_through_swapped_strides():
    # [8, 4] PackedU32(1): memory word m is row m. The swapped view [4, 2] has word strides [1, 1], so its word (i, j)
    # is memory row i + j, written to swapped [i, 4j..4j+3] = original rows 4j..4j+3 of column i; it takes the scale
    # of swapped element (i, 4j) = original (4j, i), block (j, 0) of per_block([4, 4]). Worked out:
    # out[r, c] = code(c + r // 4, r % 4) * scale[r // 4], with code(i, k) = 4i + k - 16.
    codes = (np.arange(32) - 16).reshape(8, 4).astype(np.int8)
    scheme = Q8S.with_store(o.QuantStore.packed_u32(1)).per_block([4, 4], ScaleDtype.F32)
    qt = o.QTensor(codes, np.array([1.0, 2.0], np.float32), None, scheme)
    r, c = np.indices((8, 4))
    want = (4 * (c + r // 4) + r % 4 - 16) * np.array([1.0, 2.0])[r // 4]
    assert bits(o.dequantize(qt, profile=WGPU)) == bits(want.astype(np.float32))
    # the CPU reader refuses a packed dim other than 0 outright; the innermost packed dim is the logical tensor
    inner = o.QTensor(codes, np.array([1.0, 2.0], np.float32), None, scheme.with_store(o.QuantStore.packed_u32(0)))
    assert bits(o.dequantize(inner, profile=WGPU)) == bits(codes * np.array([1.0, 2.0], np.float32)[r // 4])


def test_packed_outer_dim_on_a_short_packed_extent():
    # [2, 4] PackedU32(1): the swapped [4, 1] view reads memory words 0 and 1 (rows 0 and 1) into swapped elements
    # 0..3 and 4..7, i.e. original (0,0) (1,0) (0,1) (1,1) get row 0, the rest row 1: -126 at [0, 1] lands on [1, 0]
    codes = np.array([[-127, -126, -127, -127], [-127] * 4], np.int8)
    scheme = Q8S.with_store(o.QuantStore.packed_u32(1)).per_block([2, 4], ScaleDtype.F32)
    qt = o.QTensor(codes, np.ones(1, np.float32), None, scheme)
    assert o.dequantize(qt, profile=WGPU).tolist() == [[-127.0] * 4, [-126.0, -127.0, -127.0, -127.0]]


def test_a_reshape_whose_words_are_not_contiguous_recomputes_and_a_block_tensor_refuses():
    from oracle.layout import run_steps
    # PackedU32(1) [2, 4]: memory holds 2 words (the last dim / 4), strides [1, 1]; the words view [1, 4] would be
    # contiguous with strides [4, 1], so it is not; the target words [2, 1, 1] add a dim of 2 > 1 first:
    # HighlyPermuted, Recompute. The N-D block check (only for stride updates) is skipped; the new grid [2, 2, 1]
    # holds 4 > 1 scales, so the recompute is refused
    qt = o.QTensor(np.ones((2, 4), np.int8), np.ones(1, np.float32), None,
                   Q8S.with_store(o.QuantStore.packed_u32(1)).per_block([2, 4], ScaleDtype.F32))
    raises("cubecl.reshape_recompute_block",
           "not implemented: Cannot reshape a block-quantized tensor when the reshape requires recomputing the buffer.",
           run_steps, qt, [{"op": "reshape", "shape": [2, 4, 1]}], get_profile(WGPU))
    # the same tensor packed along the last dim is contiguous: the N-D block check refuses it
    raises("cubecl.reshape_nd_block", "not implemented: Reshape of ND block-quantized tensor is not yet supported.",
           run_steps, o.QTensor(qt.codes, qt.scales, None, qt.scheme.with_store(o.QuantStore.packed_u32(0))),
           [{"op": "reshape", "shape": [1, 8]}], get_profile(WGPU))


def test_q_reshape_checks_follow_the_values_analysis():
    from oracle.layout import run_steps
    nd = Q8S.per_block([2, 2], ScaleDtype.F32)
    # the same shape: contiguous values, two block extents, no unsqueeze -> the N-D refusal
    raises("cubecl.reshape_nd_block", "not implemented: Reshape of ND block-quantized tensor is not yet supported.",
           run_steps, o.QTensor(np.ones(2, np.int8), np.ones(1, np.float32), None, nd),
           [{"op": "reshape", "shape": [2]}], get_profile(WGPU))
    # [1, 2] transposed: values [2, 1] with strides [1, 2] (not [1, 1]); [2, 1, 1] splits nothing but adds a unit
    # dim: Split; the block became [2, 1], two extents
    raises("cubecl.reshape_split_nd_block", "not implemented: Split reshape of ND block-quantized tensor is not yet "
           "supported.", run_steps, o.QTensor(np.ones((1, 2), np.int8), np.ones(1, np.float32), None,
                                               Q8S.per_block([2], ScaleDtype.F32)),
           [{"op": "transpose"}, {"op": "reshape", "shape": [2, 1, 1]}], get_profile(WGPU))
    # Q4S [2, 2, 8] PackedU32(0): memory words [2, 2, 1], strides [2, 1, 1]. Transposed: [2, 8, 2], packed dim 1,
    # strides [2, 1, 1]; its words view [2, 1, 2] would be contiguous with [2, 2, 1], so it is not. The target's
    # words [2, 1, 1, 2]: 2 meets the old 2, then the last 2 exceeds the old 1 -> HighlyPermuted, a recompute,
    # which 4-bit values refuse first
    q4 = Q8S.with_value(QuantValue.Q4S).with_store(o.QuantStore.packed_u32(0)).per_block([2, 2, 8], ScaleDtype.F32)
    qt = o.QTensor(np.full((2, 2, 8), -7, np.int8), np.ones(1, np.float32), None, q4)
    raises("cubecl.reshape_recompute_sub_byte", "not yet implemented: Reshape with sub-byte values is not supported "
           "when the buffer must be recomputed", run_steps, qt,
           [{"op": "transpose"}, {"op": "reshape", "shape": [2, 1, 8, 2]}], get_profile(WGPU))


def test_an_oversized_upload_panics_after_the_steps_host_checks():
    from oracle.layout import run_steps
    qt = o.QTensor(np.zeros(8, np.int8), np.ones(1, np.float32), None,
                   Q8S.with_value(QuantValue.E2M1).with_store(o.QuantStore.packed_u32(0)).per_block([8], ScaleDtype.F32))
    raises("range.block_not_divisible", "Tensor Shape { dims: [1] } must be evenly divisible by block size [8]",
           run_steps, qt, [{"op": "gather", "dim": 0, "indices": [0], "shape": [1]}], get_profile(WGPU))
    raises("wgpu.write_range", "provided range was outside slice",
           run_steps, qt, [{"op": "expand", "shape": [8]}], get_profile(WGPU))


# Found by `qconform fuzz` against the real binary (seed 20261130), then read in the sources.

def test_given_scales_are_viewed_as_the_input_dtype():
    # f32 bits 0x3F804000 (1.001953125): an f16 view reads the low half first, 0x4000 = 2.0 (issue 9, prediction 2)
    scale = np.array([0x3F804000], np.uint32).view(np.float32)
    assert scale[0] == np.float32(1.001953125)
    x = np.full(4, 4.0, np.float16)
    qt = o.quantize(x, PACKED, scale, profile=WGPU)
    assert qt.codes.tolist() == [2, 2, 2, 2] and qt.scales.tolist() == [2.0]
    assert o.quantize(x, PACKED, scale, profile=FLEX).codes.tolist() == [4, 4, 4, 4]  # 4 / 1.00195 rounds to 4


def test_the_block_divisibility_check_reads_the_blocks_own_last_entry():
    # per_block([2, 4, 2]) on a [2, 4] tensor: cubek-quant asserts on 2 (the block's last entry), not on the 4
    # of the block cut to the tensor's rank
    scheme = PACKED.with_value(QuantValue.E4M3).per_block([2, 4, 2], ScaleDtype.F32)
    raises("cubecl.block_divisibility", "Block size must be divisible by 4, got block_size=2",
           o.quantize, np.zeros((2, 4), np.float32), scheme, np.ones(1, np.float32), profile=WGPU)


def test_a_packed_dim_beyond_the_rank_wraps_a_shape_index():
    scheme = Q8S.with_store(o.QuantStore.packed_u32(1)).per_block([4], ScaleDtype.F32)
    qt = o.QTensor(np.zeros(4, np.int8), np.ones(1, np.float32), None, scheme)
    raises("scale.index_out_of_bounds", "index out of bounds: the len is 1 but the index is 18446744073709551615",
           o.dequantize, qt, profile=WGPU)


def test_a_packed_word_takes_the_scale_of_its_first_value():
    scheme = PACKED.per_block([2], ScaleDtype.F32)
    qt = o.QTensor(np.full(4, -127, np.int8), np.array([0.0, 1.0], np.float32), None, scheme)
    assert bits(o.dequantize(qt, profile=WGPU)) == [0x80000000] * 4  # -127 * 0 = -0.0, four times
    assert o.dequantize(qt, profile=FLEX).tolist() == [-0.0, -0.0, -127.0, -127.0]


def test_ue4m3_scales_do_not_dequantize_either():
    qt = o.QTensor(np.ones(4, np.int8), np.ones(1, np.float32), None, PACKED.per_block([4], ScaleDtype.UE4M3))
    raises("wgsl.fp8_scalar", FP8_SCALAR, o.dequantize, qt, profile=WGPU)


def test_an_empty_tensor_with_scales_that_do_not_fill_their_storage_is_undefined():
    # no kernel runs: an f16 scale (2 bytes) under F32 storage leaves 2 bytes of reused memory (measured: 0x0000
    # in a fresh process, 0x8181 after other requests)
    with pytest.raises(o.UndefinedBehaviour):
        o.quantize(np.zeros(0, np.float16), PACKED, np.array([1.0], np.float16), profile=WGPU, checked=True)
    assert o.quantize(np.zeros(0, np.float32), PACKED, np.array([0.3], np.float32), profile=WGPU).scales.tolist() \
        == [np.float32(0.3)]


def test_a_packed_e2m1_field_is_read_sign_extended():
    # pre3's packed dequantize reads every field as an integer, sign-extended from its width: the 4-bit fields
    # 0x2, 0xC, 0x7, 0x8 of codes 2, 12, 7, -8 are 2, -4, 7, -8 (measured on 0.22.0-pre.3 SPIR-V: a two-level E2M1
    # operand quantized on the device dequantized its 0xC fields to -4 times the scale, not 12).
    from oracle.routes import values
    held = o.QTensor(np.array([2, 12, 7, -8, 0, 1, 15, 9], np.int8), np.full(1, 0.5, np.float32), None,
                     PACKED.with_value(QuantValue.E2M1))  # as the device holds it (loaded codes would overflow)
    for profile in (WGPU, "burn-0.22.0-pre.3/vulkan"):
        assert values(held, get_profile(profile)).tolist() == [1.0, -2.0, 3.5, -4.0, 0.0, 0.5, -0.5, -3.5]
