"""burn-wgpu 0.22.1 as its users build it (fusion + autotune, profile ``burn-0.22.1/wgpu-fused``): what the default build
does differently from its lean twin, one test per class of docs/findings.md "burn-wgpu's default build". Each
expected text is what ``qconform-burn-0_22_1-wgpu-fused`` answered on Mesa lavapipe (2026-12-02), copied from its reply,
with the opaque parts (a failure's id, a kernel's hash) as the oracle writes them; ``MEASURED`` holds whole replies, so
the test also checks that the oracle's text matches the real one."""

from __future__ import annotations

import numpy as np
import pytest
from burn_panics import raises

import oracle as o
from oracle import QuantScheme, QuantValue
from oracle.errors import message_matches
from oracle.layout import run_steps
from oracle.routes import values

FUSED, LEAN = "burn-0.22.1/wgpu-fused", "burn-0.22.1/wgpu"
Q8S = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S)
INTO_DATA = "Error while reading data: use `try_into_data` instead to catch the error at runtime: "
EXECUTION = "An error happened during execution\nCaused by:\n  "
NATIVE_Q8S = "Q8S is not supported for native quantization"


def _i8_failure(kernel: str, line: int, col: int, var: str, array: str) -> str:
    return ("Several failures at once\nCaused by:\n  The bytes were never written (failure #⟨failure⟩, still claiming "
            "⟨claimed⟩ buffer(s))\n⟨chain⟩Caused by:\n  A launch error happened\nCaused by:\n  A compilation error "
            "happened during launch\nCaused by:\n  An error caused the compilation to fail\nCaused by:\n  WGSL "
            f"compilation failed for kernel `{kernel}`: Validation Error\n\nCaused by:\n  In "
            f"Device::create_shader_module, label = '{kernel}'\n    \nShader '{kernel}' parsing error: no definition in "
            f"scope for identifier: `i8`\n  ┌─ wgsl:{line}:{col}\n  │\n{line} │ @group(0) @binding(0) var<storage, "
            f"read_write> {var}: array<{array}>;\n  │{' ' * col}^^ unknown identifier\n\n\n\nBacktrace:\nNo backtrace "
            "available\nAsked at:\nNo backtrace available")


# dequantize/q8s/tensor/spec-example, as the fused binary answered it
MEASURED_SPEC_EXAMPLE = INTO_DATA + EXECUTION + _i8_failure("elemwise_fuse_6de0dfb0", 3, 63, "v1", "vec2<i8>").replace(
    "⟨failure⟩", "1669").replace("⟨claimed⟩", "1").replace("⟨chain⟩", "")


def _parts(shape, scheme=Q8S, blocks=1):
    return o.QTensor(np.ones(shape, np.int8), np.full(blocks, 0.5, np.float32), None, scheme)


@pytest.mark.parametrize("shape, line_of, array, strided", [
    ((6,), 3, "vec2<i8>", False),      # dequantize/q8s/tensor/spec-example: six codes read two by two
    ((2, 8), 3, "vec4<i8>", False),    # .../f32-output: cubecl-wgpu's widest vector, 4
    ((4, 8), 3, "i8", True),           # qlayout/q8s/tensor/transpose: a strided view read one by one
])
def test_the_fused_dequantize_reads_native_i8_codes_itself_and_wgsl_refuses_them(shape, line_of, array, strided):
    """burn-cubecl-fusion fuses the dequantize into its elementwise kernel, which declares the codes as i8: the lean
    build's launch check (`Q8S is not supported for native quantization`) never runs."""
    qt = _parts(shape)
    qt.last_axis_moved = strided
    col = 58 + (len(array) - 2 - 1 if array != "i8" else 0)
    want = INTO_DATA + EXECUTION + _i8_failure("elemwise_fuse_⟨kernel⟩", line_of, col, "v1", array)
    raises("fusion.i8_unwritten", want, values, qt, o.get_profile(FUSED))
    raises("cubecl.native_value", NATIVE_Q8S, o.dequantize, _parts(shape), profile=LEAN)


def test_the_fused_i8_text_matches_the_binarys_reply():
    with pytest.raises(o.BurnPanic) as err:
        o.dequantize(_parts((6,)), profile=FUSED)
    assert message_matches(err.value.message, MEASURED_SPEC_EXAMPLE)
    assert not message_matches(err.value.message, MEASURED_SPEC_EXAMPLE.replace("vec2<i8>", "vec4<i8>"))


def test_an_f16_dequantize_is_read_through_float_into_data():
    """The harness reads an f16/bf16 result with `B::float_into_data`, which returns the error (an `enable f16;` line
    moves the binding to line 4); the two-level scheme fusion declines meets cubek's launch check on the stream."""
    want = "float_into_data: " + EXECUTION + _i8_failure("elemwise_fuse_⟨kernel⟩", 4, 63, "v1", "vec4<i8>")
    raises("harness.read_failed", want, o.dequantize, _parts((2, 8)), "f16", profile=FUSED)
    two_level = Q8S.per_block([4], o.ScaleDtype.UE4M3).per_tensor(o.ScaleDtype.F32)
    qt = o.QTensor(np.ones((2, 8), np.int8), np.ones(4, np.float32), np.ones(1, np.float32), two_level)
    raises("harness.read_failed", "float_into_data: " + EXECUTION + NATIVE_Q8S, o.dequantize, qt, "f16", profile=FUSED)


@pytest.mark.parametrize("steps, depth, root", [
    ([{"op": "slice", "ranges": [[1, 3, 1], [0, 8, 1]]}], 1, NATIVE_Q8S),  # qlayout/q8s/tensor/slice-rows
    ([{"op": "flip", "axes": [0]}], 1, "not implemented"),                  # qlayout/q8s/tensor/flip-rows
])
def test_a_failed_stream_op_is_read_below_it(steps, depth, root):
    """burn-ir's `Handle::Errored`: the failing op's output holds the error; the read's dequantize is skipped one
    deeper, and the read names how deep."""
    want = (INTO_DATA + EXECUTION + f"the work writing it was skipped {depth} operation(s) below a failure: " + root)
    raises("fusion.skipped", want, run_steps, _parts((4, 8)), steps, o.get_profile(FUSED))


def test_the_vec_mat_turn_below_a_failure_is_three_ops():
    """qlayout/fuzz/matmul-rank3-unit-rows-swaps-lhs: the slice fails (0), the reshape is skipped (1), then
    burn-tensor's swap_dims, the matmul and the swap back (4; the float result is read as it is)."""
    qt = o.QTensor(np.ones((2, 2), np.int8), np.ones(2, np.float32), None, Q8S.per_block([2], o.ScaleDtype.F32))
    steps = [{"op": "slice", "ranges": [[0, 1, 1]]}, {"op": "reshape", "shape": [1, 1, 2]},
             {"op": "matmul", "rhs": [1.0, 1.0], "shape": [1, 2, 1]}]
    want = INTO_DATA + EXECUTION + "the work writing it was skipped 4 operation(s) below a failure: " + NATIVE_Q8S
    raises("fusion.skipped", want, run_steps, qt, steps, o.get_profile(FUSED))


def test_a_two_level_trait_default_is_three_ops_above_its_read():
    """qlayout/q8s/two-level/repeat-dim: burn-dispatch does not forward q_repeat_dim, so the dequantize that fails, the
    float op and the quantize are three stream ops; the read's dequantize the fourth (measured: skipped 3)."""
    two_level = Q8S.per_block([4], o.ScaleDtype.UE4M3).per_tensor(o.ScaleDtype.F32)
    qt = o.QTensor(np.ones((4, 8), np.int8), np.ones(8, np.float32), np.ones(1, np.float32), two_level)
    want = INTO_DATA + EXECUTION + "the work writing it was skipped 3 operation(s) below a failure: " + NATIVE_Q8S
    raises("fusion.skipped", want, run_steps, qt, [{"op": "repeat_dim", "dim": 0, "times": 2}], o.get_profile(FUSED))


def test_a_result_burn_tensor_makes_alone_leaves_the_error_behind():
    """qlayout/q8s/tensor/select-none-cat: the select fails on the stream, but `Tensor::cat` of empty tensors answers
    with a fresh empty tensor, so nothing reads the failure (the lean build panicked at the select)."""
    steps = [{"op": "select", "dim": 0, "indices": []}, {"op": "cat", "dim": 0, "copies": 2}]
    x, held = run_steps(_parts((4, 8)), steps, o.get_profile(FUSED))
    assert (x.shape, held) == ((0, 8), None)
    raises("cubecl.native_value", NATIVE_Q8S, run_steps, _parts((4, 8)), steps, o.get_profile(LEAN))


def test_no_fused_kernel_runs_for_an_empty_tensor():
    """dequantize/q8s/shape/empty: the read returns the empty tensor."""
    assert o.dequantize(_parts((0, 8)), profile=FUSED).shape == (0, 8)


def test_a_same_shape_reshape_never_reaches_burn_cubecl():
    """qlayout/fuzz/same-shape-reshape-nd-block: burn-fusion's q_reshape returns the tensor before burn-cubecl's N-D
    block check; the read's fused dequantize then meets WGSL's i8."""
    nd = Q8S.per_block([2, 2], o.ScaleDtype.F32)
    qt = o.QTensor(np.ones((2, 4), np.int8), np.ones(2, np.float32), None, nd)
    with pytest.raises(o.BurnPanic) as err:
        run_steps(qt, [{"op": "reshape", "shape": [2, 4]}], o.get_profile(FUSED))
    assert err.value.code == "fusion.i8_unwritten"
    raises("cubecl.reshape_nd_block", "not implemented: Reshape of ND block-quantized tensor is not yet supported.",
           run_steps, qt, [{"op": "reshape", "shape": [2, 4]}], o.get_profile(LEAN))


def test_the_ternary_weights_sub_byte_store_panics_in_the_fusion_server():
    """ternary_matmul/spec-example: burn-cubecl-fusion's matmul fuser types the Q2S Native weight first and panics on
    the device runner thread; the read reports the server's failure."""
    w = o.QTensor(np.ones((2, 2), np.int8), np.ones(1, np.float32), None, Q8S.with_value(QuantValue.Q2S))
    want = (INTO_DATA + EXECUTION + "the fusion server failed to run a task: CallError(task panicked on device runner "
            "thread: Can't store native sub-byte values)")
    raises("fusion.server_panic", want, o.ternary_matmul, np.ones((1, 2), np.float32), w, profile=FUSED)
    raises("cubecl.native_sub_byte", "Can't store native sub-byte values", o.ternary_matmul,
           np.ones((1, 2), np.float32), w, profile=LEAN)


def test_a_fused_matmul_of_nothing_is_undefined():
    """qlayout/q8s/tensor/matmul-empty: zeros in a fresh process, earlier results' values in a suite run."""
    steps = [{"op": "slice", "ranges": [[0, 4, 1], [3, 3, 1]]}, {"op": "matmul", "rhs": [], "shape": [0, 3]}]
    with pytest.raises(o.UndefinedBehaviour):
        run_steps(_parts((4, 8)), steps, o.get_profile(FUSED))
    x, _ = run_steps(_parts((4, 8)), steps, o.get_profile(LEAN))
    assert x.tolist() == [[0.0] * 3] * 4


def test_the_host_side_q_params_checks_run_past_a_failed_range():
    """Found by fuzzing (seed 20261202, quantize_dynamic case 2): a rank-5 block range fails in its first reduction
    (cubecl's tiling holds 8 dims) on the stream, held in error; compute_q_params still runs at the call and its
    host-side check of a UE8M0 two-level scheme raises first. The lean build raises the reduction's panic."""
    scheme = QuantScheme.default().with_value(QuantValue.Q8S).per_block([2, 1, 1, 2, 4], o.ScaleDtype.UE8M0) \
        .per_tensor(o.ScaleDtype.F32)
    x = np.ones((2, 1, 1, 2, 4), np.float32)
    raises("qparams.block_dtype_too_wide", "block scales in UE8M0 reach f32's range, which a per-tensor scale cannot "
           "absorb", o.quantize_dynamic, x, scheme, profile=FUSED)
    with pytest.raises(o.BurnPanic) as err:
        o.quantize_dynamic(x, scheme, profile=LEAN)
    assert err.value.code == "cubecl.tiling_rank"


def test_a_packed_dim_beyond_the_rank_fails_on_the_stream():
    """Found by fuzzing (seed 20261202, quantize case 127): B::quantize's packed-axis swap runs on the stream."""
    scheme = QuantScheme.default().with_value(QuantValue.Q4F).with_store(o.QuantStore.packed_u32(1))
    bare = "the packed axis is one of the tensor's: OutOfBounds { dim: 18446744073709551615, rank: 1 }"
    args = (np.ones(8, np.float32), scheme, np.ones(1, np.float32))
    raises("fusion.deferred", INTO_DATA + EXECUTION + bare, o.quantize, *args, profile=FUSED, checked=True)
    raises("cubecl.packed_axis_swap", bare, o.quantize, *args, profile=LEAN, checked=True)
