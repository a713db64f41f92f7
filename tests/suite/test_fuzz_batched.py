"""Batched evaluation (conformance/fuzz/batched.py) gives the per-case oracle's expectations bit for bit.

The reference is ``generate.expect`` on each case alone; the batched answers are compared with it by bit pattern,
shape and dtype, output by output and stage by stage, over thousands of cases drawn inside every named format
(each op of the scope) under every CPU profile. A case the batched path leaves to the per-case oracle (a panic,
a partial shape) is not compared here: the engine evaluates it on its own.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from conformance.backends.python import PythonBackend
from conformance.formats import FORMATS
from conformance.fuzz import batched, engine
from conformance.fuzz.scope import scope_of
from conformance.fuzz.strategies import FuzzCase, RandomDraw, draw_case
from conformance.generate import PROFILES, expect
from examples.format_backend import FormatBackend
from oracle.profiles import get_profile

CPU_PROFILES = [p for p in PROFILES if get_profile(p).kernel == "cpu"]
PROFILE = "burn-0.22.1/flex"
CASES = 480  # per format and profile: 3,840 per profile, 19,200 drawn (about 5,000 of them batched)


def _bits(a) -> tuple:
    a = np.ascontiguousarray(np.asarray(a))
    return a.shape, a.dtype.str, a.view(np.uint8).tobytes()


def _answer_bits(e: dict) -> dict:
    """An expectation as bit patterns: every output and every recorded stage, and the rest as is."""
    stages = {k: _bits(v) for k, v in vars(e["stages"]).items() if v is not None}
    return {"outputs": {k: _bits(v) for k, v in e["outputs"].items()}, "stages": stages,
            "values": e["values"], "compare": e["compare"]}


def _as_case(case):
    return engine._as_case(case, False)


@pytest.mark.parametrize("profile", CPU_PROFILES)
def test_batched_expectations_are_the_per_case_oracles(profile):
    batched_per_op: dict[str, int] = {}
    two_level: dict[str, int] = {}
    for name in FORMATS:
        scope = scope_of(PythonBackend(FormatBackend(name)).hello.capabilities, (name,), None)
        cases = [draw_case(RandomDraw(f"20:{name}:{i}"), profile, None, scope) for i in range(CASES)]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            found = []
            for first in range(0, CASES, engine.EXPECT_BATCH):
                found += batched.expectations(cases[first:first + engine.EXPECT_BATCH], profile, _as_case)
            for case, got in zip(cases, found):
                if got is None:
                    continue
                want = expect(_as_case(case), profile)
                assert "outputs" in want, f"{name} {case.describe()}: batched gave data, the case alone {want}"
                assert _answer_bits(got) == _answer_bits(want), f"{name} under {profile}: {case.describe()}"
                batched_per_op[case.op] = batched_per_op.get(case.op, 0) + 1
                if "global" in case.inputs:
                    two_level[case.op] = two_level.get(case.op, 0) + 1
    # the comparison is only as good as what it compared: every op went through stacked runs, many times, and a
    # two-level format's quantize and dequantize through runs that share one global
    assert set(batched_per_op) == set(batched.OPS), batched_per_op
    assert min(batched_per_op.values()) >= 3, batched_per_op
    # (burn-ndarray refuses E2M1, NVFP4's value, and burn-flex loads a PackedU32 E2M1 tensor from bytes only from
    # 0.23.0-pre.1 on: every such case panics, and a panicking group is left to each case)
    flex = get_profile(profile).backend == "flex"
    assert two_level.get("quantize", 0) >= (3 if flex else 0), two_level
    assert two_level.get("dequantize", 0) >= (3 if profile == "burn-0.23.0-pre.1/flex" else 0), two_level


def test_a_group_whose_stacked_run_panics_is_left_to_each_case():
    """burn-ndarray refuses a PackedU32 store (a panic): the stacked run panics, so no case of the group gets a
    batched answer and each one's message comes from its own run."""
    profile = "burn-0.22.1/ndarray"
    scheme = {"value": "Q8S", "store": {"PackedU32": 0}, "mode": "Symmetric", "tensor": None,
              "block": {"size": [32], "dtype": "F16"}}
    cases = [FuzzCase("quantize_dynamic", {"scheme": scheme},
                      {"x": np.linspace(-k, k, 32 * k, dtype=np.float32).reshape(k, 32)}) for k in (1, 2, 3)]
    assert all("error" in expect(_as_case(c), profile) for c in cases)
    assert batched.expectations(cases, profile, _as_case) == [None, None, None]


def test_a_case_past_the_backends_rank_limit_is_left_to_itself():
    """burn-ndarray's range reshapes a rank-4 tensor to 8 dims, past its 6 (ndarray.reshape_dims); as stacked rows
    of rank 2 it would not panic (found by the CPU campaign of 2026-12-07, seed 20261214, quantize_dynamic case 84:
    the fuzzer expected data where burn-ndarray panics)."""
    profile = "burn-0.22.0-pre.3/ndarray"
    scheme = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None,
              "block": {"size": [2], "dtype": "UE4M3"}}
    cases = [FuzzCase("quantize_dynamic", {"scheme": scheme}, {"x": np.zeros(shape, np.float32)})
             for shape in ((3, 3, 2, 2), (2, 2, 2, 2), (4, 2))]
    assert expect(_as_case(cases[0]), profile)["error"]["code"] == "ndarray.reshape_dims"
    found = batched.expectations(cases, profile, _as_case)
    assert found[:2] == [None, None]


def test_stacked_groups_split_back_by_row():
    """Three cases of one scheme, two shapes (a whole number of blocks per row, and a partial last block): the two
    whole-block ones are one stacked run and get the per-case answers; the partial one, alone with its row length,
    is left to itself."""
    profile = "burn-0.22.1/ndarray"
    scheme = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None,
              "block": {"size": [4], "dtype": "F16"}}
    xs = [np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7, np.arange(8, dtype=np.float32)[::-1] * 0.3,
          np.arange(10, dtype=np.float32).reshape(2, 5)]
    cases = [FuzzCase("quantize_dynamic", {"scheme": scheme}, {"x": x.copy()}) for x in xs]
    found = batched.expectations(cases, profile, _as_case)
    assert found[2] is None
    for case, got in zip(cases[:2], found[:2]):
        assert _answer_bits(got) == _answer_bits(expect(_as_case(case), profile))


def test_the_fuzzer_reports_the_same_with_and_without_batches(monkeypatch):
    """The engine judges with the batched expectations: its report equals the one it makes when every case is
    evaluated on its own (batched.expectations answering None for every case)."""
    def report():
        f = engine.Fuzzer("format", backend=PythonBackend(FormatBackend("q8_0")), seed=3, formats=["q8_0"])
        r = f.run(cases=300, shrink=False, log=lambda m: None)
        f.close()
        return r.statuses, r.exercised, sorted(r.divergences)
    batched_report = report()
    monkeypatch.setattr(batched, "expectations", lambda cases, profile, as_case: [None] * len(cases))
    assert report() == batched_report


def test_remembered_capabilities_answer_per_dtype_and_shape():
    """The fuzzer remembers capability answers per op, params, input dtypes and the tensor's rank and last dim
    (``capability_key``): a case that differs from one already asked about only in its input dtype gets its own
    answer."""
    from conformance.vectors import Vector
    from examples.q8_0_backend import Backend
    caps = PythonBackend(Backend()).hello.capabilities
    remembered = engine._Remembered(caps)
    scheme = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None,
              "block": {"size": [32], "dtype": "F16"}}
    vectors = [Vector("fuzz", "quantize_dynamic/fuzz/case", "quantize_dynamic", {"scheme": scheme},
                      {"x": np.zeros((2, 32), dtype)}, {}) for dtype in (np.float32, np.float16, np.float32)]
    answers = [remembered.not_applicable(v) for v in vectors]
    assert answers == [caps.not_applicable(v) for v in vectors]
    assert answers[0] is None and answers[1] is not None and answers[2] is None
    assert [remembered.formats_of(v) for v in vectors] == [caps.formats_of(v) for v in vectors]


def test_remembered_capabilities_answer_as_the_capabilities_do_over_drawn_cases():
    """Over cases drawn inside per-row, rank-limited and block-length patterns (the rules that read a tensor's
    shape), every remembered answer is the capabilities' own: ``capability_key`` holds all that they read."""
    from conformance.fuzz.scope import scope_of
    from conformance.fuzz.strategies import RandomDraw, draw_case
    from conformance.protocol import parse_hello
    from conformance.vectors import Vector
    formats = [{"value": "Q8S", "block": "row", "block_dtype": "F32", "ranks": [2]},
               {"value": "Q4S", "store": "PackedU32", "block": {"last_dim": [32]}, "block_dtype": "F16"},
               {"value": "Q8S", "block": None, "ranks": [1, 3]}, "q8_0"]
    caps = parse_hello({"protocol": 2, "name": "t", "version": "1", "profile": PROFILE,
                        "capabilities": {"formats": formats}}).capabilities
    wider = parse_hello({"protocol": 2, "name": "t", "version": "1", "profile": PROFILE,
                         "capabilities": {"formats": [dict(f, ranks=[1, 2, 3]) if isinstance(f, dict) else f
                                                      for f in formats]}}).capabilities
    remembered = engine._Remembered(caps)
    asked = seen = 0
    for i in range(1500):
        case = draw_case(RandomDraw(f"5:{i}"), PROFILE, None, scope_of(wider))
        v = Vector("fuzz", "fuzz", case.op, case.params, case.inputs, {})
        assert remembered.not_applicable(v) == caps.not_applicable(v), case.describe()
        assert remembered.formats_of(v) == caps.formats_of(v), case.describe()
        asked += 1
        seen += caps.not_applicable(v) is None
    assert 0 < seen < asked  # both answers were given (the test says something about each)
    assert len(remembered._answers) < 2 * asked  # and answers were reused (two questions per case)


def test_a_per_row_rule_gets_an_answer_per_last_dim():
    """A per-row block rule reads the tensor's last dim: two vectors that differ only there get their own
    answers (a key without the last dim would answer the second with the first's)."""
    from conformance.protocol import parse_hello
    from conformance.vectors import Vector
    caps = parse_hello({"protocol": 2, "name": "t", "version": "1", "profile": PROFILE,
                        "capabilities": {"formats": [{"value": "Q8S", "block": "row"}]}}).capabilities
    remembered = engine._Remembered(caps)
    scheme = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None,
              "block": {"size": [32], "dtype": "F32"}}
    vectors = [Vector("fuzz", "fuzz", "quantize_dynamic", {"scheme": scheme}, {"x": np.zeros(shape, np.float32)},
                      {}) for shape in ((4, 32), (4, 64), (3, 32))]
    answers = [remembered.not_applicable(v) for v in vectors]
    assert answers == [caps.not_applicable(v) for v in vectors]
    assert answers[0] is None and answers[1] is not None and answers[2] is None
