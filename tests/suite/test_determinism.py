"""``qconform fuzz --check-determinism`` (conformance/fuzz/determinism.py): two fresh backends answer the same cases;
the cases answered differently are reported, and only those."""

from __future__ import annotations

import numpy as np

from conformance.backends.oracle import oracle_backend
from conformance.fuzz import cli
from conformance.fuzz.determinism import check
from conformance.protocol import Result

PROFILE = "burn-0.22.1/flex"


class _SecondDiffers:
    """The oracle, except that the second backend opened answers ``quantize_dynamic`` with its first code's lowest
    bit flipped: process state leaking into answers, as a GPU's unwritten memory does."""

    opened = 0

    def __init__(self):
        _SecondDiffers.opened += 1
        self.nth, self.inner = _SecondDiffers.opened, oracle_backend(PROFILE)
        self.hello = self.inner.hello

    def run(self, op, params, inputs):
        out = self.inner.run(op, params, inputs)
        if self.nth == 2 and op == "quantize_dynamic" and isinstance(out, Result) and out.outputs["codes"].size:
            codes = out.outputs["codes"].copy()
            codes.reshape(-1)[:1] ^= 1
            out = Result(dict(out.outputs, codes=codes), out.values)
        return out

    def close(self):
        self.inner.close()


def test_state_leaking_between_processes_is_reported_case_by_case():
    _SecondDiffers.opened = 0
    report = check("flaky", profile=PROFILE, seed=4, cases=120, open_backend=lambda spec, timeout: _SecondDiffers())
    assert _SecondDiffers.opened == 2
    reported = {i for i, _ in report.differing}
    from conformance.fuzz.strategies import RandomDraw, draw_case
    flipped = {i for i in range(120) if _nonempty_dynamic(draw_case(RandomDraw(f"4:{i}"), PROFILE))}
    assert flipped and reported == flipped
    assert any("NONDETERMINISTIC" in line for line in report.lines())


def _nonempty_dynamic(case) -> bool:
    if case.op != "quantize_dynamic":
        return False
    out = oracle_backend(PROFILE).run(case.op, case.params, case.inputs)
    return isinstance(out, Result) and out.outputs["codes"].size > 0


def test_a_deterministic_backend_has_nothing_to_report(capsys):
    assert cli.main(["--check-determinism", "--backend", f"oracle:{PROFILE}", "--cases", "60", "--seed", "1"]) == 0
    assert "every case answered alike by both" in capsys.readouterr().out


def test_the_report_names_each_differing_case():
    report = check("flaky", profile=PROFILE, seed=4, cases=40,
                   open_backend=lambda spec, timeout: _Counter())
    assert [i for i, _ in report.differing] == list(range(40))
    assert all(what for _, what in report.differing)


class _Counter:
    """Every answer differs between two backends: the opening count is part of each answer."""

    opened = 0

    def __init__(self):
        _Counter.opened += 1
        self.hello = oracle_backend(PROFILE).hello
        self.n = _Counter.opened

    def run(self, op, params, inputs):
        return Result({"x": np.array([self.n], dtype=np.float32)})

    def close(self):
        pass
