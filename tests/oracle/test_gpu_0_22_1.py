"""burn-0.22.1/wgpu and burn-0.22.1/vulkan: burn 0.22.1's GPU route (cubek-quant 0.3.1, cubecl 0.11.3) on Mesa
lavapipe (docs/findings.md, "burn 0.22.1 on the GPU route"); what every GPU profile shares is
test_gpu_profiles.py. Expectations are worked by hand from the cited sources and from what the real binaries
printed, not taken from the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import oracle as o
from burn_panics import burn_raises, raises
from oracle import QuantScheme, QuantValue, ScaleDtype
from oracle.errors import panic
from oracle.float_ops import run_chain
from oracle.layout import load, run_steps
from oracle.profiles import get_profile
from oracle.support import check_quantize

WGPU, VULKAN = "burn-0.22.1/wgpu", "burn-0.22.1/vulkan"
PRE3_WGPU, PRE3_VULKAN = "burn-0.22.0-pre.3/wgpu", "burn-0.22.0-pre.3/vulkan"
Q8S = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S)
PACKED = Q8S.with_store(o.QuantStore.packed_u32(0))


def test_minifloats_are_encoded_not_rounded_to_integers():
    # x / 1 clamped to E4M3's +-448 and encoded round-to-nearest-even: 0.3 = 1.2 * 2^-2 -> 1.25 * 2^-2 = 0x2A;
    # 1.5 -> 0x3C; 2.75 = 1.375 * 2 -> 0x43; 447 -> 448 = 0x7E; 500 clamps to 448; NaN clamps to lo (-448 = 0xFE).
    # 0.22.0-pre.3 rounded to integers first: 0, 2, 3, 447 -> 0x00, 0x40, 0x44, 0x7E.
    x = np.array([0.3, 1.5, 2.75, 447.0, 500.0, np.nan, -0.0, -1.5], np.float32)
    scheme = Q8S.with_value(QuantValue.E4M3)
    assert o.quantize(x, scheme, np.ones(1, np.float32), profile=VULKAN).codes.view(np.uint8).tolist() == [
        0x2A, 0x3C, 0x43, 0x7E, 0x7E, 0xFE, 0x80, 0xBC]
    assert o.quantize(x, scheme, np.ones(1, np.float32), profile=PRE3_VULKAN).codes.view(np.uint8).tolist()[:4] == [
        0x00, 0x40, 0x44, 0x7E]


def test_the_kernel_rounds_ue8m0_scales_up_and_a_nan_payload_saturates_to_the_bottom_code():
    # step_up_to_power_of_two: 0.3 -> 0.5; NaN 0x7FFFFFFF + 0x7FFFFF wraps to 0x807FFFFE, masked to -0.0, which the
    # UE8M0 storage cast takes to code 0 = 2^-127 (the host rule keeps the NaN).
    nan = np.array([0x7FFFFFFF], np.uint32).view(np.float32)[0]
    scheme = PACKED.per_block([4], ScaleDtype.UE8M0)
    qt = o.quantize(np.ones((2, 4), np.float32), scheme, np.array([[0.3], [nan]], np.float32), profile=VULKAN)
    assert qt.scales.tolist() == [0.5, 2.0**-127]
    assert qt.codes.tolist() == [[2, 2, 2, 2], [127, 127, 127, 127]]


def test_e2m1_packed_native_is_refused_by_the_launcher_on_every_device():
    scheme = Q8S.with_value(QuantValue.E2M1).with_store(o.QuantStore("PackedNative", 0))
    for profile in (WGPU, VULKAN):
        raises("cubecl.native_value", "E2M1 is not supported for native quantization",
               o.quantize, np.ones((1, 4), np.float32), scheme, np.ones(1, np.float32), profile=profile)


# What qconform-burn-0_22_1-wgpu answered on lavapipe (2026-11-30) for a UE4M3 block scale: the read returns
# cubecl-runtime's Unwritten error (its failure id counts every failure the process saw), burn-tensor panics with it.
UNWRITTEN = ("Error while reading data: use `try_into_data` instead to catch the error at runtime: An error happened "
             "during execution\nCaused by:\n  Several failures at once\nCaused by:\n  The bytes were never written "
             "(failure #1702, still claiming 4 buffer(s))\nCaused by:\n  A launch error happened\nCaused by:\n  A "
             "compilation error happened during launch\nCaused by:\n  A validation error caused the compilation to "
             "fail\nCaused by:\n  Compilation error: invalid input program.\nfp8 on WGSL is packed 4 lanes to a u32, a "
             "scalar has no representation: use vectors of 4, 8 or 16 lanes\nBacktrace:\nNo backtrace available\n"
             "Asked at:\nNo backtrace available")


@pytest.mark.parametrize("dtype", [ScaleDtype.UE4M3, ScaleDtype.UE8M0])
def test_fp8_scales_fail_to_compile_and_the_read_reports_the_unwritten_buffer(dtype):
    scheme = PACKED.per_block([4], dtype)
    x, scales = np.ones((1, 4), np.float32), np.ones(1, np.float32)
    burn_raises("wgsl.fp8_scalar_unwritten", UNWRITTEN, o.quantize, x, scheme, scales, profile=WGPU, checked=True)
    assert o.classify_panic(UNWRITTEN) == "wgsl.fp8_scalar_unwritten"
    # the opaque parts stand for any text, the rest must be burn's exactly
    expected = panic("wgsl.fp8_scalar_unwritten").message
    assert "#\u27e8failure\u27e9, still claiming \u27e8claimed\u27e9 buffer(s))\n\u27e8chain\u27e9Caused" in expected
    assert not o.message_matches(expected, UNWRITTEN.replace("4 lanes", "2 lanes"))
    assert not o.message_matches(expected, UNWRITTEN + "\n")
    # B::q_into_data returns the error instead: the harness reports it with the read it made
    burn_raises("harness.read_failed", "q_into_data: " + UNWRITTEN.split("runtime: ", 1)[1], o.quantize, x, scheme,
                scales, profile=WGPU)


def test_a_native_matmul_kernel_name_is_opaque_past_its_lhs_type():
    qt = o.QTensor(np.ones((2, 4), np.int8), np.ones(1, np.float32), None, Q8S)
    kernel = "matmul_entry_lhs_f32_lhs_size_1_rhs_f32_rhs_size_1_acc_f32_acc_size_1_ca9b7b87"
    # what the binary printed for qlayout/q8s/tensor/matmul (failure #2883, 1 buffer)
    burn = UNWRITTEN.split("A launch error")[0].replace("#1702", "#2883").replace("4 buffer", "1 buffer") + (
        "A launch error happened\nCaused by:\n  A compilation error happened during launch\nCaused by:\n  An error "
        f"caused the compilation to fail\nCaused by:\n  WGSL compilation failed for kernel `{kernel}`: Validation "
        f"Error\n\nCaused by:\n  In Device::create_shader_module, label = '{kernel}'\n    \nShader '{kernel}' parsing "
        "error: no definition in scope for identifier: `i8`\n  \u250c\u2500 wgsl:7:58\n  \u2502\n7 \u2502 @group(0) "
        "@binding(0) var<storage, read_write> v5: array<i8>;\n  \u2502" + " " * 58 + "^^ unknown identifier\n\n\n\n"
        "Backtrace:\nNo backtrace available\nAsked at:\nNo backtrace available")
    burn_raises("wgsl.matmul_i8_unwritten", burn, run_steps, qt, [{"op": "matmul", "rhs": [1.0] * 4, "shape": [4, 1]}],
                get_profile(WGPU))


def test_an_outer_packed_axis_is_stored_innermost():
    # [2, 8] packed along dim 0 (PackedU32(1)): 0.22.1 checks the 2 rows (not a multiple of 4 values a word), pre3
    # the 8 columns; [4, 6] the other way round.
    scheme = Q8S.with_store(o.QuantStore.packed_u32(1))
    raises("cubecl.packed_last_dim", "Can't store in u32", check_quantize, scheme, (2, 8), get_profile(WGPU))
    check_quantize(scheme, (2, 8), get_profile(PRE3_WGPU))
    check_quantize(scheme, (4, 6), get_profile(WGPU))
    raises("cubecl.packed_last_dim", "Can't store in u32", check_quantize, scheme, (4, 6), get_profile(PRE3_WGPU))
    # a packed dim beyond the rank: rank - 1 - 1 wraps, and the swap refuses that axis
    qt = o.QTensor(np.ones(4, np.int8), np.ones(1, np.float32), None, scheme)
    raises("cubecl.packed_axis_swap",
           "the packed axis is one of the tensor's: OutOfBounds { dim: 18446744073709551615, rank: 1 }",
           o.dequantize, qt, profile=VULKAN)


def test_calibrating_blocks_of_a_rank_5_tensor_needs_10_dims():
    scheme = Q8S.per_block([2, 1, 1, 2, 4], ScaleDtype.F32)
    raises("cubecl.tiling_rank",
           'a tensor\'s tiling describes its own rank: Invalid { reason: "Tiling(0) does not fit a rank-10 buffer" }',
           o.quantize_dynamic, np.ones((2, 1, 1, 2, 4), np.float32), scheme, profile=VULKAN)
    # reduce_blocks reduces only the axes whose block extent exceeds 1: a block of 1s reshapes and back, and
    # calibrates (found by fuzzing: min = max = x)
    ones = Q8S.per_block([1], ScaleDtype.F32)
    lo, hi = o.compute_range(np.full((1, 1, 1, 1, 1), 0.5, np.float32), ones, profile=VULKAN)
    assert lo.ravel().tolist() == hi.ravel().tolist() == [0.5]


def test_a_lone_block_may_not_be_spread_over_rows():
    qt = o.QTensor(np.array([3, -4], np.int8), np.ones(1, np.float32), None, Q8S.per_block([2], ScaleDtype.F32))
    raises("cubecl.reshape_spread_block",
           "not implemented: Cannot reshape block-quantized tensor to Shape { dims: [2, 1] }: not a whole number of "
           "BlockSize([2]) blocks", run_steps, qt, [{"op": "reshape", "shape": [2, 1]}], get_profile(VULKAN))
    # an unsqueeze keeps the block on one row
    x, _ = run_steps(qt, [{"op": "reshape", "shape": [1, 2]}], get_profile(VULKAN))
    assert x.tolist() == [[3.0, -4.0]]


def test_a_reshape_gives_the_scales_the_new_grid_over_the_same_buffer():
    # per_block([2, 1, 2]) takes its first min(rank, 3) extents: [2, 1] on [3, 4] (a [2, 4] grid, 8 scales), all
    # three on the unsqueezed [1, 3, 4] (a [1, 3, 2] grid, 6). q_reshape sets the scale tensor's shape to the new
    # grid over the old buffer (ops/base.rs:426-445): the first 6 scales, row-major over the new grid.
    codes = np.arange(12, dtype=np.int8).reshape(3, 4)
    qt = o.QTensor(codes, np.arange(1, 9, dtype=np.float32), None, Q8S.per_block([2, 1, 2], ScaleDtype.F32))
    _, held = run_steps(qt, [{"op": "reshape", "shape": [1, 3, 4]}], get_profile(VULKAN))
    assert held.scales.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    # [4, 1] (a [2, 1] grid) unsqueezed to [1, 4, 1] needs a [1, 4, 1] grid: 4 scales from a buffer of 2. The real
    # binary read [1, 2, 0, 0]; the two past the buffer are whatever the device memory holds.
    qt = o.QTensor(np.ones((4, 1), np.int8), np.ones(2, np.float32), None, Q8S.per_block([2, 1, 2], ScaleDtype.F32))
    with pytest.raises(o.UndefinedBehaviour):
        run_steps(qt, [{"op": "reshape", "shape": [1, 4, 1]}], get_profile(VULKAN))


def test_scales_read_past_their_buffer_are_undefined_only_where_values_reach_a_result():
    # per_block([2, 1, 2]) on [2] is one block of 2 (one scale); unsqueezed to [1, 2] it takes [2, 1], a [1, 2] grid
    # over that buffer of one: what a kernel reads of the second scale is undefined. A slice requantizes, and its
    # compute_range asserts [1, 2] against the block [2, 1] on the host before anything is read.
    prof = get_profile(VULKAN)
    qt = o.QTensor(np.zeros(2, np.int8), np.ones(1, np.float32), None, Q8S.per_block([2, 1, 2], ScaleDtype.F32))
    unsqueeze, slice_row = {"op": "reshape", "shape": [1, 2]}, {"op": "slice", "ranges": [[0, 1, 1]]}
    for steps in ([unsqueeze], [unsqueeze, {"op": "transpose"}], [unsqueeze, {"op": "neg"}]):
        with pytest.raises(o.UndefinedBehaviour):
            run_chain(load(qt, prof), steps, prof)
    text = "Tensor Shape { dims: [1, 2] } must be evenly divisible by block size [2, 1]"
    burn_raises("range.block_not_divisible", text, run_chain, load(qt, prof), [unsqueeze, slice_row], prof)
    burn_raises("range.block_not_divisible", text, run_chain, load(qt, prof), [unsqueeze, slice_row, {"op": "neg"}],
                prof)


def test_spirv_reads_an_fp8_nan_code_as_the_quiet_nan_with_its_sign():
    # Measured on lavapipe (0.22.1 and 0.23.0-pre.1 vulkan): dequantize of E5M2 codes 0x7E, 0xFD and E4M3 0x7F, 0xFF
    # printed 0x7FC00000, 0xFFC00000, 0x7FC00000, 0xFFC00000 (0.22.0-pre.3 too); burn's host types (and the CUDA model)
    # give 0x7FFFE000 for all four.
    for value, codes, want in ((QuantValue.E5M2, [0x7E, 0xFD, 0x3C], [0x7FC00000, 0xFFC00000, 0x3F800000]),
                               (QuantValue.E4M3, [0x7F, 0xFF, 0x38], [0x7FC00000, 0xFFC00000, 0x3F800000])):
        qt = o.QTensor(np.array(codes, np.uint8).view(np.int8), np.ones(1, np.float32), None, Q8S.with_value(value))
        assert o.dequantize(qt, profile=VULKAN).view(np.uint32).tolist() == want
        assert o.dequantize(qt, profile="burn-0.22.1/cubecl").view(np.uint32).tolist()[:2] == [0x7FFFE000] * 2


def test_a_requantized_nan_block_keeps_a_nan_scale_on_spirv():
    # select(1, [0]) of an E5M2 [2, 1]-block UE4M3 tensor requantizes each block; block 0 holds code 0xFD (NaN).
    # Its max |x| is the quiet NaN 0x7FC00000 and max / 57344 stays it; the kernel's round-up adds 0xFFFFF and
    # clears the low 20 bits: 0x7FCFFFFF & 0xFFF00000 = 0x7FC00000, a NaN (measured: the scale reads back NaN and
    # both values of the block dequantize to NaN). Read as 0x7FFFE000 (fp8_nan = float8) the same add wraps to
    # 0x800FDFFF & 0xFFF00000 = 0x80000000: the -0.0 the oracle gave before, found by fuzzing float_ops.
    scheme = Q8S.with_value(QuantValue.E5M2).per_block([2, 1], ScaleDtype.UE4M3)
    codes = np.array([[0x3C, 0x7E], [0xFD, 0x38], [0x3C, 0x40], [0x38, 0x7D]], np.uint8).view(np.int8)
    qt = o.QTensor(codes, np.ones(4, np.float32), None, scheme)
    steps = [{"op": "select", "dim": 1, "indices": [0]}]
    _, held = run_steps(qt, steps, get_profile(VULKAN))
    assert held.scales.view(np.uint32).tolist()[0] == 0x7FC00000
    _, held = run_steps(qt, steps, get_profile(VULKAN).with_(fp8_nan="float8"))
    assert held.scales.view(np.uint32).tolist()[0] == 0x80000000


def test_an_outer_packed_tensor_is_read_as_its_stored_twin():
    # burn-std 0.22.1 writes the [8, 4] codes 0..31 row-major; burn-cubecl 0.22.1 takes the bytes as the memory of
    # the twin with the packed axis (0) swapped innermost, [4, 8], and presents its transpose: row i holds the flat
    # codes i, i + 8, i + 16, i + 24 (what both lavapipe builds printed).
    scheme = QuantScheme.default().with_store(o.QuantStore.packed_u32(1)).with_value(QuantValue.Q8S)
    qt = o.QTensor(np.arange(32, dtype=np.int8).reshape(8, 4), np.ones(1, np.float32), None, scheme)
    want = np.array([[i + 8 * j for j in range(4)] for i in range(8)], np.float32)
    for profile in (WGPU, VULKAN):
        assert np.array_equal(o.dequantize(qt, profile=profile), want)
    assert np.array_equal(o.dequantize(qt, profile="burn-0.23.0-pre.1/wgpu"), np.arange(32).reshape(8, 4))


def test_the_read_reports_a_compile_failure_before_an_oversized_upload():
    # MXFP4 (E2M1 PackedU32, UE8M0 blocks of 32): 0.22.1 writes one byte per value, which overflows the packed
    # words' buffer (wgpu.write_range, copied at the read), and the dequantize kernel's scalar fp8 scale fails to
    # compile (its launch returns). The read reports the compile failure (measured: the 44 MXFP4/NVFP4 vectors).
    scheme = Q8S.with_value(QuantValue.E2M1).with_store(o.QuantStore.packed_u32(0)).per_block([32], ScaleDtype.UE8M0)
    qt = o.QTensor(np.zeros((2, 32), np.int8), np.ones(2, np.float32), None, scheme)
    with pytest.raises(o.BurnPanic) as err:
        o.dequantize(qt, profile=WGPU)
    assert err.value.code == "wgsl.fp8_scalar_unwritten"
    with pytest.raises(o.BurnPanic) as err:  # SPIR-V compiles the scale: the upload's panic is what is left
        o.dequantize(qt, profile=VULKAN)
    assert err.value.code == "wgpu.write_range"


def test_a_quantized_rhs_names_its_own_binding():
    # f.matmul(q) with a Native Q8S [4, 8] rhs: naga reports `@binding(1) var<storage, read_write> v13: array<i8>`
    # on line 6, column 59 (F32 scale; printed by the binary); q.matmul(q): `@binding(2)`, line 6.
    qt = o.QTensor(np.ones((4, 8), np.int8), np.ones(1, np.float32), None, Q8S)
    held = load(qt, get_profile(WGPU))
    with pytest.raises(o.BurnPanic) as err:
        run_chain(held, [{"op": "matmul", "lhs": [0.5] * 8, "shape": [2, 4]}], get_profile(WGPU))
    assert err.value.code == "wgsl.matmul_i8_unwritten"
    assert "wgsl:6:59" in err.value.message and "@binding(1)" in err.value.message
    square = load(o.QTensor(np.ones((4, 4), np.int8), np.ones(1, np.float32), None, Q8S), get_profile(WGPU))
    with pytest.raises(o.BurnPanic) as err:
        run_chain(square, [{"op": "matmul", "rhs": "self"}], get_profile(WGPU))
    assert "wgsl:6:59" in err.value.message and "@binding(2)" in err.value.message


def test_a_compile_failure_in_a_float_chain_lets_a_later_host_panic_come_first():
    # An NVFP4 operand (UE4M3 blocks: its quantize kernel fails to compile, the launch returns) added to a Native Q8S
    # tensor, whose dequantize launcher then refuses the Native store at the call (measured: cubecl.native_value).
    held = load(o.QTensor(np.ones((2, 8), np.int8), np.ones(1, np.float32), None, Q8S), get_profile(WGPU))
    nvfp4 = {"value": "E2M1", "store": {"PackedU32": 0}, "mode": "Symmetric", "tensor": "F32",
             "block": {"size": [8], "dtype": "UE4M3"}}
    step = {"op": "add", "rhs": [0.5] * 16, "shape": [2, 8], "rhs_scheme": nvfp4}
    with pytest.raises(o.BurnPanic) as err:
        run_chain(held, [step], get_profile(WGPU))
    assert err.value.code == "cubecl.native_value"


def test_the_quantize_kernel_divides_by_the_scale_in_its_storage_type():
    # write_scale divides by FS::cast_from(round_up_to_dtype(s)). UE4M3: cubecl's software E4M3 conversion saturates,
    # so -inf and -1000 divide as -448 and 240 / -448 = -0.54 rounds to -1 (measured on 0.22.1 SPIR-V). F16: the
    # cast rounds to nearest: -70000 overflows to -inf (240 / -inf = -0.0, code 0), -65519 becomes -65504
    # (49128 / -65504 = -0.75, code -1).
    q8f = Q8S.with_value(QuantValue.Q8F)
    for dtype, x, scales, codes in (
            (ScaleDtype.UE4M3, [240.0] * 8, [-np.inf, -1000.0], [-1] * 8),
            (ScaleDtype.F16, [240.0] * 4 + [49128.0] * 4, [-70000.0, -65519.0], [0] * 4 + [-1] * 4)):
        qt = o.quantize(np.array(x, np.float32), q8f.per_block([4], dtype), np.array(scales, np.float32),
                        profile=VULKAN)
        assert qt.codes.tolist() == codes, dtype


def _view(scheme, steps, x, profile=VULKAN):
    return o.run("quantize_view", {"scheme": scheme.to_json(), "view": steps}, {"x": x}, profile=profile)


def test_a_permuted_empty_view_runs_the_split_scan_past_its_shape():
    # [2, 0, 4] permuted to [2, 4, 0] (strides [0, 1, 4]) is strided; per_block([4]) splits it to [2, 1, 4, 1, 0, 4]:
    # 2, 4 and 0 match the three old dims, the last 4 reads shape[3] (measured on both 0.22.1 lavapipe builds and
    # on 0.22.0-pre.3's); a CPU backend quantizes nothing
    x = np.zeros((2, 0, 4), np.float32)
    steps = [{"op": "permute", "axes": [0, 2, 1]}]
    for profile in (VULKAN, PRE3_VULKAN):
        raises("cubecl.reshape_analysis_index", "index out of bounds: the len is 3 but the index is 3",
               _view, Q8S.per_block([4], ScaleDtype.F32), steps, x, profile)
    assert _view(Q8S.per_block([4], ScaleDtype.F32), steps, x, "burn-0.22.1/ndarray")["codes"].size == 0


def test_a_view_copied_past_8_dims_fails_to_bind_before_its_reduction():
    # an expanded row reshaped to rank 5 is a strided split; its block split to 10 dims is HighlyPermuted (a new 2
    # meets an old unit dim), so burn-cubecl copies it into a rank-10 buffer: the binding text; the contiguous rank-5
    # tensor reaches the reduction and its tensor text (both measured on 0.22.1 SPIR-V)
    scheme = Q8S.per_block([2], ScaleDtype.F32)
    binding = 'a binding\'s tiling describes its own rank: Invalid { reason: "Tiling(0) does not fit a rank-10 buffer" }'
    raises("cubecl.binding_tiling_rank", binding, _view, scheme,
           [{"op": "expand", "shape": [2, 2]}, {"op": "reshape", "shape": [2, 1, 1, 1, 2]}],
           np.array([[1.0, 2.0]], np.float32))
    raises("cubecl.tiling_rank", binding.replace("a binding's", "a tensor's"), _view, scheme,
           [{"op": "reshape", "shape": [2, 1, 1, 1, 2]}], np.array([[1.0, 2.0], [1.0, 2.0]], np.float32))


def test_a_scale_tensor_kept_at_a_lower_rank_refuses_the_moves_of_the_tensor():
    # [3] -> [1, 3] under per_block([4]): the block is longer than the new last dim, so q_reshape keeps the scale
    # tensor's shape [1] (rank 1); a swap of dims 0 and 1 indexes its shape at 1, a permute is refused (measured)
    held = o.QTensor(np.array([78, -6, -58], np.int8), np.array([36.0], np.float32), None,
                     Q8S.per_block([4], ScaleDtype.F32))
    up = {"op": "reshape", "shape": [1, 3]}
    raises("cubecl.scale_swap_index", "index out of bounds: the len is 1 but the index is 1",
           run_steps, held, [up, {"op": "transpose"}], get_profile(VULKAN))
    raises("cubecl.scale_swap_index", "index out of bounds: the len is 1 but the index is 2",
           run_steps, held, [{"op": "reshape", "shape": [1, 1, 3]}, {"op": "swap_dims", "dims": [2, 1]}],
           get_profile(VULKAN))
    raises("cubecl.scale_permute_rank", "called `Result::unwrap()` on an `Err` value: RankMismatch { left: 1, "
           "right: 2 }", run_steps, held, [up, {"op": "permute", "axes": [1, 0]}], get_profile(VULKAN))
    # [2] -> [1, 2]: the block fits the new last dim, the scale tensor takes the new grid's rank: the move runs
    two = o.QTensor(np.array([1, 2], np.int8), np.array([1.0], np.float32), None, Q8S.per_block([2], ScaleDtype.F32))
    moved = run_steps(two, [{"op": "reshape", "shape": [1, 2]}, {"op": "transpose"}], get_profile(VULKAN))
    assert moved[0].tolist() == [[1.0], [2.0]]


def test_a_packed_dim_carried_past_a_smaller_rank_wraps_in_q_reshape():
    # PackedU32(0) transposed: the packed dim is 1; reshaped to rank 1, `rank - packed_dim - 1` = 1 - 1 - 1 wraps to
    # usize::MAX, which indexes the new shape (measured on both 0.22.1 lavapipe builds and on 0.22.0-pre.3's)
    held = o.QTensor(np.arange(1, 9, dtype=np.int8).reshape(2, 4), np.array([0.5], np.float32), None, PACKED)
    for profile in (VULKAN, WGPU, PRE3_VULKAN):
        raises("cubecl.reshape_packed_dim_index", "index out of bounds: the len is 1 but the index is "
               "18446744073709551615", run_steps, held, [{"op": "transpose"}, {"op": "reshape", "shape": [8]}],
               get_profile(profile))


def test_an_oversized_upload_meets_its_assert_at_the_read_unless_launches_may_flush_it_first():
    """Q4F codes written one byte per value overflow the packed words' buffer: wgpu's range assert fires when the
    queued copy is flushed. Measured on 0.22.1 SPIR-V (docs/findings.md, qlayout case 10461): after one
    requantizing step the read flushes it (the assert); after two, cubecl-wgpu's 32-task queue may fill inside a
    launch, which the read then reports as torn down, depending on how many kernels the steps launch."""
    scheme = (Q8S.with_value(QuantValue.Q4F).with_store(o.QuantStore.packed_u32(0))
              .per_block([5, 2, 1, 8], ScaleDtype.UE8M0))
    qt = o.QTensor((np.arange(80) % 15 - 7).astype(np.int8).reshape(5, 2, 1, 8), np.ones(1, np.float32), None, scheme)
    select = {"op": "select", "dim": 1, "indices": [0, 0, 1, 0]}
    cat, swap, mul = {"op": "cat", "dim": 0, "copies": 1}, {"op": "swap_dims", "dims": [0, 1]}, {
        "op": "mul_scalar", "value": 2.0}
    for steps in ([select], [cat], [select, swap], [select, mul, cat]):
        raises("wgpu.write_range", "provided range was outside slice", run_steps, qt, steps, get_profile(VULKAN))
    for steps in ([select, cat], [select, swap, cat], [cat, cat]):
        with pytest.raises(o.UndefinedBehaviour, match="32 tasks"):
            run_steps(qt, steps, get_profile(VULKAN))
    f32_scales = o.QTensor(qt.codes, qt.scales, None, scheme.per_block([5, 2, 1, 8], ScaleDtype.F32))
    raises("wgpu.write_range", "provided range was outside slice", run_steps, f32_scales, [select, cat],
           get_profile(PRE3_VULKAN))  # not measured there (UE8M0 is 0.22's): the read's assert, as before


def test_a_repeated_unit_dim_is_a_stride_0_view_that_the_requantization_reads_element_by_element():
    """burn-cubecl's repeat_dim of a dim of size 1 sets its stride to 0 (kernel/index/repeat_dim.rs:47-53): the
    requantization of [8, 1] -> [8, 4] reads a view whose innermost stride is 0, one element per unit, so a block
    [4, 1] (last extent 1) passes the vector check that the same values, contiguous, fail (width 4)."""
    scheme = Q8S.per_block([4, 1], ScaleDtype.F32)
    qt = o.QTensor(np.array([[-7], [3], [5], [127], [-2], [9], [0], [64]], np.int8), np.array([0.5, 0.25], np.float32),
                   None, scheme)
    x, held = run_steps(qt, [{"op": "repeat_dim", "dim": 1, "times": 4}], get_profile(VULKAN))
    assert held.codes.shape == (8, 4) and (held.codes == held.codes[:, :1]).all()
    contiguous = np.repeat(o.dequantize(qt, profile=VULKAN), 4, axis=1)
    raises("cubecl.block_divisibility", "Block size must be divisible by 4, got block_size=1",
           o.quantize_dynamic, contiguous, scheme, profile=VULKAN)
