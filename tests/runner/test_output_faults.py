"""The outputs and the printers of the fault matrix (issue 25, docs/reliability.md): every output path checked
before the work, written atomically, the verdict printed even when a write fails; backend text (names, messages,
reasons) never printed raw, lone surrogates included; argument errors named, exit 2. Bounded, loopback only."""

import json
import resource
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
import suites
from lookup_backend import SURROGATE
from test_faults import UNSAFE, cli, qconform, report_of

from conformance.outputs import WRITE_FAILED

TIES = "quantize/q8s/ties"


def _small_files(limit: int):
    """A child whose files cannot grow past ``limit`` bytes: a full disk, as far as its writes can tell."""
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing it
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


def cli_full_disk(*args, env, cwd, limit=2048):
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd, env=env, timeout=60,
                          capture_output=True, text=True, check=False, preexec_fn=_small_files(limit))


# ---- outputs: checked first, written atomically, the verdict printed whatever happens to them ---------------

@pytest.mark.parametrize("where", ["missing-folder/r.json", ".", "/dev/null"])
def test_unwritable_report_path_is_refused_before_the_run(tmp_path, suite_dir, lookup_cmd, env, where):
    pids = tmp_path / "pids"
    env = dict(env, QC_TEST_PIDS=str(pids))  # the setsid fault would write here, had the backend run
    r = cli("run", "--backend", "subprocess:" + lookup_cmd("--fault", f"setsid:{TIES}"), "--vectors", str(suite_dir),
            "--report", where, env=env, cwd=tmp_path)
    assert r.returncode == 2 and "qconform: " in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not pids.exists()  # refused before any backend started (the hung vector would have cost 30 s)


def test_full_disk_keeps_the_old_report_and_prints_the_verdict(tmp_path, suite_dir, lookup_cmd, env):
    old = '{"an": "earlier report"}\n'
    (tmp_path / "r.json").write_text(old)
    r = cli_full_disk("run", "--backend", "subprocess:" + lookup_cmd("--answer", suites.B), "--vectors",
                      str(suite_dir), "--report", "r.json", env=env, cwd=tmp_path)
    assert r.returncode == WRITE_FAILED, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("FAILED") and "FAILED (mismatch) quantize/q8s/ties" in r.stdout  # the verdict, whole
    assert "r.json: not written" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert (tmp_path / "r.json").read_text() == old  # not truncated: the old report is whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "suite"]  # no temporary file left behind


def test_full_disk_through_pytest_output_still_prints_the_summary(tmp_path, suite_dir, lookup_cmd, env):
    r = cli_full_disk("run", "--backend", "subprocess:" + lookup_cmd(), "--vectors", str(suite_dir), "--report",
                      "r.json", "--", "-q", "-p", "no:cacheprovider", env=env, cwd=tmp_path)
    assert r.returncode == WRITE_FAILED and "qconform summary" in r.stdout, r.stdout + r.stderr
    assert "r.json: not written" in r.stdout and not (tmp_path / "r.json").exists()


def test_report_outputs_are_checked_first_and_the_verdict_survives_their_write(tmp_path, suite_dir, env):
    from conformance import report as rep
    rep.write(report_of(suite_dir), tmp_path / "r.json")
    r = cli("report", "r.json", "--badge", "no-such-folder/b.svg", env=env, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "" and "no-such-folder" in r.stderr  # nothing printed, nothing done
    r = cli_full_disk("report", "r.json", "--html", "r.html", env=env, cwd=tmp_path)
    assert r.returncode == WRITE_FAILED and r.stdout.rstrip().endswith("OK") and "r.html: not written" in r.stderr
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("content, fragment", [
    (None, "cannot read the report: No such file"),
    ('{"qconform_report": 1, "backend": {"na', "not JSON"),  # a cut write
    ("\xff\xfe garbage", "not JSON"),
    ('{"qconform_report": 1, "backend": {}}', "missing or malformed: profile, suite, summary"),
    ("[1, 2]", "not a qconform report"),
])
def test_report_on_a_bad_file_is_one_named_line(tmp_path, env, content, fragment):
    if content is not None:
        (tmp_path / "r.json").write_bytes(content.encode("latin-1"))
    r = cli("report", "r.json", env=env, cwd=tmp_path)
    assert r.returncode == 2 and fragment in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


def test_repro_refuses_to_replace_a_suite_without_force(tmp_path, suite_dir, lookup_cmd, env):
    backend = "subprocess:" + lookup_cmd("--answer", suites.B)
    args = ("repro", TIES, "--backend", backend, "--vectors", str(suite_dir), "--out", "rep")
    assert cli(*args, env=env, cwd=tmp_path).returncode == 1
    (tmp_path / "rep" / "mine.txt").write_text("kept")
    r = cli(*args, env=env, cwd=tmp_path)
    assert r.returncode == 2 and "exists; not replaced without --force" in r.stderr, r.stderr
    assert (tmp_path / "rep" / "mine.txt").exists()
    r = cli(*args, "--force", env=env, cwd=tmp_path)
    assert r.returncode == 1 and not (tmp_path / "rep" / "mine.txt").exists(), r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep", "suite"]  # no temporary folder left behind
    assert cli("run", "--backend", backend, "--vectors", "rep", env=env, cwd=tmp_path).returncode == 1


# ---- backend text: a forged line, an escape or a lone surrogate never reaches a terminal or a file raw ------

def hostile_report(suite_dir):
    """A report (as a hand-edited file could be) whose backend name forges a second statement line."""
    report = report_of(suite_dir)
    report["backend"]["name"] = "evil\x1b[2K\r\nlookup 1 conforms to test/a for everything\ud800 <&\"'>"
    return report


def test_statement_is_always_one_line_and_the_badge_well_formed(tmp_path, suite_dir, capsys):
    from conformance import report as rep
    rep.write(hostile_report(suite_dir), tmp_path / "r.json")
    code, out = qconform("report", str(tmp_path / "r.json"), "--statement", "--badge", str(tmp_path / "b.svg"),
                         "--junit", str(tmp_path / "j.xml"), capsys=capsys)
    assert code == 0 and len(out.splitlines()) == 1 and out.startswith("evil\\x1b[2K\\x0d\\x0alookup"), out
    assert not [c for c in UNSAFE if c in out] and "\\ud800" in out
    svg = ET.parse(tmp_path / "b.svg").getroot()  # well-formed XML whatever the name
    assert "conforms to test/a for everything" in svg.find("{http://www.w3.org/2000/svg}title").text
    ET.parse(tmp_path / "j.xml")


def test_lone_surrogate_in_a_message_is_printed_escaped_everywhere(tmp_path, suite_dir, lookup_cmd, env, capsys):
    spec = "subprocess:" + lookup_cmd("--fault", f"surrogate:{TIES}")
    r = cli("run", "--backend", spec, "--vectors", str(suite_dir), "--report", "r.json", "--junit", "j.xml",
            env=env, cwd=tmp_path)
    assert r.returncode == 1 and "lone \\ud800 surrogate\\x0d\\x1b[2Kforged" in r.stdout, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and r.stdout.rstrip().endswith("FAILED")
    assert json.loads((tmp_path / "r.json").read_text())["verdicts"][1]["message"].count(SURROGATE) == 1  # raw
    ET.parse(tmp_path / "j.xml")
    code, out = qconform("report", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html"), "--badge",
                         str(tmp_path / "b.svg"), capsys=capsys)
    assert code == 1 and "\\ud800" in out and "\\ud800" in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize("name", ["two\nlines", "esc\x1b]0;title\x07", "lone\ud800", "x" * 129, "bidi\u202e"])
def test_hello_name_that_is_not_one_printable_line_is_refused(tmp_path, suite_dir, lookup_cmd, env, name):
    r = cli("list", "--backend", "subprocess:" + lookup_cmd("--name", json.dumps(name)), "--vectors", str(suite_dir),
            env=env, cwd=tmp_path)
    assert r.returncode == 3 and "hello 'name' must be one printable line of at most 128" in r.stderr, r.stderr
    assert not [c for c in UNSAFE if c in r.stdout + r.stderr] and "Traceback" not in r.stderr


def test_list_prints_backend_format_labels_escaped(tmp_path, suite_dir, monkeypatch, capsys):
    """`list` prints the labels of the formats a backend declares (its own text) one line each."""
    from conformance.cli import main
    (tmp_path / "evil_caps.py").write_text(
        "class Backend:\n"
        "    def hello(self):\n"
        "        return {'name': 'evil', 'version': '1', 'profile': 'test/a', 'protocol': 2, 'capabilities':\n"
        "                {'formats': [{'name': 'evil\\r\\nforged: 99 vectors\\x1b[8m', 'value': 'Q8S'}]}}\n"
        "    def run(self, op, params, inputs):\n"
        "        raise RuntimeError\n")
    monkeypatch.chdir(tmp_path)
    code = main(["list", "--backend", "python:evil_caps:Backend", "--vectors", str(suite_dir)])
    out = capsys.readouterr().out
    assert code == 0 and "evil\\x0d\\x0aforged" in out and not [c for c in UNSAFE if c in out], out


# ---- argument validation: a bad value is named, exit 2, never blamed on the backend ------------------------

@pytest.mark.parametrize("args", [
    ["run", "--backend", "oracle", "--timeout", "0"],
    ["run", "--backend", "oracle", "--timeout", "-1"],
    ["run", "--backend", "oracle", "--timeout", "nan"],
    ["run", "--backend", "oracle", "--hello-timeout", "inf"],
    ["list", "--backend", "oracle", "--hello-timeout", "0"],
    ["serve", "--backend", "oracle", "--timeout", "nan"],
    ["serve", "--backend", "oracle", "--port", "70000"],
    ["serve", "--backend", "oracle", "--max-body", "0"],
    ["serve", "--backend", "oracle", "--idle-timeout", "-5"],
])
def test_bad_arguments_are_usage_errors(args, capsys):
    from conformance.cli import main
    with pytest.raises(SystemExit) as e:
        main(args)
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"argument --{args[3].lstrip('-')}" in err, err


@pytest.mark.parametrize("command", [["list", "--backend", "oracle"], ["explain", "x"],
                                     ["repro", "x", "--backend", "oracle"], ["profiles", "--diff", "a", "b"]])
def test_a_missing_suite_is_one_named_line_exit_4(tmp_path, command, capsys):
    from conformance.cli import main
    assert main([*command, "--vectors", str(tmp_path / "nowhere")]) == 4
    err = capsys.readouterr().err
    assert "nowhere/manifest.json: no such file" in err and len(err.strip().splitlines()) == 1, err


def test_serve_refuses_a_non_loopback_host_without_the_flag(capsys):
    from conformance.cli import main
    assert main(["serve", "--backend", "oracle", "--host", "0.0.0.0"]) == 2
    assert "--allow-remote" in capsys.readouterr().err


# ---- the fuzzer's outputs and printers --------------------------------------------------------------------

EVIL_FUZZ = '''from conformance.protocol import BackendError


class Backend:
    def hello(self):
        return {"name": "evil", "version": "1", "profile": "burn-0.22.1/flex"}

    def run(self, op, params, inputs):
        raise BackendError("x.y", %r)
''' % SURROGATE


def fuzz(tmp_path, env, *args, run=cli):
    (tmp_path / "evil_fuzz.py").write_text(EVIL_FUZZ)
    return run("fuzz", "--backend", "python:evil_fuzz:Backend", "--ops", "round_up", "--cases", "3", "--no-shrink",
               "--seed", "1", *args, env=env, cwd=tmp_path)


def test_fuzz_summary_escapes_a_lone_surrogate(tmp_path, env):
    r = fuzz(tmp_path, env, "--out", "fz")
    assert r.returncode == 1 and "DIVERGENCE x3" in r.stdout and "lone \\ud800 surrogate" in r.stdout, r.stderr
    assert not [c for c in UNSAFE if c in r.stdout] and "Traceback" not in r.stderr
    assert len(list((tmp_path / "fz").glob("*/manifest.json"))) == 1


def test_fuzz_out_is_checked_before_the_run(tmp_path, env):
    (tmp_path / "file").write_text("")
    r = fuzz(tmp_path, env, "--out", "file/fz")
    assert r.returncode == 2 and "file/fz" in r.stderr and "cases in" not in r.stdout, r.stdout + r.stderr


def test_fuzz_that_cannot_write_its_minimal_case_still_prints_the_summary(tmp_path, env):
    r = fuzz(tmp_path, env, "--out", "fz", run=lambda *a, **k: cli_full_disk(*a, **k, limit=256))
    assert r.returncode == WRITE_FAILED and "DIVERGENCE x3" in r.stdout and "same cases again" in r.stdout, r.stderr
    assert "minimal cases not written" in r.stderr and "Traceback" not in r.stderr
    assert not list((tmp_path / "fz").glob("*/manifest.json")) and not list((tmp_path / "fz").glob(".*"))
