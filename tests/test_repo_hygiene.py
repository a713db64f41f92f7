"""What a run leaves in a checkout stays out of git: the fuzzer's default output folder is git-ignored, and no
fuzz output (a one-vector repro suite) is committed anywhere but under vectors/ and docs/repro/."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.fuzz.cli import DEFAULT_OUT

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="needs a git checkout")


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)


def test_the_fuzzers_default_output_is_git_ignored():
    assert not DEFAULT_OUT.is_absolute()
    assert _git("check-ignore", "-q", str(DEFAULT_OUT / "0123456789abcdef0123" / "manifest.json")).returncode == 0


def test_no_fuzz_output_is_committed_outside_the_suites():
    manifests = _git("ls-files", "*manifest.json").stdout.split()
    stray = [m for m in manifests if not m.startswith(("vectors/", "docs/repro/", "tests/", "examples/"))]
    assert stray == [], "fuzz or repro output committed; it belongs under out/ (git-ignored)"
