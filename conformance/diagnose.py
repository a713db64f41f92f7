"""Diagnosis of a failing vector: which known variant the backend's answer matches, and the first wrong stage.

Candidates are the oracle's other profiles and the registered mutants (conformance.mutants): each is run on
the failing vector and compared with what the backend returned, under the vector's comparison contract (the
same question the mutation gate asks). Across a run, a candidate that explains every failure is the likely cause
("matches mutant ties-even: ties rounded to even"); among equally good ones, :func:`rank` puts the most specific
first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import oracle

from . import compare
from .backends.oracle import run_oracle
from .mutants import MUTANTS
from .protocol import Error, Fault, Result


@dataclass(frozen=True)
class Candidate:
    name: str          # "profile burn-0.22.0-pre.3/cubecl" or "mutant ties-even"
    description: str
    run: Callable      # (op, params, inputs) -> Result | Error


def oracle_candidates(judged_profile: str) -> list[Candidate]:
    """The oracle's profiles other than the judged one, then the mutants."""
    def runner(profile):
        return lambda op, params, inputs: run_oracle(op, params, inputs, profile)

    out = [Candidate(f"profile {name}", p.description, runner(name))
           for name, p in oracle.PROFILES.items() if name != judged_profile]
    out += [Candidate(f"mutant {name}", m.description, runner(m.profile)) for name, m in sorted(MUTANTS.items())]
    return out


def diagnose_vector(vector, profile: str, outcome, verdict, candidates: list[Candidate]) -> dict:
    if isinstance(outcome, Fault):
        return {"matches": [], "descriptions": {}, "stage": None}
    if isinstance(outcome, Error) and outcome.code is None:
        outcome = Error(verdict.details.get("actual_error", {}).get("code"), outcome.message)
    contract = vector.expected[profile].compare
    matches = [c for c in candidates
               if compare.same_outcome(c.run(vector.op, vector.params, vector.inputs), outcome, contract, vector)]
    return {"matches": [c.name for c in matches], "descriptions": {c.name: c.description for c in matches},
            "stage": first_wrong_stage(vector, vector.expected[profile], outcome, verdict)}


# Pipeline order of outputs: the earliest wrong one names the stage (scales are computed before codes).
STAGE_ORDER = ("global", "min", "max", "scales", "rounded", "codes", "bytes", "words", "x", "out")


def first_wrong_stage(vector, exp, outcome, verdict) -> str | None:
    if not isinstance(outcome, Result) or verdict.kind != "mismatch":
        return None
    wrong = {d["output"]: d for d in verdict.details.get("outputs", [])}
    ordered = sorted(wrong, key=lambda n: STAGE_ORDER.index(n) if n in STAGE_ORDER else len(STAGE_ORDER))
    first = ordered[0]
    got, st = outcome.outputs.get(first), exp.stages
    if first in ("scales", "global") and got is not None:
        for stage, value in (("raw_scales", st.raw_scales), ("normalized_scales", st.normalized_scales),
                             ("rounded_scales", st.rounded_scales), ("effective_scales", st.effective_scales),
                             ("global", st.global_scale)):
            if value is not None and _equal(value, got):
                return f"{first}: equal the '{stage}' intermediate, not the stored scales"
        return f"{first} (scale computation or rounding to the scale dtype)"
    if first == "codes" and got is not None and st.scaled is not None:
        return "codes (scales are right): " + _rounding_signature(st.scaled, exp.outputs["codes"], got)
    return first


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    a32, b32 = a.astype(np.float32).reshape(-1), b.astype(np.float32).reshape(-1)
    return a32.shape == b32.shape and compare.diff_tensor("", a32, b32, None, None) is None


def _rounding_signature(scaled: np.ndarray, want: np.ndarray, got: np.ndarray) -> str:
    """Which class of x/s the wrong codes fall on: exact .5 ties, out-of-range values, or other."""
    if scaled.shape != want.shape or got.shape != want.shape:
        return "x/s rounding"
    bad = want != got
    s = scaled.astype(np.float64)[bad]
    ties = np.abs(s - np.trunc(s)) == 0.5
    # no counts in the text: equal signatures must aggregate across vectors
    if ties.all():
        return "every differing element is an exact .5 tie of x/s (tie-breaking rule)"
    if ties.any():
        return "some differing elements are exact .5 ties of x/s, others not"
    return "no differing element is an exact tie of x/s (rounding or clamping)"


def summarize(verdicts) -> list[dict]:
    """Across failing verdicts: candidates ranked by how many failures they explain."""
    diagnosed = [v for v in verdicts if v.diagnosis is not None]
    if not diagnosed:
        return []
    counts = Counter(m for v in diagnosed for m in v.diagnosis["matches"])
    desc = {k: d for v in diagnosed for k, d in v.diagnosis.get("descriptions", {}).items()}
    stages = Counter(v.diagnosis["stage"] for v in diagnosed if v.diagnosis.get("stage"))
    judged = diagnosed[0].profile
    ranked = sorted(counts.items(), key=lambda item: (-item[1], rank(item[0], judged), item[0]))
    out = [{"candidate": c, "description": desc.get(c, ""), "explains": n, "of": len(diagnosed)} for c, n in ranked]
    out += [{"stage": s, "vectors": n, "of": len(diagnosed)} for s, n in stages.most_common(5)]
    return out


def rank(candidate: str, judged: str) -> int:
    """How specific a candidate explanation is (lower first): a one-rule mutant of the judged profile names the
    rule (0), another profile names a backend (1), a mutant of another profile is the least direct (2)."""
    kind, _, name = candidate.partition(" ")
    if kind == "mutant":
        return 0 if name in MUTANTS and MUTANTS[name].base == judged else 2
    return 1


def describe(summary: list[dict], partial: int = 3) -> list[str]:
    """Human lines: 'matches mutant ties-even: ties rounded to even on 12/12 failing vectors' (every full
    match, then the best ``partial`` partial ones)."""
    lines = []
    for s in summary:
        if "candidate" in s:
            if s["explains"] < s["of"]:
                if partial <= 0:
                    continue
                partial -= 1
            desc = f": {s['description']}" if s.get("description") else ""
            verb = "matches" if s["explains"] == s["of"] else "partly matches"
            lines.append(f"{verb} {s['candidate']}{desc} on {s['explains']}/{s['of']} failing vectors")
        else:
            lines.append(f"first wrong stage on {s['vectors']}/{s['of']}: {s['stage']}")
    return lines
