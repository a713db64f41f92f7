"""A newcomer's MXFP8 encoder written from the OCP Microscaling specification alone (v1.0, section 6.3: the shared
scale 2^(floor(log2(amax)) - emax_elem), elements saturated onto E4M3), claiming burn-0.23.0-pre.1/flex as
docs/protocol.md says a real E4M3 encoder should. What its first run met: the diagnosis raised on a UE8M0 scale
under 0.23 (a runner error hid the differences), and nothing named OCP's rule, a dequantize by the given f32
scales, or UE8M0's missing zero."""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

from conformance import differences
from conformance.backends.python import PythonBackend
from conformance.formats import get_format
from conformance.runner import Runner
from conformance.vectors import load_suite

ROOT = Path(__file__).resolve().parents[2]
E4M3 = ml_dtypes.float8_e4m3fn


class OcpMxfp8:
    """quantize_dynamic only, blocks of 32 along the last dim: OCP's shared scale, E4M3 elements saturated."""

    def hello(self):
        return {"name": "ocp-mxfp8", "version": "0", "profile": "burn-0.23.0-pre.1/flex",
                "capabilities": {"ops": ["quantize_dynamic"], "formats": ["mxfp8"], "validates": False}}

    def run(self, op, params, inputs):
        x = inputs["x"].astype(np.float32)
        blocks = x.reshape(x.shape[:-1] + (-1, 32))
        amax = np.abs(blocks).max(axis=-1, keepdims=True).astype(np.float64)
        exponent = np.frexp(np.where(amax > 0, amax, 1.0))[1] - 1 - 8  # emax_elem of E4M3 is 8
        scale = np.ldexp(1.0, np.clip(np.where(amax > 0, exponent, -127), -127, 127)).astype(np.float32)
        codes = np.clip(blocks / scale, -448, 448).astype(E4M3).view(np.int8).reshape(x.shape)
        return {"codes": codes, "scales": scale.ravel()}


@pytest.fixture(scope="module")
def verdicts():
    suite = load_suite(ROOT / "vectors" / "core")
    runner = Runner(suite, "python:ocp", backend=PythonBackend(OcpMxfp8()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return [v for v in runner.start().run_all() if v.status != "not applicable"]


def test_every_failure_is_judged_and_weights_name_the_ocp_rule(verdicts):
    failed = [v for v in verdicts if v.status == "failed"]
    assert failed and all(v.kind == "mismatch" for v in failed), [(v.alias, v.kind) for v in failed]
    weights = [v for v in failed if v.alias.split("/")[-1].split("-")[0] in ("normal", "laplace", "student")]
    assert weights
    for v in weights:
        leading = v.diagnosis["explanations"][0]
        assert (leading["deciding"], leading["contradicts"]) == ("shared_scale: ocp_mx", 0), (v.alias, leading)


def test_a_ue8m0_scale_is_measured_in_its_steps_under_0_23():
    vector = SimpleNamespace(params={"scheme": get_format("mxfp8").scheme((1, 32)).to_json()}, op="quantize_dynamic")
    texts = [c["text"] for c in differences.classify("scales", np.float32([2.0**-7]), np.float32([2.0**-8]), vector)]
    assert texts == ["scales: -1 UE8M0 step from burn's"], texts


def test_a_zero_scale_where_burn_holds_ue8m0s_smallest_is_named():
    vector = SimpleNamespace(params={"scheme": get_format("mxfp8").scheme((1, 32)).to_json()}, op="quantize")
    found = differences.classify("scales", np.float32([2.0**-127, 1.0]), np.float32([0.0, 1.0]), vector)
    assert found and found[0]["class"] == "ue8m0-no-zero", found
