"""The reference oracle as a backend (any profile), and registered mutants of it.

It is an ordinary in-process backend, so the runner treats the reference exactly like a backend under test.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from . import BackendStartError
from .python import PythonBackend


def _version() -> str:
    try:
        return version("qconform")
    except PackageNotFoundError:
        return "0+unknown"


class OracleAdapter:
    """hello()/run() over ``oracle.run`` with a fixed profile (a name or an oracle Profile)."""

    def __init__(self, profile, name: str, claimed: str):
        import oracle
        self._run, self.profile, self.name, self.claimed = oracle.run, profile, name, claimed

    def hello(self) -> dict:
        return {"name": self.name, "version": _version(), "profile": self.claimed, "capabilities": {}}

    def run(self, op, params, inputs):
        return self._run(op, params, inputs, profile=self.profile)


def oracle_backend(profile: str | None = None) -> PythonBackend:
    try:
        import oracle
    except ImportError as e:
        raise BackendStartError(f"the oracle package is not importable: {e}") from None
    profile = profile or oracle.DEFAULT_PROFILE
    if profile not in oracle.profiles():
        raise BackendStartError(f"unknown oracle profile {profile!r}; known: {', '.join(oracle.profiles())}")
    return PythonBackend(OracleAdapter(profile, "qconform-oracle", profile), f"oracle:{profile}")


def mutant_backend(name: str) -> PythonBackend:
    """A deliberately wrong oracle variant that claims its base profile (what a buggy backend would do)."""
    try:
        from ..mutants import MUTANTS
    except ImportError as e:
        raise BackendStartError(f"conformance.mutants is not available: {e}") from None
    if name not in MUTANTS:
        raise BackendStartError(f"unknown mutant {name!r}; known: {', '.join(sorted(MUTANTS))}")
    m = MUTANTS[name]
    return PythonBackend(OracleAdapter(m.profile, f"mutant-{name}", m.base), f"mutant:{name}")
