"""The mutation gate and the diagnosis ask the same question (``compare.same_outcome`` on ``run_oracle``'s
answers, under the vector's contract), so they cannot disagree: a mutant backend failing a vector that catches
the mutant is diagnosed as that mutant."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import compare, coverage, diagnose
from conformance.backends.oracle import mutant_backend
from conformance.mutants import MUTANTS
from conformance.vectors import load_suite

SUITE = Path(__file__).resolve().parents[2] / "vectors" / "core"


@pytest.fixture(scope="module")
def suite():
    return load_suite(SUITE)


@pytest.mark.parametrize("name", ["ties-even", "reciprocal", "no-zero-guard", "flat-blocks"])
def test_a_caught_mutant_is_diagnosed_as_itself(suite, name):
    mutant = MUTANTS[name]
    vector = next(v for v in suite.vectors if coverage.catches(v, mutant))
    outcome = mutant_backend(name).run(vector.op, vector.params, vector.inputs)
    verdict = compare.judge(vector, mutant.base, outcome)
    assert verdict.status == compare.FAILED
    found = diagnose.diagnose_vector(vector, mutant.base, outcome, verdict,
                                     diagnose.oracle_candidates(mutant.base))
    assert f"mutant {name}" in found["matches"]
