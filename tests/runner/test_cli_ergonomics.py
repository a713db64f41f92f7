"""What a backend author sees: quiet and compact output, `list`, explain's default, failure details, the empty
selection, per-command help, the progress display."""

import hashlib
import io
import json

import suites
from test_plugin import TIES, cli

from conformance import compare
from conformance import report as rep
from conformance.cli import _Progress
from conformance.compare import FAILED, NOT_APPLICABLE, PASSED, Verdict
from conformance.protocol import Result
from conformance.vectors import load_suite


def digest12(suite_dir) -> str:
    return hashlib.sha256((suite_dir / "manifest.json").read_bytes()).hexdigest()[:12]


def test_quiet_green_run_is_five_lines(tmp_path, suite_dir, lookup_cmd, env):
    r = cli("run", "--backend", "subprocess:" + lookup_cmd(), "--vectors", str(suite_dir), "--quiet",
            env=env, cwd=tmp_path)
    lines = r.stdout.strip().splitlines()
    assert r.returncode == 0 and len(lines) <= 5, r.stdout
    assert lines == ["6 passed, 0 failed, 0 declined, 0 not applicable of 6 vectors",
                     "scope: dequantize, quantize, round_up, scheme_info",
                     "profile test/a (backend lookup 1)", f"suite test {digest12(suite_dir)}", "OK"]


def test_quiet_still_shows_failures(tmp_path, suite_dir, lookup_cmd, env):
    r = cli("run", "--backend", "subprocess:" + lookup_cmd("--answer", suites.B), "--vectors", str(suite_dir),
            "-q", env=env, cwd=tmp_path)
    assert r.returncode == 1 and "FAILED (mismatch) quantize/q8s/ties" in r.stdout
    assert r.stdout.strip().splitlines()[-1] == "FAILED"


def test_list_says_what_applies_and_why_the_rest_does_not(tmp_path, suite_dir, lookup_cmd, env):
    caps = json.dumps({"ops": ["quantize"], "levels": ["block"]})
    r = cli("list", "--backend", "subprocess:" + lookup_cmd("--caps", caps), "--vectors", str(suite_dir),
            env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    quantize = [v["alias"] for v in suites.vectors() if v["op"] == "quantize"]
    assert r.stdout.startswith(f"lookup 1, judged against test/a: {len(quantize)} of 6 vectors of suite test apply")
    head, _, rest = r.stdout.partition("not applicable:")
    assert sorted(line.strip() for line in head.splitlines()[1:] if line.strip()) == sorted(quantize)
    assert "      1  backend does not declare ops round_up\n" in rest and "round_up/f16/basic" not in rest
    r = cli("list", "-v", "--backend", "subprocess:" + lookup_cmd("--caps", caps), "--vectors", str(suite_dir),
            env=env, cwd=tmp_path)
    assert "  backend does not declare ops round_up (1):\n    round_up/f16/basic" in r.stdout


def test_an_empty_selection_says_so(tmp_path, suite_dir, lookup_cmd, env):
    r = cli("run", "--backend", "subprocess:" + lookup_cmd(), "--vectors", str(suite_dir), "--", "-k", "nomatch",
            env=env, cwd=tmp_path)
    assert "no vector selected: the selection (-k / -m) matched none of the 6 vectors of suite test" in r.stdout
    assert "None" not in r.stdout and "OK" not in r.stdout


def test_mutants_help_is_its_own(tmp_path, env):
    r = cli("mutants", "--help", env=env, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("usage: qconform mutants") and "--verbose" not in r.stdout
    assert cli("coverage", "--help", env=env, cwd=tmp_path).stdout.startswith("usage: qconform coverage")


def test_a_failure_shows_the_vector_reason_and_x_over_s(suite_dir):
    vector = load_suite(suite_dir).get(TIES)
    wrong = vector.expected[suites.B]  # ties to even, judged against test/a (ties away)
    verdict = compare.judge(vector, suites.A, Result(dict(wrong.outputs)))
    assert verdict.status == FAILED
    assert "\n  vector: exact .5 ties: away from zero under test/a, to even under test/b\n" in verdict.message
    # x = 0.5 and scale 1: x/s = 0.5, expected 1 (away), actual 0 (even)
    assert "at [0, 0]: x=0.5 x/s=0.5 expected 1 (0x01)  actual 0 (0x00)" in verdict.message


def _report(statuses: dict[str, list[str]]) -> dict:
    """A report over verdicts with the given tags per status."""
    verdicts = [Verdict(f"id{i}", f"v{i}", "quantize", "p", status, tags=tags, note="backend does not declare x"
                        if status == NOT_APPLICABLE else "")
                for i, (status, tags) in enumerate((s, t) for s, ts in statuses.items() for t in ts)]
    return rep.build(verdicts, backend={"name": "b", "version": "1"}, profile="p",
                     suite={"name": "s", "vectors": len(verdicts), "digest": "ab" * 32}, stale=[], strict=False,
                     started=0.0)


def test_default_tables_leave_out_rows_that_are_entirely_not_applicable():
    r = _report({PASSED: [["value:Q8S"]], NOT_APPLICABLE: [["value:Q4S"], ["value:Q8S"]]})
    text = rep.format_text(r)
    assert "value:Q8S" in text and "value:Q4S" not in text
    assert "(1 cell rows entirely not applicable; --verbose shows them)" in text
    assert "value:Q4S" in rep.format_text(r, verbose=True)


class _Tty(io.StringIO):
    def isatty(self):
        return True


def _progress_run(stream, times):
    clock = iter(times)
    p = _Progress(stream, clock=lambda: next(clock))
    p.pytest_collection_finish(type("S", (), {"items": [0] * len(times[2:])})())
    for _ in times[2:]:
        p.pytest_runtest_logreport(type("R", (), {"when": "teardown"})())
    p.pytest_sessionfinish(None)
    return stream.getvalue()


def test_progress_shows_only_on_a_terminal_after_a_few_seconds():
    # start at 0 (construction) and 0 (collection); vectors finish at 1 s, 3 s and 4 s
    out = _progress_run(_Tty(), [0, 0, 1, 3, 4])
    assert "qconform: 1/3" not in out  # before the delay: silent
    assert "\rqconform: 2/3 vectors (1/s, about 2 s left)" in out and "\rqconform: 3/3 vectors" in out
    assert out.endswith("\r")  # the line is erased at the end
    assert _progress_run(io.StringIO(), [0, 0, 1, 3, 4]) == ""  # not a terminal: nothing
    assert _progress_run(_Tty(), [0, 0, 0.5, 1.0]) == ""  # a short run: nothing



