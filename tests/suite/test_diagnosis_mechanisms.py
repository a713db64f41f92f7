"""Issue 21: a backend with one real bug (tests/planted_backends.py: the oracle with one step redone wrongly in
plain numpy, sharing no code with the diagnosis) is diagnosed by that bug on the first line of the run's
diagnosis, with a count, under every profile it could claim; in ``qconform fuzz`` its divergences form one
class named by the bug; a backend with two independent bugs gets both."""

from __future__ import annotations

import warnings
from pathlib import Path

import planted_backends as planted
import pytest

from conformance import diagnose
from conformance.backends.python import PythonBackend
from conformance.fuzz import engine
from conformance.runner import Runner
from conformance.vectors import load_suite

SUITE = Path(__file__).resolve().parents[2] / "vectors" / "core"
NDARRAY, FLEX, FLEX_0_23, GPU = ("burn-0.22.0-pre.3/ndarray", "burn-0.22.1/flex", "burn-0.23.0-pre.1/flex",
                                 "burn-0.22.0-pre.3/cubecl")
ALL = (NDARRAY, FLEX, FLEX_0_23, GPU)

# bug -> (the profiles it can be claimed under: where burn's step differs from the bug, the words of its
# first line). Each first line also carries "on N/N failing vectors".
BUGS = {
    "scale-nearest": (ALL, "scale rounded to nearest instead of up (scale_rounding: nearest"),
    "unrounded-codes": (ALL, "codes: divided by the unrounded scale"),
    "f64": (ALL, "codes: divides and rounds in f64 (division: f64)"),
    "ties-even": ((NDARRAY, FLEX), "codes: ties rounded to even (tie: even"),
    "ties-away": ((FLEX_0_23, GPU), "codes: ties rounded away from zero (tie: away"),
    "ties-toward-zero": (ALL, "codes: ties rounded toward zero (tie: toward_zero)"),
    "int32-before-clip": (ALL, "codes: casts to int32 before clamping"),
    "no-zero-guard": ((NDARRAY, FLEX, FLEX_0_23), "no zero-scale guard, as burn-cubecl's kernels do (zero_scale: none"),
    "negative-zero-decode": (ALL, "x: signed zero only: -0.0 where burn gives +0.0"),
    "nan-code-ff": ((FLEX_0_23,), "codes: NaN encoding only: both are NaN codes of E4M3"),
    "cast-before-clamp": ((FLEX_0_23,), "codes: casts to the minifloat without saturating, then clamps"),
    "ocp-mx-scale": ((FLEX_0_23,), "scales: the OCP MX shared scale"),
    "given-scales": ((FLEX_0_23,), "x: every differing element is its code times the given f32 scale"),
    "f16-subnormal-step": (ALL, "scales: scale rounded down in the scale dtype's subnormal range (up elsewhere) "
                                 "(scale_rounding: down_in_subnormals)"),
}
DIVISION = {NDARRAY: "reciprocal", FLEX: "divide", FLEX_0_23: "reciprocal", GPU: "reciprocal"}


@pytest.fixture(scope="module")
def suite():
    return load_suite(SUITE)


def run_suite(suite, bug: str, profile: str, ops=None) -> list[str]:
    backend = planted.PLANTED[bug](profile)
    runner = Runner(suite, "planted", backend=PythonBackend(backend))
    wanted = [v for v in suite.vectors if v.op in (ops or backend.ops)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        verdicts = list(runner.run_all(wanted))
    assert any(v.status == "failed" for v in verdicts), f"{bug} under {profile}: the suite does not catch it"
    return diagnose.describe(diagnose.summarize(verdicts))


def _complete(line: str) -> bool:
    """'on N/N failing vectors' with the same N."""
    n, _, rest = line.partition(" failing vectors")[0].rpartition(" on ")[2].partition("/")
    return n == rest and n.isdigit()


CASES = [(bug, p) for bug, (profiles, _) in BUGS.items() for p in profiles]


@pytest.mark.parametrize("bug, profile", CASES, ids=[f"{b}@{p}" for b, p in CASES])
def test_the_suite_names_the_bug_first(suite, bug, profile):
    # the tie bugs fail on many vectors: quantize alone is enough to name them (and quick)
    lines = run_suite(suite, bug, profile, ops=("quantize",) if bug.startswith("ties") else None)
    assert BUGS[bug][1] in lines[0], "\n".join(lines)
    assert _complete(lines[0]), lines[0]


@pytest.mark.parametrize("profile", ALL)
def test_the_division_bug_is_named_relative_to_the_claimed_profile(suite, profile):
    lines = run_suite(suite, "other-division", profile)
    assert f"(division: {DIVISION[profile]}" in lines[0] and _complete(lines[0]), "\n".join(lines)


@pytest.mark.parametrize("profile", ALL)
def test_two_independent_bugs_are_both_named(suite, profile):
    lines = run_suite(suite, "nearest-and-unrounded", profile)
    first = "\n".join(lines[:2])
    assert "scales: scale rounded to nearest instead of up" in first, "\n".join(lines)
    assert "codes: divided by the unrounded scale" in first and "given the backend's own scales" in first
    assert all(_complete(line) for line in lines[:2])


def test_a_wrong_f16_subnormal_scale_is_counted_in_f16_steps(suite):
    lines = run_suite(suite, "f16-subnormal-step", FLEX)
    assert "scales: -1 F16 step from burn's (F16 subnormals)" in "\n".join(lines)
    assert "codes: follow from the backend's own scales" in "\n".join(lines)


def test_a_profile_match_names_its_deciding_field(suite):
    lines = run_suite(suite, "other-division", NDARRAY)
    match = next(line for line in lines if line.startswith("matches profile burn-0.22.1/flex"))
    assert "(division: reciprocal, multiplies by the reciprocal" in match


FUZZED = [("ties-even", FLEX), ("ties-away", FLEX_0_23), ("ties-toward-zero", NDARRAY), ("ties-toward-zero", GPU),
          ("int32-before-clip", FLEX), ("scale-nearest", NDARRAY), ("unrounded-codes", FLEX_0_23),
          ("f64", NDARRAY), ("no-zero-guard", NDARRAY), ("no-zero-guard", FLEX_0_23),
          ("negative-zero-decode", GPU)]
FAMILY = {"ties-even": "codes: tie-breaking rule", "ties-away": "codes: tie-breaking rule",
          "ties-toward-zero": "codes: tie-breaking rule", "int32-before-clip": "codes: clamping",
          "scale-nearest": "scales: scale rounding", "unrounded-codes": "codes: scale used for the codes",
          "f64": "codes: division", "no-zero-guard": "zero-scale guard",
          "negative-zero-decode": "x: signed zero only"}


# f64 arithmetic differs from f32's only on rare near-ties: seed 1 first shows it past case 300
CASES_FOR = {"f64": 2000}


@pytest.mark.parametrize("bug, profile", FUZZED, ids=[f"{b}@{p}" for b, p in FUZZED])
def test_fuzzing_makes_one_class_per_bug(bug, profile):
    backend = planted.PLANTED[bug](profile)
    f = engine.Fuzzer("planted", profile=profile, backend=PythonBackend(backend), ops=list(backend.ops), seed=1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            report = f.run(cases=CASES_FOR.get(bug, 300), shrink=False, log=lambda m: None)
    finally:
        f.close()
    assert len(report.divergences) == 1, list(report.divergences)
    (div,) = report.divergences.values()
    assert FAMILY[bug] in div.signature and div.count > 0, div.signature
    if bug in EVIDENCE:  # the bug's own alternative explains every case of its class
        every = [c for c, n in div.explained.items() if n == div.count]
        assert any(EVIDENCE[bug] in c for c in every), every


EVIDENCE = {"ties-even": "(tie: even)", "ties-away": "(tie: away)", "ties-toward-zero": "(tie: toward_zero)",
            "int32-before-clip": "(clamp: via_int32)", "scale-nearest": "(scale_rounding: nearest)",
            "unrounded-codes": "(scale_source: unrounded)", "f64": "(division: f64)"}


def test_two_bugs_make_two_fuzz_classes():
    backend = planted.PLANTED["nearest-and-unrounded"](NDARRAY)
    f = engine.Fuzzer("planted", profile=NDARRAY, backend=PythonBackend(backend), ops=list(backend.ops), seed=1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            report = f.run(cases=400, shrink=False, log=lambda m: None)
    finally:
        f.close()
    # both causes are named: as two classes, or as one class where every case shows both
    named = " | ".join(report.divergences)
    assert "scales: scale rounding" in named and "codes: scale used for the codes" in named, named
    assert len(report.divergences) <= 2, named


def test_the_failure_message_counts_a_wrong_scale_in_its_dtypes_steps(suite):
    """The per-vector message, not only the diagnosis: one F16 subnormal step is 8192 f32 ulps apart, and it is
    the F16 step that names the bug."""
    backend = planted.PLANTED["f16-subnormal-step"](FLEX)
    runner = Runner(suite, "planted", backend=PythonBackend(backend))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        failed = [v for v in runner.run_all(suite.vectors) if v.status == "failed" and "scales" in v.message]
    assert failed
    assert any("(on the scale dtype's grid: -1 F16 step from burn's (F16 subnormals))" in v.message for v in failed)
