"""The runner with the real oracle: the oracle backend, the example subprocess backend, and a mutant whose
report must name the right diagnosis. The suite is computed here from the oracle for every profile; what is
checked is the runner's verdicts and diagnosis, which the oracle does not compute."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

oracle = pytest.importorskip("oracle")
mutants = pytest.importorskip("conformance.mutants")

from conformance.vectors import write_suite

EXAMPLE = Path(__file__).parents[2] / "examples" / "subprocess_backend.py"
Q8S = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}


def expectations(op, params, inputs):
    out = {}
    for p in oracle.profiles():
        try:
            r = oracle.run(op, params, inputs, profile=p)
            out[p] = {"outputs": {k: v for k, v in r.items() if isinstance(v, np.ndarray)},
                      "values": {k: v for k, v in r.items() if not isinstance(v, np.ndarray)}}
        except oracle.BurnPanic as e:
            out[p] = {"error": {"code": e.code, "message": e.message}}
    return out


@pytest.fixture(scope="module")
def oracle_suite(tmp_path_factory):
    specs = [("quantize_dynamic/q8s/ties", "quantize_dynamic", {"scheme": Q8S},
              {"x": np.array([0.5, 1.5, 2.5, -2.5, -3.5, 127, 4.25, -0.5], np.float32)}),
             ("quantize_dynamic/q8s/ties-2", "quantize_dynamic", {"scheme": Q8S},
              {"x": np.array([[10.5, -6.5], [127, 0]], np.float32)}),
             ("quantize_dynamic/q8s/no-ties", "quantize_dynamic", {"scheme": Q8S},
              {"x": np.array([1.0, -2.0, 127.0, 3.25], np.float32)}),
             ("round_up/f16", "round_up", {"dtype": "F16"}, {"scales": np.array([0.1, 1.0, 3.3], np.float32)})]
    vectors = [{"alias": a, "op": op, "params": p, "inputs": i, "tags": [f"op:{op}"],
                "expected": expectations(op, p, i)} for a, op, p, i in specs]
    folder = tmp_path_factory.mktemp("oracle-suite")
    write_suite(folder, vectors, suite="oracle-test", profiles=list(oracle.profiles()))
    return folder


def qconform(*args, cwd):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], check=False, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_oracle_backend_conforms_to_every_profile(oracle_suite, tmp_path):
    for profile in oracle.profiles():
        r = qconform("run", "--backend", f"oracle:{profile}", "--vectors", str(oracle_suite), cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr


def test_mutant_backend_report_names_the_mutant(oracle_suite, tmp_path):
    r = qconform("run", "--backend", "mutant:ties-even", "--vectors", str(oracle_suite), "--report", "r.json",
                 cwd=tmp_path)
    assert r.returncode == 1
    report = json.loads((tmp_path / "r.json").read_text())
    failed = {v["alias"] for v in report["verdicts"] if v["status"] == "failed"}
    assert failed == {"quantize_dynamic/q8s/ties", "quantize_dynamic/q8s/ties-2"}
    full = {d.get("candidate") for d in report["diagnosis"] if d.get("explains") == d.get("of") == 2}
    assert "mutant ties-even" in full
    assert "matches mutant ties-even: ties rounded to even instead of away from zero on 2/2" in r.stdout
    assert "mutant reciprocal" not in full


def test_example_subprocess_backend(oracle_suite, tmp_path):
    spec = f"subprocess:{sys.executable} {EXAMPLE}"
    r = qconform("run", "--backend", spec, "--vectors", str(oracle_suite), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    cubecl = f"{spec} --profile burn-0.22.0-pre.3/cubecl"
    r = qconform("run", "--backend", cubecl, "--vectors", str(oracle_suite),
                 "--profile", oracle.DEFAULT_PROFILE, cwd=tmp_path)
    assert r.returncode == 1
    assert "matches profile burn-0.22.0-pre.3/cubecl" in r.stdout
