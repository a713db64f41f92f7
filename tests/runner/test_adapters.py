"""Each adapter end to end against real processes and a real HTTP server on 127.0.0.1, including backends
that crash mid-run, hang, and answer with wrong shapes, dtypes or garbage frames."""

import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import suites
from lookup_backend import LookupBackend
from suites import run

from conformance.backends import BackendStartError, open_backend
from conformance.backends.python import PythonBackend
from conformance.compare import FAILED, PASSED
from conformance.runner import Runner, RunnerError
from conformance.vectors import load_suite


def all_pass(verdicts):
    return {a: (v.status, v.kind) for a, v in verdicts.items() if v.status != PASSED} == {}


# ---- python (in process) --------------------------------------------------------------------------------

def test_python_backend_passes_and_gets_the_loaders_arrays_without_copies(suite_dir):
    lookup = LookupBackend(suite_dir, suites.A)
    seen = []
    real = lookup.run
    lookup.run = lambda op, params, inputs: seen.append(inputs) or real(op, params, inputs)
    r = Runner(load_suite(suite_dir), "given", backend=PythonBackend(lookup)).start()
    verdicts = {v.alias: v for v in r.run_all()}
    assert all_pass(verdicts)
    x = r.suite.get("quantize/q8s/ties").inputs["x"]
    assert any(i.get("x") is x for i in seen)


def test_python_spec_with_a_factory(suite_dir, monkeypatch):
    monkeypatch.setenv("QC_TEST_SUITE", str(suite_dir))
    monkeypatch.setenv("QC_TEST_ANSWER", suites.B)
    v = run(suite_dir, "python:lookup_backend:from_env")
    assert v["quantize/q8s/ties"].kind == "mismatch" and v["round_up/f16/basic"].status == PASSED


def test_python_backend_that_raises_is_a_crashed_vector(suite_dir):
    lookup = LookupBackend(suite_dir, suites.A, faults=["raise:quantize/q8s/plain"])
    v = run(suite_dir, backend=PythonBackend(lookup))
    assert v["quantize/q8s/plain"].kind == "crashed" and "RuntimeError: boom" in v["quantize/q8s/plain"].message
    assert v["round_up/f16/basic"].status == PASSED


def test_python_spec_errors():
    with pytest.raises(BackendStartError, match="module:attribute"):
        open_backend("python:nocolon")
    with pytest.raises(BackendStartError, match="No module named"):
        open_backend("python:no_such_module_xyz:obj")
    with pytest.raises(BackendStartError, match="unknown backend spec"):
        open_backend("carrier-pigeon:x")


# ---- subprocess ------------------------------------------------------------------------------------------

def test_subprocess_backend_passes(suite_dir, lookup_cmd):
    assert all_pass(run(suite_dir, "subprocess:" + lookup_cmd()))


def test_subprocess_backend_answering_another_profile_fails_with_details(suite_dir, lookup_cmd):
    v = run(suite_dir, "subprocess:" + lookup_cmd("--answer", suites.B))
    assert v["quantize/q8s/ties"].kind == "mismatch"
    assert v["quantize/q8s/global-error"].kind == "missing error"
    assert {a for a, x in v.items() if x.status == FAILED} == {"quantize/q8s/ties", "quantize/q8s/global-error"}


def test_crash_mid_run_records_the_vector_and_goes_on(suite_dir, lookup_cmd):
    v = run(suite_dir, "subprocess:" + lookup_cmd("--fault", "crash:quantize/q8s/plain"))
    crashed = v["quantize/q8s/plain"]
    assert crashed.kind == "crashed" and "exit status 3" in crashed.message
    assert "about to crash!" in crashed.details["stderr"]  # stderr captured
    rest = {a: x.status for a, x in v.items() if a != "quantize/q8s/plain"}
    assert set(rest.values()) == {PASSED}  # restarted, nothing lost


def test_hang_times_out_and_the_backend_is_restarted(suite_dir, lookup_cmd):
    t = time.monotonic()
    v = run(suite_dir, "subprocess:" + lookup_cmd("--fault", "hang:round_up/f16/basic"), timeout=1.0)
    assert time.monotonic() - t < 15
    assert v["round_up/f16/basic"].kind == "timed out"
    assert v["quantize/q8s/ties"].status == PASSED


@pytest.mark.parametrize("fault, kind, fragment", [
    ("garbage", "protocol error", "not a safetensors message"),
    ("badframe", "protocol error", "exceeds the 1 GiB limit"),
    ("wrongid", "protocol error", "does not echo"),
    ("noise", "protocol error", "text on stdout? it carries frames only"),
    ("shape", "mismatch", "expected I8[2, 4], got I8[7]"),
    ("dtype", "mismatch", "got F16[2, 4]"),
])
def test_misbehaving_replies(suite_dir, lookup_cmd, fault, kind, fragment):
    v = run(suite_dir, "subprocess:" + lookup_cmd("--fault", f"{fault}:quantize/q8s/ties"))
    bad = v["quantize/q8s/ties"]
    assert bad.status == FAILED and bad.kind == kind and fragment in bad.message, bad.message
    assert v["scheme_info/q8s"].status == PASSED  # comes after: the run went on


def test_backend_that_dies_before_the_handshake_is_a_clear_start_error(tmp_path, suite_dir):
    with pytest.raises(RunnerError, match="(?s)failed its handshake.*stderr:\n.*dying"):
        run(suite_dir, f"subprocess:{sys.executable} -c \"import sys; print('dying', file=sys.stderr)\"")
    with pytest.raises(RunnerError, match="cannot start"):
        run(suite_dir, "subprocess:/nonexistent/backend")


def test_claimed_profile_unknown_to_the_suite(suite_dir, lookup_cmd):
    with pytest.raises(RunnerError, match="claims profile 'other/x'"):
        run(suite_dir, "subprocess:" + lookup_cmd(claim="other/x"))
    answers_a = "subprocess:" + lookup_cmd("--answer", suites.A, claim="other/x")
    assert all_pass(run(suite_dir, answers_a, profile=suites.A))


def test_capabilities_make_vectors_not_applicable(suite_dir, lookup_cmd):
    caps = '{"values": ["Q8S"], "ops": ["quantize", "round_up", "scheme_info"]}'
    v = run(suite_dir, "subprocess:" + lookup_cmd("--caps", caps))
    na = v["dequantize/q4s/packed-bf16"]
    assert na.status == "not applicable" and "ops dequantize" in na.note
    assert sum(x.status == "not applicable" for x in v.values()) == 1


# ---- http ------------------------------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(lookup_cmd, env):
    """`qconform serve` wrapping a subprocess backend, on loopback; yields its URL."""
    procs = []

    def start(*extra):
        port = free_port()
        p = subprocess.Popen([sys.executable, "-m", "conformance.cli", "serve", "--backend",
                              "subprocess:" + lookup_cmd(*extra), "--port", str(port), "--timeout", "1"],
                             env=env, stderr=subprocess.PIPE)
        procs.append(p)
        url = f"http://127.0.0.1:{port}"
        import httpx
        for _ in range(100):  # bounded wait for the server to listen
            try:
                if httpx.get(url + "/v1/health", timeout=1).text == "ok":
                    return url
            except httpx.HTTPError:
                time.sleep(0.1)
        raise AssertionError(p.stderr.read().decode() if p.poll() is not None else "server did not start")

    yield start
    for p in procs:
        p.terminate()
        p.wait(timeout=10)


def test_http_backend_passes(suite_dir, server):
    assert all_pass(run(suite_dir, server()))


def test_http_faults_of_the_wrapped_backend_keep_their_kind(suite_dir, server):
    url = server("--fault", "crash:quantize/q8s/plain", "--fault", "hang:round_up/f16/basic")
    v = run(suite_dir, url)
    assert v["quantize/q8s/plain"].kind == "crashed" and "about to crash!" in v["quantize/q8s/plain"].message
    assert v["round_up/f16/basic"].kind == "timed out"
    assert v["scheme_info/q8s"].status == PASSED


def test_http_response_size_is_bounded(suite_dir, server):
    from conformance.backends.http import HttpBackend
    b = HttpBackend(server())
    b.max_response = 64
    s = load_suite(suite_dir)
    v = s.get("quantize/q8s/ties")
    fault = b.run(v.op, v.params, v.inputs)
    assert fault.kind == "protocol error" and "exceeds 64" in fault.detail
    b.close()


def test_http_server_rejects_garbage_and_serves_openapi(server):
    import httpx
    url = server()
    r = httpx.post(url + "/v1/run", content=b"\x00garbage")
    assert r.status_code == 400 and "not a safetensors message" in r.text
    spec = httpx.get(url + "/v1/openapi.json").json()
    assert {"/v1/hello", "/v1/run", "/v1/health"} <= set(spec["paths"])


def test_http_to_nothing_is_a_start_error():
    with pytest.raises(BackendStartError, match="handshake failed"):
        open_backend(f"http://127.0.0.1:{free_port()}", timeout=2)


def test_http_backend_that_dies_mid_run(suite_dir, lookup_cmd, env):
    """The whole server goes away: later vectors are 'crashed', nothing already judged is lost."""
    from conformance.backends.http import HttpBackend
    port = free_port()
    p = subprocess.Popen([sys.executable, "-m", "conformance.cli", "serve", "--backend",
                          "subprocess:" + lookup_cmd(), "--port", str(port)], env=env, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                b = HttpBackend(f"http://127.0.0.1:{port}", timeout=2)
                break
            except BackendStartError:
                time.sleep(0.1)
        s = load_suite(suite_dir)
        v = s.vectors[0]
        assert isinstance(b.run(v.op, v.params, v.inputs).outputs, dict)
        p.terminate()
        p.wait(timeout=10)
        assert b.run(v.op, v.params, v.inputs).kind == "crashed"
    finally:
        p.kill()
        p.wait()


def test_outputs_survive_the_wire_bit_for_bit(suite_dir, lookup_cmd):
    b = open_backend("subprocess:" + lookup_cmd())
    v = load_suite(suite_dir).get("dequantize/q4s/packed-bf16")
    out = b.run(v.op, v.params, v.inputs).outputs["x"]
    b.close()
    want = v.expected[suites.A].outputs["x"]
    assert out.dtype == want.dtype and np.array_equal(out.view(np.uint16), want.view(np.uint16))
