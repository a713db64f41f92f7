"""``qconform fuzz --check-determinism``: the same cases through two fresh backend processes, one after the other;
a case whose two answers differ is nondeterministic (docs/fuzzing.md, "Nondeterminism").

A real backend can answer one request differently from process to process: a GPU reading memory no kernel wrote
(burn 0.22.1's empty-tensor scale storage on SPIR-V), a reduction whose order depends on scheduling. No single
measured answer of such a case is burn's, so the oracle must declare it ``undefined`` rather than fit it; this
mode finds those cases without the oracle (the answers are compared with each other, bit for bit, as
:func:`~conformance.fuzz.engine.outcome_bytes` hashes them with no tolerance).
"""

from __future__ import annotations

import hashlib
import time
import warnings
from dataclasses import dataclass, field

from oracle import DEFAULT_PROFILE

from ..runner import RunnerError
from ..cases import Case
from .engine import BATCH, outcome_bytes
from .strategies import RandomDraw, draw_case


@dataclass
class Run:
    """One backend process's answers: per case index, the hash of its outcome (``None``: not applicable)."""
    answers: list[bytes | None]
    seconds: float


@dataclass
class DeterminismReport:
    backend: str
    profile: str
    seed: int
    cases: int
    runs: tuple[Run, Run]
    differing: list[tuple[int, str]] = field(default_factory=list)  # (case index, what the case is)

    def lines(self) -> list[str]:
        first, second = self.runs
        sent = sum(a is not None for a in first.answers)
        out = [f"qconform fuzz --check-determinism: {self.cases} cases ({sent} sent) through two fresh backends "
               f"({self.backend}; a subprocess spec: two processes), seed {self.seed}, profile {self.profile}: {first.seconds:.1f} s + "
               f"{second.seconds:.1f} s"]
        if not self.differing:
            out.append("  every case answered alike by both")
            return out
        out.append(f"  NONDETERMINISTIC: {len(self.differing)} case(s) answered differently (declare them "
                   "undefined in the profile; `--cases 1` of each with `qconform fuzz` shows the oracle's view):")
        out += [f"    case {i}: {what}" for i, what in self.differing[:20]]
        if len(self.differing) > 20:
            out.append(f"    ... and {len(self.differing) - 20} more")
        return out


def answers(backend, profile: str, *, seed: int, cases: int, ops=None, capabilities=None) -> Run:
    """Cases ``0..cases`` of ``seed`` through ``backend`` (batched like a fuzz run), each outcome hashed."""
    caps = capabilities if capabilities is not None else backend.hello.capabilities
    batch = BATCH if hasattr(backend, "run_many") else 1
    out: list[bytes | None] = []
    start = time.monotonic()
    for first in range(0, cases, batch):
        drawn = [draw_case(RandomDraw(f"{seed}:{i}"), profile, ops) for i in range(first, min(first + batch, cases))]
        sent = [c for c in drawn if caps.not_applicable(Case(f"{c.op}/fuzz/case", c.op, c.params, c.inputs)) is None]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            requests = [(c.op, c.params, c.inputs) for c in sent]
            replies = backend.run_many(requests) if batch > 1 else [backend.run(*r) for r in requests]
        answered = {id(c): o for c, o in zip(sent, replies)}
        out += [None if id(c) not in answered else hashlib.sha256(outcome_bytes(answered[id(c)], {})).digest()
                for c in drawn]
    return Run(out, time.monotonic() - start)


def check(spec: str, *, profile: str | None, seed: int, cases: int, ops=None, timeout: float = 30.0,
          open_backend=None) -> DeterminismReport:
    """The cases through a fresh process of ``spec``, closed, then through another fresh one; the cases whose
    answers differ (a case applicable in one and not the other cannot happen: both read the first's
    capabilities)."""
    if open_backend is None:
        from ..backends import open_backend
    runs, claimed, caps = [], profile, None
    for _ in range(2):
        try:
            backend = open_backend(spec, timeout=timeout)
        except Exception as e:  # noqa: BLE001 - whatever kept it from starting is the backend's, reported as such
            raise RunnerError(f"backend {spec!r} did not start: {e}") from e
        try:
            claimed = claimed or backend.hello.profile or DEFAULT_PROFILE
            caps = caps or backend.hello.capabilities
            runs.append(answers(backend, claimed, seed=seed, cases=cases, ops=ops, capabilities=caps))
        finally:
            backend.close()
    report = DeterminismReport(spec, claimed, seed, cases, (runs[0], runs[1]))
    for i, (a, b) in enumerate(zip(runs[0].answers, runs[1].answers)):
        if a != b:
            report.differing.append((i, draw_case(RandomDraw(f"{seed}:{i}"), claimed, ops).describe()))
    return report
