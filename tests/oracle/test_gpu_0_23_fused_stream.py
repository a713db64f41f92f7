"""burn-wgpu 0.23.0-pre.1's default build (profile ``burn-0.23.0-pre.1/wgpu-fused``) on ``qlayout`` chains: what a
read meets of a failure on the way (docs/findings.md, "Its per-op campaign"). Each expected outcome is what
``qconform-burn-0_23_0_pre_1-wgpu-fused`` answered on Mesa lavapipe for the fuzz case named beside it (seed
20261216, 2026-12-07)."""

from __future__ import annotations

import numpy as np
import pytest

from oracle import BurnPanic, UndefinedBehaviour, float_ops, layout
from oracle.ops import run
from oracle.profiles import get_profile
from oracle.routes import float_, requantized_by
from oracle.scheme import QuantScheme

FUSED, LEAN = "burn-0.23.0-pre.1/wgpu-fused", "burn-0.23.0-pre.1/wgpu"
Q8S = {"block": None, "mode": "Symmetric", "store": "Native", "tensor": None, "value": "Q8S"}
# two rows: a tensor with a dim of size 1 makes a fused i8 read the process's pick (the last tests)
ROWS = {"codes": np.array([[-9, 96, 73, 8], [5, -3, 2, 1]], np.int8), "scales": np.array([0.8125], np.float32)}


def _qlayout(scheme, steps, inputs, profile=FUSED):
    return run("qlayout", {"scheme": scheme, "steps": steps}, inputs, profile=profile)


def test_a_fused_reads_compile_failure_is_met_by_the_read_of_its_bytes():
    with pytest.raises(BurnPanic) as err:
        _qlayout(Q8S, [{"op": "mul_scalar", "value": 0.5}], ROWS)
    assert err.value.code == "fusion.i8_unwritten"


@pytest.mark.parametrize("last", [
    {"op": "repeat_dim", "dim": 1, "times": 0},  # case 235: burn-tensor answers it alone
    {"op": "slice", "ranges": [[0, 2, 1], [2, 2, 1]]},  # an empty slice: the same short cut
])
def test_an_empty_result_burn_tensor_answers_alone_reads_none_of_the_unwritten_bytes(last):
    out = _qlayout(Q8S, [{"op": "mul_scalar", "value": 0.5}, last], ROWS)
    assert out["x"].shape == (2, 0) and out["x"].dtype == np.float32


def test_a_later_reshapes_count_panic_comes_before_the_read():
    # case 942: expand [6] (its fused read fails to compile), then a reshape to [0, 1]: burn-tensor's count check
    with pytest.raises(BurnPanic) as err:
        _qlayout(Q8S, [{"op": "expand", "shape": [6]}, {"op": "reshape", "shape": [0, 1]}],
                 {"codes": np.arange(6, dtype=np.int8), "scales": np.array([0.5], np.float32)})
    assert err.value.code == "tensor.reshape_count"


def test_a_selects_requantize_assert_runs_on_the_stream():
    # case 1007: an E5M2 PackedU32(1) block-[8] tensor of shape [4, 1] selected along dim 1; burn-fusion queues
    # q_select, so quantize_dynamic's block assert inside burn-cubecl's q_select surfaces at the read, 1 below
    scheme = {"block": {"dtype": "F32", "size": [8]}, "mode": "Symmetric", "store": {"PackedU32": 1},
              "tensor": None, "value": "E5M2"}
    inputs = {"codes": np.array([[51], [-31], [14], [72]], np.int8),
              "scales": np.array([0.75, 0.0146484375, 120.0, 0.5625], np.float32)}
    steps = [{"op": "select", "dim": 1, "indices": [0]}]
    assertion = "Tensor Shape { dims: [4, 1] } must be evenly divisible by block size [1, 8]"
    with pytest.raises(BurnPanic) as err:
        _qlayout(scheme, steps, inputs)
    assert err.value.code == "fusion.skipped"
    assert err.value.message.endswith(f"skipped 1 operation(s) below a failure: {assertion}")
    with pytest.raises(BurnPanic) as err:
        _qlayout(scheme, steps, inputs, profile=LEAN)
    assert (err.value.code, err.value.message) == ("range.block_not_divisible", assertion)


def test_a_fused_i8_block_ended_by_a_gather_along_a_dim_of_one_is_the_processs_pick():
    # case 56: a fresh process reads B::dequantize's launch check (skipped 3), a process that ran other i8 chains
    # first reads the fused kernel's compile failure: undefined
    one = {"codes": np.array([-105], np.int8), "scales": np.array([0.00390625], np.float32)}
    steps = [{"op": "mul_scalar", "value": 0.25}, {"op": "mul_scalar", "value": 0.25},
             {"op": "gather", "dim": 0, "indices": [0, 0, 0], "shape": [3]}]
    with pytest.raises(UndefinedBehaviour, match="by what the process ran before"):
        _qlayout(Q8S, steps, one)
    # a select along a dim of 4 of a tensor with no dim of size 1 reads the compile failure
    with pytest.raises(BurnPanic) as err:
        _qlayout(Q8S, [{"op": "mul_scalar", "value": 0.25}, {"op": "select", "dim": 1, "indices": [0, 0]}], ROWS)
    assert err.value.code == "fusion.i8_unwritten"


# float_ops case 12536's class: a requantized cat of a PackedU32(1) tensor loaded as [4, 4] (codes -8..7, scale 0.5)
OUTER = {"block": None, "mode": "Symmetric", "store": {"PackedU32": 1}, "tensor": None, "value": "Q8S"}
LOADED = {"codes": np.arange(16, dtype=np.int8).reshape(4, 4) - 8, "scales": np.array([0.5], np.float32)}


def _float_ops(steps, profile=FUSED):
    return run("float_ops", {"scheme": OUTER, "steps": steps}, LOADED, profile=profile)


def test_a_fused_cat_of_a_tensor_with_no_dim_of_one_is_row_major():
    # the binary's codes for cat along dim 0 of two copies: each 4 x 4 block as the lean builds pack it
    measured = np.array([-127, -64, 0, 64, -111, -48, 16, 79, -95, -32, 32, 95, -79, -16, 48, 111] * 2, np.int8)
    steps = [{"op": "cat", "dim": 0, "copies": 2}]
    assert _float_ops(steps)["codes"].ravel().tobytes() == measured.tobytes()
    assert _float_ops(steps, profile=LEAN)["codes"].ravel().tobytes() == measured.tobytes()


def test_a_fused_stack_may_be_laid_out_in_its_operands_order():
    # the binary's codes for stack along dim 0 of two copies: the cat written with the packed axis innermost, so each
    # packed word reads a column of the operand (rows of equal codes); the lean build packs the row-major cat
    steps = [{"op": "stack", "dim": 0, "copies": 2}]
    with pytest.raises(UndefinedBehaviour, match="layout planner"):
        _float_ops(steps)
    prof = get_profile(FUSED)
    held, _ = float_ops.start(LOADED, QuantScheme.from_json(OUTER), prof)
    held = layout.step(held, {"op": "reshape", "shape": [1, 4, 4]}, prof)
    cat = {"op": "cat", "dim": 0, "copies": 2}
    in_operand_order = requantized_by(lambda h: float_(cat, h, prof, in_backend=True), held, prof, strides=(16, 1, 4))
    measured = np.repeat(np.array([-127, -64, 0, 64], np.int8), 4)
    assert in_operand_order.codes.ravel().tobytes() == np.tile(measured, 2).tobytes()
    lean = _float_ops(steps, profile=LEAN)["codes"].ravel()
    assert lean.tobytes() != np.tile(measured, 2).tobytes()


def test_a_fused_i8_read_of_a_tensor_with_a_dim_of_one_is_the_processs_pick():
    # case 2848: the compile failure alone and after 249 other cases, B::dequantize's launch check 2,848 cases into a
    # campaign (3118, 3422 and 14239 alike): undefined; an expand of a tensor with no dim of size 1 reads the compile
    # failure
    codes = {"codes": np.array([[124, 8, 9, -57, 103, -7, -52, 8]], np.int8),
             "scales": np.array([0.0126953125], np.float32)}
    for target in ([3, 4, 2], [1, 4, 2]):
        with pytest.raises(UndefinedBehaviour, match="by what the process ran before"):
            _qlayout(Q8S, [{"op": "reshape", "shape": [1, 4, 2]}, {"op": "expand", "shape": target}], codes)
    with pytest.raises(BurnPanic) as err:
        _qlayout(Q8S, [{"op": "reshape", "shape": [4, 2]}, {"op": "expand", "shape": [4, 2]}], codes)
    assert err.value.code == "fusion.i8_unwritten"
