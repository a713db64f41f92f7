"""burn's accidents are not requirements (conformance/accidents.py): a burn-bug vector accepts the
invariant-respecting outcome from a backend that is not burn, and says which one it got; burn's own builds
(``exact_burn``) must still give burn's; a backend declaring ``validates: false`` has validation-only vectors
declined, counted, and its statement says "arithmetic only"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conformance import accidents
from conformance import report as rep
from conformance.backends.python import PythonBackend
from conformance.protocol import Capabilities, ProtocolError
from conformance.runner import Runner
from conformance.vectors import load_suite

ROOT = Path(__file__).resolve().parents[2]
FLEX = "burn-0.22.1/flex"
NIBBLES = "load_quantized/q4s-packedu32/tensor-f32/nibble-reread"
TRUNCATED = "load_quantized/q8s-native/tensor-f32/truncated"


@pytest.fixture(scope="module")
def suite():
    return load_suite(ROOT / "vectors" / "core")


class Fixed:
    """Answers every request with one fixed reply (or raises it), claiming ``caps``."""

    def __init__(self, reply, caps=None):
        self.reply, self.caps = reply, caps or {}

    def hello(self):
        return {"name": "fixed", "version": "0", "profile": FLEX, "capabilities": self.caps}

    def run(self, op, params, inputs):
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def verdict(suite, alias, reply, *, caps=None, exact_burn=False):
    runner = Runner(suite, "python:fixed", backend=PythonBackend(Fixed(reply, caps)), diagnose=False,
                    exact_burn=exact_burn)
    return runner.start().run_vector(suite.get(alias))


def test_the_nibble_bug_accepts_the_values_as_written(suite):
    """Hand-worked: the bytes hold codes [0 1 -1 2 -2 3 5 7] one byte each and the scale 0.5; burn 0.22.1 rereads
    them as nibbles ([0 0 0.5 0 -0.5 -0.5 1 0]); the invariant-respecting outcome is the codes as written, times
    0.5."""
    written = np.float32([0, 0.5, -0.5, 1, -1, 1.5, 2.5, 3.5])
    exp = suite.get(NIBBLES).expected[FLEX]
    assert [a.outputs["x"].view(np.uint32).tolist() for a in exp.acceptable] == [written.view(np.uint32).tolist()]
    v = verdict(suite, NIBBLES, {"x": written})
    assert (v.status, v.gave) == ("passed", "acceptable")
    burns = verdict(suite, NIBBLES, {"x": np.float32([0, 0, 0.5, 0, -0.5, -0.5, 1, 0])})
    assert (burns.status, burns.gave) == ("passed", "burn")
    assert verdict(suite, NIBBLES, {"x": written * 2}).status == "failed"


def test_burns_own_builds_must_give_burns_outcome(suite):
    v = verdict(suite, NIBBLES, {"x": np.float32([0, 0.5, -0.5, 1, -1, 1.5, 2.5, 3.5])}, exact_burn=True)
    assert v.status == "failed"


def test_a_pure_move_accepts_the_moved_values(suite):
    """ndarray's per-block flip keeps the scale list (docs/findings.md): the moved dequantized input is
    acceptable, whatever codes come with it."""
    vec = suite.get("qlayout/q8s/block/flip-cols")
    exp = vec.expected["burn-0.22.1/ndarray"]
    (alt,) = exp.acceptable
    assert "accident:burn-bug" in vec.tags and set(alt.outputs) == {"x"}
    assert not np.array_equal(alt.outputs["x"], exp.outputs["x"])
    runner = Runner(suite, "python:fixed", profile="burn-0.22.1/ndarray", diagnose=False,
                    backend=PythonBackend(Fixed({"x": alt.outputs["x"], "codes": np.zeros(1, np.int8),
                                                 "quantized": True})))
    v = runner.start().run_vector(vec)
    assert (v.status, v.gave) == ("passed", "acceptable")


def test_validation_only_vectors_are_declined_for_a_backend_that_does_not_validate(suite):
    x = {"x": np.zeros(4, np.float32)}
    v = verdict(suite, TRUNCATED, x, caps={"ops": ["load_quantized"], "validates": False})
    assert v.status == "not applicable" and v.note.startswith("validation only, declined")
    assert verdict(suite, TRUNCATED, x, caps={"ops": ["load_quantized"]}).status == "failed"
    assert verdict(suite, TRUNCATED, x, caps={"validates": False}, exact_burn=True).status == "failed"


def test_a_move_that_breaks_a_valid_tensor_is_not_validation(suite):
    """ndarray's block-count panic after slicing a per-block tensor refuses nothing the caller asked: burn's bug."""
    exp = suite.get("qlayout/q8s/block/slice-rows").expected["burn-0.22.1/ndarray"]
    assert exp.error["code"] == "ndarray.block_count" and exp.validation is None


def test_every_validation_entry_is_a_validation_code(suite):
    seen = 0
    for v in suite.vectors:
        for e in v.expected.values():
            if e.validation:
                seen += 1
                assert e.error["code"] in accidents.VALIDATION and "accident:validation" in v.tags
    assert seen > 50


def test_the_statement_of_a_backend_that_does_not_validate_says_arithmetic_only(suite):
    vectors = [v for v in suite.vectors if v.op == "load_quantized"]
    import sys
    sys.path.insert(0, str(ROOT / "examples"))
    import loader_backend
    for cls, scoped in ((loader_backend.Loader, True), (Fixed, False)):
        obj = cls() if cls is not Fixed else Fixed({"x": np.zeros(1, np.float32)}, {"ops": ["load_quantized"]})
        runner = Runner(suite, "python:x", backend=PythonBackend(obj), diagnose=False)
        runner.start()
        verdicts = [runner.run_vector(v) for v in vectors]
        report = rep.build(verdicts, backend=obj.hello(), profile=runner.profile,
                           suite={"name": "core", "vectors": len(vectors), "digest": "x"}, stale=[], strict=False,
                           started=0.0)
        assert ("arithmetic only" in rep.statement(report)) is scoped
        if scoped:
            assert report["summary"]["accidents"]["validation_declined"] > 0


def test_capabilities_validates_and_the_loader_preset():
    assert Capabilities.from_json({"validates": False}).validates is False
    assert Capabilities.from_json({}).validates is True
    assert Capabilities.from_json({"preset": "loader"}).ops == frozenset({"load_quantized"})
    assert Capabilities.from_json({"preset": "loader", "ops": ["dequantize"]}).ops == frozenset({"dequantize"})
    for bad in ({"validates": "no"}, {"preset": "codec"}):
        with pytest.raises(ProtocolError):
            Capabilities.from_json(bad)


def test_a_view_accepts_its_contiguous_copys_codes(suite):
    """burn-cubecl's per-tensor range of the permuted [4, 1, 4, 2] view reads half of it (docs/findings.md): max 19
    of x = arange(32) - 8, so burn's scale is 19/127; the view's contiguous copy has max 23 (and |min| 8 below it),
    scale 23/127 (hand-worked: f32(23) / f32(127)). A backend that is not burn may answer the copy's."""
    vec = suite.get("quantize_view/fuzz/perpendicular-vectors-read-half")
    exp = vec.expected["burn-0.22.1/vulkan"]
    (alt,) = exp.acceptable
    assert exp.outputs["scales"].tolist() == [np.float32(19) / np.float32(127)]
    assert alt.outputs["scales"].tolist() == [np.float32(23) / np.float32(127)]
    runner = Runner(suite, "python:fixed", profile="burn-0.22.1/vulkan", diagnose=False,
                    backend=PythonBackend(Fixed(dict(alt.outputs))))
    v = runner.start().run_vector(vec)
    assert (v.status, v.gave) == ("passed", "acceptable")
    exact = Runner(suite, "python:fixed", profile="burn-0.22.1/vulkan", diagnose=False, exact_burn=True,
                   backend=PythonBackend(Fixed(dict(alt.outputs))))
    assert exact.start().run_vector(vec).status == "failed"


class Honest:
    """A codec that keeps burn's invariants and does not validate: the oracle's arithmetic, the values of a 4/2-bit
    PackedU32 tensor read back as written (burn 0.22.1 rereads them as nibbles), burn's limits refused as burn
    refuses them, and an invalid request answered with whatever comes out (here: nothing) instead of a panic."""

    def __init__(self, validates: bool):
        self.validates = validates

    def hello(self):
        return {"name": "honest", "version": "0", "profile": FLEX,
                "capabilities": {"ops": ["quantize", "dequantize"], "validates": self.validates}}

    def run(self, op, params, inputs):
        from conformance.backends.oracle import run_oracle
        from conformance.protocol import BackendError, Result
        from oracle import QuantScheme
        from oracle.scheme import NATIVE
        scheme = QuantScheme.from_json(params["scheme"])
        r = run_oracle(op, params, inputs, FLEX)
        reread = isinstance(r, Result) or getattr(r, "code", None) in accidents.READ_BACK
        if reread and scheme.store.kind == "PackedU32" and not scheme.value.is_float and scheme.value.size_bits < 8:
            r = run_oracle(op, dict(params, scheme=scheme.with_store(NATIVE).to_json()), inputs, FLEX)
        if isinstance(r, Result):
            return {**r.outputs, **r.values}
        if getattr(r, "code", None) in accidents.VALIDATION:
            return {}
        raise BackendError(r.code, r.message)


def fuzz_honest(validates: bool, exact_burn: bool = False):
    from conformance.fuzz import engine
    f = engine.Fuzzer("python:honest", profile=FLEX, backend=PythonBackend(Honest(validates)),
                      ops=["quantize", "dequantize"], seed=3, exact_burn=exact_burn)
    try:
        return f.run(cases=600, shrink=False, log=lambda m: None)
    finally:
        f.close()


def test_the_fuzzer_asks_no_accident_of_a_backend_that_is_not_burn():
    """As in the suite: a fuzz case whose expectation is a burn bug accepts the invariant-respecting outcome, and
    one that only tests burn's validation is not applicable to a backend declaring ``validates: false``."""
    report = fuzz_honest(validates=False)
    assert not report.divergences, list(report.divergences)
    assert sum(report.validation.values()) > 0 and all("validation only, declined" in r for r in report.validation)
    strict = fuzz_honest(validates=True)
    assert any("missing error" in sig for sig in strict.divergences), list(strict.divergences)
    # burn's own builds (--exact-burn) are judged by burn's outcome alone: the values as written are not burn's
    burns = fuzz_honest(validates=False, exact_burn=True)
    assert any("matches profile burn-0.23.0-pre.1/flex" in sig for sig in burns.divergences), list(burns.divergences)
