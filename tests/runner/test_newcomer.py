"""A backend author's first ten minutes (issue 20, point 7), each step as a new user takes it: the README's quick
start run as written, a ``python:`` backend found in the current directory, one default profile for ``run``,
``list`` and ``explain``, a ``BackendError`` without a code, ``serve`` refusing before it announces, a closed
pipe, and the docs (profiles, the scales shapes, the install line) checked against what they describe."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import oracle
from conformance import cli
from conformance.backends import server
from conformance.vectors import load_suite, write_suite

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CORE = load_suite(ROOT / "vectors" / "core")
DEFAULT = oracle.DEFAULT_PROFILE

# A newcomer's in-process backend: burn's answers under the default profile, burn's panics as a BackendError
# whose code is left out, and no profile claimed.
MYBACKEND = textwrap.dedent(f"""
    import oracle
    from conformance import BackendError

    class Backend:
        def hello(self):
            return {{"name": "mine", "version": "0.1"}}

        def run(self, op, params, inputs):
            try:
                return oracle.run(op, params, dict(inputs), profile={DEFAULT!r})
            except oracle.BurnPanic as e:
                raise BackendError(None, e.message)
""")
# Two vectors that are errors under the default profile; on the first, the suite's first profile
# (burn-0.22.0-pre.3/ndarray) expects outputs: judged against it, the backend above fails.
DISAGREE = ("quantize/q8s/shape/partial-nd-block", "quantize/q8s/tensor/global-given-backend")


def qconform(*args, cwd, stdout=subprocess.PIPE):
    """The CLI as the installed ``qconform`` script runs it: the current directory is NOT on sys.path (``-P``),
    unlike ``python -m``, which would hide a backend module that is only found through it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-P", "-m", "conformance.cli", *args], cwd=cwd, env=env,
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory):
    """A folder with ``mybackend.py`` and a small suite (all of the core suite's profiles) of DISAGREE."""
    home = tmp_path_factory.mktemp("newcomer")
    (home / "mybackend.py").write_text(MYBACKEND)
    write_suite(home / "suite", [CORE.get(a).to_spec() for a in DISAGREE], suite="newcomer", profiles=CORE.profiles)
    return home


def test_the_vectors_really_separate_the_default_from_the_first_profile():
    first = CORE.profiles[0]
    assert first != DEFAULT and CORE.get(DISAGREE[0]).expected[first].error is None
    assert all(CORE.get(alias).expected[DEFAULT].error is not None for alias in DISAGREE)


def test_a_python_backend_is_found_in_the_current_directory_and_judged_against_the_default(newcomer):
    r = qconform("run", "-q", "--backend", "python:mybackend:Backend", "--vectors", "suite", cwd=newcomer)
    assert "No module named 'mybackend'" not in r.stderr, r.stderr
    lines = r.stdout.strip().splitlines()
    # passes only when judged against the default, and when the code left out of BackendError is read off the text
    assert r.returncode == 0 and lines[0].startswith("2 passed, 0 failed") and lines[-1] == "OK", r.stdout + r.stderr
    assert lines[1].startswith("scope: ") and lines[2].startswith(f"profile {DEFAULT} "), r.stdout


def test_list_and_explain_use_the_same_default(newcomer):
    r = qconform("list", "--backend", "python:mybackend:Backend", "--vectors", "suite", cwd=newcomer)
    assert r.returncode == 0 and r.stdout.startswith(f"mine 0.1, judged against {DEFAULT}: 2 of 2"), r.stdout + r.stderr
    r = qconform("explain", DISAGREE[0], "--vectors", "suite", cwd=newcomer)
    shown = re.findall(r"^  expected under (\S+)$", r.stdout, re.MULTILINE)
    assert r.returncode == 0 and shown == [DEFAULT], r.stdout
    assert CORE.default_profile == DEFAULT


def test_readme_documents_a_backend_error_without_a_code():
    assert "`BackendError`'s code may be left out (`BackendError(None, message)`)" in README


def test_explain_into_a_closed_pipe_ends_quietly(tmp_path):
    """``qconform explain ... | head``: the reader goes away first; no traceback, the status of a cut-off writer."""
    read, write = os.pipe()
    os.close(read)  # nobody will ever read: the first write fails, deterministically
    try:
        r = qconform("explain", DISAGREE[0], "--all-profiles", cwd=tmp_path, stdout=write)
    finally:
        os.close(write)
    assert "Traceback" not in r.stderr and r.returncode == cli.BROKEN_PIPE == 141, r.stderr


def test_serve_without_the_http_extra_says_so_before_announcing(monkeypatch, capsys):
    monkeypatch.setattr(server, "h11", None)
    assert cli.main(["serve", "--backend", "oracle"]) == 3
    err = capsys.readouterr().err
    assert "needs the http extra" in err and "pip install 'qconform[http]'" in err and "serving" not in err


def test_serve_on_a_taken_port_says_so_before_announcing(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli.main(["serve", "--backend", "oracle", "--port", str(port)]) == 3
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "serving" not in err, err


def test_the_http_extra_is_documented_and_declared():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r"^http = \[.*\"h11==", pyproject, re.MULTILINE)
    assert "needs the `http` extra: `pip install -e '.[http]'` in a clone, `qconform[http]` otherwise" in README


def test_spec_profiles_page_lists_the_current_profiles():
    text = (ROOT / "docs" / "spec" / "profiles.md").read_text()
    table = text.split("| profile | status |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()]
    want = [[f"`{name}`" + (" (the default)" if name == DEFAULT else ""), p.status.replace("_", "-")]
            for name, p in oracle.PROFILES.items()]
    assert rows == want, "docs/spec/profiles.md's table of profiles is stale: rows should be\n" + "\n".join(
        f"| {a} | {b} |" for a, b in want)


def _blocks(v) -> tuple[int, ...]:
    data = v.inputs.get("codes", v.inputs.get("x"))
    info = oracle.run("scheme_info", {"scheme": v.params["scheme"], "shape": list(data.shape)}, {})
    return tuple(info["params_shape"])


def test_ops_md_states_the_scales_shapes_the_vectors_send():
    """docs/ops.md, "Tensors": a scales input is flat [n] or the block grid (params_shape), flat for qlayout and
    for a deliberately wrong count, or deliberately the right count in another grid shape; F32 except quantize's;
    every scales output is flat F32[n]."""
    ops_md = (ROOT / "docs" / "ops.md").read_text()
    assert "**the block grid itself**, shaped like the tensor's `params_shape`" in ops_md
    shapes = set()
    for v in CORE.vectors:
        if v.op == "compute_q_params":  # its scales are min's shape and dtype (its row of the table)
            continue
        if "scales" in v.inputs and "scheme" in v.params:
            s, grid = v.inputs["scales"], _blocks(v)
            n = int(np.prod(grid))
            assert s.dtype == np.float32 or v.op == "quantize", v.alias
            if s.ndim == 1:  # flat: the right count, or a deliberately wrong one
                shapes.add("flat" if s.size == n else "wrong count")
            else:
                assert v.op != "qlayout" and s.size == n, (v.alias, s.shape, grid)
                shapes.add("grid" if s.shape == grid else "grid of another shape")
        for e in v.expected.values():
            if "scales" in e.outputs:
                assert e.outputs["scales"].ndim == 1 and e.outputs["scales"].dtype == np.float32, v.alias
    assert shapes == {"grid", "flat", "wrong count", "grid of another shape"}  # the doc names each: the suite sends each


def _quick_start() -> tuple[str, list[str]]:
    """The README's first section (its heading) and the commands of its shell block."""
    first = README.split("\n## ", 1)[1]
    heading, body = first.split("\n", 1)
    block = body.split("```sh\n", 1)[1].split("```", 1)[0]
    return heading, [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_readme_opens_with_the_quick_start_for_backend_authors():
    heading, commands = _quick_start()
    assert heading == "Quick start for backend authors"
    section = README.split("## Quick start for backend authors", 1)[1].split("\n## ", 1)[0]
    assert commands[2].startswith("cp examples/subprocess_backend.py ")
    assert [c.split()[1] for c in commands[3:]] == ["list", "run", "explain"]
    assert " run -q " in commands[4] and "--profile" in commands[5]
    assert "**What `dequantize` means here.**" in section and "round trip" in section


def test_the_quick_start_sends_a_loader_to_load_quantized():
    """A loader reading the quick start learns the op that asks its question, with the preset and the example
    that the example really declares."""
    section = README.split("## Quick start for backend authors", 1)[1].split("\n## ", 1)[0]
    assert "`load_quantized`" in section and "`examples/loader_backend.py`" in section
    import examples.loader_backend as loader
    capabilities = loader.Loader().hello()["capabilities"]
    assert f'`{json.dumps(capabilities)}`' in section.replace("\n", " ")


def test_the_quick_start_runs_as_written(tmp_path):
    """Every command after the install, in a fresh folder: `.venv/bin/` is this interpreter's bin folder and
    `examples/` the checkout's (the clone the README starts from)."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "qconform").exists():
        pytest.skip("qconform is not installed next to this interpreter")
    _, commands = _quick_start()
    for command in commands[2:]:
        line = command.replace(".venv/bin/", f"{bin_dir}/").replace("examples/", f"{ROOT}/examples/")
        r = subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
        assert r.returncode == 0, f"{command}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        if " run -q " in command:
            out = r.stdout.strip().splitlines()
            assert out[2].startswith(f"profile {DEFAULT} ") and out[-1] == "OK", r.stdout


def test_the_install_line_is_one_pip_accepts():
    """The quick start's install, from the clone (a dry run: pip resolves and builds the metadata, installs
    nothing; the dependencies are the ones this environment already has)."""
    _, commands = _quick_start()
    install = next(c for c in commands if "pip install" in c).split("pip install", 1)[1]
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--quiet",
                        "--disable-pip-version-check", *shlex.split(install)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def test_the_suite_default_falls_back_to_the_first_profile_without_the_oracles_default(tmp_path):
    spec = CORE.get(DISAGREE[0]).to_spec()
    others = [p for p in CORE.profiles if p != DEFAULT]
    spec["expected"] = {p: spec["expected"][p] for p in others}
    write_suite(tmp_path, [spec], suite="other", profiles=others)
    assert load_suite(tmp_path).default_profile == others[0]
    assert json.loads((tmp_path / "manifest.json").read_text())["profiles"][0] == others[0]
