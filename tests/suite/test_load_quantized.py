"""``load_quantized``: the floats burn reconstructs from a quantized tensor's stored bytes (docs/ops.md).

Expected numbers are worked by hand from spec §7 (the bytes) and §6 (the product), never read off the oracle; the
loader written from the docs alone (examples/loader_backend.py) must pass the suite, and broken variants of it
must not.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import oracle as o
from conformance import coverage
from conformance.runner import Runner
from conformance.vectors import load_suite

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import loader_backend  # noqa: E402

Q8S = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}
Q4S_PACKED = dict(Q8S, value="Q4S", store={"PackedU32": 0})


def bits(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def load(data, shape, scheme, profile, dtype="f32"):
    return o.run("load_quantized", {"scheme": scheme, "shape": list(shape), "dtype": dtype},
                 {"bytes": np.asarray(data, dtype=np.uint8)}, profile=profile)["x"]


@pytest.fixture(scope="module")
def suite():
    return load_suite(ROOT / "vectors" / "core")


def test_spec_example_bytes_give_burns_own_test_values():
    """§7.4 example 1: codes [-127, -71, 0, 35], F32 scale 0.014173228; burn's test_int8_symmetric_quantization
    dequantizes them to [-1.8, -1.0062993, 0, 0.496063]."""
    data = [0x81, 0xB9, 0x00, 0x23, 0xD4, 0x36, 0x68, 0x3C]
    for profile in ("burn-0.22.1/flex", "burn-0.22.1/ndarray", "burn-0.23.0-pre.1/flex"):
        assert (bits(load(data, (4,), Q8S, profile)) == bits([-1.8, -1.0062993, 0, 0.496063])).all()


def test_burn_0_22_rereads_its_own_q4_bytes_as_nibbles():
    """burn 0.22 writes Q4S PackedU32 codes [0 1 -1 2 -2 3 5 7] one byte each (00 01 FF 02 FE 03 05 07); its reader
    takes them as u32 words: 0x02FF0100 -> nibbles 0 0 1 0 F F 2 0 -> codes [0 0 1 0 -1 -1 2 0], times 0.5. burn
    0.23 expects 4 value bytes for 8 Q4 codes and refuses the 8."""
    data = [0x00, 0x01, 0xFF, 0x02, 0xFE, 0x03, 0x05, 0x07, 0x00, 0x00, 0x00, 0x3F]
    assert (bits(load(data, (8,), Q4S_PACKED, "burn-0.22.1/flex")) == bits([0, 0, 0.5, 0, -0.5, -0.5, 1, 0])).all()
    with pytest.raises(o.BurnPanic) as e:
        load(data, (8,), Q4S_PACKED, "burn-0.23.0-pre.1/flex")
    assert e.value.code == "data.invalid_length"


def test_burn_0_23_packed_lines_by_hand():
    """Q4S PackedU32(0) on [3, 5], one padded word per row: 0x00054321, 0x000BCDEF, 0x00086097 (low nibble
    first), then the F32 scale 0.5."""
    words = np.array([0x00054321, 0x000BCDEF, 0x00086097], dtype="<u4").view(np.uint8)
    data = np.concatenate([words, np.float32([0.5]).view(np.uint8)])
    want = np.float32([[1, 2, 3, 4, 5], [-1, -2, -3, -4, -5], [7, -7, 0, 6, -8]]) * np.float32(0.5)
    assert (bits(load(data, (3, 5), Q4S_PACKED, "burn-0.23.0-pre.1/flex")) == bits(want)).all()


def test_ue8m0_scale_byte_zero_is_two_to_the_minus_127():
    """§4.2: UE8M0 byte 0 decodes to 2^-127 (the f32 subnormal 0x00400000), 0x80 to 2; code 2 times each."""
    scheme = dict(Q8S, block={"size": [1], "dtype": "UE8M0"})
    x = load([2, 2, 0x00, 0x80], (2,), scheme, "burn-0.22.1/flex")
    assert (bits(x) == np.array([0x00800000, 0x40800000], dtype=np.uint32)).all()  # 2^-126, 4


def test_the_loader_plane_has_every_store_with_every_scale_dtype(suite):
    plane = next(p for p in coverage.PLANES if p.name == "loader")
    vectors = [v for v in suite.vectors if v.op == "load_quantized"]
    for cell in plane.cells():
        assert any(plane.tags(cell) <= set(v.tags) for v in vectors), plane.label(cell)


def _run(backend, suite, profile=None):
    runner = Runner(suite, "python:test", backend=backend, profile=profile, diagnose=False)
    runner.start()
    return [runner.run_vector(v) for v in suite.vectors if v.op == "load_quantized"]


@pytest.mark.parametrize("cls", [loader_backend.Loader, loader_backend.Loader022])
def test_a_loader_written_from_the_docs_passes(cls, suite):
    from conformance.backends.python import PythonBackend
    verdicts = _run(PythonBackend(cls()), suite)
    assert [v.alias for v in verdicts if v.status == "failed"] == []
    assert sum(v.status == "passed" for v in verdicts) >= 35


class _IgnoresGlobal(loader_backend.Loader):
    def run(self, op, params, inputs):
        scheme = dict(params["scheme"])
        if scheme["tensor"] and scheme["block"]:  # drop the global: read its 4 bytes as nothing
            return {"x": np.zeros(params["shape"], np.float32)}
        return super().run(op, params, inputs)


class _BF16AsF16(loader_backend.Loader):
    def run(self, op, params, inputs):
        block = params["scheme"]["block"]
        if block and block["dtype"] == "BF16":
            params = dict(params, scheme=dict(params["scheme"], block=dict(block, dtype="F16")))
        return super().run(op, params, inputs)


class _RowMajorOuterScales(loader_backend.Loader):
    unswap = staticmethod(lambda scales, grid, dim: scales)


@pytest.mark.parametrize("broken", [_IgnoresGlobal, _BF16AsF16, _RowMajorOuterScales])
def test_a_broken_loader_fails(broken, suite):
    from conformance.backends.python import PythonBackend
    assert any(v.status == "failed" for v in _run(PythonBackend(broken()), suite))


def test_ndarray_writes_a_loaded_tensor_again_before_dequantizing():
    """Q8S codes [1 -1 2 -2 3 -3 4 -4], UE4M3 block scales 1.0 (0x38) and 0.5 (0x30), an F16 global 0.5 (0x3800):
    flex gives q * 0.5 * s; burn-ndarray's dequantize passes the parts through QuantizedBytes::new, whose assert
    wants an f32 global (found by fuzzing real burn-ndarray)."""
    scheme = dict(Q8S, tensor="F16", block={"size": [4], "dtype": "UE4M3"})
    data = [1, 0xFF, 2, 0xFE, 3, 0xFD, 4, 0xFC, 0x38, 0x30, 0x00, 0x38]
    want = np.float32([0.5, -0.5, 1, -1, 0.75, -0.75, 1, -1])
    assert (bits(load(data, (8,), scheme, "burn-0.22.1/flex")) == bits(want)).all()
    with pytest.raises(o.BurnPanic) as e:
        load(data, (8,), scheme, "burn-0.22.1/ndarray")
    assert e.value.code == "bytes.global_not_f32"
