"""The reference oracle as a backend (any profile), and registered mutants of it.

:func:`run_oracle` is the one way qconform asks the oracle for an outcome: the generator (what a vector
expects), the mutation gate (what a mutant answers) and the diagnosis (what a candidate answers) call it, and the
``oracle``/``mutant`` backends wrap it, so the runner treats the reference exactly like a backend under test.
"""

from __future__ import annotations

import traceback
import warnings
from importlib.metadata import PackageNotFoundError, version

import numpy as np

import oracle
from oracle import BurnPanic, Profile, Stages, UndefinedBehaviour

from ..mutants import MUTANTS
from ..protocol import PROTOCOL_VERSION, Error, Fault, Outcome, ProtocolError, parse_hello, split_outputs
from .base import BackendStartError


def run_oracle(op: str, params: dict, inputs: dict[str, np.ndarray], profile: str | Profile, *,
               stages: Stages | None = None) -> Outcome:
    """``oracle.run`` answering as a backend would: on copies of the inputs, with float warnings silenced; burn's
    panic is an :class:`Error` (its code and message), a request on which burn is undefined a ``Fault``, and the
    outputs are validated like a python backend's reply (``ProtocolError``). Any other exception is a bug of the
    oracle and propagates."""
    inputs = {k: np.array(v, copy=True) for k, v in inputs.items()}  # the oracle may work in place
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            outputs = oracle.run(op, params, inputs, profile=profile, stages=stages)
    except BurnPanic as p:
        return Error(p.code, p.message)
    except UndefinedBehaviour as e:
        return Fault("undefined behaviour", str(e))
    return split_outputs(outputs)


def _version() -> str:
    try:
        return version("qconform")
    except PackageNotFoundError:
        return "0+unknown"


class OracleBackend:
    """The oracle under a fixed profile (a name or a Profile), claiming ``claimed``."""

    def __init__(self, profile: str | Profile, name: str, claimed: str, label: str):
        self.profile, self.label = profile, label
        self.hello = parse_hello({"protocol": PROTOCOL_VERSION, "name": name, "version": _version(),
                                  "profile": claimed, "capabilities": {}})

    def run(self, op, params, inputs) -> Outcome:
        try:
            return run_oracle(op, params, inputs, self.profile)
        except ProtocolError as e:
            return Fault("protocol error", str(e))
        except Exception:  # noqa: BLE001 - isolation boundary, as for any backend: one vector, not the run
            return Fault("crashed", f"the oracle raised:\n{traceback.format_exc(limit=-4)}")

    def close(self) -> None:
        pass


def oracle_backend(profile: str | None = None) -> OracleBackend:
    profile = profile or oracle.DEFAULT_PROFILE
    if profile not in oracle.PROFILES:
        raise BackendStartError(f"unknown oracle profile {profile!r}; known: {', '.join(oracle.PROFILES)}")
    return OracleBackend(profile, "qconform-oracle", profile, f"oracle:{profile}")


def mutant_backend(name: str) -> OracleBackend:
    """A deliberately wrong oracle variant that claims its base profile (what a buggy backend would do)."""
    if name not in MUTANTS:
        raise BackendStartError(f"unknown mutant {name!r}; known: {', '.join(sorted(MUTANTS))}")
    m = MUTANTS[name]
    return OracleBackend(m.profile, f"mutant-{name}", m.base, f"mutant:{name}")
