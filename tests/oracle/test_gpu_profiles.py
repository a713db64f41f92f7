"""What every GPU profile shares, one test per behaviour parameterised over the profiles that have it (burn's kernels
as WGSL and SPIR-V on Mesa lavapipe, releases 0.22.0-pre.3 and 0.22.1, and the CUDA models). What one release's
kernels do differently is in test_gpu_0_22_0_pre_3.py and test_gpu_0_22_1.py. Expectations are worked by hand from
the measured behaviour and the cited sources, or were answered by the real binaries (the suite's vectors of the
same behaviour pass on every profile that is not `modelled`), not taken from the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from burn_panics import raises

import oracle as o
from oracle import QuantScheme, QuantValue
from oracle.profiles import get_profile

Q8S = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S)
PACKED = Q8S.with_store(o.QuantStore.packed_u32(0))
WGSL = ("burn-0.22.0-pre.3/wgpu", "burn-0.22.1/wgpu")
LAVAPIPE = (*WGSL, "burn-0.22.0-pre.3/vulkan", "burn-0.22.1/vulkan")
CUDA_MODELS = ("burn-0.22.0-pre.3/cubecl", "burn-0.22.1/cubecl")


@pytest.mark.parametrize("profile, status", [
    ("burn-0.22.0-pre.3/wgpu", "suite_passing"), ("burn-0.22.0-pre.3/vulkan", "suite_passing"),
    ("burn-0.22.1/wgpu", "proven"), ("burn-0.22.1/vulkan", "proven"),
    *((name, "modelled") for name in CUDA_MODELS)])
def test_each_gpu_profile_claims_what_was_run(profile, status):
    p = get_profile(profile)
    assert p.status == status
    assert ("not run" in p.description) == (status == "modelled")


@pytest.mark.parametrize("new, old", [("burn-0.22.1/wgpu", "burn-0.22.0-pre.3/wgpu"),
                                      ("burn-0.22.1/vulkan", "burn-0.22.0-pre.3/vulkan")])
def test_the_0_22_1_runtimes_derive_from_pre3(new, old):
    p, q = get_profile(new), get_profile(old)
    assert p.backend == q.backend
    assert (p.nan_code, p.tie, p.layout) == ("lo", "even", q.layout)


@pytest.mark.parametrize("profile", WGSL)
@pytest.mark.parametrize("value", ["Q8S", "Q8F", "E4M3", "E5M2"])
def test_wgsl_has_no_i8_so_native_quantize_and_dequantize_are_refused(value, profile):
    scheme = Q8S.with_value(QuantValue[value])
    message = f"{value} is not supported for native quantization"
    raises("cubecl.native_value", message, o.quantize, np.ones(4, np.float32), scheme, np.ones(1, np.float32),
           profile=profile)
    qt = o.QTensor(np.ones(4, np.int8), np.ones(1, np.float32), None, scheme)
    raises("cubecl.native_value", message, o.dequantize, qt, profile=profile)


@pytest.mark.parametrize("profile", (*LAVAPIPE, *CUDA_MODELS))
def test_native_sub_byte_codes_cannot_be_loaded_on_any_cubecl_runtime(profile):
    qt = o.QTensor(np.zeros(4, np.int8), np.ones(1, np.float32), None, Q8S.with_value(QuantValue.Q4S))
    raises("cubecl.native_sub_byte", "Can't store native sub-byte values", o.dequantize, qt, profile=profile)


@pytest.mark.parametrize("profile, want", [
    # 0.22.0-pre.3: a PackedU32 word holds integers, also for E4M3: 0x80 is -128, not E4M3's -0.0
    ("burn-0.22.0-pre.3/wgpu", [126.0, 42.0, -128.0, -60.0]),
    # cubek-quant-0.3.1 dequantize.rs:123-131: decoded by value, 0x7E = 448, 0x2A = 0.3125, 0x80 = -0.0, 0xC4 = -3
    ("burn-0.22.1/wgpu", [448.0, 0.3125, -0.0, -3.0])])
def test_packed_e4m3_fields_dequantize(profile, want):
    codes = np.array([0x7E, 0x2A, 0x80, 0xC4], np.uint8).view(np.int8)
    qt = o.QTensor(codes, np.ones(1, np.float32), None, PACKED.with_value(QuantValue.E4M3))
    got = o.dequantize(qt, profile=profile)
    assert got.view(np.uint32).tolist() == np.array(want, np.float32).view(np.uint32).tolist()


def test_a_fused_build_reports_a_stream_ops_panic_at_the_read():
    """burn-wgpu's default build (burn-fusion) runs B::quantize on its stream: the launch check's panic comes back from
    the read, wrapped by burn-tensor's into_data (Tensor API) or returned by q_into_data (backend API), as measured on
    qconform-burn-0_22_1-wgpu-fused; the lean twin panics at the call."""
    x, one = np.ones(4, np.float32), np.ones(1, np.float32)
    bare = "Q8S is not supported for native quantization"
    raises("cubecl.native_value", bare, o.quantize, x, Q8S, one, profile="burn-0.22.1/wgpu")
    raises("fusion.deferred", "Error while reading data: use `try_into_data` instead to catch the error at runtime: "
           "An error happened during execution\nCaused by:\n  " + bare,
           o.quantize, x, Q8S, one, profile="burn-0.22.1/wgpu-fused", checked=True)
    raises("harness.read_failed", "q_into_data: An error happened during execution\nCaused by:\n  " + bare,
           o.quantize, x, Q8S, one, profile="burn-0.22.1/wgpu-fused")
