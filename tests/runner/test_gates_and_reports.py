"""Gates and reports at their edges (issue 26): diagnosis candidates ordered best first, a strict run whose only
stale entry is an xfail that now passes, a badge and JUnit XML for a backend whose name holds XML specials, and
tolerance contracts judged just inside and just outside their bound with rtol and atol different."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest
import suites
from test_plugin import cli

from conformance import diagnose
from conformance import report as rep
from conformance.compare import FAILED, PASSED, Verdict, judge
from conformance.protocol import Result
from conformance.report.junit import junit_xml
from conformance.vectors import Expected, Vector

# ---- diagnosis: the best candidate first ---------------------------------------------------------------------


def _diagnosed(i, explanations=(), matches=(), wrong=("codes",)):
    v = Verdict(f"id{i}", f"v{i}", "quantize", "p", FAILED)
    v.diagnosis = {"wrong": list(wrong), "explanations": [
        {"output": o, "deciding": d, "text": d, "family": "tie", "elements": 2, "contradicts": c, "mutants": []}
        for o, d, c in explanations], "classes": [], "matches": list(matches), "stages": [], "stage": None,
        "descriptions": {}, "deciding": {}}
    return v


def test_diagnosis_candidates_are_ordered_best_first():
    """Four failing vectors, listed worst first. By hand: "tie: even" explains all four (complete: first);
    "division: f64" three of four, "tie: toward_zero" two and contradicted on one (partial: after every complete
    line, the larger first). Matches: mutant m-a and profile q on all four (at equal counts the mutant, which
    names one rule, before the profile), mutant m-b on two (partial: after the partial explanations)."""
    verdicts = [
        _diagnosed(0, [("codes", "tie: toward_zero", 1), ("codes", "division: f64", 0), ("codes", "tie: even", 0)],
                   ["mutant m-b", "profile q", "mutant m-a"]),
        _diagnosed(1, [("codes", "tie: toward_zero", 0), ("codes", "division: f64", 0), ("codes", "tie: even", 0)],
                   ["mutant m-b", "profile q", "mutant m-a"]),
        _diagnosed(2, [("codes", "division: f64", 0), ("codes", "tie: even", 0)], ["profile q", "mutant m-a"]),
        _diagnosed(3, [("codes", "tie: even", 0)], ["profile q", "mutant m-a"]),
    ]
    order = [(s["kind"], s.get("deciding") if s["kind"] == "explanation" else s.get("candidate"))
             for s in diagnose.summarize(verdicts)]
    assert order == [("explanation", "tie: even"), ("match", "mutant m-a"), ("match", "profile q"),
                     ("explanation", "division: f64"), ("explanation", "tie: toward_zero"),
                     ("match", "mutant m-b")]
    lines = diagnose.describe(diagnose.summarize(verdicts))
    assert lines[0].startswith("codes: tie: even (tie: even) on 4/4 failing vectors")


# ---- the strict ratchet: an xfail that now passes is stale on its own ---------------------------------------

# Backend B fails the ties vector and the global-error vector under profile A: both are covered by entries that
# still hold (an xfail that fails, a skip); round_up's xfail is the one stale entry.
ONLY_XPASS = """
[[expect]]
match = "quantize/q8s/ties"
kind = "xfail"
reason = "ties to even"

[[expect]]
match = "quantize/q8s/global-*"
kind = "skip"
reason = "cannot raise yet"

[[expect]]
match = "round_up/*"
kind = "xfail"
reason = "fixed since"
"""


def test_a_strict_run_whose_only_stale_entry_is_an_xfail_that_now_passes(tmp_path, suite_dir, lookup_cmd, env):
    (tmp_path / "e.toml").write_text(ONLY_XPASS)
    spec = "subprocess:" + lookup_cmd("--answer", suites.B)
    args = ("run", "--backend", spec, "--vectors", str(suite_dir), "--expectations", "e.toml", "-q")
    lenient = cli(*args, env=env, cwd=tmp_path)
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    assert "now pass" in lenient.stdout + lenient.stderr
    strict = cli(*args, "--strict", env=env, cwd=tmp_path)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "round_up/f16/basic" in strict.stdout + strict.stderr


# ---- printers: a backend name with XML specials --------------------------------------------------------------

HOSTILE = 'b<&>"\'x'


def _hostile_report():
    verdicts = [Verdict("id0", "quantize/q8s/a", "quantize", "p", PASSED),
                Verdict("id1", "quantize/q8s/b", "quantize", "p", FAILED, kind="mismatch", message="m <&>")]
    return rep.build(verdicts, backend={"name": HOSTILE, "version": "1<2"}, profile="p",
                     suite={"name": "s&t", "vectors": 2, "digest": "ab" * 32}, stale=[], strict=False, started=0.0)


def test_the_badge_of_a_backend_whose_name_holds_xml_specials_is_well_formed():
    root = ET.fromstring(rep.badge(_hostile_report()))  # raises on malformed XML
    title = root.find("{http://www.w3.org/2000/svg}title").text
    assert title.startswith(f"{HOSTILE} 1<2 does not conform to p")


def test_junit_of_a_backend_whose_name_holds_xml_specials_is_well_formed():
    root = ET.fromstring(junit_xml(_hostile_report()))
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["statement"].startswith(f"{HOSTILE} 1<2 does not conform")


# ---- tolerance contracts at their bound --------------------------------------------------------------------

RTOL, ATOL = 2.0**-10, 2.0**-4  # different on purpose: a swap of the two moves the bound from 0.0703125 to 0.5


def _vector(expected: float) -> Vector:
    exp = Expected(outputs={"out": np.array([expected], np.float32)},
                   compare={"out": {"kind": "allclose", "rtol": RTOL, "atol": ATOL, "why": "test"}})
    return Vector("vid", "matmul/f32/bound", "matmul", {}, {}, {"p": exp})


@pytest.mark.parametrize("expected,actual,status", [
    # |actual - expected| <= atol + rtol * |expected|: for expected 8 the bound is 2^-4 + 8 * 2^-10 = 0.0703125
    (8.0, 8.0703125, PASSED),                    # on the bound, above
    (8.0, 7.9296875, PASSED),                    # on the bound, below (relative to |expected|, not |actual|)
    (8.0, 8.0703125 + 2.0**-20, FAILED),         # one f32 ulp past it
    (8.0, 7.9296875 - 2.0**-21, FAILED),
    (0.0, 0.0625, PASSED),                       # at zero only atol counts
    (0.0, 0.0625 + 2.0**-27, FAILED),
    (-1024.0, -1025.0625, PASSED),               # 2^-4 + 1024 * 2^-10 = 1.0625
    (-1024.0, -1025.0625 - 2.0**-13, FAILED),
])
def test_a_tolerance_contract_is_judged_at_its_bound(expected, actual, status):
    got = Result({"out": np.array([actual], np.float32)})
    assert np.float32(actual) == actual  # every value here is an f32, so the bound is met or missed exactly
    assert judge(_vector(expected), "p", got).status == status


# ---- the exact contract's one equivalence: NaN == NaN, whatever the payload ---------------------------------

NAN, OTHER_NAN = np.uint32(0x7FC00000).view(np.float32), np.uint32(0xFFC00001).view(np.float32)


@pytest.mark.parametrize("expected,actual,status", [
    (NAN, OTHER_NAN, PASSED),  # both NaN: equal, whatever the sign and payload
    (NAN, np.float32(1.0), FAILED),
    (np.float32(1.0), NAN, FAILED),
    (np.float32(0.0), np.float32(-0.0), FAILED),  # bit patterns: the sign of zero counts
])
def test_the_exact_contract_treats_only_two_nans_as_equal(expected, actual, status):
    exp = Expected(outputs={"x": np.array([expected], np.float32)})
    vector = Vector("vid", "dequantize/q8s/nan", "dequantize", {}, {}, {"p": exp})
    assert judge(vector, "p", Result({"x": np.array([actual], np.float32)})).status == status


def test_a_frame_is_a_little_endian_length_and_the_blob():
    from conformance.protocol import frame, frame_length
    assert frame(b"\x01" * 258) == b"\x02\x01\x00\x00" + b"\x01" * 258  # 258 = 0x0102, low byte first
    assert frame_length(b"\x02\x01\x00\x00") == 258


def test_a_fuzz_class_is_named_by_its_most_specific_match():
    """With no explanation, a class is named by its whole-answer matches; a one-rule mutant is more specific than
    a whole other profile, so only the mutants name it."""
    from conformance.fuzz.engine import signature
    v = Verdict("id", "a", "quantize", "p", FAILED, kind="mismatch")
    v.diagnosis = {"matches": ["profile burn-0.22.1/flex", "mutant ties-even", "mutant no-clamp"],
                   "descriptions": {"mutant ties-even": "ties to even"}, "explanations": [], "classes": []}
    assert signature(None, v) == "mismatch: matches mutant no-clamp; mutant ties-even (ties to even)"


def test_the_report_gate_fails_a_strict_run_on_a_passing_xfail_alone():
    """The report's own gate (what `qconform report` and the plugin's exit status read), apart from pytest's
    XPASS(strict): one xpassed vector, nothing unmatched."""
    from conformance.compare import XPASSED
    verdicts = [Verdict("id0", "a", "quantize", "p", PASSED), Verdict("id1", "b", "quantize", "p", XPASSED)]

    def built(strict):
        return rep.build(verdicts, backend={"name": "b", "version": "1"}, profile="p",
                         suite={"name": "s", "vectors": 2, "digest": "ab" * 32}, stale=[], strict=strict, started=0.0)
    assert built(True)["expectations"]["unmatched"] == []
    assert rep.failed(built(True)) and not rep.failed(built(False))
