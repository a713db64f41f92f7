"""One conformance run: a suite, a backend, a profile and an expectations ledger -> verdicts.

The pytest plugin, the CLI and the benchmark all go through ``Runner.run_vector``, so a vector is judged the
same way whichever front end asked. The backend is opened lazily, after the suite and the expectations are
loaded and checked: bad input fails before any backend is called.
"""

from __future__ import annotations

import traceback

from oracle import classify_panic

from . import compare, diagnose
from .backends import open_backend
from .compare import (
    DECLINED,
    FAILED,
    NOT_APPLICABLE,
    PASSED,
    RUNNER_ERROR,
    SKIPPED,
    VALIDATION_DECLINED,
    XFAILED,
    XPASSED,
    Verdict,
)
from .expectations import Expectations
from .protocol import Declined


DIAGNOSIS_FAILED = "the diagnosis of this failure failed"


class RunnerError(Exception):
    """A run that cannot start (unknown profile, backend that fails its handshake, ...)."""


def runner_error(vector, profile, exc: BaseException | str) -> Verdict:
    """A failed verdict for a vector the runner itself could not judge (a bug, or input nobody foresaw):
    recorded with its traceback rather than lost."""
    text = exc if isinstance(exc, str) else "".join(traceback.format_exception(exc, limit=-6))
    return Verdict(vector.id, vector.alias, vector.op, profile, FAILED, kind=RUNNER_ERROR,
                   message=f"{vector.alias} [{vector.id}] op {vector.op}: the runner could not judge this vector\n"
                           f"{text}", tags=list(vector.tags))


class Runner:
    def __init__(self, suite, backend_spec: str, *, profile: str | None = None,
                 expectations: Expectations | None = None, strict_messages: bool = False,
                 diagnose: bool = True, timeout: float = 30.0, hello_timeout: float = 60.0, backend=None,
                 candidates=None, exact_burn: bool = False):
        """``exact_burn``: the backend is one of burn's own builds, judged by burn's outcome alone: no acceptable
        alternative of a burn bug passes, and every validation vector applies (conformance/accidents.py)."""
        if profile is not None and profile not in suite.profiles:
            raise RunnerError(f"unknown profile {profile!r}: suite {suite.name} has {', '.join(suite.profiles)}")
        self.suite, self.spec, self.requested_profile = suite, backend_spec, profile
        self.expectations = expectations or Expectations.empty()
        self.strict_messages, self.want_diagnosis = strict_messages, diagnose
        self.timeout, self.hello_timeout, self.exact_burn = timeout, hello_timeout, exact_burn
        self.backend, self.profile, self._candidates = backend, profile, candidates
        self._classify, self._started = classify_panic, False

    def start(self):
        """Open the backend and settle the profile (--profile, else the one the backend claims)."""
        if self.backend is None:
            try:
                self.backend = open_backend(self.spec, timeout=self.timeout, hello_timeout=self.hello_timeout)
            except Exception as e:  # noqa: BLE001 - start errors, or a broken backend module
                raise RunnerError(f"backend {self.spec!r} did not start: {e}") from None
        claimed = self.backend.hello.profile
        self.profile = self.requested_profile or claimed or self.suite.default_profile
        if self.profile not in self.suite.profiles:
            raise RunnerError(f"backend {self.spec!r} claims profile {self.profile!r}, which suite "
                              f"{self.suite.name} has no expectations for ({', '.join(self.suite.profiles)}); "
                              "choose one with --profile")
        self._started = True
        return self

    def close(self):
        if self.backend is not None:
            self.backend.close()

    def run_vector(self, vector) -> Verdict:
        if not self._started:
            self.start()
        entry = self.expectations.lookup(vector)
        why = self.not_applicable(vector)
        if why:
            return self._verdict(vector, NOT_APPLICABLE, note=why)
        undefined = vector.expected[self.profile].undefined
        if undefined is not None:
            return self._verdict(vector, NOT_APPLICABLE, note=f"burn's behaviour under {self.profile} is undefined: "
                                                              f"{undefined}")
        if entry is not None and entry.kind == "skip":
            return self._verdict(vector, SKIPPED, note=entry.describe())
        try:
            verdict = self._judge(vector, pinned_diagnosis=entry is not None and bool(entry.diagnosis))
        except Exception as e:  # noqa: BLE001 - the last line of defence: a vector never vanishes
            verdict = runner_error(vector, self.profile, e)
        verdict.formats = self.backend.hello.capabilities.formats_of(vector)
        if entry is not None and verdict.status != DECLINED:  # an xfail entry
            unlike = entry.unlike(verdict) if verdict.status == FAILED else None
            if unlike:  # failed, but not as the entry says: a new bug must not hide behind a known one
                verdict.note = "; ".join(filter(None, [verdict.note, f"{entry.describe()} expects another failure"]))
                verdict.message += f"\n  not the failure the xfail entry #{entry.index} expects: {unlike}"
                return verdict
            verdict.status = XFAILED if verdict.status == FAILED else XPASSED
            verdict.note = "; ".join(filter(None, [verdict.note, entry.describe()]))
        return verdict

    def not_applicable(self, vector) -> str | None:
        """Why the backend is not judged on ``vector``: outside its declared capabilities, or only burn's refusal
        of an invalid request for a backend that declares ``validates: false`` (never with ``exact_burn``)."""
        capabilities = self.backend.hello.capabilities
        why = capabilities.not_applicable(vector)
        if why:
            return why
        refused = vector.expected[self.profile].validation
        if refused and not capabilities.validates and not self.exact_burn:
            return f"{VALIDATION_DECLINED}: burn refuses {refused} (the backend declares validates: false)"
        return None

    def _judge(self, vector, *, pinned_diagnosis: bool = False) -> Verdict:
        """``pinned_diagnosis``: an xfail entry pins a diagnosis, so it is computed even with diagnosis off."""
        outcome = self.backend.run(vector.op, vector.params, vector.inputs)
        if isinstance(outcome, Declined):
            return self._verdict(vector, DECLINED, note="; ".join(filter(None, [outcome.reason, outcome.note])))
        verdict = compare.judge(vector, self.profile, outcome, strict_messages=self.strict_messages,
                                classify=self._classify, exact_burn=self.exact_burn)
        if verdict.status == FAILED and (self.want_diagnosis or pinned_diagnosis):
            try:
                verdict.diagnosis = diagnose.diagnose_vector(vector, self.profile, outcome, verdict,
                                                             self.candidates())
            except Exception as e:  # noqa: BLE001 - a failing diagnosis must not cost the verdict its differences
                failed = "".join(traceback.format_exception_only(e)).strip()
                verdict.note = "; ".join(filter(None, [verdict.note, f"{DIAGNOSIS_FAILED}: {failed}"]))
                verdict.message += f"\n  {DIAGNOSIS_FAILED} (a qconform bug, please report it): {failed}"
        verdict.note = "; ".join(filter(None, [verdict.note, outcome.note]))
        return verdict

    def _verdict(self, vector, status: str, note: str) -> Verdict:
        return Verdict(vector.id, vector.alias, vector.op, self.profile, status, note=note, tags=list(vector.tags))

    def candidates(self):
        if self._candidates is None:
            self._candidates = diagnose.oracle_candidates(self.profile)
        return self._candidates

    def run_all(self, vectors=None):
        """Every vector in order (the plugin runs them one test item each instead)."""
        for vector in vectors if vectors is not None else self.suite.vectors:
            yield self.run_vector(vector)


__all__ = ["DECLINED", "FAILED", "NOT_APPLICABLE", "PASSED", "SKIPPED", "XFAILED", "XPASSED", "Runner", "RunnerError"]
