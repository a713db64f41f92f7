"""xfail entries that pin the failure they expect: another failure on the same vector is reported, not hidden."""

import sys

import pytest
import suites
from lookup_backend import LookupBackend
from test_plugin import TIES, sh

from conformance.backends.python import PythonBackend
from conformance.compare import FAILED, XFAILED
from conformance.diagnose import Candidate
from conformance.expectations import Expectations, ExpectationsError
from conformance.runner import Runner
from conformance.vectors import load_suite


def ledger(tmp_path, body: str) -> Expectations:
    (tmp_path / "e.toml").write_text(f'[[expect]]\nmatch = "{TIES}"\nkind = "xfail"\nreason = "known"\n{body}')
    return Expectations.load(tmp_path / "e.toml")


def verdict(suite_dir, expectations, faults=(), diagnose=False):
    """The TIES verdict of a backend answering with profile B's codes (ties to even) while judged against A."""
    suite = load_suite(suite_dir)
    backend = PythonBackend(LookupBackend(suite_dir, suites.A, answer=suites.B, faults=faults))
    b_like = PythonBackend(LookupBackend(suite_dir, suites.B))
    candidates = [Candidate("profile test/b", "ties to even", b_like.run)]
    r = Runner(suite, "given", backend=backend, expectations=expectations, diagnose=diagnose,
               candidates=candidates).start()
    try:
        return r.run_vector(suite.get(TIES))
    finally:
        r.close()


@pytest.mark.parametrize("pins", ['', 'failure = "mismatch"', 'diagnosis = "profile test/b"',
                                  'diagnosis = "test/b"\nfailure = "mismatch"'])
def test_the_pinned_failure_is_xfailed(suite_dir, tmp_path, pins):
    v = verdict(suite_dir, ledger(tmp_path, pins))
    assert v.status == XFAILED and v.kind == "mismatch"


def test_another_failure_kind_is_reported(suite_dir, tmp_path):
    v = verdict(suite_dir, ledger(tmp_path, 'failure = "mismatch"'), faults=["raise:" + TIES])
    assert v.status == FAILED and v.kind == "crashed"
    assert "not the failure the xfail entry #1 expects: failure 'crashed', not 'mismatch'" in v.message
    # without a pin the same crash hides behind the entry (the behaviour pins exist to avoid)
    assert verdict(suite_dir, ledger(tmp_path, ""), faults=["raise:" + TIES]).status == XFAILED


def test_another_diagnosis_or_error_code_is_reported(suite_dir, tmp_path):
    # the diagnosis is computed for a pinned entry even with diagnosis off
    v = verdict(suite_dir, ledger(tmp_path, 'diagnosis = "mutant ties-even"'))
    assert v.status == FAILED and "diagnosis profile test/b, not 'mutant ties-even'" in v.message
    v = verdict(suite_dir, ledger(tmp_path, 'error = "range.empty_flex"'))
    assert v.status == FAILED and "error code None, not 'range.empty_flex'" in v.message


@pytest.mark.parametrize("body,message", [
    ('failure = "wrong"', "failure must be one of"),
    ('error = ""', "'error' must be a non-empty string"),
])
def test_bad_pins_are_refused(tmp_path, body, message):
    with pytest.raises(ExpectationsError, match=message):
        ledger(tmp_path, body)


def test_a_skip_entry_cannot_pin(tmp_path):
    (tmp_path / "e.toml").write_text('[[expect]]\nmatch = "x"\nkind = "skip"\nreason = "r"\nfailure = "mismatch"\n')
    with pytest.raises(ExpectationsError, match="only an xfail entry"):
        Expectations.load(tmp_path / "e.toml")


def test_through_pytest_a_different_failure_is_failed_not_xfailed(tmp_path, suite_dir, lookup_cmd, env):
    (tmp_path / "e.toml").write_text(f'[[expect]]\nmatch = "{TIES}"\nkind = "xfail"\nreason = "known"\n'
                                     'failure = "crashed"\n')
    spec = "subprocess:" + lookup_cmd("--answer", suites.B)
    r = sh([sys.executable, "-m", "pytest", "--qc-backend", spec, "--qc-vectors", str(suite_dir), "-p",
            "no:randomly", "-q", "--qc-expectations", "e.toml"], tmp_path, env)
    assert r.returncode == 1 and "failure 'mismatch', not 'crashed'" in r.stdout and "xfailed" not in r.stdout
