"""The fault-injection matrix of issue 13 (docs/reliability.md): hostile backends as real processes, hostile
suites on disk, and interrupted runs. Each fault costs at most the vector in flight, is recorded with its kind,
and a run with a missing verdict never says OK. Everything is bounded: timeouts of a second or two, loopback
only, child processes checked to be gone."""

import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import time
import tracemalloc

import pytest
import suites
from lookup_backend import raw_blob

from conformance.backends import open_backend
from conformance.backends.python import PythonBackend
from conformance.compare import FAILED, PASSED
from conformance.report import failed, format_text
from conformance.runner import Runner
from conformance.vectors import VectorError, load_suite

TIES = "quantize/q8s/ties"


def run(suite_dir, spec=None, backend=None, **kw):
    r = Runner(load_suite(suite_dir), spec or "given", backend=backend, **kw).start()
    try:
        return {v.alias: v for v in r.run_all()}
    finally:
        r.close()


def cli(*args, env, cwd, timeout=60):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, env=env, timeout=timeout,
                          capture_output=True, text=True, check=False)


def manifest(d):
    return json.loads((d / "manifest.json").read_text())


def save(d, m):
    (d / "manifest.json").write_text(json.dumps(m))


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead, merely not yet reaped
    except FileNotFoundError:
        return False


# ---- 1. hostile content: no vector vanishes, no INTERNALERROR --------------------------------------------

@pytest.mark.parametrize("fault, fragment", [
    ("hugeshape", "not representable"),
    ("deepmeta", "is not JSON"),
    ("deepheader", "header is not JSON"),
])
def test_hostile_reply_costs_exactly_that_vector(suite_dir, lookup_cmd, fault, fragment):
    v = run(suite_dir, "subprocess:" + lookup_cmd("--fault", f"{fault}:{TIES}"))
    assert (v[TIES].status, v[TIES].kind) == (FAILED, "protocol error") and fragment in v[TIES].message
    assert {x.status for a, x in v.items() if a != TIES} == {PASSED}


def test_backend_answering_only_hostile_replies_fails_the_run(tmp_path, suite_dir, lookup_cmd, env):
    r = cli("run", "--backend", "subprocess:" + lookup_cmd("--fault", "hugeshape:*"), "--vectors", str(suite_dir),
            "--report", "r.json", env=env, cwd=tmp_path)
    report = json.loads((tmp_path / "r.json").read_text())
    assert r.returncode == 1 and report["summary"]["total"][FAILED] == 6, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("FAILED")


def test_an_exception_inside_the_runner_is_a_verdict(suite_dir, monkeypatch):
    from conformance import compare
    from lookup_backend import LookupBackend
    real = compare.judge
    monkeypatch.setattr(compare, "judge", lambda vector, *a, **k: 1 / 0 if vector.alias == TIES else
                        real(vector, *a, **k))
    v = run(suite_dir, backend=PythonBackend(LookupBackend(suite_dir, suites.A)))
    assert (v[TIES].status, v[TIES].kind) == (FAILED, "runner error") and "ZeroDivisionError" in v[TIES].message
    assert len(v) == 6


def test_an_item_that_errors_outside_the_runner_never_reads_ok(tmp_path, suite_dir, lookup_cmd, env):
    """A vector without a verdict (here: its pytest setup raises) is recorded, and the summary is FAILED."""
    (tmp_path / "breaker.py").write_text(
        "def pytest_runtest_setup(item):\n    if 'ties' in item.nodeid:\n        raise RuntimeError('boom')\n")
    env = dict(env, PYTHONPATH=f"{tmp_path}{os.pathsep}{env['PYTHONPATH']}")
    r = cli("run", "--backend", "subprocess:" + lookup_cmd(), "--vectors", str(suite_dir), "--report", "r.json",
            "--", "-p", "breaker", env=env, cwd=tmp_path)
    report = json.loads((tmp_path / "r.json").read_text())
    lost = [v for v in report["verdicts"] if v["alias"] == TIES]
    assert r.returncode == 1 and lost and lost[0]["kind"] == "runner error" and "boom" in lost[0]["message"]
    assert len(report["verdicts"]) == 6 and failed(report)


def test_report_missing_a_verdict_is_never_ok(tmp_path, suite_dir, lookup_cmd, env):
    cli("run", "--backend", "subprocess:" + lookup_cmd(), "--vectors", str(suite_dir), "--report", "r.json",
        env=env, cwd=tmp_path)
    report = json.loads((tmp_path / "r.json").read_text())
    assert not failed(report) and report["run"] == {"selected": 6, "not_run": 0, "interrupted": False}
    report["verdicts"].pop()
    report["run"]["not_run"] = 1  # as a run that lost a vector would have written it
    (tmp_path / "r.json").write_text(json.dumps(report))
    assert failed(report) and "INCOMPLETE: 1 of 6" in format_text(report)
    assert cli("report", "r.json", env=env, cwd=tmp_path).returncode == 1


def deep_suite(d):
    (d / "manifest.json").write_text('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")


def huge_shape_shard(d):
    blob = raw_blob(json.dumps({"t": {"dtype": "F32", "shape": [0, 2 ** 40, 2 ** 40],
                                      "data_offsets": [0, 0]}}).encode())
    (d / "shard-000.safetensors").write_bytes(blob)
    m = manifest(d)
    m["shards"][0].update(bytes=len(blob), sha256=hashlib.sha256(blob).hexdigest())
    save(d, m)


@pytest.mark.parametrize("edit, fragment", [
    (deep_suite, "manifest.json: not readable JSON"),
    (huge_shape_shard, "shard-000.safetensors: not a valid safetensors shard"),
])
def test_hostile_suite_is_a_named_error_exit_4(tmp_path, suite_dir, env, edit, fragment):
    edit(suite_dir)
    with pytest.raises(VectorError, match=fragment):
        load_suite(suite_dir)
    r = cli("run", "--backend", "oracle", "--vectors", str(suite_dir), env=env, cwd=tmp_path)
    assert r.returncode == 4 and fragment in r.stderr and "INTERNALERROR" not in r.stdout + r.stderr, r.stderr


# ---- 7. the loader refuses what would make a suite lie; every report names its suite ---------------------

def vec(m, alias):
    return next(v for v in m["vectors"] if v["alias"] == alias)


def tolerance(alias, output, **tol):
    def edit(m):
        for e in vec(m, alias)["expected"].values():
            e["compare"] = {output: {"kind": "allclose", "rtol": 0, "atol": 0, "why": "x" * 20, **tol}}
    return edit


@pytest.mark.parametrize("edit, fragment", [
    (lambda m: vec(m, TIES).update(tags="value:Q8S"), "'tags' must be a list of strings"),
    (lambda m: vec(m, TIES).update(tags=[1]), "'tags' must be a list of strings"),
    (lambda m: vec(m, TIES).update(spec={"a": 1}), "'spec' must be a list of strings"),
    (lambda m: vec(m, TIES).update(reason=["r"]), "'reason' must be a string"),
    (lambda m: m["shards"][0].update(file="shard-000.safetensors\x00.txt"), "not a plain file name"),
    (tolerance("round_up/f16/basic", "rounded", atol=math.inf), "in [0, 1024], got inf"),
    (tolerance("round_up/f16/basic", "rounded", atol=-1e-9), "got -1e-09"),
    (tolerance("round_up/f16/basic", "rounded", rtol=math.nan), "'rtol' in [0, 0.5], got nan"),
    (tolerance("round_up/f16/basic", "rounded", rtol=1.0), "'rtol' in [0, 0.5]"),
    (tolerance(TIES, "codes", atol=1), "float output tensor only"),
])
def test_loader_refuses(suite_dir, edit, fragment):
    m = manifest(suite_dir)
    edit(m)
    save(suite_dir, m)
    with pytest.raises(VectorError, match=None) as e:
        load_suite(suite_dir)
    assert fragment in str(e.value), str(e.value)


def test_tolerances_inside_the_bounds_load(suite_dir):
    m = manifest(suite_dir)
    tolerance("round_up/f16/basic", "rounded", rtol=0.5, atol=1024)(m)
    save(suite_dir, m)
    assert load_suite(suite_dir).get("round_up/f16/basic").expected[suites.A].compare["rounded"]["atol"] == 1024


def test_every_report_names_the_suite_by_its_digest(tmp_path, suite_dir, lookup_cmd, env):
    digest = hashlib.sha256((suite_dir / "manifest.json").read_bytes()).hexdigest()
    r = cli("run", "--backend", "subprocess:" + lookup_cmd("--answer", suites.B), "--vectors", str(suite_dir),
            "--report", "r.json", env=env, cwd=tmp_path)
    assert f"manifest sha256 {digest}" in r.stdout
    assert json.loads((tmp_path / "r.json").read_text())["suite"]["digest"] == digest
    r = cli("report", "r.json", "--html", "r.html", env=env, cwd=tmp_path)
    assert digest in r.stdout and digest in (tmp_path / "r.html").read_text()
