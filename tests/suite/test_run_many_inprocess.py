"""An in-process backend's optional ``run_many``: the same outcomes as ``run`` one request at a time, and a fault
in one request is that request's alone.

``examples/format_backend.py`` answers a batch through stacked oracle runs (conformance/fuzz/batched.py); its own
``run`` (one oracle run per request) is the reference. Outcomes are compared by kind, bit patterns, shapes,
dtypes, values and error codes and messages, over thousands of requests drawn inside every named format.
"""

from __future__ import annotations

import warnings

import numpy as np

from conformance.backends.python import PythonBackend
from conformance.formats import FORMATS
from conformance.fuzz import batched, engine
from conformance.fuzz.scope import scope_of
from conformance.fuzz.strategies import RandomDraw, draw_case
from conformance.protocol import BackendError, Declined, Error, Fault, Result, Unsupported
from examples.format_backend import FormatBackend

PROFILE = "burn-0.22.1/flex"
CASES = 384  # per format: 3,072 requests


def _bits(a) -> tuple:
    a = np.ascontiguousarray(np.asarray(a))
    return a.shape, a.dtype.str, a.view(np.uint8).tobytes()


def _outcome_bits(o) -> tuple:
    if isinstance(o, Result):
        return "result", {k: _bits(v) for k, v in o.outputs.items()}, o.values
    if isinstance(o, Error):
        return "error", o.code, o.message
    return type(o).__name__, getattr(o, "kind", None)


def test_run_many_gives_run_one_by_one():
    stacked = 0
    for name in FORMATS:
        backend = PythonBackend(FormatBackend(name, PROFILE))
        scope = scope_of(backend.hello.capabilities, (name,), None)
        cases = [draw_case(RandomDraw(f"run_many:{name}:{i}"), PROFILE, None, scope) for i in range(CASES)]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            for first in range(0, CASES, engine.BATCH):
                requests = [(c.op, c.params, c.inputs) for c in cases[first:first + engine.BATCH]]
                many = backend.run_many(requests)
                one = [backend.run(*r) for r in requests]
                assert len(many) == len(requests)
                for r, m, o in zip(requests, many, one):
                    assert _outcome_bits(m) == _outcome_bits(o), f"{name} {r[0]} {r[1]}"
                stacked += sum(f is not None for f in batched.answers(requests, PROFILE))
    # the comparison is only as good as what it compared: many requests (the block formats') were stacked
    assert stacked >= len(FORMATS) * CASES // 4, stacked


class _Flaky:
    """Answers a batch with an exception per request that must fail, or fails the whole batch."""

    def __init__(self, whole_batch_fails: bool):
        self.whole_batch_fails = whole_batch_fails

    def hello(self):
        return {"name": "flaky", "version": "1", "profile": PROFILE, "capabilities": {}}

    def run(self, op, params, inputs):
        if op == "bad":
            raise ValueError("a bug in this request")
        if op == "refused":
            raise BackendError("some_code", "refused")
        if op == "declined":
            raise Unsupported("not this one")
        return {"y": np.asarray(inputs["x"]) + 1}

    def run_many(self, requests):
        if self.whole_batch_fails:
            raise RuntimeError("the batch as a whole")
        out = []
        for r in requests:
            try:
                out.append(self.run(*r))
            except Exception as e:  # noqa: BLE001 - returned in its place, as run_many's contract says
                out.append(e)
        return out


def test_a_fault_in_one_request_is_that_requests_own():
    x = {"x": np.arange(3, dtype=np.float32)}
    requests = [("ok", {}, x), ("bad", {}, x), ("refused", {}, x), ("declined", {}, x), ("ok", {}, x)]
    for whole in (False, True):
        got = PythonBackend(_Flaky(whole)).run_many(requests)
        assert [type(o) for o in got] == [Result, Fault, Error, Declined, Result], whole
        assert got[1].kind == "crashed" and "a bug in this request" in got[1].detail
        assert (got[2].code, got[2].message) == ("some_code", "refused")
        assert got[0].outputs["y"].tolist() == [1.0, 2.0, 3.0] == got[4].outputs["y"].tolist()


def test_run_many_is_offered_only_by_an_object_that_has_it():
    class Plain(_Flaky):
        run_many = None
    assert hasattr(PythonBackend(_Flaky(False)), "run_many")
    assert not hasattr(PythonBackend(Plain(False)), "run_many")
