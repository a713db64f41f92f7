"""Hand-worked numbers from the spec (§7.4, §10) and from the tie rules, read back out of the committed suite.

The expected values here are derived from the spec text, not copied from the oracle: a wrong oracle or a stale
suite fails these."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import oracle
from conformance.vectors import load_suite

SUITE = Path(__file__).resolve().parents[2] / "vectors" / "core"
NDARRAY, FLEX, CUBECL = "burn-0.22.0-pre.3/ndarray", "burn-0.22.0-pre.3/flex", "burn-0.22.0-pre.3/cubecl"


@pytest.fixture(scope="module")
def suite():
    return load_suite(SUITE)


def out(suite, alias, profile, name):
    e = suite.get(alias).expected[profile]
    assert e.error is None, e.error
    return e.outputs[name]


def test_two_level_example_codes(suite):
    """§10: per_block([4], UE4M3).per_tensor(F32) on [0.1, -0.4, ...] -> codes [13, -53, 26, 119, -127, 25, 4, -2],
    UE4M3 block scales [288, 448], global bits 0x37DD2807, on every profile that quantizes to Native storage (WGSL
    has no i8: burn-wgpu refuses it)."""
    alias = "quantize_dynamic/q8s/two-level-ue4m3/spec-example"
    wgsl = [p for p in oracle.PROFILES if oracle.get_profile(p).backend == "wgpu"]
    assert wgsl == ["burn-0.22.0-pre.3/wgpu", "burn-0.22.1/wgpu", "burn-0.22.1/wgpu-fused", "burn-0.23.0-pre.1/wgpu",
                    "burn-0.23.0-pre.1/wgpu-fused"]
    for profile in wgsl:  # a fused build reports the launch check at the read (docs/findings.md)
        fused = oracle.get_profile(profile).fusion
        assert suite.get(alias).expected[profile].error["code"] == ("fusion.deferred" if fused else "cubecl.native_value")
    for profile in (p for p in oracle.PROFILES if p not in wgsl):
        assert out(suite, alias, profile, "codes").tolist() == [13, -53, 26, 119, -127, 25, 4, -2]
        assert out(suite, alias, profile, "scales").tolist() == [288.0, 448.0]
        assert out(suite, alias, profile, "global").view(np.uint32).tolist() == [0x37DD2807]


def test_dynamic_int8_example(suite):
    """§10: [5, 0, 4, -12.7] Q8S -> scale 25.4/254 = 0x3DCCCCCD, codes [50, 0, 40, -127]."""
    alias = "quantize_dynamic/q8s/tensor/spec-example"
    assert out(suite, alias, NDARRAY, "codes").tolist() == [50, 0, 40, -127]
    assert out(suite, alias, NDARRAY, "scales").view(np.uint32).tolist() == [0x3DCCCCCD]


def test_byte_layout_examples(suite):
    """§7.4 examples 1 and 2."""
    assert out(suite, "to_bytes/q8s/tensor/spec-example", NDARRAY, "bytes").tolist() == \
        [0x81, 0xB9, 0x00, 0x23, 0xD4, 0x36, 0x68, 0x3C]
    assert out(suite, "to_bytes/q8s/two-level-ue4m3/spec-example", NDARRAY, "bytes").tolist() == \
        [0x00, 0x19, 0x33, 0x4C, 0x66, 0x7F, 0x80, 0xFF, 0x30, 0x20, 0x00, 0x00, 0x40, 0x40]
    back = suite.get("from_bytes/q8s/two-level-ue4m3/spec-example").expected[NDARRAY].outputs
    assert back["scales"].tolist() == [0.5, 0.125] and back["global"].tolist() == [3.0]


def test_pack_example(suite):
    """§7.3: [-128, 2, -3, 127] -> 2147287680; with 55 appended -> [2147287680, 55]."""
    assert out(suite, "pack_u32/q8s/spec-example", NDARRAY, "words").tolist() == [2147287680]
    assert out(suite, "pack_u32/q8s/padded", NDARRAY, "words").tolist() == [2147287680, 55]
    assert out(suite, "unpack_u32/q4s/spec-example", NDARRAY, "codes").tolist() == [0, 0, 1, 1, 1, 1, 1, 1]


def test_round_up_table(suite):
    """§4.1 table, F16 and UE4M3 columns (0.3, 1/3, 500, 1e-3, 7.7e-4, 3.6/254, 9/254, MIN_POSITIVE, 0)."""
    f16 = out(suite, "round_up/f16/spec-table", NDARRAY, "rounded")
    assert f16[[0, 2, 5, 8]].tolist() == [np.float32(0.30004883), 500.0, np.float32(0.014175415), 0.0]
    ue4m3 = out(suite, "round_up/ue4m3/spec-table", NDARRAY, "rounded")
    assert ue4m3.tolist() == [0.3125, 0.34375, 448.0, 0.001953125, 0.001953125, 0.015625, 0.0390625,
                              0.001953125, 0.0]
    err = suite.get("round_up/ue8m0/spec-table").expected[NDARRAY].error
    assert err["message"] == "UE8M0 scales are not yet supported"


def _away(v: float) -> int:
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


@pytest.mark.parametrize("level", ["tensor", "block", "two-level"])
@pytest.mark.parametrize("kind", ["ties-even", "ties-odd"])
def test_ties_split_cpu_and_gpu(suite, level, kind):
    """x/s is exactly k + 0.5: the CPU backends round away from zero, the GPU to even (Python's round). On the
    GPU, ``Tensor::quantize``'s flat block scales are read through dim 0 of a rank-2 tensor (docs/findings.md), so
    every unit reads scale (p mod 2): only the first block keeps its ties, the other quotients are the GPU's own."""
    alias = f"quantize/q8s/{level}/{kind}"
    scaled = suite.get(alias).expected[NDARRAY].stages.scaled.astype(np.float64).ravel()
    assert np.all(np.abs(scaled) % 1 == 0.5)
    assert out(suite, alias, NDARRAY, "codes").ravel().tolist() == [_away(v) for v in scaled]
    gpu = suite.get(alias).expected[CUBECL].stages.scaled.astype(np.float64).ravel()
    assert np.all(np.abs(gpu[:4]) % 1 == 0.5)  # the first block reads its own scale (element 0 reads scale 0)
    assert out(suite, alias, CUBECL, "codes").ravel().tolist() == [max(-127, min(127, round(v))) for v in gpu]


def test_per_tensor_global_needs_two_level(suite):
    e = suite.get("quantize/q8s/tensor/global-given-backend").expected[NDARRAY].error
    assert e == {"code": "quantize.global_without_two_level",
                 "message": "a per-tensor scale should come with a two-level scheme"}


def test_nan_per_profile(suite):
    """§5.2-5.4: ndarray panics on NaN, flex stores 0, the GPU clamp returns b."""
    alias = "quantize/q8s/tensor/nan"
    assert suite.get(alias).expected[NDARRAY].error["message"] == "called `Option::unwrap()` on a `None` value"
    x = suite.get(alias).inputs["x"].ravel()
    assert out(suite, alias, FLEX, "codes").ravel()[np.isnan(x)].tolist() == [0] * int(np.isnan(x).sum())
    assert out(suite, alias, CUBECL, "codes").ravel()[np.isnan(x)].tolist() == [127] * int(np.isnan(x).sum())
