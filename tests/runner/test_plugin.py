"""The pytest plugin and the CLI, run as real pytest / qconform processes."""

import json
import subprocess
import sys

import pytest
import suites

TIES, ERRV = "quantize/q8s/ties", "quantize/q8s/global-error"


def sh(argv, cwd, env):
    """Run a command to completion; its exit status is what the tests examine."""
    return subprocess.run(argv, check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def qc(tmp_path, suite_dir, lookup_cmd, env):
    """Run pytest with the plugin on the synthetic suite: qc(*pytest_args, backend_args=(...))."""
    def call(*args, backend=(), cwd=None):
        spec = "subprocess:" + lookup_cmd(*backend)
        argv = [sys.executable, "-m", "pytest", "--qc-backend", spec, "--qc-vectors", str(suite_dir),
                "-p", "no:randomly", *args]
        return sh(argv, cwd or tmp_path, env)
    return call


def cli(*args, env, cwd):
    return sh([sys.executable, "-m", "conformance.cli", *args], cwd, env)


def test_plugin_is_inert_without_a_backend(tmp_path, env):
    (tmp_path / "test_x.py").write_text("def test_ok():\n    pass\n")
    r = sh([sys.executable, "-m", "pytest", "-q"], tmp_path, env)
    assert r.returncode == 0 and "1 passed" in r.stdout and "qconform" not in r.stdout


def test_one_item_per_vector_with_alias_ids(qc, tmp_path):
    (tmp_path / "test_x.py").write_text("def test_ok():\n    pass\n")  # not collected in a conformance run
    r = qc("--co", "-q")
    ids = [line for line in r.stdout.splitlines() if "/" in line and "::" not in line]
    assert sorted(ids) == sorted(v["alias"] for v in suites.vectors()), r.stdout
    assert "test_ok" not in r.stdout


def test_k_and_m_select_vectors(qc):
    r = qc("-q", "-k", "ties")
    assert "1 passed" in r.stdout and "5 deselected" in r.stdout, r.stdout
    r = qc("-q", "-m", "value_Q4S or op_scheme_info")
    assert "2 passed" in r.stdout and "4 deselected" in r.stdout, r.stdout


def test_failures_junit_and_last_failed(qc, tmp_path):
    r = qc("-q", "--junitxml", "j.xml", backend=("--answer", suites.B))
    assert r.returncode == 1 and "2 failed, 4 passed" in r.stdout
    assert "3 of 8 elements differ" in r.stdout and "qconform summary" in r.stdout
    xml = (tmp_path / "j.xml").read_text()
    assert 'name="quantize.q8s.ties"' in xml and 'failures="2"' in xml  # junitxml writes / as .
    r = qc("-q", "--lf", backend=("--answer", suites.B))
    assert "2 failed" in r.stdout and "passed" not in r.stdout.split("qconform summary")[-1].split("\n")[-2]


def test_exitfirst(qc):
    r = qc("-q", "-x", backend=("--answer", suites.B))
    assert "1 failed" in r.stdout and r.returncode == 1


def test_xdist_gathers_every_verdict(qc, tmp_path):
    r = qc("-q", "-n", "2", "--qc-report", "r.json", backend=("--answer", suites.B))
    assert "2 failed, 4 passed" in r.stdout, r.stdout + r.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert len(report["verdicts"]) == 6 and report["summary"]["total"]["failed"] == 2
    assert report["backend"]["name"] == "lookup"


def test_not_applicable_is_counted_and_listed(qc, tmp_path):
    r = qc("-q", "-rs", "--qc-report", "r.json", backend=("--caps", '{"values": ["Q8S"]}'))
    assert "not applicable: backend does not declare values Q4S" in r.stdout
    t = json.loads((tmp_path / "r.json").read_text())["summary"]["total"]
    assert t["not applicable"] == 1 and t["passed"] == 5


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_junitxml_leaves_not_applicable_out_unless_kept_and_agrees_with_the_summary(qc, tmp_path, workers):
    import xml.etree.ElementTree as ET
    caps = ("--caps", '{"values": ["Q8S"]}')  # quantize/q4s/... is not applicable
    r = qc("-q", *workers, "--junitxml", "j.xml", "--qc-report", "r.json", backend=caps)
    assert r.returncode == 0, r.stdout + r.stderr
    total = json.loads((tmp_path / "r.json").read_text())["summary"]["total"]
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases) == sum(total.values()) - total["not applicable"] == 5
    assert suite.get("skipped") == "0" and suite.get("failures") == "0" and not any("q4s" in c.get("name")
                                                                                   for c in cases)
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["not_applicable"] == "1" and props["passed"] == "5" and "statement" in props
    r = qc("-q", *workers, "--junitxml", "all.xml", "--qc-junit-all", backend=caps)
    suite = ET.parse(tmp_path / "all.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("skipped")) == ("6", "1") and len(suite.findall("testcase")) == 6


EXPECT = f"""
[[expect]]
match = "{TIES}"
kind = "xfail"
reason = "ties to even"
link = "https://example.invalid/issue/1"

[[expect]]
match = "quantize/q8s/global-*"
kind = "skip"
reason = "cannot raise yet"

[[expect]]
match = "round_up/*"
kind = "xfail"
reason = "fixed since"

[[expect]]
match = "no/such/vector"
kind = "xfail"
reason = "renamed long ago"
"""


def test_expectations_and_the_strict_ratchet(qc, tmp_path):
    (tmp_path / "e.toml").write_text(EXPECT)
    r = qc("-q", "--qc-expectations", "e.toml", "--qc-report", "r.json", backend=("--answer", suites.B))
    assert r.returncode == 0, r.stdout
    assert "1 xfailed" in r.stdout and "1 xpassed" in r.stdout and "1 skipped" in r.stdout
    assert "no/such/vector" in r.stdout and "now pass" in r.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["expectations"]["xpassed"] == ["round_up/f16/basic"]
    assert report["summary"]["total"]["xfailed"] == 1
    strict = qc("-q", "--qc-expectations", "e.toml", "--qc-strict", backend=("--answer", suites.B))
    assert strict.returncode == 1 and "XPASS(strict)" in strict.stdout


def test_unmatched_entry_alone_fails_strict_runs(qc, tmp_path):
    (tmp_path / "e.toml").write_text('[[expect]]\nmatch = "gone/*"\nkind = "skip"\nreason = "x"\n')
    assert qc("-q", "--qc-expectations", "e.toml").returncode == 0
    assert qc("-q", "--qc-expectations", "e.toml", "--qc-strict").returncode == 1


def test_bad_expectations_file(qc, tmp_path):
    (tmp_path / "e.toml").write_text('[[expect]]\nmatch = "x"\nkind = "maybe"\nreason = "r"\n')
    r = qc("-q", "--qc-expectations", "e.toml")
    assert r.returncode == 4 and "e.toml: [[expect]] #1: kind must be one of" in r.stderr


def test_bad_suite_fails_before_the_backend_is_called(tmp_path, suite_dir, env):
    m = json.loads((suite_dir / "manifest.json").read_text())
    m["vectors"][2]["op"] = "frobnicate"
    (suite_dir / "manifest.json").write_text(json.dumps(m))
    marker = tmp_path / "backend-started"
    spec = f"subprocess:{sys.executable} -c \"open('{marker}', 'w')\""
    r = sh([sys.executable, "-m", "pytest", "--qc-backend", spec, "--qc-vectors", str(suite_dir)], tmp_path, env)
    assert r.returncode == 4 and "manifest.json: vector 'quantize/q8s/plain': unknown op" in r.stderr
    assert not marker.exists()


def test_backend_that_cannot_start_stops_the_run_clearly(qc, tmp_path, env, suite_dir):
    r = sh([sys.executable, "-m", "pytest", "-q", "--qc-backend", "subprocess:/nonexistent/x",
            "--qc-vectors", str(suite_dir)], tmp_path, env)
    assert r.returncode == 3 and "cannot start '/nonexistent/x'" in r.stdout + r.stderr


# ---- CLI ------------------------------------------------------------------------------------------------

def test_cli_run_report_and_html(tmp_path, suite_dir, lookup_cmd, env):
    r = cli("run", "--backend", "subprocess:" + lookup_cmd("--answer", suites.B), "--vectors", str(suite_dir),
            "--report", "r.json", env=env, cwd=tmp_path)
    assert r.returncode == 1
    assert f"FAILED (mismatch) {TIES}" in r.stdout and "FAILED (missing error)" in r.stdout
    assert "judged against profile test/a" in r.stdout
    ok = cli("run", "--backend", "subprocess:" + lookup_cmd(), "--vectors", str(suite_dir), env=env, cwd=tmp_path)
    assert ok.returncode == 0 and "FAILED" not in ok.stdout
    judged_b = cli("run", "--backend", "subprocess:" + lookup_cmd("--answer", suites.B), "--vectors",
                   str(suite_dir), "--profile", suites.B, env=env, cwd=tmp_path)
    assert judged_b.returncode == 0, judged_b.stdout
    r = cli("report", "r.json", "--html", "r.html", env=env, cwd=tmp_path)
    page = (tmp_path / "r.html").read_text()
    assert r.returncode == 1 and "<svg" in page and TIES in page and "<script" not in page
    assert "src=" not in page and "href=" not in page  # self-contained


def test_cli_explain(tmp_path, suite_dir, env):
    r = cli("explain", TIES, "--vectors", str(suite_dir), "--all-profiles", env=env, cwd=tmp_path)
    assert r.returncode == 0
    for text in ("op      quantize", "x: F32[2, 4]", "expected under test/a", "expected under test/b",
                 "codes: I8[2, 4]", "intermediates", "bits (s|exp|man): 0.5=0|01111110|" + "0" * 23):
        assert text in r.stdout, r.stdout
    # By default only the suite's default profile (the runner's default), and which others differ.
    r = cli("explain", TIES, "--vectors", str(suite_dir), env=env, cwd=tmp_path)
    assert "expected under test/a" in r.stdout and "expected under test/b" not in r.stdout
    assert "other profiles (--all-profiles): same expectation under none; different under test/b" in r.stdout
    r = cli("explain", TIES, "--vectors", str(suite_dir), "--profile", "test/b", env=env, cwd=tmp_path)
    assert "expected under test/b" in r.stdout and "expected under test/a" not in r.stdout
    assert cli("explain", TIES, "--vectors", str(suite_dir), "--profile", "x/y", env=env, cwd=tmp_path).returncode == 2
    assert cli("explain", "nope", "--vectors", str(suite_dir), env=env, cwd=tmp_path).returncode == 2


def test_cli_repro_writes_a_one_vector_suite_that_reproduces(tmp_path, suite_dir, lookup_cmd, env):
    backend = "subprocess:" + lookup_cmd("--answer", suites.B)
    r = cli("repro", TIES, "--backend", backend, "--vectors", str(suite_dir), "--out", "rep", env=env, cwd=tmp_path)
    assert r.returncode == 1 and "3 of 8 elements differ" in r.stdout
    command = r.stdout.strip().splitlines()[-1].strip()
    assert command.startswith("qconform run --backend ")
    args = __import__("shlex").split(command)[2:]
    again = cli("run", *args, env=env, cwd=tmp_path)
    assert again.returncode == 1 and f"FAILED (mismatch) {TIES}" in again.stdout
    manifest = json.loads((tmp_path / "rep" / "manifest.json").read_text())
    assert [v["alias"] for v in manifest["vectors"]] == [TIES]


def test_cli_delegates_coverage_and_mutants(tmp_path, env):
    r = cli("coverage", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "covered" in r.stdout
    # `mutants` judges every mutant on the whole suite (tests/suite/test_mutation_gate.py runs it in process): here
    # only that the command reaches its own parser.
    r = cli("mutants", "--help", env=env, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("usage: qconform mutants"), r.stdout + r.stderr
    assert "escapes the vectors of an op" in " ".join(r.stdout.split()), r.stdout


def test_default_suite_comes_from_the_environment(tmp_path, suite_dir, lookup_cmd, env):
    env = dict(env, QCONFORM_VECTORS=str(suite_dir))
    r = cli("run", "--backend", "subprocess:" + lookup_cmd(), env=env, cwd=tmp_path)
    assert r.returncode == 0 and "suite test (6 vectors," in r.stdout


def test_cli_profiles_lists_oracle_profiles_and_mutants(tmp_path, env):
    oracle = pytest.importorskip("oracle")
    r = cli("profiles", env=env, cwd=tmp_path)
    assert r.returncode == 0 and f"{oracle.DEFAULT_PROFILE} (default)" in r.stdout
    if "mutants" in r.stdout:
        assert "mutant:NAME" in r.stdout


def test_backend_that_cannot_start_under_xdist(tmp_path, env, suite_dir):
    r = sh([sys.executable, "-m", "pytest", "-q", "-n", "2", "--qc-backend", "subprocess:/nonexistent/x",
            "--qc-vectors", str(suite_dir)], tmp_path, env)
    assert r.returncode == 3 and "cannot start '/nonexistent/x'" in r.stdout + r.stderr
    assert "INTERNALERROR" not in r.stdout + r.stderr
