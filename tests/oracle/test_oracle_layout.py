"""Layout ops on quantized tensors (oracle/layout.py), numbers worked by hand on a 2x4 tensor.

codes [[1, 2, 3, 4], [5, 6, 7, 8]], per_block([2]) F32, scales [1, 2, 3, 4] (row 0: blocks 1 and 2, row 1: blocks
3 and 4), so the tensor dequantizes to [[1, 2, 6, 8], [15, 18, 28, 32]].
"""

import numpy as np
import pytest

import oracle as o
from oracle import QuantScheme, QuantValue, ScaleDtype
from oracle.layout import ROUTES, STEP_OPS

NDARRAY = "burn-0.22.0-pre.3/ndarray"
FLEX = "burn-0.22.0-pre.3/flex"
BLOCK2 = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S).per_block([2], ScaleDtype.F32)
INPUTS = {"codes": np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.int8), "scales": np.array([1, 2, 3, 4], np.float32)}


def run(steps, profile=NDARRAY):
    return o.run("qlayout", {"scheme": BLOCK2.to_json(), "steps": steps}, INPUTS, profile=profile)


def test_ndarray_transpose_permutes_codes_grid_and_block_dims():
    out = run([{"op": "transpose"}])
    assert out["codes"].tolist() == [[1, 5], [2, 6], [3, 7], [4, 8]]
    assert out["scales"].tolist() == [1, 3, 2, 4]  # the 2x2 grid [[1, 2], [3, 4]] transposed
    assert "BlockSize([2, 1])" in out["scheme"]
    assert out["x"].tolist() == [[1, 15], [2, 18], [6, 28], [8, 32]]


def test_ndarray_flip_keeps_the_scale_list():
    """The codes move, the scales stay: row 1's codes now meet row 0's scales (the invariant breaks)."""
    out = run([{"op": "flip", "axes": [0]}])
    assert out["codes"].tolist() == [[5, 6, 7, 8], [1, 2, 3, 4]]
    assert out["scales"].tolist() == [1, 2, 3, 4]
    assert out["x"].tolist() == [[5, 6, 14, 16], [3, 6, 12, 16]]


def test_ndarray_slice_panics_on_the_block_count():
    with pytest.raises(o.BurnPanic) as e:
        run([{"op": "slice", "ranges": [[0, 1, 1], [0, 4, 1]]}])
    assert e.value.code == "ndarray.block_count"
    assert "Invalid per-block quantization: 4 blocks for a Shape { dims: [1, 4] } tensor" in e.value.message


def test_transpose_twice_gives_the_input_back():
    out = run([{"op": "transpose"}, {"op": "transpose"}])
    assert out["codes"].tolist() == INPUTS["codes"].tolist()
    assert out["scales"].tolist() == [1, 2, 3, 4]


def test_expand_and_arithmetic_return_floats():
    out = run([{"op": "mul_scalar", "value": 2.0}])
    assert out["quantized"] is False and out["x"].tolist() == [[2, 4, 12, 16], [30, 36, 56, 64]]


def test_flex_requantizes_blocks_with_its_own_calibration():
    """A block of codes [64, 127] (scale 1) holds [64, 127]: max |x| = 127 gives back scale 2*127/254 = 1 and
    the same codes, so a flip that keeps blocks whole is exact on flex."""
    inputs = {"codes": np.array([[64, 127, -127, 1]], np.int8), "scales": np.array([1, 1], np.float32)}
    out = o.run("qlayout", {"scheme": BLOCK2.to_json(), "steps": [{"op": "flip", "axes": [1]}]}, inputs,
                profile=FLEX)
    assert out["codes"].tolist() == [[1, -127, 127, 64]]
    assert out["scales"].tolist() == [1, 1]


def test_every_profile_routes_every_step():
    for profile in o.PROFILES.values():
        assert set(ROUTES[profile.layout]) == set(STEP_OPS), profile.name


def test_quantize_view_is_quantize_dynamic_of_the_materialized_view():
    x = np.arange(8, dtype=np.float32).reshape(2, 4) - 3.5
    out = o.run("quantize_view", {"scheme": BLOCK2.to_json(), "view": [{"op": "transpose"}]}, {"x": x})
    ref = o.quantize_dynamic(np.ascontiguousarray(x.T), BLOCK2)
    assert out["codes"].tolist() == ref.codes.tolist()


# --- found by fuzzing real burn-ndarray (both releases printed these very answers) --------------------------


def test_ndarray_dequantize_of_a_short_kept_list_is_too_short_for_the_reader():
    """A reshape to [8, 1] keeps 4 scales, but blocks [1, 2] on [8, 1] need 8: ndarray's dequantize writes 8 code
    bytes + 4 * 4 scale bytes = 24 bytes and its reader takes 8 * 4 = 32 off the end (§8 #9) before the
    strategy's block-count assert (§8 #29) could run."""
    with pytest.raises(o.BurnPanic) as e:
        run([{"op": "reshape", "shape": [8, 1]}])
    assert e.value.code == "bytes.too_short"


def test_identity_swap_and_permute_are_not_backend_calls():
    """burn-tensor returns the tensor untouched for swap_dims(d, d) and an identity permute, so a block list longer
    than the rank is kept as given ([2, 4, 3] on a [2, 4] tensor: blocks [2, 4], one scale); a real transpose
    goes through q_permute's permute_block_dims, which keeps the first two extents, permuted: [4, 2]."""
    scheme = BLOCK2.per_block([2, 4, 3], ScaleDtype.F32)
    inputs = {"codes": INPUTS["codes"], "scales": np.array([0.5], np.float32)}
    for steps in ([{"op": "swap_dims", "dims": [0, 0]}], [{"op": "permute", "axes": [0, 1]}]):
        for profile in (NDARRAY, FLEX):
            out = o.run("qlayout", {"scheme": scheme.to_json(), "steps": steps}, inputs, profile=profile)
            assert "BlockSize([2, 4, 3])" in out["scheme"], (steps, profile)
            assert out["x"].tolist() == [[0.5, 1, 1.5, 2], [2.5, 3, 3.5, 4]]
    out = o.run("qlayout", {"scheme": scheme.to_json(), "steps": [{"op": "transpose"}]}, inputs, profile=NDARRAY)
    assert "BlockSize([4, 2])" in out["scheme"] and out["codes"].tolist() == [[1, 5], [2, 6], [3, 7], [4, 8]]


def test_rank3_matmul_with_unit_rows_swaps_the_quantized_lhs_first():
    """Tensor::matmul of [1, 1, 4] by [1, 4, 1] swaps lhs dims 0 and 1 before multiplying (burn-tensor
    api/numeric.rs:826): on ndarray that is q_permute, which panics on the 4 scales a slice kept for a [1, 1, 2]
    grid; the same product at rank 2 dequantizes first and meets the block-count assert instead."""
    head = [{"op": "slice", "ranges": [[0, 1, 1], [0, 4, 1]]}]
    with pytest.raises(o.BurnPanic) as e:
        run(head + [{"op": "reshape", "shape": [1, 1, 4]}, {"op": "matmul", "rhs": [1, 1, 1, 1], "shape": [1, 4, 1]}])
    assert e.value.code == "ndarray.permute_scales" and "IncompatibleShape" in e.value.message
    with pytest.raises(o.BurnPanic) as e:
        run(head + [{"op": "reshape", "shape": [1, 4]}, {"op": "matmul", "rhs": [1, 1, 1, 1], "shape": [4, 1]}])
    assert e.value.code == "ndarray.block_count"


def test_rank3_matmul_swap_gives_the_same_product():
    """Without a stale list the swap is invisible: [2, 1, 4] by a broadcast [1, 4, 1] of ones (swapped to
    [1, 2, 4] by [1, 4, 1], then back) sums each row: 1+2+6+8 = 17, 15+18+28+32 = 93, shape [2, 1, 1]."""
    out = run([{"op": "reshape", "shape": [2, 1, 4]}, {"op": "matmul", "rhs": [1] * 4, "shape": [1, 4, 1]}])
    assert out["x"].shape == (2, 1, 1) and out["x"].ravel().tolist() == [17, 93]


# --- found by fuzzing the flex builds (docs/findings.md, "Found by fuzzing") ---------------------------------

FLEX_023 = "burn-0.23.0-pre.1/flex"


@pytest.mark.parametrize("step", [{"op": "swap_dims", "dims": [1, 1]}, {"op": "permute", "axes": [0, 1]}])
def test_flex_identity_swap_or_permute_never_reaches_the_backend(step):
    """burn-tensor returns the tensor itself for swap_dims(d, d) and an identity permute: flex does not requantize
    (it would: block [1, 2] holds [1, 2], whose own scale is 2*2/254, not 1)."""
    out = run([step], FLEX)
    assert out["codes"].tolist() == INPUTS["codes"].tolist()
    assert out["scales"].tolist() == [1, 2, 3, 4]


def test_flex_batched_vecmat_swaps_the_quantized_lhs_first():
    """q [1, 1, 2] (E5M2 block [2], 0.22 integer codes [2, 4], scale 1) @ f [1, 2, 1] of ones. burn-tensor turns
    [B, 1, K] @ [1, K, N] into [1, B, K] @ [1, K, N] with q.swap_dims(0, 1) first, which flex answers by
    requantizing the block: alpha 4, scale 2*4/(57344+57344) = 1/14336, codes 2*14336 and 4*14336 saturate to
    127 as i8. The GEMM then sees 127*s twice: 254*s = 0.0177 instead of 2+4 = 6."""
    e5m2 = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.E5M2).per_block([2], ScaleDtype.F32)
    inputs = {"codes": np.array([[[2, 4]]], np.int8), "scales": np.array([1], np.float32)}
    step = {"op": "matmul", "rhs": [1.0, 1.0], "shape": [1, 2, 1]}
    out = o.run("qlayout", {"scheme": e5m2.to_json(), "steps": [step]}, inputs, profile=FLEX)
    s = np.float32(8) / np.float32(114688)
    assert out["quantized"] is False
    assert out["x"].view(np.uint32).tolist() == [[[(np.float32(127) * s * np.float32(2)).view(np.uint32)]]]
    per_tensor = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.E5M2)
    out = o.run("qlayout", {"scheme": per_tensor.to_json(), "steps": [step]}, inputs, profile=FLEX)
    assert out["x"].tolist() == [[[6.0]]]  # a per-tensor swap moves the codes: 2 + 4


def test_flex_023_requantizes_an_e5m2_nan_as_burns_canonical_nan():
    """E5M2 codes [0x7D (NaN), 0x3C (1.0)], block [2] UE8M0, scale 1, flipped on flex 0.23: the block is
    requantized. alpha = max(|NaN|, 1) = 1 (f32::max skips NaN), scale round_up_ue8m0(2/114688) = 2^-15,
    1.0 -> 32768 = 0x78. The NaN was decoded by float8 as f16's canonical NaN 0x7FFF, f32 0x7FFFE000, so it
    encodes as 0x7E | 0b11 = 0x7F (ml_dtypes' own NaN would give 0x7E or 0xFE)."""
    e5m2 = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.E5M2).per_block([2], ScaleDtype.UE8M0)
    inputs = {"codes": np.array([[0x7D, 0x3C]], np.int8), "scales": np.array([1], np.float32)}
    out = o.run("qlayout", {"scheme": e5m2.to_json(), "steps": [{"op": "flip", "axes": [1]}]}, inputs,
                profile=FLEX_023)
    assert out["codes"].view(np.uint8).tolist() == [[0x78, 0x7F]]
    assert out["scales"].tolist() == [2.0**-15]


# ---- argument forms (issue 22): burn's Slice, empty results, reshape 0s, GEMM overflow --------------------------
PER_TENSOR = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S)
ONE_SCALE = {"codes": INPUTS["codes"], "scales": np.array([1.0], np.float32)}


def run_tensor(steps, profile=NDARRAY):
    return o.run("qlayout", {"scheme": PER_TENSOR.to_json(), "steps": steps}, ONE_SCALE, profile=profile)


@pytest.mark.parametrize("ranges, codes", [
    ([[0, 2, 1], [0, 4, -2]], [[4, 2], [8, 6]]),       # from the range's last element back, every 2nd
    ([[0, 2, 1], [1, 4, -1]], [[4, 3, 2], [8, 7, 6]]),  # 1..4 reversed (numpy's slice(1, 4, -1) is empty)
    ([[-1, 2, 1], [-3, -1, 1]], [[6, 7]]),              # negative bounds count from the end
    ([[-9, 2, 1], [-20, 3, 2]], [[1, 3], [5, 7]]),      # bounds past the start clamp to 0
])
def test_slices_read_as_burns_slice(ranges, codes):
    out = run_tensor([{"op": "slice", "ranges": ranges}], FLEX)
    assert out["codes"].tolist() == codes and out["quantized"] is True


@pytest.mark.parametrize("step, shape", [
    ({"op": "slice", "ranges": [[1, 1, 1]]}, [0, 4]),
    ({"op": "slice", "ranges": [[0, 2, 1], [3, 1, -1]]}, [2, 0]),
    ({"op": "repeat_dim", "dim": 1, "times": 0}, [2, 0]),
])
def test_an_empty_result_of_burn_tensors_short_cut_is_a_float_tensor(step, shape):
    out = run_tensor([step])
    assert out["quantized"] is False and list(out["x"].shape) == shape and out["x"].dtype == np.float32


def test_an_empty_select_stays_quantized_and_its_cat_is_a_float():
    none = {"op": "select", "dim": 0, "indices": []}
    assert run_tensor([none])["quantized"] is True
    cat = run_tensor([none, {"op": "cat", "dim": 0, "copies": 2}])
    assert cat["quantized"] is False and list(cat["x"].shape) == [0, 4]


def test_a_reshape_zero_keeps_the_source_dim_until_0_22_1():
    out = run_tensor([{"op": "reshape", "shape": [0, 2, 2]}], "burn-0.22.1/ndarray")
    assert list(out["codes"].shape) == [2, 2, 2] and out["codes"].ravel().tolist() == list(range(1, 9))


def test_a_gemm_whose_partial_sums_may_overflow_is_undefined():
    rhs = {"op": "matmul", "rhs": [2.0**127, -(2.0**127), 2.0**127, 1.0], "shape": [4, 1]}
    with pytest.raises(o.UndefinedBehaviour):
        run_tensor([rhs], FLEX)
    one_sign = {"op": "matmul", "rhs": [2.0**127] * 4, "shape": [4, 1]}  # every order overflows: +inf
    assert run_tensor([one_sign], FLEX)["x"].ravel().tolist() == [np.inf, np.inf]


def test_an_inf_product_meeting_overflowing_ones_of_the_other_sign_is_undefined():
    """burn-flex 0.23.0-pre.1 gave NaN (campaign seed 20261201, qlayout case 6907): an E5M2 inf code times a
    positive rhs is -inf; the positive products sum past f32::MAX, so an order reaches +inf first."""
    from oracle.views import check_gemm_order
    with pytest.raises(o.UndefinedBehaviour):
        check_gemm_order(np.array([[-np.inf, 1.0, 1.0]]), np.array([[1.0], [3e38], [3e38]]))
    check_gemm_order(np.array([[-np.inf, 1.0, 1.0]]), np.array([[1.0], [1e38], [1e38]]))  # -inf in every order
    check_gemm_order(np.array([[np.inf, 1.0]]), np.array([[0.0], [1.0]]))  # inf * 0: NaN in every order
