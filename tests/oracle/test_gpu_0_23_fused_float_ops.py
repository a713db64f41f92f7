"""burn-wgpu 0.23.0-pre.1's default build (profile ``burn-0.23.0-pre.1/wgpu-fused``) on ``float_ops`` chains: a failed
stream op is held by its output (burn-ir ``Handle::Errored``) through the float-op steps, one test per class of
docs/findings.md "burn-wgpu 0.23.0-pre.1's default build". Each expected depth and text is what
``qconform-burn-0_23_0_pre_1-wgpu-fused`` answered on Mesa lavapipe (2026-12-02) for the vector named beside it."""

from __future__ import annotations

import numpy as np
import pytest
from burn_panics import raises

from oracle.ops import run

FUSED = "burn-0.23.0-pre.1/wgpu-fused"
INTO_DATA = "Error while reading data: use `try_into_data` instead to catch the error at runtime: "
SORT_READ = ("Failed to synchronously read tensor data. This operation is not supported until this backend has a GPU "
             "sorting implementation.: ")
EXECUTION = "An error happened during execution\nCaused by:\n  "
NATIVE_Q8S = "Q8S is not supported for native quantization"
TENSOR = {"block": None, "mode": "Symmetric", "store": "Native", "tensor": None, "value": "Q8S"}
TWO_LEVEL = {"block": {"dtype": "UE4M3", "size": [4]}, "mode": "Symmetric", "store": "Native", "tensor": "F32",
             "value": "Q8S"}
X = {"x": np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)}
RHS = {"rhs": [0.5] * 24, "shape": [8, 3]}


def _skipped(depth: int) -> str:
    return f"the work writing it was skipped {depth} operation(s) below a failure: {NATIVE_Q8S}"


def _two_level() -> dict:
    return {"codes": np.arange(-16, 16, dtype=np.int8).reshape(4, 8), "scales": np.full(8, 0.5, np.float32),
            "global": np.float32(1.0)}


def _float_ops(scheme, steps, inputs):
    return run("float_ops", {"scheme": scheme, "steps": steps}, inputs, profile=FUSED)


@pytest.mark.parametrize("steps, depth", [
    ([], 1),  # from-x/f32/tensor/plain: the read's dequantize
    ([{"op": "transpose"}, {"op": "slice", "ranges": [[1, 7, 2], [0, 4, 1]]}], 3),  # .../transpose-slice
    ([{"op": "reshape", "shape": [2, 16]}, {"op": "sum_dim", "dim": 1}], 3),  # reshape, dequantize, sum_dim
    ([{"op": "neg"}, {"op": "matmul", **RHS}], 2),                         # dequantize+neg fused, then the matmul
    ([{"op": "gather", "dim": 1, "indices": [7, 0, 3, 4] * 4, "shape": [4, 4]}, {"op": "abs"}], 6),  # 3 + 2 + 1
])
def test_a_failed_on_device_quantize_is_read_below_the_float_steps(steps, depth):
    """``quantize_dynamic`` of a Native Q8S tensor fails on the stream (the launch check); each float step after it is
    skipped, a fused dequantize+elementwise block counting once, a not-forwarded gather three times."""
    raises("fusion.skipped", INTO_DATA + EXECUTION + _skipped(depth), _float_ops, TENSOR, steps, X)


@pytest.mark.parametrize("steps, depth", [
    ([{"op": "neg"}], 1),                             # q8s/two-level/neg: the failed dequantize, then neg
    ([{"op": "argmax", "dim": 1}], 2),                # .../argmax-1: argmax, then Tensor::float's cast
    ([{"op": "abs"}], 3),                             # .../abs: abs, the requantize's QuantizeOp, the read
    ([{"op": "abs"}, {"op": "sqrt"}], 4),             # .../abs-sqrt: ... then a dequantize fusion declines, sqrt
    ([{"op": "min_dim", "dim": 0}], 3),               # .../min-dim-0: q_gather's gather and quantize, the read
])
def test_a_failed_two_level_dequantize_is_read_below_the_float_steps(steps, depth):
    """fusion declines a two-level scheme, so ``B::dequantize``'s launch check fails on the stream at depth 0."""
    raises("fusion.skipped", INTO_DATA + EXECUTION + _skipped(depth), _float_ops, TWO_LEVEL, steps, _two_level())


@pytest.mark.parametrize("steps", [[{"op": "abs"}], [{"op": "abs"}, {"op": "sqrt"}], [{"op": "max_dim", "dim": 1}]])
def test_a_failed_requantize_is_read_before_the_fused_i8_compile_failure(steps):
    """q8s/tensor/abs, abs-sqrt, max-dim-1: the fused dequantize+abs kernel's i8 compile failure errors no tensor,
    the requantize's QuantizeOp does; the read of its output reports it one below (its dequantize fused with sqrt)."""
    inputs = {"codes": np.arange(-16, 16, dtype=np.int8).reshape(4, 8), "scales": np.full(1, 0.5, np.float32)}
    raises("fusion.skipped", INTO_DATA + EXECUTION + _skipped(1), _float_ops, TENSOR, steps, inputs)


def test_a_sort_reads_its_input_back_and_reports_the_failure_after_its_own_message():
    """burn-backend's ``float_sort`` default: ``try_read_sync(..).expect(msg)`` (q8s/two-level/sort-1: the failed
    dequantize itself; from-x/f32/tensor/sort-abs: the failed quantize, one below)."""
    raises("fusion.sort_read", SORT_READ + EXECUTION + NATIVE_Q8S, _float_ops, TWO_LEVEL,
           [{"op": "sort", "dim": 1}], _two_level())
    raises("fusion.sort_read", SORT_READ + EXECUTION + _skipped(1), _float_ops, TENSOR,
           [{"op": "sort", "dim": 1}, {"op": "abs"}], X)


def test_a_requantize_checks_its_blocks_at_the_call_past_a_failure_on_the_stream():
    """q8s/two-level/max-dim-1: the dequantize's failure is held, and compute_range's host-side assert of the
    requantize (a [4, 1] result, blocks of 4) is raised at the call."""
    raises("range.block_not_divisible", "Tensor Shape { dims: [4, 1] } must be evenly divisible by block size [1, 4]",
           _float_ops, TWO_LEVEL, [{"op": "max_dim", "dim": 1}], _two_level())


E2M1_ND_BLOCK = {"block": {"dtype": "UE4M3", "size": [6, 8]}, "mode": "Symmetric", "store": {"PackedU32": 0},
                 "tensor": None, "value": "E2M1"}
FP8_SCALAR = ("Several failures at once\nCaused by:\n  The bytes were never written (failure #⟨failure⟩, still claiming "
              "⟨claimed⟩ buffer(s))\n⟨chain⟩Caused by:\n  A launch error happened\nCaused by:\n  A compilation error "
              "happened during launch\nCaused by:\n  A validation error caused the compilation to fail\nCaused by:\n  "
              "Compilation error: invalid input program.\nfp8 on WGSL is packed 4 lanes to a u32, a scalar has no "
              "representation: use vectors of 4, 8 or 16 lanes\nBacktrace:\nNo backtrace available\nAsked at:\nNo "
              "backtrace available")


def test_a_scalar_fp8_compile_failure_errors_no_tensor_so_a_later_refusal_is_read_first():
    """float_ops/fuzz/oversized-upload-topk-reshape: the dequantize's UE4M3-scale kernel fails to compile (its bytes
    never written), the topk and requantize run on, and the reshape's refusal of an N-D block, a stream op's, is what
    the read of its output reports; .../sort-reshape: the sort's read meets the compile failure."""
    inputs = {"codes": (np.arange(96) % 15 - 7).astype(np.int8).reshape(6, 16),
              "scales": np.asarray([1.0, 2.0], np.float32)}
    refusal = _skipped(1).replace(NATIVE_Q8S, "not implemented: Reshape of ND block-quantized tensor is not yet "
                                  "supported.")
    raises("fusion.skipped", INTO_DATA + EXECUTION + refusal, _float_ops, E2M1_ND_BLOCK,
           [{"op": "topk", "dim": 1, "k": 8}, {"op": "reshape", "shape": [6, 1, 8]}], inputs)
    raises("fusion.sort_read", SORT_READ + EXECUTION + FP8_SCALAR, _float_ops, E2M1_ND_BLOCK,
           [{"op": "sort", "dim": 1}, {"op": "reshape", "shape": [6, 1, 16]}], inputs)
