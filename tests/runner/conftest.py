"""Fixtures for the runner's tests: synthetic suites and commands for the lookup test backend."""

import os
import shlex
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # suites.py and lookup_backend.py are plain modules next to the tests

import suites


@pytest.fixture
def suite_dir(tmp_path):
    return suites.write(tmp_path / "suite")


@pytest.fixture
def lookup_cmd(suite_dir):
    """Command line of the lookup backend over suite_dir: lookup_cmd('--fault', 'crash:ALIAS', ...)."""
    def cmd(*extra, claim=suites.A):
        argv = [sys.executable, str(HERE / "lookup_backend.py"), "--suite", str(suite_dir), "--claim", claim, *extra]
        return shlex.join(argv)
    return cmd


@pytest.fixture
def env():
    """Environment for child processes that import the lookup backend and the package."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(HERE), str(HERE.parents[1]), e.get("PYTHONPATH", "")])
    # A pytest run inside a test has no hypothesis tests, but hypothesis's pytest plugin would import all of
    # hypothesis at its summary (~15% of such a run's CPU).
    e["PYTEST_ADDOPTS"] = " ".join([e.get("PYTEST_ADDOPTS", ""), "-p no:hypothesispytest"]).strip()
    return e
