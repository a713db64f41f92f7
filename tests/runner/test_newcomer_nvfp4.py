"""A newcomer's first hour with a real third-party format, NVFP4 (examples/nvfp4_backend.py, written from the
docs alone and sharing no code with the oracle): it passes every vector of its format under the profile the
docs tell it to claim, and each typical bug of a real port, redone in a subclass, is named by the first line of
the run's diagnosis (the E2M1 tie rule, a global computed in one division or left out, a NaN's code, a scale
burn guards). Also what the first hour met on the way: a Python backend's exception on its fault's first line
(the only one ``qconform fuzz`` shows) and the fuzz summary's reasons for the cases a backend declined."""

from __future__ import annotations

import shlex
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conformance import cli, differences, diagnose
from conformance.backends.python import PythonBackend
from conformance.formats import get_format
from conformance.fuzz import engine
from conformance.runner import Runner
from conformance.vectors import load_suite
from examples import nvfp4_backend
from examples.nvfp4_backend import E2M1_MAX, UE4M3_MAX, Backend

ROOT = Path(__file__).resolve().parents[2]
CLAIMED = "burn-0.23.0-pre.1/flex"


@pytest.fixture(scope="module")
def nvfp4_vectors():
    suite = load_suite(ROOT / "vectors" / "core")
    return suite, [v for v in suite.vectors if "format:nvfp4" in v.tags]


def judge(nvfp4_vectors, backend, profile=None):
    suite, vectors = nvfp4_vectors
    runner = Runner(suite, "newcomer", backend=PythonBackend(backend), profile=profile)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return list(runner.run_all(vectors))


def counts(verdicts) -> dict:
    out: dict = {}
    for v in verdicts:
        out[v.status] = out.get(v.status, 0) + 1
    return out


def first_line(verdicts) -> str:
    lines = diagnose.describe(diagnose.summarize(verdicts))
    return lines[0] if lines else ""


def test_the_example_passes_its_format_under_the_profile_it_claims(nvfp4_vectors):
    verdicts = judge(nvfp4_vectors, Backend())
    assert Backend().hello()["profile"] == CLAIMED
    got = counts(verdicts)
    assert got.get("failed", 0) == 0 and got.get("passed", 0) >= 60, got
    declined = {v.alias for v in verdicts if v.status == "declined"}
    assert declined <= {"quantize_dynamic/format-nvfp4/inf", "quantize_dynamic/format-nvfp4/nan"}, declined


def test_the_example_shares_no_code_with_the_oracle():
    source = Path(nvfp4_backend.__file__).read_text(encoding="utf-8")
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not any("oracle" in line or "ml_dtypes" in line for line in imports), imports


def test_the_docs_say_which_profile_a_minifloat_format_claims():
    protocol = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert "is what burn does from **0.23.0-pre.1** on: claim `burn-0.23.0-pre.1/flex`" in protocol
    quantize = (ROOT / "docs" / "spec" / "quantize.md").read_text(encoding="utf-8")
    assert "* **From 0.23.0-pre.1** (profile `burn-0.23.0-pre.1/flex`" in quantize and "E2M1 `+6`" in quantize


def test_judged_against_the_default_the_diagnosis_points_at_the_minifloat_profile(nvfp4_vectors):
    verdicts = judge(nvfp4_vectors, Backend(), profile="burn-0.22.1/flex")
    assert counts(verdicts).get("failed", 0) > 40
    lines = diagnose.describe(diagnose.summarize(verdicts))
    assert any("(float_codes: format)" in line for line in lines), lines
    # the whole-answer match names the arithmetic fields that differ, not the first four by name
    # (checkpoint_reader, clamp, declared_length, division)
    assert lines[0].startswith("matches profile burn-0.23.0-pre.1/flex (tie: even, division: divide, "), lines[0]
    assert "float_codes: format" in lines[0] and "checkpoint_reader" not in lines[0], lines[0]


# --- typical bugs of a real port, each one method of the example redone ---------------------------------------


class TiesAway(Backend):
    """E2M1 ties rounded away from zero (a round-half-up lookup), where burn's conversion rounds them to even."""

    def encode(self, y):
        code = super().encode(y)
        a = np.minimum(np.abs(y), E2M1_MAX)
        grid = nvfp4_backend.E2M1
        i = np.clip(np.searchsorted(grid, np.nan_to_num(a)), 1, grid.size - 1)
        tie = (a > grid[i - 1]) & (grid[i] - a == a - grid[i - 1])
        return np.where(tie, i | (np.signbit(y) << 3), code).astype(np.int8)


class GlobalInOneDivision(Backend):
    """NVIDIA's recipe: global = amax / (6 · 448) in one division (a different f32 for some tensors)."""

    def global_and_scales(self, amax):
        g = np.maximum(np.float32(amax.max() / np.float32(6 * 448)), nvfp4_backend.MIN_POSITIVE)
        return g, nvfp4_backend.round_up_ue4m3(((np.float32(2) * amax) / np.float32(12)) / g)


class GlobalByReciprocal(Backend):
    """The global as amax times a precomputed 1 / (6 · 448): a multiply where burn divides twice."""

    def global_and_scales(self, amax):
        g = np.maximum(np.float32(amax.max() * (np.float32(1) / np.float32(6 * 448))), nvfp4_backend.MIN_POSITIVE)
        return g, nvfp4_backend.round_up_ue4m3(((np.float32(2) * amax) / np.float32(12)) / g)


class NoGlobal(Backend):
    """amax / 6 straight into the UE4M3 block scales, global 1: no two-level split."""

    def global_and_scales(self, amax):
        return np.float32(1), nvfp4_backend.round_up_ue4m3(np.minimum(amax / np.float32(6), UE4M3_MAX))


class OffTheGrid(Backend):
    """Block scales f32(raw / global) stored as they are, not put on the UE4M3 grid."""

    def global_and_scales(self, amax):
        g, _ = super().global_and_scales(amax)
        return g, (((np.float32(2) * amax) / np.float32(12)) / g).astype(np.float32)


class NanToSix(Backend):
    """A NaN encoded by the clamp: -6 or +6 by its sign bit, code 6 or 14 (burn: +6, code 7)."""

    def encode(self, y):
        return np.where(np.isnan(y), np.where(np.signbit(y), 14, 6), super().encode(y)).astype(np.int8)


@pytest.mark.parametrize("bug, named", [
    (TiesAway, "codes: ties between two minifloat codes rounded away from zero (burn's conversions round them to "
               "even) (minifloat_tie: away)"),
    (GlobalInOneDivision, "global: +1 f32 ulp from burn's f32(max(block scales) / M)"),
    (NoGlobal, "global: 1.0 where burn's is f32(max(block scales) / M) (§3.1): the backend does not split"),
    (OffTheGrid, "scales: scale not rounded to the scale dtype (scale_rounding: unrounded) on 26/26"),
    (NanToSix, "codes: every differing element is a NaN of x/s (the backend's scale), where burn stores code 7"),
], ids=lambda b: b.__name__ if isinstance(b, type) else "")
def test_the_diagnosis_names_the_real_bug_first(nvfp4_vectors, bug, named):
    verdicts = judge(nvfp4_vectors, bug())
    assert counts(verdicts).get("failed", 0) > 0
    assert named in first_line(verdicts), "\n".join(diagnose.describe(diagnose.summarize(verdicts)))


@pytest.mark.parametrize("bug", [GlobalInOneDivision, GlobalByReciprocal], ids=lambda b: b.__name__)
def test_the_order_of_the_globals_divisions_is_caught_by_the_suite_not_only_by_fuzzing(nvfp4_vectors, bug):
    """Each ``global-rounding`` vector's amax makes both shortcuts a different f32 from burn's global (one of
    the weight-like vectors does so by chance): the suite alone catches a port that divides once."""
    verdicts = [v for v in judge(nvfp4_vectors, bug(), CLAIMED) if v.op == "quantize_dynamic"]
    rounding = [v for v in verdicts if "/global-rounding-" in v.alias]
    assert len(rounding) == 4 and all(v.status == "failed" for v in rounding), [(v.alias, v.status) for v in rounding]
    assert "global: " in first_line(verdicts)


def test_the_first_wrong_stage_of_an_e2m1_tie_is_a_tie_of_the_e2m1_grid(nvfp4_vectors):
    stages = {v.diagnosis["stage"] for v in judge(nvfp4_vectors, TiesAway()) if v.status == "failed"}
    assert "codes (scales are right): every differing element of x/s is exactly halfway between two codes of the " \
           "E2M1 grid (tie-breaking rule)" in stages, stages
    assert not any(".5 tie" in s for s in stages), stages


def test_a_scale_a_fraction_of_a_step_off_the_grid_is_not_minus_zero_steps():
    scheme = get_format("nvfp4").scheme((1, 16)).to_json()
    vector = SimpleNamespace(params={"scheme": scheme}, op="quantize_dynamic")
    below = np.nextafter(np.float32(448), np.float32(0))
    texts = [c["text"] for c in differences.classify("scales", np.float32([448]), np.float32([below]), vector)]
    assert texts == ["scales: off the UE4M3 grid, within a thousandth of a step of burn's"], texts


def test_a_scale_burn_guards_is_named_as_its_guard():
    scheme = get_format("nvfp4").scheme((1, 16)).to_json()
    vector = SimpleNamespace(params={"scheme": scheme}, op="quantize_dynamic")
    found = differences.classify("scales", np.float32([2.0**-9]), np.float32([448]), vector)
    assert found and found[0]["text"].startswith("scales: burn stores its guard value 0.00195312 where the backend "
                                                 "does not"), found


# --- what the first hour met on the way ------------------------------------------------------------------------


class Crashing(Backend):
    def run(self, op, params, inputs):
        if op == "dequantize":
            raise IndexError("index 0 is out of bounds for axis 0 with size 0")
        return super().run(op, params, inputs)


def test_a_python_backends_exception_is_on_its_faults_first_line():
    fault = PythonBackend(Crashing()).run("dequantize", {}, {})
    assert fault.detail.splitlines()[0] == "run() raised IndexError: index 0 is out of bounds for axis 0 with size 0"
    assert "Traceback" in fault.detail


def fuzz(backend, cases=200):
    f = engine.Fuzzer("newcomer", profile=CLAIMED, backend=PythonBackend(backend), seed=1, formats=["nvfp4"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return f.run(cases=cases, shrink=False, log=lambda m: None)
    finally:
        f.close()


def test_fuzzing_the_example_finds_nothing_and_says_why_it_declined():
    report = fuzz(Backend())
    assert not report.divergences and not report.faults, report.lines()
    lines = report.lines()
    declined = report.statuses.get("declined", 0)
    reasons = [line for line in lines if line.startswith("    declined ")]
    assert declined and reasons, lines
    assert sum(report.declines.values()) == declined
    assert any(line.endswith(" x inf or NaN input: burn's calibration of those is not implemented") for line in reasons)
    fault_line = fuzz(Crashing(), cases=60).fault_lines()[1]
    assert fault_line.endswith("crashed: run() raised IndexError: index 0 is out of bounds for axis 0 with size 0")


def test_a_not_applicable_reason_names_the_empty_block_size():
    """``per_block([1])`` is burn's empty block size (leading 1s dropped): ``qconform list`` said ``block  is not
    16``, with nothing between the two spaces."""
    suite = load_suite(ROOT / "vectors" / "core")
    runner = Runner(suite, "newcomer", backend=PythonBackend(Backend()))
    (verdict,) = runner.run_all([suite.get("quantize/q8s/block/ones-block")])
    assert verdict.status == "not applicable" and "block [] (one element per block) is not 16" in verdict.note, \
        verdict.note


def test_run_without_a_report_does_not_send_the_reader_to_one(capsys, tmp_path):
    """Past 20 failures ``qconform run`` said "(see the JSON report)" though none was asked for."""
    args = ["run", "-q", "--backend", "python:examples.nvfp4_backend:Backend", "--profile", "burn-0.22.1/flex"]
    assert cli.main(args) == 1
    out = capsys.readouterr().out
    assert "more failures (--report FILE.json writes them all)" in out and "see the JSON report" not in out, out
    assert cli.main(args + ["--report", str(tmp_path / "r.json")]) == 1
    assert f"more failures (see {tmp_path / 'r.json'})" in capsys.readouterr().out


class CrashesOnNaN(Backend):
    """A NaN element in quantize crashes it (the shrinker then meets crashes among the cases it tries)."""

    def run(self, op, params, inputs):
        if op == "quantize_dynamic" and np.isnan(inputs["x"]).any():
            raise ZeroDivisionError("nan")
        return super().run(op, params, inputs)

    def encode(self, y):
        return np.where(np.isnan(y), 6, super().encode(y)).astype(np.int8)


def test_a_minimal_case_shrunk_through_faults_is_said_in_one_parenthesis():
    f = engine.Fuzzer("newcomer", profile=CLAIMED, backend=PythonBackend(CrashesOnNaN()), seed=1, formats=["nvfp4"])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            report = f.run(cases=300, log=lambda m: None)
    finally:
        f.close()
    shrunk = [d.shrunk for d in report.divergences.values() if "faulted" in d.shrunk]
    assert shrunk and all(s.startswith("shrunk; the backend faulted on ") for s in shrunk), shrunk
    assert not any(line.startswith("  (shrunk (") for line in report.lines())


def test_a_failed_run_gives_the_explain_command_of_the_profile_it_judged(capsys):
    """``explain`` alone shows the default profile's expectation; a run judged against another profile prints the
    command that shows its first failure as that run judged it."""
    assert cli.main(["run", "-q", "--backend", "python:examples.nvfp4_backend:Backend",
                     "--profile", "burn-0.22.1/flex"]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("one of them in full")]
    assert len(lines) == 1 and lines[0].split(": ", 1)[1].startswith("qconform explain "), lines
    command = shlex.split(lines[0].split(": ", 1)[1])
    assert command[-2:] == ["--profile", "burn-0.22.1/flex"]
    assert cli.main(command[1:]) == 0
    assert "  expected under burn-0.22.1/flex\n" in capsys.readouterr().out


def test_explain_shows_the_profile_a_backend_claims(capsys):
    alias = "quantize_dynamic/format-nvfp4/global-rounding-normal-4x256"
    assert cli.main(["explain", alias, "--backend", "python:examples.nvfp4_backend:Backend"]) == 0
    assert f"  expected under {CLAIMED}\n" in capsys.readouterr().out


def test_list_of_a_one_format_backend_counts_what_does_not_apply_and_lists_it_only_on_request(capsys):
    assert cli.main(["list", "--backend", "python:examples.nvfp4_backend:Backend"]) == 0
    short = capsys.readouterr().out
    assert cli.main(["list", "-v", "--backend", "python:examples.nvfp4_backend:Backend"]) == 0
    full = capsys.readouterr().out
    assert len(short.splitlines()) < 200 < len(full.splitlines()), (len(short.splitlines()), len(full.splitlines()))
    assert "dequantize/q8s/tensor/spec-example" not in short and "    dequantize/q8s/tensor/spec-example\n" in full
    # the header, the format table and the applicable vectors are the same; only the not-applicable part differs
    assert short.split("\nnot applicable:")[0] == full.split("\nnot applicable:")[0]


def test_codes_a_profile_stores_as_integers_are_not_shown_as_minifloat_bit_fields(nvfp4_vectors):
    """burn 0.22's CPU backends store an E2M1 value's x/s as a clamped integer: an expected ``-6`` shown as the E2M1
    fields ``1|01|0`` misnamed it; the backend's own codes keep their E2M1 fields."""
    verdicts = judge(nvfp4_vectors, Backend(), "burn-0.22.1/flex")
    (codes,) = [d for d in verdicts[0].details["outputs"] if d["output"] == "codes"]
    assert "burn-0.22.1/flex stores E2M1 values as x/s rounded and clamped to an integer" in codes["text"]
    assert all("fields" not in row["expected"] and "fields" in row["actual"] for row in codes["first"]), codes["first"]
    (codes,) = [d for d in judge(nvfp4_vectors, TiesAway(), CLAIMED)[0].details["outputs"] if d["output"] == "codes"]
    assert all("fields" in row["expected"] for row in codes["first"]) and "integer" not in codes["text"]
