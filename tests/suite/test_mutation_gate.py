"""The mutation gate: every plausible wrong implementation fails at least one committed vector, judged against
the expectations of its base profile (see conformance.coverage.catches)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import oracle
from conformance import coverage
from conformance.mutants import MUTANTS
from conformance.vectors import load_suite

SUITE = Path(__file__).resolve().parents[2] / "vectors" / "core"

@pytest.fixture(scope="module")
def suite():
    return load_suite(SUITE)


@pytest.fixture(scope="module")
def caught(suite):
    """Every mutant judged on every vector of each op it applies to: computed once for the module."""
    return coverage.mutant_catches(suite)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(suite, name):
    mutant = MUTANTS[name]
    assert any(coverage.catches(v, mutant) for v in suite.vectors), f"no vector catches {name}"


def test_base_profiles_pass_their_own_expectations(suite):
    """Sanity of the gate's judge (a `catches` that caught everything would make every mutant look caught): an
    unmutated profile is caught by none of a few vectors of every op. That every stored expectation is the oracle's
    own under every profile is what `make vectors-check` regenerates and compares byte for byte."""
    class Same:
        def __init__(self, base):
            self.base, self.profile = base, base
    sample = [v for op in sorted({v.op for v in suite.vectors}) for v in [w for w in suite.vectors if w.op == op][:4]]
    for base in {m.base for m in MUTANTS.values()}:
        assert not [v.alias for v in sample if coverage.catches(v, Same(base))]


@pytest.mark.parametrize("profile", ["burn-0.22.0-pre.3/ndarray", "burn-0.23.0-pre.1/flex"])
def test_clamp_position_is_invisible_on_integer_codes(profile):
    """Why no mutant swaps the clamp's position for integer values: with integer bounds round-then-clamp and
    clamp-then-round (flex 0.23's order) agree on every code of every integer value type, ±inf included (dense
    evidence); the 0.23 mutant ``round-then-clamp-0-23`` differs through a non-saturating minifloat cast only."""
    from oracle.encode import encode
    from oracle.rounding import round_half_away
    base = oracle.get_profile(profile)
    other = base.with_(clamp="after_round" if base.clamp == "before_round" else "before_round")
    rounder = round_half_away if base.tie == "away" else np.rint
    v = np.concatenate([np.arange(-300, 300, 0.25, dtype=np.float32), np.float32([np.inf, -np.inf, 1e30, -0.0])])
    v = np.concatenate([v, np.nextafter(v, np.float32(np.inf)), np.nextafter(v, np.float32(-np.inf))])
    for value in ("Q8F", "Q8S", "Q4F", "Q4S", "Q2F", "Q2S"):
        s = oracle.QuantScheme().with_value(oracle.QuantValue[value]).with_store(oracle.NATIVE)
        a, b = s.value.range()
        clamp_then_round = rounder(np.clip(v, np.float32(a), np.float32(b))).astype(np.int8)
        assert np.array_equal(encode(v.copy(), s, base), clamp_then_round)
        assert np.array_equal(encode(v.copy(), s, other), clamp_then_round)


def test_mutants_command(capsys, monkeypatch, caught):
    monkeypatch.setattr(coverage, "mutant_catches", lambda suite: caught)
    assert coverage.main(["mutants"]) == 0
    text = capsys.readouterr().out
    assert f"{len(MUTANTS)} of {len(MUTANTS)} mutants caught" in text
    assert all(f" {name} " in text for name in MUTANTS)
    escaped = dict(caught, **{next(iter(caught)): {op: [] for op in next(iter(caught.values()))}})
    monkeypatch.setattr(coverage, "mutant_catches", lambda suite: escaped)
    assert coverage.main(["mutants"]) == 1 and "ESCAPES" in capsys.readouterr().out


def test_no_mutant_escapes_an_op_it_applies_to(caught):
    """The per-op gate: every op a mutant changes (Mutant.ops) has a vector that catches it."""
    assert not coverage.escapes(caught)
    assert all(m.ops for m in MUTANTS.values()), "every mutant says which ops it changes"
