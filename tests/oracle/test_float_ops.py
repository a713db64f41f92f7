"""``float_ops`` (oracle/float_ops.py, spec §9.5) against hand-worked answers: the kind of each family's result,
the exact values, the sums whose order burn leaves open, and tensors quantized on the device."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import oracle
from oracle.float_ops import check_order_free, check_signed_zeros
from oracle.qtensor import QTensor
from oracle.scheme import QuantScheme

Q8S = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}
Q8S_DEBUG = "QuantScheme { value: Q8S, store: Native, mode: Symmetric, tensor: None, block: None }"
CODES = np.array([[3, -5, 7, 1], [2, -8, 4, 6]], np.int8)
QUARTER = {"codes": CODES, "scales": np.array([0.25], np.float32)}  # values: codes / 4


def run(steps, inputs=QUARTER, scheme=Q8S, profile="burn-0.22.1/flex"):
    return oracle.run("float_ops", {"scheme": scheme, "steps": steps}, inputs, profile=profile)


def bits(x):
    return np.asarray(x, np.float32).view(np.uint32).tolist()


@pytest.mark.parametrize("profile", ["burn-0.22.0-pre.3/ndarray", "burn-0.22.1/flex", "burn-0.23.0-pre.1/flex"])
def test_neg_and_sum_dim_are_floats_computed_from_the_dequantized_values(profile):
    out = run([{"op": "neg"}], profile=profile)
    assert out["quantized"] is False and bits(out["x"]) == bits([[-0.75, 1.25, -1.75, -0.25], [-0.5, 2, -1, -1.5]])
    out = run([{"op": "sum_dim", "dim": 1}], profile=profile)
    assert out["quantized"] is False and bits(out["x"]) == bits([[1.5], [1.0]])  # (3-5+7+1)/4, (2-8+4+6)/4


def test_abs_is_requantized_under_the_input_scheme():
    """dequant_op_quant!: |values| = [[3, 5, 7, 1], [2, 8, 4, 6]] / 4, max 2.0, so the new scale is 2/127 and
    the codes round(v * 127 / 2)."""
    out = run([{"op": "abs"}])
    assert out["quantized"] is True and out["scheme"] == Q8S_DEBUG
    assert out["codes"].tolist() == [[48, 79, 111, 16], [32, 127, 64, 95]]
    assert bits(out["scales"]) == bits([np.float32(2.0) / np.float32(127)])


def test_argmax_reads_values_not_codes():
    """E4M3 codes of -1.0 (0xB8, -72 as i8) and -2.0 (0xC0, -64 as i8) where burn decodes them as fp8 (burn-flex
    0.23.0-pre.1): the codes' order would pick -2.0."""
    e4m3 = {"value": "E4M3", "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}
    codes = np.array([[0xB8, 0xC0]], np.uint8).view(np.int8)
    assert ml_dtypes.float8_e4m3fn(-1.0).view(np.uint8) == 0xB8
    out = run([{"op": "argmax", "dim": 1}], {"codes": codes, "scales": np.array([1.0], np.float32)}, scheme=e4m3,
              profile="burn-0.23.0-pre.1/flex")
    assert out["quantized"] is False and out["x"].tolist() == [[0.0]]


Q4S = {"value": "Q4S", "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}
TIE = {"op": "add", "rhs": [0.3125, -0.875], "shape": [1, 2], "rhs_scheme": Q4S}
"""A second quantized operand: amax 0.875 = 7/8, so its Q4S scale is exactly 1/8 and 0.3125 / (1/8) = 2.5, a tie."""
PAIR = {"codes": np.array([[2, -4]], np.int8), "scales": np.array([0.5], np.float32)}  # values [1, -2]


@pytest.mark.parametrize("profile, tie", [("burn-0.22.0-pre.3/flex", 0.375), ("burn-0.22.1/flex", 0.375),
                                          ("burn-0.23.0-pre.1/flex", 0.25)])
def test_a_second_quantized_operand_is_quantized_on_the_device_under_its_own_scheme(profile, tie):
    """``q.add(Tensor::from_data(rhs).quantize_dynamic(&Q4S))``: the operand's tie rounds as the backend rounds
    (away from zero on burn 0.22's CPU backends: code 3, 0.375; to even on 0.23's flex: code 2, 0.25), then both
    sides are dequantized and added: a float result."""
    out = run([TIE], PAIR, profile=profile)
    assert out["quantized"] is False and bits(out["x"]) == bits([[1.0 + tie, -2.875]])


def test_a_second_quantized_operand_panics_where_its_scheme_does_before_the_op():
    """ndarray quantizes only Q8F/Q8S (and per-tensor Q2S): the operand's quantize_dynamic panics, whatever the
    held tensor holds."""
    with pytest.raises(oracle.BurnPanic) as err:
        run([TIE], PAIR, profile="burn-0.22.1/ndarray")
    assert err.value.code == "ndarray.unsupported_scheme"


def test_a_matmul_by_a_second_quantized_tensor_uses_its_dequantized_values():
    """[1, -2] @ w, w = [[0.3125], [-0.875]] quantized Q4S (codes 3 and -7 on 0.22.1 flex: 0.375, -0.875):
    1 * 0.375 + (-2) * (-0.875) = 2.125 (the float w would give 2.0625)."""
    step = {"op": "matmul", "rhs": [0.3125, -0.875], "shape": [2, 1], "rhs_scheme": Q4S}
    out = run([step], PAIR)
    assert out["quantized"] is False and bits(out["x"]) == bits([[2.125]])


def test_matmul_with_a_quantized_rhs_and_with_both_sides_quantized():
    lhs = [1.0, 2.0]  # [1, 2] @ values [2, 4]: [0.75+1, -1.25-4, 1.75+2, 0.25+3]
    out = run([{"op": "matmul", "lhs": lhs, "shape": [1, 2]}])
    assert out["quantized"] is False and bits(out["x"]) == bits([[1.75, -5.25, 3.75, 3.25]])
    square = {"codes": np.array([[1, 2], [3, 4]], np.int8), "scales": np.array([0.5], np.float32)}
    out = run([{"op": "matmul", "rhs": "self"}], square)  # [[.5, 1], [1.5, 2]]^2
    assert bits(out["x"]) == bits([[1.75, 2.5], [3.75, 5.5]])


def test_stack_adds_a_dim_and_requantizes():
    out = run([{"op": "stack", "dim": 0, "copies": 2}])
    assert out["quantized"] is True and out["codes"].shape == (2, 2, 4)
    assert out["codes"][0].tolist() == out["codes"][1].tolist() == [[48, -79, 111, 16], [32, -127, 64, 95]]


def test_a_sum_is_expected_only_where_every_order_agrees():
    check_order_free(np.array([0.5, 0.25, -1.75, 2.0**-10]), 0)  # multiples of 2^-10, far below 2^24 of them
    with pytest.raises(oracle.UndefinedBehaviour):  # (2^24 + 1) - 2^24 is 1 in one order, 0 in another
        check_order_free(np.array([2.0**24, 1.0, -2.0**24]), 0)
    with pytest.raises(oracle.UndefinedBehaviour):  # 0.1 is not an f32
        check_order_free(np.array([0.1, 0.2]), 0)
    with pytest.raises(oracle.UndefinedBehaviour):  # +0.0 or -0.0, as the accumulator starts
        check_order_free(np.array([[-0.0, -0.0]]), 1)
    check_order_free(np.array([[-0.0, 0.0]]), 1)  # +0.0 in every order
    with pytest.raises(oracle.UndefinedBehaviour):  # exactly 2^127, but 2^127 + 2^127 first is inf in f32
        check_order_free(np.array([2.0**127, 2.0**127, -2.0**127]), 0)
    check_order_free(np.array([2.0**126, 2.0**126, -2.0**126]), 0)  # every partial sum at most 2^127: finite


def test_signed_zeros_on_a_sorted_axis_have_no_expected_order():
    check_signed_zeros(np.array([[0.0, 1.0], [-0.0, 2.0]], np.float32), 1)  # one sign per row
    with pytest.raises(oracle.UndefinedBehaviour):
        check_signed_zeros(np.array([[0.0, -0.0]], np.float32), 1)
    zeros = {"codes": np.array([[0, 0]], np.int8), "scales": np.array([1.0], np.float32)}
    with pytest.raises(oracle.UndefinedBehaviour):  # topk: burn-cubecl's TopK is a reduction kernel of its own
        run([{"op": "div", "rhs": [1.0, -1.0], "shape": [1, 2]}, {"op": "topk", "dim": 1, "k": 2}], zeros)


E5M2 = {"value": "E5M2", "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}
# 1.0, NaN (0x7E), -1.0, -0.0, +0.0, NaN (0xFE)
E5M2_NAN_ZEROS = {"codes": np.array([0x3C, 0x7E, 0xBC, 0x80, 0x00, 0xFE], np.uint8).view(np.int8),
                  "scales": np.array([1.0], np.float32)}


def test_a_float_sort_is_the_total_order_and_moves_bits():
    """f32::total_cmp: -0.0 < +0.0 and -NaN first, +NaN last; a float tensor's sort gives it back bit for bit."""
    x = {"codes": np.array([[0, 0, 0, 0]], np.int8), "scales": np.array([1.0], np.float32)}
    nan = np.array([0x7FC00001], np.uint32).view(np.float32)[0]  # a payload numpy's sort would rewrite
    rhs = [1.0, -1.0, float(nan), float(-nan)]
    out = run([{"op": "div", "rhs": rhs, "shape": [1, 4]}, {"op": "sort", "dim": 1}], x)  # 0 / rhs
    assert out["x"].view(np.uint32).tolist() == [[0xFFC00001, 0x80000000, 0x00000000, 0x7FC00001]]


def test_a_requantizing_sort_keeps_the_decoded_nan_bits_on_0_23_flex():
    """burn-flex 0.23.0-pre.1 decodes every E5M2 NaN code to f32 0x7FFFE000 (float8's f16 0x7FFF, sign dropped),
    sorts [1, NaN, -1, -0, +0, NaN] to [-1, -0, +0, 1, NaN, NaN] and requantizes: MinMax of a NaN-holding tensor
    gives a NaN scale, which clamp_min(f32::MIN_POSITIVE) replaces by MIN_POSITIVE; +-1 / MIN_POSITIVE saturate to
    +-57344 (0x7B, 0xFB), the zeros keep their sign (0x80, 0x00) and the NaN keeps its top mantissa bits 11:
    0x7E | 0x3 = 0x7F (the case fuzzing found: a NaN rewritten to 0x7FC00000 would be 0x7E)."""
    e5m2 = {"scheme": E5M2, "profile": "burn-0.23.0-pre.1/flex"}
    out = run([{"op": "sort", "dim": 0}], E5M2_NAN_ZEROS, **e5m2)
    assert out["codes"].view(np.uint8).tolist() == [0xFB, 0x80, 0x00, 0x7B, 0x7F, 0x7F]
    assert bits(out["scales"]) == bits([np.finfo(np.float32).tiny])
    out = run([{"op": "sort", "dim": 0, "descending": True}], E5M2_NAN_ZEROS, **e5m2)
    assert out["codes"].view(np.uint8).tolist() == [0x7F, 0x7F, 0x7B, 0x00, 0x80, 0xFB]
    row = {"codes": np.array([[0x3C, 0x7E, 0xBC, *range(0x40, 0x4D)]], np.uint8).view(np.int8),  # 1, NaN, -1, 2 .. 12
           "scales": np.array([1.0], np.float32)}  # 16 elements: numpy's max rewrites a NaN on its vector path
    out = run([{"op": "max_dim", "dim": 1}], row, **e5m2)  # argmax stops at the NaN; q_gather moves its bits
    assert out["codes"].view(np.uint8).tolist() == [[0x7F]]


def test_a_tensor_quantized_on_flex_dequantizes_without_bytes():
    """A two-level scheme with an F16 global cannot be written to bytes (bytes.global_not_f32), but burn-flex
    dequantizes what it holds: a float result comes back; a quantized one fails at into_data."""
    scheme = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": "F16",
              "block": {"size": [2], "dtype": "F16"}}
    x = {"x": np.array([1.0, -2.0], np.float32)}
    out = run([{"op": "neg"}], x, scheme=scheme)
    assert out["quantized"] is False and out["x"].shape == (2,)
    with pytest.raises(oracle.BurnPanic) as e:
        run([{"op": "abs"}], x, scheme=scheme)
    assert e.value.code == "bytes.global_not_f32"


def test_ndarray_holds_a_q2s_tensor_it_quantized_though_from_data_refuses_one():
    q2s = {"value": "Q2S", "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}
    out = run([{"op": "neg"}], {"x": np.array([1.0, -1.0, 0.0], np.float32)}, scheme=q2s,
              profile="burn-0.22.1/ndarray")
    assert bits(out["x"]) == bits([-1.0, 1.0, -0.0])  # neg(+0.0) is -0.0
    with pytest.raises(oracle.BurnPanic) as e:
        run([{"op": "neg"}], {"codes": np.array([1, -1], np.int8), "scales": np.array([1.0], np.float32)},
            scheme=q2s, profile="burn-0.22.1/ndarray")
    assert e.value.code == "ndarray.from_data_scheme"


def test_unknown_steps_and_operands_are_named():
    with pytest.raises(ValueError, match="unknown steps"):
        run([{"op": "exp"}])
    with pytest.raises(ValueError, match="rhs"):
        run([{"op": "add", "rhs": 2.0}])


@pytest.mark.parametrize("steps, code", [
    ([{"op": "reshape", "shape": [6, 1, 16]}], "cubecl.reshape_nd_block"),
    ([{"op": "topk", "dim": 1, "k": 8}, {"op": "reshape", "shape": [6, 1, 8]}], "cubecl.reshape_nd_block"),
    ([{"op": "abs"}, {"op": "reshape", "shape": [6, 1, 16]}], "cubecl.reshape_nd_block"),
    ([{"op": "sort", "dim": 1}, {"op": "reshape", "shape": [6, 1, 16]}], "wgpu.write_range"),
    ([{"op": "neg"}, {"op": "reshape", "shape": [6, 1, 16]}], "wgpu.write_range"),
])
def test_an_oversized_upload_fails_at_the_first_flush(steps, code):
    """Measured on burn-wgpu 0.22.1 SPIR-V (lavapipe): wgpu copies an upload only when the queue is flushed, so a
    later step's host-side panic comes first, unless a sort (read back to the host) or the final read flushes it."""
    scheme = {"value": "E2M1", "store": {"PackedU32": 0}, "mode": "Symmetric", "tensor": None,
              "block": {"size": [6, 8], "dtype": "UE4M3"}}
    parts = {"codes": (np.arange(96) % 15 - 7).astype(np.int8).reshape(6, 16), "scales": np.array([1.0, 2.0], np.float32)}
    with pytest.raises(oracle.BurnPanic) as e:
        run(steps, parts, scheme=scheme, profile="burn-0.22.1/vulkan")
    assert e.value.code == code


# Values of QUARTER: [[0.75, -1.25, 1.75, 0.25], [0.5, -2, 1, 1.5]]; clamp to [1.0, -0.5], a reversed range.
REVERSED = [{"op": "clamp", "min": 1.0, "max": -0.5}]


@pytest.mark.parametrize("profile, expected", [
    # ndarray: x < 1 gives 1; else x > -0.5 gives -0.5 (every value >= 1 is above -0.5)
    ("burn-0.22.1/ndarray", [[1, 1, -0.5, 1], [1, 1, -0.5, -0.5]]),
    ("burn-0.22.0-pre.3/vulkan", [[-0.5] * 4, [-0.5] * 4]),  # min(max(x, 1), -0.5): max everywhere
    ("burn-0.22.1/vulkan", [[1] * 4, [1] * 4]),  # max(min(x, -0.5), 1): min everywhere
])
def test_a_reversed_clamp_range_is_each_kernels_own_answer(profile, expected):
    assert bits(run(REVERSED, profile=profile)["x"]) == bits(expected)


def test_a_zero_on_a_zero_bound_keeps_its_sign_on_the_cpu_and_is_undefined_on_the_gpu():
    """neg of code 0 is -0.0; clamp to [0, 2]: ndarray's `x < 0` is false for -0.0, so it stays -0.0. On the GPU
    max(-0.0, +0.0) may return either (lavapipe gave +0.0 in one kernel, -0.0 in another)."""
    zero = {"codes": np.array([0, 4], np.int8), "scales": np.array([0.25], np.float32)}
    steps = [{"op": "neg"}, {"op": "clamp", "min": 0.0, "max": 2.0}]
    assert bits(run(steps, zero, profile="burn-0.22.1/ndarray")["x"]) == [0x80000000, 0]
    with pytest.raises(oracle.UndefinedBehaviour):
        run(steps, zero, profile="burn-0.22.1/vulkan")
    with pytest.raises(oracle.UndefinedBehaviour):
        run([{"op": "clamp", "min": -1.0, "max": -0.0}], zero, profile="burn-0.22.0-pre.3/vulkan")  # +0, max -0


def test_the_gpu_clamp_before_0_22_1_lets_a_nan_give_way_to_min():
    """E5M2 0x7E is NaN: 0.22.0-pre.3's FClamp is maxNum then minNum, so NaN becomes min; clamp_nan keeps it."""
    nan = {"codes": np.array([0x7E, 0x3C], np.uint8).view(np.int8), "scales": np.array([1.0], np.float32)}
    e5m2 = dict(Q8S, value="E5M2")
    steps = [{"op": "clamp", "min": 0.5, "max": 0.75}]
    assert bits(run(steps, nan, e5m2, "burn-0.22.0-pre.3/vulkan")["x"]) == bits([0.5, 0.75])
    assert np.isnan(run(steps, nan, e5m2, "burn-0.22.1/vulkan")["x"][0])


def test_rust_debug_of_f32_bounds():
    from oracle.errors import rust_debug_f32
    assert [rust_debug_f32(v) for v in (2.0, -0.0, 0.1, 1e39, 1e16, 1.5e-5, 1e-4)] == \
        ["2.0", "-0.0", "0.1", "inf", "1e16", "1.5e-5", "0.0001"]


F32_MIN = float(np.finfo(np.float32).min)


def test_the_gpu_topk_reads_a_kept_minus_inf_as_its_slots_floor_before_0_23():
    """[1, -inf, -1, 2], all four kept: the sort keeps -inf; cubek-reduce 0.3's slots start at f32::MIN and -inf
    never displaces one; 0.4.0-pre.1's start at -inf, which the -inf then replaces (same bits)."""
    from oracle.float_ops import TOPKS
    x = np.array([[1.0, -np.inf, -1.0, 2.0]], np.float32)
    assert bits(TOPKS["sort"].values(x, 1, 4)) == bits([[2, 1, -1, -np.inf]])
    assert bits(TOPKS["min_slots"].values(x, 1, 4)) == bits([[2, 1, -1, F32_MIN]])
    assert bits(TOPKS["inf_slots"].values(x, 1, 4)) == bits([[2, 1, -1, -np.inf]])
    assert oracle.PROFILES["burn-0.22.1/vulkan"].float_topk == "min_slots"
    assert oracle.PROFILES["burn-0.23.0-pre.1/wgpu-fused"].float_topk == "inf_slots"


def test_a_nan_in_a_gpu_topk_is_undefined_and_first_in_the_host_sort():
    from oracle.float_ops import TOPKS
    x = np.array([[1.0, np.nan, 3.0]], np.float32)
    assert bits(TOPKS["sort"].values(x, 1, 2)) == [[0x7FC00000, bits(3.0)]]
    with pytest.raises(oracle.UndefinedBehaviour):
        TOPKS["min_slots"].values(x, 1, 2)


@pytest.mark.parametrize("shape, dim, k, innermost, strided", [
    ((4, 8), 0, 2, None, True),    # dim 0's stride is 8: perpendicular, two slots
    ((4, 8), 0, 1, None, False),   # one slot: the strided reduction is right
    ((4, 8), 1, 3, None, False),   # the innermost axis: parallel
    ((4, 1), 0, 2, None, False),   # only unit dims inside: stride 1
    ((3, 4), 1, 2, 0, True),       # axis 0 held innermost: dim 1's stride is 3
    ((3, 4), 0, 2, 0, False),      # axis 0 held innermost: its own stride is 1
    ((2, 3, 4), 2, 2, 1, True),    # axis 1 held innermost: the logically innermost axis has stride 3
])
def test_a_gpu_topk_with_several_slots_along_a_strided_axis_is_undefined(shape, dim, k, innermost, strided):
    from oracle.float_ops import TOPKS
    x = np.zeros(shape, np.float32)
    if innermost is not None:  # the memory order a GPU dequantize of a store packed along that axis writes
        x = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, innermost, -1)), -1, innermost)
    TOPKS["sort"].check_layout(x, dim, k)  # the host sort never minds
    if strided:
        with pytest.raises(oracle.UndefinedBehaviour):
            TOPKS["min_slots"].check_layout(x, dim, k)
    else:
        TOPKS["inf_slots"].check_layout(x, dim, k)


def test_a_gpu_dequantize_of_an_outer_packed_store_keeps_the_packed_axis_innermost_through_elementwise_ops():
    """Measured on burn-wgpu 0.22.1 WGSL (fuzz seed 20261216, float_ops case 6305): a Q8F PackedU32(1) [1, 4, 8]
    tensor, ``q + q``, then ``topk`` along dim 2 with k 8 gives rows that are not even sorted: dim 2 has stride 4
    on the device. A comparison's bool output is a fresh row-major tensor."""
    from oracle.float_ops import as_float
    profile = oracle.PROFILES["burn-0.22.1/wgpu"]
    scheme = QuantScheme.from_json({"value": "Q8S", "store": {"PackedU32": 1}, "mode": "Symmetric",
                                    "block": {"size": [4, 4], "dtype": "F32"}})
    held = QTensor(np.arange(32, dtype=np.int8).reshape(1, 4, 8), np.ones(2, np.float32), None, scheme)
    doubled = as_float({"op": "add", "rhs": "self"}, held, profile)
    assert doubled.strides[1:] == (4, 16) and bits(doubled) == bits(2 * np.arange(32.0).reshape(1, 4, 8))
    with pytest.raises(oracle.UndefinedBehaviour, match="stride > 1"):
        as_float({"op": "topk", "dim": 2, "k": 8}, doubled, profile)
    assert as_float({"op": "greater_elem", "value": 3.0}, held, profile).flags.c_contiguous
    assert as_float({"op": "add", "rhs": "self"}, held, oracle.PROFILES["burn-0.22.1/flex"]).flags.c_contiguous
