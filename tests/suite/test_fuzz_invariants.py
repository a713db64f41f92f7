"""The fuzz engine's invariants (issue 26), on backends with two independent planted defects: every failing case
is counted in exactly one class, the shrinker keeps the class it shrinks, a batching backend (``run_many``) gets
the same report as one asked case by case even when its capabilities leave most cases out, and the digest
treats NaN payloads as the judge does. The failing cases are counted here by a comparison of bit patterns written
in this file, not by the engine's judge.
"""

from __future__ import annotations

import numpy as np
import planted_backends as planted
import pytest

from conformance.backends.oracle import run_oracle
from conformance.backends.python import PythonBackend
from conformance.cases import Case
from conformance.fuzz import engine
from conformance.protocol import BackendError, Error, Result

NDARRAY = "burn-0.22.0-pre.3/ndarray"
# dequantize first: a shrinker that accepted any divergence would turn a quantize case into the dequantize one,
# whose defect shows on the smallest cases (a single zero code)
OPS = ["dequantize", "quantize"]


class TwoDefects:
    """The oracle with ties rounded to even in ``quantize`` and a -0.0 decode of code 0 in ``dequantize``: two
    defects that never meet in one case, so each failing case belongs to exactly one of them."""

    def __init__(self, caps=None):
        self.ties = planted.Planted("ties-even", NDARRAY, planted.ties_even, ops=("quantize",))
        self.zero = planted.Planted("negative-zero-decode", NDARRAY, planted.negative_zero_decode,
                                    ops=("dequantize",))
        self.caps = caps or {"ops": OPS}

    def hello(self):
        return {"name": "two-defects", "version": "1", "profile": NDARRAY, "capabilities": self.caps}

    def run(self, op, params, inputs):
        return (self.ties if op == "quantize" else self.zero).run(op, params, inputs)


class Batching:
    """A backend that takes requests in batches (``run_many``, as the subprocess adapter does) and records each
    request it was sent."""

    def __init__(self, inner: PythonBackend):
        self.inner, self.hello, self.sent = inner, inner.hello, []

    def run(self, op, params, inputs):
        self.sent.append(op)
        return self.inner.run(op, params, inputs)

    def run_many(self, requests):
        return [self.run(*r) for r in requests]

    def close(self):
        pass


def _bits(a) -> np.ndarray:
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "f" or str(a.dtype) == "bfloat16":
        wide = a.astype(np.float32)
        return np.where(np.isnan(wide), np.uint32(0x7FC00000), wide.view(np.uint32))
    return a.view(np.uint8)


def differs(want, got) -> bool:
    """Our own verdict: errors by code, results output by output on bit patterns (every NaN alike)."""
    if isinstance(want, Error) or isinstance(got, Error):
        return not (isinstance(want, Error) and isinstance(got, Error) and want.code == got.code)
    assert isinstance(want, Result) and isinstance(got, Result)
    return any(want.outputs[k].shape != got.outputs[k].shape or
               not np.array_equal(_bits(want.outputs[k]), _bits(got.outputs[k])) for k in want.outputs)


def failing_by_op(f: engine.Fuzzer, backend: PythonBackend, cases: int) -> dict:
    """The cases the backend gets wrong, per op, counted case by case against the oracle."""
    out = {}
    with np.errstate(all="ignore"):
        for i in range(cases):
            case, _ = f.draw(i)
            if backend.hello.capabilities.not_applicable(Case("x", case.op, case.params, case.inputs)) is not None:
                continue
            want = run_oracle(case.op, case.params, case.inputs, NDARRAY)
            if differs(want, backend.run(case.op, case.params, case.inputs)):
                out[case.op] = out.get(case.op, 0) + 1
    return out


CASES = 300


@pytest.fixture(scope="module")
def run_two():
    backend = PythonBackend(TwoDefects())
    f = engine.Fuzzer("two-defects", backend=backend, seed=5, ops=OPS)
    report = f.run(cases=CASES, shrink=False, log=lambda m: None)
    yield f, backend, report
    f.close()


def test_class_counts_add_up_to_the_failing_cases(run_two):
    f, backend, report = run_two
    expected = failing_by_op(f, backend, CASES)
    assert set(expected) == {"quantize", "dequantize"}, expected  # both defects show up in the run
    assert report.statuses.get("failed", 0) == sum(expected.values())
    assert sum(d.count for d in report.divergences.values()) == sum(expected.values())
    per_op = {}
    for d in report.divergences.values():
        assert sum(d.ops.values()) == d.count
        assert len(d.ops) == 1, d.ops  # two independent defects: no class mixes the two ops' cases
        for op, n in d.ops.items():
            per_op[op] = per_op.get(op, 0) + n
    assert per_op == expected


def test_the_shrinker_keeps_the_class_it_shrinks(run_two):
    f, backend, report = run_two
    for sig, div in report.divergences.items():
        first = div.case
        f.shrink(div, budget_s=8)
        assert f.judge(div.case)[1] == sig
        assert div.case.op == first.op
        assert sum(a.size for a in div.case.inputs.values()) <= sum(a.size for a in first.inputs.values())
        want = run_oracle(div.case.op, div.case.params, div.case.inputs, NDARRAY)
        assert differs(want, backend.run(div.case.op, div.case.params, div.case.inputs))


def test_a_batching_backend_with_narrow_capabilities_gets_the_same_report():
    """The cases are drawn over three ops and every input and output dtype, the backend takes two ops on f32 only:
    about a third of the cases are not sent, interleaved with the rest, so a batch's replies must be paired with
    the cases actually sent, not with the cases drawn."""
    caps = {"ops": OPS, "input_dtypes": ["f32"], "output_dtypes": ["f32"]}

    def summary(backend):
        f = engine.Fuzzer("two-defects", backend=backend, seed=9, ops=OPS + ["quantize_dynamic"])
        report = f.run(cases=160, shrink=False, log=lambda m: None)
        f.close()
        return report.statuses, {s: (d.count, d.first_index, d.ops) for s, d in report.divergences.items()}

    one = summary(PythonBackend(TwoDefects(caps)))
    batching = Batching(PythonBackend(TwoDefects(caps)))
    many = summary(batching)
    assert one[0].get("not applicable", 0) > 30 and one[0].get("failed", 0) > 0, one[0]
    assert many == one
    applicable = sum(n for s, n in one[0].items() if s != "not applicable")
    assert len(batching.sent) == applicable  # nothing outside the capabilities was sent


FLEX_0_23 = "burn-0.23.0-pre.1/flex"  # its E4M3/E5M2 dequantize and moves give NaN outputs
NAN_OPS = ["dequantize", "qlayout"]
UINT = {2: np.uint16, 4: np.uint32}


class NanPayloads:
    """The oracle, with every NaN of a float output given another payload (sign bit and lowest bit set); with
    ``flip_zero`` also every +0.0 written as -0.0, a real difference."""

    def __init__(self, flip_zero=False):
        self.flip_zero, self.nans = flip_zero, 0

    def hello(self):
        return {"name": "nan-payloads", "version": "1", "profile": FLEX_0_23, "capabilities": {"ops": NAN_OPS}}

    def run(self, op, params, inputs):
        r = run_oracle(op, params, inputs, FLEX_0_23)
        if isinstance(r, Error):
            planted.raise_error(r)
        out = {}
        for k, a in r.outputs.items():
            if a.dtype.kind == "f" or str(a.dtype) == "bfloat16":
                width = a.dtype.itemsize
                bits = np.ascontiguousarray(a).view(UINT[width]).copy()
                nan = np.isnan(a.astype(np.float32))
                self.nans += int(nan.sum())
                sign = UINT[width](1 << (8 * width - 1))
                bits[nan] |= sign | UINT[width](1)
                if self.flip_zero:
                    bits[bits == 0] = sign
                a = bits.view(a.dtype)
            out[k] = a
        return {**out, **r.values}


class _Oracle(NanPayloads):
    def run(self, op, params, inputs):
        r = run_oracle(op, params, inputs, FLEX_0_23)
        if isinstance(r, Error):
            planted.raise_error(r)
        return {**r.outputs, **r.values}


def test_the_digest_ignores_nan_payloads_exactly_as_the_judge_does():
    payloads = NanPayloads()
    kw = dict(seed=2, cases=250, ops=NAN_OPS)
    ref = engine.digest_run(PythonBackend(_Oracle()), FLEX_0_23, **kw)
    other = engine.digest_run(PythonBackend(payloads), FLEX_0_23, **kw)
    assert payloads.nans > 0  # the cases do produce NaNs, so the payloads were really rewritten
    assert other.digest == ref.digest
    f = engine.Fuzzer("nan-payloads", backend=PythonBackend(NanPayloads()), seed=2, ops=NAN_OPS)
    report = f.run(cases=250, shrink=False, log=lambda m: None)
    f.close()
    assert not report.divergences and report.statuses.get("passed", 0) > 0  # the judge agrees: no divergence
    zeros = engine.digest_run(PythonBackend(NanPayloads(flip_zero=True)), FLEX_0_23, **kw)
    assert zeros.digest != ref.digest  # while a signed zero is a difference for both


def test_merged_classes_add_their_counts():
    """Two classes that one alternative explains on every case are one cause (merge_by_cause): the merged class
    holds every case of both, per op too; a class with another cause stays apart."""
    even = "codes: ties rounded to even (tie: even)"
    a = engine.Divergence("mismatch: codes: tie-breaking rule", count=3, ops={"quantize": 3},
                          explained={even: 3}, first_index=4, indices=[4, 7, 9])
    b = engine.Divergence("mismatch: codes: rounding", count=2, ops={"quantize": 1, "quantize_dynamic": 1},
                          explained={even: 2, "codes: ties rounded toward zero (tie: toward_zero)": 2}, first_index=1,
                          indices=[1, 8])
    c = engine.Divergence("mismatch: x: signed zero", count=4, ops={"dequantize": 4},
                          explained={"x: -0.0 where burn gives +0.0 (decode: signed_zero)": 4}, first_index=0,
                          indices=[0, 2, 3, 5])
    merged = engine.merge_by_cause({d.signature: d for d in (a, b, c)})
    assert {s: (d.count, d.ops) for s, d in merged.items()} == {
        "mismatch: codes: tie-breaking rule": (5, {"quantize": 4, "quantize_dynamic": 1}),
        "mismatch: x: signed zero": (4, {"dequantize": 4})}
    assert merged["mismatch: codes: tie-breaking rule"].first_index == 4  # the larger class keeps its first case
    assert merged["mismatch: codes: tie-breaking rule"].indices == [1, 4, 7, 8, 9]  # and lists every case of both


class SizeDependent:
    """dequantize with one defect on tensors of 4 elements or more (the last output negated) and another below
    (a panic where burn answers): shrinking a case of the first crosses into the second as soon as it goes under 4
    elements, so a shrinker that took any divergence would end in the other class."""

    def __init__(self):
        self.exact = planted.Planted("exact", NDARRAY, lambda *a: a[1], ops=("dequantize",))

    def hello(self):
        return {"name": "size-dependent", "version": "1", "profile": NDARRAY,
                "capabilities": {"ops": ["dequantize"], "input_dtypes": ["f32"]}}

    def run(self, op, params, inputs):
        out = self.exact.run(op, params, inputs)  # burn's outputs, or burn's panic raised
        x = np.array(out["x"], copy=True)
        flat = x.reshape(-1)
        if flat.size < 4:
            raise BackendError("tensor.too_small", "a planted panic on tensors under 4 elements")
        flat[-1] = -flat[-1]
        return {**out, "x": x}


def test_the_shrinker_does_not_cross_into_another_class():
    backend = PythonBackend(SizeDependent())
    f = engine.Fuzzer("size-dependent", backend=backend, seed=3, ops=["dequantize"])
    report = f.run(cases=40, shrink=False, log=lambda m: None)
    big = {s: d for s, d in report.divergences.items() if sum(a.size for a in d.case.inputs.values()) >= 8}
    assert big, report.divergences  # a class found on a case of 4 elements or more
    for sig, div in big.items():
        f.shrink(div, budget_s=8)
        assert f.judge(div.case)[1] == sig, "the shrunk case left its class"
        assert np.asarray(div.case.inputs["codes"]).size >= 4
    f.close()
