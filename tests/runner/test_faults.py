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
from suites import run

from conformance.backends import open_backend
from conformance.backends.python import PythonBackend
from conformance.compare import FAILED, PASSED
from conformance.report import failed, format_text
from conformance.runner import Runner
from conformance.vectors import VectorError, load_suite

TIES = "quantize/q8s/ties"


def cli(*args, env, cwd, timeout=60):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, env=env, timeout=timeout,
                          capture_output=True, text=True, check=False)


def report_of(suite_dir, *args, **kw):
    """A JSON report built in process (no CLI start-up) from the lookup backend with ``args``."""
    from lookup_backend import LookupBackend

    from conformance import report as rep
    suite = load_suite(suite_dir)
    backend = PythonBackend(LookupBackend(suite_dir, suites.A, *args))
    verdicts = list(Runner(suite, "given", backend=backend).start().run_all())
    return rep.build(verdicts, backend=backend.hello.to_json(), profile=suites.A, stale=[], strict=False,
                     suite={"name": suite.name, "vectors": len(suite.vectors), "digest": suite.digest},
                     started=time.time(), selected=len(suite.vectors))


def qconform(*args, capsys):
    """``qconform ARGS`` in process (for commands that do not start pytest): (exit status, stdout)."""
    from conformance.cli import main
    code = main(list(args))
    return code, capsys.readouterr().out


def manifest(d):
    return json.loads((d / "manifest.json").read_text())


def save(d, m):
    (d / "manifest.json").write_text(json.dumps(m))


def started_pids(pids, seconds: float) -> tuple[int, int]:
    """The backend's and its setsid helper's pids, once the hostile backend has written both (QC_TEST_PIDS)."""
    deadline = time.monotonic() + seconds
    while not (pids.exists() and pids.read_text().endswith("\n")) and time.monotonic() < deadline:
        time.sleep(0.05)
    backend, helper = map(int, pids.read_text().split())
    return backend, helper


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
    from lookup_backend import LookupBackend

    from conformance import compare
    real = compare.judge
    monkeypatch.setattr(compare, "judge", lambda vector, *a, **k: 1 / 0 if vector.alias == TIES else
                        real(vector, *a, **k))
    v = run(suite_dir, backend=PythonBackend(LookupBackend(suite_dir, suites.A)))
    assert (v[TIES].status, v[TIES].kind) == (FAILED, "runner error") and "ZeroDivisionError" in v[TIES].message
    assert len(v) == 6


def test_a_failing_diagnosis_keeps_the_verdicts_differences(suite_dir, monkeypatch):
    """A bug in the diagnosis (found by a newcomer's MXFP8 backend) must not turn a mismatch into a runner error
    that hides what differs: the verdict keeps its kind and differences, and says the diagnosis failed."""
    from lookup_backend import LookupBackend

    from conformance import diagnose
    from conformance.runner import DIAGNOSIS_FAILED

    def broken(*a, **k):
        raise ValueError("no round-up rule")
    monkeypatch.setattr(diagnose, "diagnose_vector", broken)
    v = run(suite_dir, backend=PythonBackend(LookupBackend(suite_dir, suites.B)), profile=suites.A)[TIES]
    assert (v.status, v.kind) == (FAILED, "mismatch") and "output 'codes'" in v.message, v.message
    assert DIAGNOSIS_FAILED in v.note and "ValueError: no round-up rule" in v.message


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


def test_report_missing_a_verdict_is_never_ok(tmp_path, suite_dir, capsys):
    from conformance import report as rep
    report = report_of(suite_dir)
    assert not failed(report) and report["run"] == {"selected": 6, "not_run": 0, "interrupted": False}
    verdicts = [rep.Verdict.from_json(v) for v in report["verdicts"][:-1]]  # one vector lost
    report = rep.build(verdicts, backend=report["backend"], profile=suites.A, suite=report["suite"], stale=[],
                       strict=False, started=time.time(), selected=6)
    assert report["run"]["not_run"] == 1 and failed(report) and "INCOMPLETE: 1 of 6" in format_text(report)
    rep.write(report, tmp_path / "r.json")
    assert qconform("report", str(tmp_path / "r.json"), capsys=capsys)[0] == 1


def deep_suite(d):
    (d / "manifest.json").write_text('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")


def huge_shape_shard(d):
    blob = raw_blob(json.dumps({"t": {"dtype": "F32", "shape": [0, 2 ** 40, 2 ** 40],
                                      "data_offsets": [0, 0]}}).encode())
    (d / "shard-000.safetensors").write_bytes(blob)
    m = manifest(d)
    m["shards"][0].update(bytes=len(blob), sha256=hashlib.sha256(blob).hexdigest())
    save(d, m)


@pytest.mark.parametrize("edit, fragment, through_the_cli", [
    (deep_suite, "manifest.json: not readable JSON", True),
    (huge_shape_shard, "shard-000.safetensors: not a valid safetensors shard", False),
])
def test_hostile_suite_is_a_named_error_exit_4(tmp_path, suite_dir, env, edit, fragment, through_the_cli):
    edit(suite_dir)
    with pytest.raises(VectorError, match=fragment):
        load_suite(suite_dir)
    if through_the_cli:  # once is enough: every VectorError takes the same way out
        r = cli("run", "--backend", "oracle", "--vectors", str(suite_dir), env=env, cwd=tmp_path)
        assert r.returncode == 4 and fragment in r.stderr and "INTERNALERROR" not in r.stdout + r.stderr, r.stderr


# ---- 7. the loader refuses what would make a suite lie; every report names its suite ---------------------

def vec(m, alias):
    return next(v for v in m["vectors"] if v["alias"] == alias)


def tolerance(alias, output, **tol):
    def edit(m):
        for e in vec(m, alias)["outcomes"]:
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


def test_every_report_names_the_suite_by_its_digest(tmp_path, suite_dir, lookup_cmd, env, capsys):
    digest = hashlib.sha256((suite_dir / "manifest.json").read_bytes()).hexdigest()
    r = cli("run", "--backend", "subprocess:" + lookup_cmd("--answer", suites.B), "--vectors", str(suite_dir),
            "--report", "r.json", env=env, cwd=tmp_path)
    assert f"manifest sha256 {digest}" in r.stdout
    assert json.loads((tmp_path / "r.json").read_text())["suite"]["digest"] == digest
    code, out = qconform("report", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html"), capsys=capsys)
    assert code == 1 and digest in out and digest in (tmp_path / "r.html").read_text()


# ---- 3. a backend that cannot be restarted costs one handshake timeout per attempt, K attempts at most ------

def test_restart_that_hangs_in_hello_gives_up_after_k_attempts(suite_dir, lookup_cmd, monkeypatch, tmp_path):
    monkeypatch.setenv("QC_TEST_MARKER", str(tmp_path / "started-once"))  # every later hello hangs
    r = Runner(load_suite(suite_dir), "subprocess:" + lookup_cmd("--fault", "crash:round_up/f16/basic"),
               timeout=2, hello_timeout=30).start()
    assert r.backend.hello_timeout == 30  # --hello-timeout / --qc-hello-timeout
    r.backend.hello_timeout = 0.5  # the first start may be slow on a loaded machine; the restarts hang anyway
    t = time.monotonic()
    v = {x.alias: x for x in r.run_all()}
    r.close()
    kinds = [(x.status, x.kind) for x in v.values()]
    assert kinds == [(FAILED, "crashed")] * 6
    restarts = [a for a, x in v.items() if "could not be restarted" in x.message]
    gave_up = [a for a, x in v.items() if "failed 3 restarts in a row" in x.message]
    assert len(restarts) == 3 and len(gave_up) == 2 and "timed out" not in v[gave_up[0]].message.split("last")[0]
    assert time.monotonic() - t < 12  # 3 handshakes of 0.5 s, not 60 s per remaining vector


def test_exit_75_after_a_reply_sends_the_unread_request_again(suite_dir, lookup_cmd):
    """A backend that answers, then exits 75 (burn's device lost): the next vector goes to a fresh process."""
    v = run(suite_dir, "subprocess:" + lookup_cmd("--fault", f"tempfail:{TIES}"), timeout=5)
    assert all(x.status == PASSED for x in v.values()), {a: x.message for a, x in v.items() if x.status != PASSED}
    resent = [a for a, x in v.items() if "sent again" in x.note]
    assert len(resent) == 1 and resent[0] != TIES


# ---- 6. a chatty stderr is drained in chunks, each line bounded ------------------------------------------

def test_chatty_stderr_costs_no_timeout(suite_dir, lookup_cmd):
    v = run(suite_dir, "subprocess:" + lookup_cmd("--fault", f"chatty:{TIES}"), timeout=3)
    assert v[TIES].status == PASSED, v[TIES].message


def test_stderr_line_without_newline_is_bounded():
    from conformance.backends.subprocess import STDERR_LINE_BYTES, _StderrTail
    r, w = os.pipe()
    tail = _StderrTail(os.fdopen(r, "rb", buffering=0))
    os.write(w, b"first line\n")
    for _ in range(64):
        os.write(w, b"y" * (1 << 16))  # 4 MiB, no newline, pipe still open
    deadline = time.monotonic() + 10
    while "more bytes" not in tail.text() and time.monotonic() < deadline:
        time.sleep(0.01)
    text = tail.text()
    assert text.startswith("first line\n") and len(text) < STDERR_LINE_BYTES + 100, len(text)
    assert len(tail.partial) <= STDERR_LINE_BYTES
    os.close(w)
    tail.thread.join(5)


# ---- 8. faults are attributed to the vector that caused them ---------------------------------------------

def test_short_stray_print_is_refused_at_once_with_a_hint(suite_dir, lookup_cmd):
    t = time.monotonic()
    v = run(suite_dir, "subprocess:" + lookup_cmd("--fault", f"shortprint:{TIES}"), timeout=8)
    assert time.monotonic() - t < 6  # not the full timeout
    assert v[TIES].kind == "protocol error" and "text on stdout?" in v[TIES].message, v[TIES].message
    assert v["quantize/q8s/plain"].status == PASSED


def test_late_duplicate_reply_does_not_blame_the_next_vector(suite_dir, lookup_cmd):
    v = run(suite_dir, "subprocess:" + lookup_cmd("--fault", f"duplicate:{TIES}"))
    nxt = v["quantize/q8s/plain"]
    assert v[TIES].status == PASSED and nxt.status == PASSED, nxt.message
    assert "late reply to earlier request" in nxt.note or "after its previous reply" in nxt.note, nxt.note
    assert all(x.status == PASSED for x in v.values())


def test_exited_backend_whose_grandchild_holds_stdout_is_crashed(suite_dir, lookup_cmd):
    t = time.monotonic()
    v = run(suite_dir, "subprocess:" + lookup_cmd("--fault", f"orphan:{TIES}"), timeout=10)
    assert v[TIES].kind == "crashed" and "held open by another process" in v[TIES].message, v[TIES].message
    assert time.monotonic() - t < 8
    assert v["quantize/q8s/plain"].status == PASSED


# ---- 10. a large frame costs about its size ----------------------------------------------------------------

def test_large_reply_costs_about_its_size_in_memory(suite_dir, lookup_cmd, monkeypatch):
    size = 32 << 20
    monkeypatch.setenv("QC_TEST_BIG", str(size))
    b = open_backend("subprocess:" + lookup_cmd("--fault", f"big:{TIES}"), timeout=20)
    v = load_suite(suite_dir).get(TIES)
    try:
        rss = resident()
        tracemalloc.start()
        out = b.run(v.op, v.params, v.inputs)
        peak = tracemalloc.get_traced_memory()[1]
        held = resident() - rss  # the reply's buffer (lazily committed anonymous memory: not traced)
    finally:
        tracemalloc.stop()
        b.close()
    assert out.outputs["big"].nbytes == size
    assert peak < 1.25 * size, f"peak {peak / size:.2f}x the frame size"  # was 4x before issue 13
    assert 0.9 * size < held < 1.25 * size, f"{held / size:.2f}x the frame size held"


def resident() -> int:
    """This process's resident memory now, in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ---- 4. interrupted runs: a partial report that says so, a non-zero exit, no process left -------------------

def _default_sigint():
    """The run sees Ctrl-C as a terminal's foreground job does. A shell starts background jobs with SIGINT
    ignored, and Python then installs no KeyboardInterrupt handler; pytest launched that way (e.g. `make test &`)
    would otherwise hand the ignore on and the run would wait out the hung vector's deadline instead."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig, extra", [(signal.SIGTERM, []), (signal.SIGINT, []),
                                        (signal.SIGTERM, ["--", "-q", "-n", "2"])], ids=["term", "int", "term-xdist"])
def test_interrupted_run_reports_what_was_not_run_and_leaves_no_process(tmp_path, suite_dir, lookup_cmd, env,
                                                                       sig, extra):
    pids = tmp_path / "pids"
    env = dict(env, QC_TEST_PIDS=str(pids))
    p = subprocess.Popen([sys.executable, "-m", "conformance.cli", "run", "--backend",
                          "subprocess:" + lookup_cmd("--fault", f"setsid:{TIES}"), "--vectors", str(suite_dir),
                          "--report", "r.json", *extra], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, restore_signals=True, preexec_fn=_default_sigint)
    try:
        backend, helper = started_pids(pids, 60)
        assert alive(backend) and alive(helper)
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode not in (0, None), out + err
    run_ = json.loads((tmp_path / "r.json").read_text())["run"]
    assert run_["interrupted"] and run_["selected"] == 6 and run_["not_run"] >= 1
    assert f"INTERRUPTED: {run_['not_run']} of 6 selected vectors not run" in out
    if not extra:  # in order, one backend: the hung vector and the 4 after it
        assert run_["not_run"] == 5 and out.rstrip().endswith("INTERRUPTED")
    r = cli("report", "r.json", env=env, cwd=tmp_path)
    assert r.returncode == 1 and "INTERRUPTED" in r.stdout
    deadline = time.monotonic() + 5
    while (alive(backend) or alive(helper)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(backend) and not alive(helper)  # the helper had left the backend's session


def test_a_normal_run_leaves_no_setsid_helper(tmp_path, suite_dir, lookup_cmd, monkeypatch):
    """The backend exits on the run's ``bye``; the helper it started in its own session goes with it."""
    pids = tmp_path / "pids"
    monkeypatch.setenv("QC_TEST_PIDS", str(pids))
    v = run(suite_dir, "subprocess:" + lookup_cmd("--fault", f"helper:{TIES}"))
    assert all(x.status == PASSED for x in v.values())
    backend, helper = map(int, pids.read_text().split())
    deadline = time.monotonic() + 5
    while (alive(backend) or alive(helper)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(backend) and not alive(helper)


# ---- 9. backend text reaches a terminal without its control sequences; HTML escapes every field ----------

UNSAFE = ("\x1b", "\x07", "\r", "\u202e")


def test_escape_sequences_from_a_backend_never_reach_the_terminal(tmp_path, suite_dir, lookup_cmd, env, capsys):
    spec = "subprocess:" + lookup_cmd("--fault", f"escapes:{TIES}", "--fault", "escapes-crash:quantize/q8s/plain")
    plain = cli("run", "--backend", spec, "--vectors", str(suite_dir), "--report", "r.json", env=env, cwd=tmp_path)
    verbose = cli("run", "--backend", spec, "--vectors", str(suite_dir), "--", "-q", env=env, cwd=tmp_path)
    shown = subprocess.CompletedProcess([], *qconform("report", str(tmp_path / "r.json"), capsys=capsys), "")
    for r in (plain, verbose, shown):
        assert r.returncode == 1 and "stderr wipes the screen" in r.stdout and "hidden" in r.stdout, r.stdout
        assert not [c for c in UNSAFE if c in r.stdout + r.stderr], r.stdout
        assert "\\x1b[2J" in r.stdout and "\\u202e" in r.stdout  # shown, as visible escapes
    raw = json.loads((tmp_path / "r.json").read_text())  # the JSON record keeps the bytes as they were
    assert any("\x1b[2K" in v["message"] for v in raw["verdicts"])


def poison(x, payload="<script>alert(1)</script>"):
    """Every string of a report replaced by markup, and every number by a string of markup."""
    if isinstance(x, dict):
        return {k: poison(v, payload) for k, v in x.items()}
    if isinstance(x, list):
        return [poison(v, payload) for v in x]
    if isinstance(x, bool) or x is None:
        return x
    return payload


def test_every_html_field_is_escaped(suite_dir):
    from conformance.report.html import render
    report = report_of(suite_dir, suites.B, (), {"values": ["Q8S"]})  # failures and a not-applicable vector
    for status in ("failed", "not applicable"):  # keep a failure and an n/a row so every section renders
        next(v for v in report["verdicts"] if v["status"] == status)["status"] = status
    hostile = poison(report)
    for v, orig in zip(hostile["verdicts"], report["verdicts"], strict=True):
        v["status"] = orig["status"]
    for table in ("by_op", "by_cell"):  # names of rows are strings too
        hostile["summary"][table] = {"<script>alert(1)</script>" + k: c for k, c in hostile["summary"][table].items()}
    hostile["expectations"] = {"unmatched": ["<script>x</script>"], "xpassed": ["<img src=x onerror=alert(1)>"]}
    page = render(hostile)
    assert "<script" not in page.lower() and "<img" not in page.lower()
    report["suite"]["vectors"] = report["duration_s"] = "<script>alert(2)</script>"  # numbers in a sane report
    assert "<script" not in render(report).lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
