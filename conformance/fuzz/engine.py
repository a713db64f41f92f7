"""The fuzz loop: draw cases, judge each like a golden vector, group divergences, shrink, write repros.

Case ``i`` of seed ``S`` is drawn from ``random.Random("S:i")`` alone, so a run is deterministic per seed and
any case can be drawn again without the ones before it (``--digest`` bisects on that). Each case becomes a
:class:`~conformance.vectors.Vector` whose expectation the oracle computes under the judged profile exactly as
``qconform generate`` does (``generate.expect``), and ``Runner.run_vector`` judges the backend's answer: the
same comparison contracts, capability filter, fault handling and diagnosis as ``qconform run``.

A divergence's *class* is its diagnosis (op, failure kind, matching candidates or first wrong stage, error
codes). The first case of each class is shrunk with Hypothesis's shrinker: the choices the fast generator
recorded are replayed under a ``ConjectureRunner`` and shrunk while the class stays the same.
"""

from __future__ import annotations

import collections
import dataclasses
import gc
import hashlib
import itertools
import json
import os
import re
import signal
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from random import Random

import numpy as np

import oracle
from oracle.scheme import memo_key
from oracle.vocabulary import level

from ..arguments import compact
from .. import diagnose
from ..hypotheses import FAMILIES
from ..cases import Case
from .. import accidents
from ..backends.oracle import run_oracle
from ..compare import DECLINED, FAILED, NOT_APPLICABLE, PASSED, VALIDATION_DECLINED
from ..contracts import TOLERANT_OPS, contracts
from ..backends.python import PythonBackend
from ..generate import PROFILES, CaseError, canonical_json, expect
from ..protocol import Declined, Error, Fault
from ..runner import Runner
from ..tags import data_tags, outcome_tags, structural_tags
from ..outputs import OutputError, write_folder
from ..vectors import Acceptable, Expected, Vector, VectorError, tolerance_problem, vector_id, write_suite
from ..formats import formats_of
from ..patterns import capability_key
from . import batched
from .scope import scope_of
from .strategies import DataDraw, FuzzCase, RandomDraw, scheme_obj, draw_case

UNDEFINED = object()  # the verdict of a case whose behaviour the profile leaves undefined


@dataclass
class _Suite:
    """What the Runner needs of a suite: its profiles and a name."""
    profiles: list[str]
    name: str = "fuzz"


@dataclass
class Divergence:
    """One class of divergence: how often it was seen, its first case and, once shrunk, its minimal case."""
    signature: str
    count: int = 0
    ops: dict = field(default_factory=dict)
    explained: dict = field(default_factory=dict)   # candidate -> on how many of the class's cases it matches
    first_index: int = -1
    indices: list = field(default_factory=list)  # every case of the class, in the order judged
    choices: list = field(default_factory=list)
    case: FuzzCase | None = None
    verdict: object = None
    written: Path | None = None
    shrunk: str = ""   # "" (not tried), "shrunk", or why the case shown is not (fully) minimal


BATCH = 64  # requests in flight through a backend with run_many
# Cases drawn at once, whose expectations batched.py evaluates together where it can: the more cases of one
# scheme in a stacked run, the fewer oracle runs per case (about 8 groups of params in a q8_0 draw).
EXPECT_BATCH = 256
FAULTS_SHOWN = 10  # faults listed one by one in the summary (all are counted)
# A digest hashes only the dtype and shape of an output compared within a tolerance; contracts.TOLERANT_OPS names
# the ops whose contracts can give one (qlayout's, for a chain holding a matmul, runs the oracle on its prefix).


class _Prefetched:
    """The runner's backend: answers a request whose reply already arrived in a batch, else asks the backend."""

    def __init__(self, backend):
        self.backend, self.waiting = backend, {}
        self.hello = dataclasses.replace(backend.hello, capabilities=_Remembered(backend.hello.capabilities))

    def run(self, op, params, inputs):
        outcome = self.waiting.pop(id(inputs), None)
        self.last = outcome if outcome is not None else self.backend.run(op, params, inputs)
        return self.last

    def again(self, inputs) -> None:
        """The next request with ``inputs`` gets the last answer again (the case judged a second time)."""
        self.waiting[id(inputs)] = self.last

    def close(self):
        self.backend.close()


class _Remembered:
    """A backend's capabilities, whose answers about a case (``not_applicable``, ``formats_of``) are remembered
    per ``capability_key``: everything of a case that capabilities read (its op, params, input dtypes, and the
    rank and last dim of its tensor). The runner asks both of every case; fuzz cases of one format repeat
    those keys often."""

    def __init__(self, capabilities):
        self._caps, self._answers, self._last = capabilities, {}, (None, None, None, None)

    def __getattr__(self, name):
        return getattr(self._caps, name)

    def _remembered(self, question: str, vector):
        # One key per case: the prefetch and the runner ask of one case in a row, through a Case and then a
        # Vector that hold the case's own params and inputs objects (held here, so never another case's).
        last = self._last
        if last[0] is not vector.params or last[1] is not vector.inputs or last[2] != vector.op:
            last = self._last = (vector.params, vector.inputs, vector.op, capability_key(vector))
        key = (question, last[3])
        if key not in self._answers:
            if len(self._answers) > 1 << 16:  # a bound on memory in a long run
                self._answers.clear()
            self._answers[key] = getattr(self._caps, question)(vector)
        return self._answers[key]

    def not_applicable(self, vector) -> str | None:
        return self._remembered("not_applicable", vector)

    def formats_of(self, vector) -> list[str]:
        return list(self._remembered("formats_of", vector))


class Undefined(Exception):
    """burn's behaviour on this case is undefined under the profile (e.g. a GPU kernel reading out of bounds):
    there is nothing to compare, the case is counted and skipped."""


class OracleCrash(Exception):
    """The oracle failed with something other than a burn panic: a finding about the oracle itself."""


class Fuzzer:
    def __init__(self, backend_spec: str, *, profile: str | None = None, ops: list[str] | None = None,
                 seed: int = 0, timeout: float = 30.0, backend=None, diagnose: bool = True, jobs: int = 1,
                 formats=(), expectations=None, exact_burn: bool = False):
        """``jobs`` > 1: cases are judged by that many worker processes, each with its own backend opened from
        ``backend_spec`` (so not with a ``backend`` object); the report is the same as with one.
        ``formats``: named formats (conformance/formats.py) to draw inside, instead of what the backend
        declares; ``expectations``: a known-failure ledger (``Expectations``), matched against each case's
        alias (``op/value[-store]/level/fuzz``) like ``qconform run`` matches a vector's. ``exact_burn``: the
        backend is one of burn's own builds, judged by burn's outcome alone (``Runner``'s)."""
        if jobs > 1 and backend is not None:
            raise ValueError("jobs > 1 opens a backend per worker from its spec: pass a spec, not a backend")
        self.spec, self.ops, self.seed, self.jobs = backend_spec, ops, seed, jobs
        self.formats, self.expectations = tuple(formats), expectations
        self.runner = Runner(_Suite(list(PROFILES)), backend_spec, profile=profile, timeout=timeout,
                             backend=backend, diagnose=diagnose, expectations=expectations,
                             exact_burn=exact_burn).start()
        self.profile = self.runner.profile
        self._worker_args = (backend_spec, self.profile, ops, seed, timeout, diagnose, self.formats, expectations,
                             exact_burn)
        self._backend = self.runner.backend
        self.runner.backend = _Prefetched(self._backend)
        # Draw inside what the backend declares (or the named formats): None keeps the default case stream.
        self.scope = scope_of(self._backend.hello.capabilities, self.formats, ops)
        self._aliased = expectations is not None and bool(expectations.entries)
        self._ready: dict[int, dict] = {}  # id(case.inputs) -> its expectation from a batched run (batched.py)
        self._labels: dict[tuple, str] = {}  # (scheme key, shape) -> its label

    def close(self):
        self.runner.close()

    # -- one case -----------------------------------------------------------------------------------------

    def draw(self, index: int) -> tuple[FuzzCase, list]:
        d = RandomDraw(f"{self.seed}:{index}")
        return draw_case(d, self.profile, self.ops, self.scope), d.choices

    def vector(self, case: FuzzCase, profiles=None, *, canonical: bool = False) -> Vector:
        """The case as a vector with the oracle's expectation under ``profiles`` (default: the judged one).
        ``canonical``: plain-JSON params and the content id (for writing it); the hot path skips both."""
        c = _as_case(case, canonical, aliased=self._aliased)
        expected = {}
        ready = self._ready.pop(id(case.inputs), None) if profiles is None else None
        for p in profiles or [self.profile]:
            try:
                expected[p] = Expected(**(ready if ready is not None else expect(c, p)))
            except CaseError as e:
                raise OracleCrash(str(e)) from None
            if expected[p].undefined is not None:
                raise Undefined(f"case {c.alias!r} under {p}: {expected[p].undefined}")
        vid = vector_id(c.op, c.params, c.inputs) if canonical else "fuzz"
        return Vector(vid, c.alias, c.op, c.params, c.inputs, expected)

    def label(self, case: FuzzCase) -> str:
        """The named format a case is (the first of the registry's), else ``other``: the report counts by it.
        Remembered per scheme and shape (all it reads), which a run repeats."""
        if "scheme" not in case.params:
            return "no scheme"
        shape = case.params.get("shape") or next((a.shape for k, a in case.inputs.items() if k in ("x", "codes")), None)
        key = (memo_key(case.params["scheme"]), repr(shape) if type(shape) is list else shape)
        found = self._labels.get(key)
        if found is None:
            obj = scheme_obj(case.params["scheme"])
            names = formats_of(obj, shape) if obj is not None else []
            found = self._labels[key] = names[0] if names else "other"
            if len(self._labels) > 1 << 16:  # a bound on memory in a long run
                self._labels.clear()
        return found

    def judge(self, case: FuzzCase):
        """(verdict, signature): signature None when the backend agrees or the case is not applicable."""
        try:
            with np.errstate(all="ignore"):
                vector = self.vector(case)
        except Undefined:
            return UNDEFINED, None
        except OracleCrash as e:
            return None, f"{case.op}: the oracle crashed: {str(e).split(' with ', 1)[-1][:160]}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            verdict = self.runner.run_vector(vector)
            if verdict.status == FAILED and verdict.kind not in FAULT_KINDS and not self.runner.exact_burn:
                marked = with_accidents(vector)
                if marked is not None:  # judged again, on the same answer, as the suite's vector would be
                    self.runner.backend.again(case.inputs)
                    verdict = self.runner.run_vector(marked)
                    self.runner.backend.waiting.pop(id(case.inputs), None)  # unread when declined: never reused
        if verdict.status != FAILED or verdict.kind in FAULT_KINDS:
            return verdict, None
        return verdict, signature(vector, verdict)

    # -- the loop -----------------------------------------------------------------------------------------

    def run(self, *, cases: int | None = None, seconds: float | None = None, shrink: bool = True,
            out: Path | None = None, log=print) -> FuzzReport:
        """Cases 0, 1, ... until ``cases`` were run or ``seconds`` elapsed."""
        return self.run_indices(itertools.count() if cases is None else range(cases), seconds=seconds,
                                shrink=shrink, out=out, log=log)

    def run_indices(self, indices, *, seconds: float | None = None, shrink: bool = True, out: Path | None = None,
                    log=print) -> FuzzReport:
        """Judge the cases at ``indices``. A fault (crashed, timed out, protocol error) is counted and listed, never
        a divergence class; a backend that gave up ends the loop (the rest is not run); Ctrl-C or SIGTERM
        (``KeyboardInterrupt``) ends it too, and what was found is still reported and written, unshrunk."""
        report = FuzzReport(self.spec, self.profile, self.seed, self.ops,
                            scope=self.scope.labels() if self.scope is not None else None)
        start = time.monotonic()
        judged = self._in_workers(indices, seconds, start, report) if self.jobs > 1 else \
            self._judged(indices, seconds, start)
        frozen = _freeze_old_objects()
        shown = start
        try:
            for index, status, sig, found, where in judged:
                if status == NOT_RUN:
                    report.not_run += 1
                    report.gave_up = found[2].details["detail"]
                    if self.jobs == 1:  # nothing more will run (a worker's backend gave up: the others go on)
                        break
                    continue
                self._count(report, index, status, sig, found, where, log)
                if time.monotonic() - shown >= PROGRESS_SECONDS:
                    shown = time.monotonic()
                    log(report.progress(shown - start))
        except KeyboardInterrupt as e:
            report.interrupted = str(e) or "SIGINT"
            log(f"interrupted ({report.interrupted}) after {report.cases} cases: reporting what was found")
        finally:
            close = getattr(judged, "close", None)
            if close is not None:
                close()  # a pool's workers stop (and stop their backends) now, not at garbage collection
            if frozen:
                gc.unfreeze()
        report.seconds = time.monotonic() - start
        if report.gave_up and hasattr(indices, "__len__"):  # the cases after the first one not run
            report.not_run = max(report.not_run, len(indices) - report.cases)
        report.divergences = merge_by_cause(report.divergences)
        for div in report.divergences.values():
            if shrink:
                try:
                    div.shrunk = self._shrink_unless_stopped(div, report)
                except KeyboardInterrupt as e:  # the case kept is the first one found; the rest is not shrunk
                    report.interrupted = str(e) or "SIGINT"
                    div.shrunk = f"not shrunk: the run was interrupted ({report.interrupted})"
                report.gave_up = report.gave_up or self._gave_up()
            if out is not None:
                try:
                    div.written = self.write(div, Path(out))
                except (OracleCrash, Undefined, VectorError) as e:  # the divergence stays in the report, unwritten
                    log(f"[case {div.first_index}] not written as a vector: {e}")
                except OutputError as e:  # a full disk: the summary is still printed, the exit status says so
                    report.write_errors.append(str(e))
                    log(f"[case {div.first_index}] not written: {e}")
        return report

    def _count(self, report, index, status, sig, found, where, log):
        report.statuses[status] = report.statuses.get(status, 0) + 1
        report.cases += 1
        if where is not None:
            report.exercised[where] = report.exercised.get(where, 0) + 1
        if status == DECLINED and found is not None:  # the backend's reasons, counted like qconform run lists them
            reason = _first_line(found[2].note or "") or "no reason given"
            report.declines[reason] = report.declines.get(reason, 0) + 1
            return
        if found is not None and _validation_only(found[2]):  # burn's validation, not asked of this backend
            report.validation[found[2].note] = report.validation.get(found[2].note, 0) + 1
            return
        if status == FAULTED:
            case, _, verdict = found
            report.faults.append((index, case.op, verdict.kind, _first_line(verdict.details.get("detail", ""))))
            log(f"[case {index}] backend fault: {verdict.kind}: {report.faults[-1][3]}")
            return
        if sig is None:
            return
        case, choices, verdict = found
        div = report.divergences.get(sig)
        if div is None:
            div = report.divergences[sig] = Divergence(sig, first_index=index, choices=choices,
                                                       case=case, verdict=verdict)
            log(f"[case {index}] new divergence: {sig}")
        div.count += 1
        div.indices.append(index)
        div.ops[case.op] = div.ops.get(case.op, 0) + 1
        for c in explained_by(getattr(verdict, "diagnosis", None) or {}):
            div.explained[c] = div.explained.get(c, 0) + 1

    def _gave_up(self) -> str:
        """The reason, once the backend has given up (failed restarts in a row), else ""."""
        return getattr(self._backend, "gave_up", "") or ""

    def _shrink_unless_stopped(self, div: Divergence, report: FuzzReport) -> str:
        if report.interrupted:
            return f"not shrunk: the run was interrupted ({report.interrupted})"
        if report.gave_up:
            return "not shrunk: the backend had given up"
        faults = len(report.faults)
        how = self.shrink(div, report=report)
        extra = len(report.faults) - faults
        if extra and how == "shrunk":
            how = f"shrunk; the backend faulted on {extra} of the cases tried"
        return how

    def _judged(self, indices, seconds, start):
        """(index, status, signature, (case, choices, verdict) of a divergence or fault else None, where), in
        index order."""
        for index, case, choices in self._drawn(indices, seconds, start):
            verdict, sig = self.judge(case)
            status = status_of(verdict)
            if status == FAULTED and self._gave_up() and verdict.details.get("detail") == self._gave_up():
                status = NOT_RUN  # never sent: the backend had given up
            where = None if status in NOT_EXERCISED else (self.label(case), case.op)
            kept = sig is not None or status in (FAULTED, NOT_RUN, DECLINED) or _validation_only(verdict)
            yield index, status, sig, (case, choices, verdict) if kept else None, where

    def _in_workers(self, indices, seconds, start, report):
        """``_judged`` spread over ``jobs`` worker processes (``_Pool``), chunk by chunk, results taken in index
        order (so the report, first cases included, is the one a single process makes). A time budget stops
        handing out chunks, and the ones out are finished. A worker that dies (an OOM killer) is reported and
        replaced, and its chunk judged again by the new one; a chunk that kills two workers is counted as not
        run."""
        pool = _Pool(self.jobs, self._worker_args)
        try:
            yield from pool.judged(indices, seconds, start, report)
        finally:
            pool.close()

    def _drawn(self, indices, seconds, start):
        """(index, case, choices) in order; for a backend that takes several requests in flight
        (``run_many``), a batch's requests go out together and the judge finds their answers waiting."""
        prefetch = hasattr(self._backend, "run_many")
        # a batch in flight through a pipe is bounded (BATCH); an in-process run_many has no pipe and takes the
        # whole drawn batch, so that its stacked runs group as many cases as the expectations' do
        per = EXPECT_BATCH if isinstance(self._backend, PythonBackend) else BATCH
        it = iter(indices)
        while seconds is None or time.monotonic() - start < seconds:
            drawn = [(i, *self.draw(i)) for i in itertools.islice(it, EXPECT_BATCH)]
            if not drawn:
                return
            self._expect_batch([case for _, case, _ in drawn])
            for first in range(0, len(drawn), per):
                batch = drawn[first:first + per]
                if prefetch:
                    self._prefetch([case for _, case, _ in batch])
                yield from batch
                self.runner.backend.waiting.clear()
            self._ready.clear()

    def _expect_batch(self, cases: list[FuzzCase]) -> None:
        """The judged profile's expectations of the cases that ``batched`` evaluates together (the rest are
        evaluated one by one when judged)."""
        with np.errstate(all="ignore"):
            found = batched.expectations(cases, self.profile, lambda c: _as_case(c, False, aliased=self._aliased))
        self._ready.update({id(c.inputs): e for c, e in zip(cases, found) if e is not None})

    def _prefetch(self, cases: list[FuzzCase]) -> None:
        caps = self.runner.backend.hello.capabilities  # the remembered answers, which the runner asks again
        wanted = [c for c in cases if caps.not_applicable(c) is None]  # capabilities read op, params, inputs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            outcomes = self._backend.run_many([(c.op, c.params, c.inputs) for c in wanted])
        self.runner.backend.waiting.update({id(c.inputs): o for c, o in zip(wanted, outcomes)})

    # -- shrinking ----------------------------------------------------------------------------------------

    def shrink(self, div: Divergence, budget_s: float = 60.0, report: FuzzReport | None = None) -> str:
        """Hypothesis's shrinker on the recorded choices, keeping the divergence's class, and only through cases
        whose repro suite loads. -> "shrunk", or why the case kept is the first one found. A fault on a case
        tried is counted in ``report`` (index None); once the backend has given up, shrinking stops."""
        from hypothesis import HealthCheck, Phase, settings
        from hypothesis.internal.conjecture.data import Status
        from hypothesis.internal.conjecture.engine import ConjectureRunner
        from hypothesis.internal.escalation import InterestingOrigin

        origin = InterestingOrigin(AssertionError, div.signature, 0, (), ())
        deadline = time.monotonic() + budget_s
        found, faulted = {}, []
        loadable = self.loadable(div.case) is None  # one beyond the loader's bounds may shrink into them

        def test(data):
            case = draw_case(DataDraw(data), self.profile, self.ops, self.scope)
            if time.monotonic() > deadline or self._gave_up():
                return
            verdict, sig = self.judge(case)
            if status_of(verdict) == FAULTED:
                faulted.append(verdict.kind)
                if report is not None:
                    report.faults.append((None, case.op, verdict.kind, _first_line(verdict.details.get("detail", ""))))
            if sig == div.signature and (not loadable or self.loadable(case) is None):
                found[tuple(data.choices)] = (case, verdict)
                data.mark_interesting(origin)

        conf = settings(database=None, deadline=None, phases=[Phase.shrink], max_examples=10**6,
                        suppress_health_check=list(HealthCheck))
        runner = ConjectureRunner(test, settings=conf, random=Random(self.seed))
        initial = runner.cached_test_function(div.choices)
        if initial.status != Status.INTERESTING:
            if self._gave_up():
                return "not shrunk: the backend gave up"
            if faulted:
                return f"not shrunk: the backend faulted ({faulted[0]}) on the first case, run again"
            return "not shrunk: the first case did not diverge again (a flaky backend?)"
        final = runner.shrink(initial, lambda d: d.status == Status.INTERESTING)
        div.case, div.verdict = found.get(tuple(final.choices), (div.case, div.verdict))
        if self._gave_up():
            return "shrunk until the backend gave up (perhaps not minimal)"
        return "shrunk"

    def loadable(self, case: FuzzCase) -> str | None:
        """Why the case's repro suite would not load (a comparison contract beyond the loader's bounds under
        some profile: a GEMM on huge operands needs a larger atol), else None."""
        c = _as_case(case, False)
        if c.op not in TOLERANT_OPS:
            return None
        with np.errstate(all="ignore"):
            for p in PROFILES:
                try:
                    found = contracts(c, p)
                except Exception:  # noqa: BLE001 - an oracle failure is judged (and reported) elsewhere
                    return None
                problem = next(filter(None, map(tolerance_problem, found.values())), None)
                if problem:
                    return f"{p}: {problem}"
        return None

    # -- repro --------------------------------------------------------------------------------------------

    def write(self, div: Divergence, out: Path) -> Path:
        """The minimal case as a one-vector suite (expectations for every profile), like ``qconform repro``."""
        case = div.case
        c = _as_case(case)
        try:
            entries = {p: expect(c, p) for p in PROFILES}  # undefined under some profiles: the vector says so there
        except CaseError as e:
            raise OracleCrash(str(e)) from None
        accidents.mark(c.op, c.params, c.inputs, entries, run_oracle)  # as the golden suite's vectors are marked
        tags = sorted(structural_tags(c) | data_tags(c, entries) | outcome_tags(entries) | accidents.tags(entries))
        vector = Vector(vector_id(c.op, c.params, c.inputs), c.alias, c.op, c.params, c.inputs, {})
        folder = out / vector.id
        how = div.shrunk or "not shrunk"
        problem = self.loadable(case)
        if problem:  # the loader would refuse it: write nothing that `qconform run` cannot run
            raise VectorError(folder, f"its repro suite would not load ({problem}; {how})", vector.alias)
        # atomically (conformance/outputs.py); the folder is named by the case's content, so one already there
        # is the same case from an earlier run and is replaced
        write_folder(folder, lambda tmp: write_suite(
            tmp, [{"alias": vector.alias, "op": c.op, "params": c.params, "inputs": c.inputs,
                   "tags": tags, "spec": [], "reason": f"qconform fuzz (seed {self.seed}, case "
                   f"{div.first_index}, {how}): {div.signature}", "expected": entries}],
            suite=f"fuzz-{vector.id}", profiles=list(PROFILES), suite_version="1",
            oracle_version=oracle.__version__), force=True)
        return folder


CHUNK = 256  # cases per task handed to a worker process
MAX_WORKER_START_DEATHS = 3  # workers killed before their first chunk: then the run stops (a start error)


class _Pool:
    """``jobs`` worker processes (forked: a worker starts in milliseconds with everything imported), each with
    its own Fuzzer and backend, judging one chunk of indices at a time; the parent takes the results in index
    order. Every worker ignores SIGINT (a terminal's Ctrl-C reaches the whole process group: the parent alone
    decides) and stops its backend on SIGTERM, which the parent sends them when it stops, however it stops."""

    def __init__(self, jobs: int, args: tuple):
        import multiprocessing
        self.context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods()
                                                   else None)
        self.args, self.start_deaths = args, 0
        self.workers = [self._spawn() for _ in range(jobs)]

    def _spawn(self) -> dict:
        mine, theirs = self.context.Pipe()
        proc = self.context.Process(target=_worker_main, args=(theirs, self.args), daemon=True)
        proc.start()
        theirs.close()
        return {"proc": proc, "conn": mine, "chunk": None}

    def judged(self, indices, seconds, start, report):
        """Results in index order. Each worker sends its results case by case, so an interrupt keeps every case
        judged so far, also those of chunks waiting behind an unfinished one (then yielded out of order)."""
        from multiprocessing.connection import wait

        it, numbered = iter(indices), itertools.count()
        got, complete, deaths, next_out = {}, set(), collections.Counter(), 0
        waiting = collections.deque()  # chunks to hand out again first: (number, indices)

        def hand(worker):
            if waiting:
                worker["chunk"] = waiting.popleft()
            elif seconds is None or time.monotonic() - start < seconds:
                chunk = list(itertools.islice(it, CHUNK))
                worker["chunk"] = (next(numbered), chunk) if chunk else None
            else:
                worker["chunk"] = None
            if worker["chunk"] is not None:
                got[worker["chunk"][0]] = []
                worker["conn"].send(worker["chunk"][1])

        for w in self.workers:
            w["ready"] = False
        try:
            while True:
                busy = [w for w in self.workers if w["chunk"] is not None or not w["ready"]]
                if not busy:
                    break
                ready = set(wait([w["conn"] for w in busy] + [w["proc"].sentinel for w in busy]))
                for w in busy:
                    self._receive(w, ready, hand, got, complete, report, deaths, waiting)
                while next_out in complete:
                    complete.discard(next_out)
                    yield from got.pop(next_out)
                    next_out += 1
        except KeyboardInterrupt:
            for number in sorted(got):  # what the workers had judged, the unfinished chunks' cases included
                yield from got.pop(number)
            raise

    def _receive(self, w, ready, hand, got, complete, report, deaths, waiting):
        """Take what worker ``w`` sent (or its death)."""
        while w["conn"] in ready and w["conn"].poll():
            try:
                what, payload = w["conn"].recv()
            except (EOFError, OSError):
                break
            if what == "start failed":
                from ..runner import RunnerError
                raise RunnerError(f"a --jobs worker could not start its backend: {payload}")
            if what == "ready":
                w["ready"] = True
                hand(w)
                return
            if what == "case":
                got[w["chunk"][0]].append(payload)
            elif what == "done":
                complete.add(w["chunk"][0])
                hand(w)
                return
        if w["proc"].sentinel in ready and not w["proc"].is_alive():
            if w["chunk"] is not None:
                got[w["chunk"][0]] = []  # judged again from its start by the next worker
            self._replace(w, report, deaths, waiting, complete)

    def _replace(self, w, report, deaths, waiting, complete):
        """A worker died: report it, start another, and hand its chunk out again (once: a chunk that kills two
        workers is counted as not run rather than tried forever)."""
        w["proc"].join(1)
        code = w["proc"].exitcode
        how = f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit status {code}"
        chunk = w["chunk"]
        what = f"cases {chunk[1][0]}..{chunk[1][-1]}" if chunk else "no chunk"
        report.worker_deaths.append(f"worker {w['proc'].pid} died ({how}) while judging {what}")
        w["conn"].close()
        self.workers[self.workers.index(w)] = fresh = self._spawn()
        fresh["ready"] = False
        if chunk is None:
            self.start_deaths += 1
            if self.start_deaths >= MAX_WORKER_START_DEATHS:
                from ..runner import RunnerError
                raise RunnerError(f"--jobs workers died {self.start_deaths} times before judging anything: "
                                  + "; ".join(report.worker_deaths[-MAX_WORKER_START_DEATHS:]))
            return
        deaths[chunk[0]] += 1
        if deaths[chunk[0]] < 2:
            waiting.appendleft(chunk)
        else:
            report.not_run += len(chunk[1])
            report.worker_deaths[-1] += f"; its {len(chunk[1])} cases were not run (they killed two workers)"
            complete.add(chunk[0])

    def close(self):
        """Stop every worker: a ``None`` (end of work) to the idle, SIGTERM to all that are still there after a
        moment (each stops its backend), SIGKILL to any that ignores that."""
        for w in self.workers:
            if w["chunk"] is None and w["proc"].is_alive():
                try:
                    w["conn"].send(None)
                except OSError:
                    pass
        for w in self.workers:
            w["proc"].join(5 if w["chunk"] is None else 0)
            if w["proc"].is_alive():
                w["proc"].terminate()
        for w in self.workers:
            w["proc"].join(10)
            if w["proc"].is_alive():
                w["proc"].kill()
                w["proc"].join(5)
            w["conn"].close()


def _worker_main(conn, args):
    """A worker: its own Fuzzer, then one chunk of indices at a time until a ``None``."""
    from ..runner import RunnerError
    mine = []

    def stop(signum, frame):
        for fuzzer in mine:
            fuzzer.close()  # kills the backend's whole tree, also mid-request
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, stop)
    spec, profile, ops, seed, timeout, diagnose, formats, expectations, exact_burn = args
    try:
        mine.append(Fuzzer(spec, profile=profile, ops=ops, seed=seed, timeout=timeout, diagnose=diagnose,
                           formats=formats, expectations=expectations, exact_burn=exact_burn))
    except (RunnerError, ValueError) as e:
        conn.send(("start failed", str(e)))
        return
    fuzzer = mine[0]
    conn.send(("ready", None))
    try:
        while (chunk := conn.recv()) is not None:
            for result in fuzzer._judged(chunk, None, 0.0):
                conn.send(("case", result))
            conn.send(("done", None))
    except EOFError:  # the parent is gone
        pass
    finally:
        fuzzer.close()


# Statuses of a case that exercised nothing of the backend (not counted among the formats and ops exercised).
NOT_EXERCISED = ("not applicable", "declined", "undefined behaviour (skipped)", "oracle crashed", "skipped",
                 "not run")


FAULT_KINDS = ("crashed", "timed out", "protocol error")  # a verdict of these kinds: the backend failed to answer
PROGRESS_SECONDS = 60.0  # a long run logs how far it is this often (cases, rate, divergences and faults so far)
INDICES_SHOWN = 40  # a class's case indices listed in the summary (the --at list to judge them again)
DECLINES_SHOWN = 5  # the most frequent reasons of the backend's declined cases, each with its count
FAULTED = "faulted"  # the status a case counts under when the backend faulted on it: counted, never a divergence
NOT_RUN = "not run"  # a case never sent: the backend had given up (failed restarts in a row)


def _validation_only(verdict) -> bool:
    return getattr(verdict, "status", None) == NOT_APPLICABLE and verdict.note.startswith(VALIDATION_DECLINED)


def with_accidents(vector: Vector) -> Vector | None:
    """The vector with burn's accidents marked as ``qconform generate`` marks a golden vector's
    (``conformance/accidents.py``: a burn bug's acceptable outcome, a validation-only panic), or None where its
    expectations have none. Asked only of a failed case (it may run the oracle again): a backend that is not burn
    is never required to copy them, in the fuzzer as in the suite."""
    entries = {p: {"error": e.error} if e.error is not None else {"outputs": e.outputs, "stages": e.stages}
               for p, e in vector.expected.items()}
    marked = {p: dataclasses.replace(vector.expected[p], validation=e.get("validation"),
                                     acceptable=tuple(Acceptable(a["outputs"], a["values"], a["why"])
                                                      for a in e.get("acceptable", ())))
              for p, e in accidents.mark(vector.op, vector.params, vector.inputs, entries, run_oracle).items()}
    return dataclasses.replace(vector, expected={**vector.expected, **marked}) if marked else None


def status_of(verdict) -> str:
    """How a case counts in the report: the verdict's status, or what kept it from having one."""
    if verdict is None:
        return "oracle crashed"
    if verdict is UNDEFINED:
        return "undefined behaviour (skipped)"
    return FAULTED if verdict.status == FAILED and verdict.kind in FAULT_KINDS else verdict.status


def _freeze_old_objects() -> bool:
    """``gc.freeze()`` for the loop, unless someone froze objects already (theirs to undo): what existed before
    the run (numpy, the oracle's tables, the remembered answers) is then not walked again by every full
    collection the run's allocations trigger, about 10 µs a case for a one-format run (docs/performance.md).
    True when this froze them (``gc.unfreeze()`` after the loop)."""
    if gc.get_freeze_count():
        return False
    gc.freeze()
    return True


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:200]


def _as_case(case: FuzzCase, canonical: bool = True, aliased: bool = False) -> Case:
    if not canonical:  # the strategies build plain JSON params and contiguous arrays already
        alias = fuzz_alias(case) if aliased else f"{case.op}/fuzz/case"
        return Case(alias, case.op, case.params, case.inputs, reason="fuzz")
    params = canonical_json(case.params, f"fuzz case {case.op}")
    inputs = {k: np.ascontiguousarray(v) for k, v in case.inputs.items()}
    vid = vector_id(case.op, params, inputs)
    return Case(f"{case.op}/fuzz/{vid}", case.op, params, inputs, reason="fuzz")


_STORE_SLUG = {"Native": "", "PackedU32": "-packed", "PackedNative": "-packed-native"}


def fuzz_alias(case: FuzzCase) -> str:
    """``op/value[-store]/level/fuzz``, in the golden vectors' words (``quantize/q4s-packed/block/fuzz``), so
    that an expectations entry written for ``qconform run`` (``*/q4s-packed*/*``) matches the fuzz cases it
    means."""
    obj = scheme_obj(case.params["scheme"]) if "scheme" in case.params else None
    if obj is None:
        return f"{case.op}/fuzz/case"
    return f"{case.op}/{obj.value.name.lower()}{_STORE_SLUG[obj.store.kind]}/{level(obj)}/fuzz"


def merge_by_cause(divergences: dict) -> dict:
    """One cause, one class: two classes that one alternative explains on every case of both are one class (a
    small case often fits two alternatives, e.g. ties to even and toward zero on 2.5 alone, and its leading
    explanation then names the other's family). The larger class keeps its signature and first case."""
    def causes(div):  # the alternatives (not the outputs they show in) that explain every case of a class
        return {c.partition(": ")[2] for c, n in div.explained.items() if n == div.count and ": " in c}

    def families(div):  # the causes (FAMILIES) of the alternatives that explain every case of a class
        fields = {m.group(1) for c in causes(div) for m in [re.search(r"\((\w+): ", c)] if m}
        return {FAMILIES[f] for f in fields if f in FAMILIES}

    out: dict = {}
    for div in sorted(divergences.values(), key=lambda d: (-d.count, d.first_index)):
        every, named = causes(div), families(div)
        # the same alternative explains both; or a larger class is already named for a cause that explains
        # every case of this one (its leading explanation happened to be another family's)
        home = next((h for h in out.values() if every & causes(h)), None) or \
            next((h for h in out.values() if any(f in h.signature for f in named)), None)
        if home is None:
            out[div.signature] = div
            continue
        home.count += div.count
        home.indices = sorted(home.indices + div.indices)
        for op, n in div.ops.items():
            home.ops[op] = home.ops.get(op, 0) + n
        for c, n in div.explained.items():
            home.explained[c] = home.explained.get(c, 0) + n
    return out


def explained_by(diagnosis: dict) -> list[str]:
    """What explains one case, as the class's report counts it: each explanation ("codes: ties rounded to even
    (tie: even)") and each whole-answer match ("mutant ties-even")."""
    out = [f"{e['output']}: {e['text']} ({e['deciding']})" for e in diagnosis.get("explanations", [])]
    return out + list(diagnosis.get("matches", []))


def signature(vector, verdict) -> str:
    """A divergence's class: its cause as the diagnosis names it (per wrong output, the family of its leading
    explanation or its data class: "mismatch: codes: tie-breaking rule"), so one cause is one class whatever op
    or alternative shows it; else the most specific whole-answer match, else op, failure kind and first wrong
    stage or error codes. Counts and values stay out, so equal causes aggregate."""
    d = verdict.diagnosis or {}
    cause = diagnose.leading(d)
    if cause:
        return f"{verdict.kind}: {cause}"
    if d.get("matches"):  # the most specific candidates (a one-rule mutant of the judged profile first)
        rank = {c: diagnose.rank(c, verdict.profile) for c in d["matches"]}
        best = sorted(c for c in rank if rank[c] == min(rank.values()))
        descs = d.get("descriptions", {})
        return f"{verdict.kind}: matches " + "; ".join(f"{c} ({descs[c]})" if descs.get(c) else c for c in best)
    head = f"{vector.op}: {verdict.kind}"
    exp = vector.expected[verdict.profile]
    if verdict.kind in ("unexpected error", "wrong error", "message mismatch"):
        actual = verdict.details.get("actual_error", {}).get("code")
        want = exp.error["code"] if exp.error else "data"
        head += f" (expected {want}, backend {actual})"
    elif verdict.kind == "missing error":
        head += f" (expected {exp.error['code']})"
    if d.get("stage"):
        return f"{head}; first wrong stage {d['stage']}"
    if verdict.kind == "mismatch":
        outputs = sorted(o["output"] for o in verdict.details.get("outputs", []))
        return f"{head} in {', '.join(outputs)}"
    return head


@dataclass
class FuzzReport:
    backend: str
    profile: str
    seed: int
    ops: list[str] | None
    cases: int = 0
    seconds: float = 0.0
    statuses: dict = field(default_factory=dict)
    declines: dict = field(default_factory=dict)  # the backend's reason -> cases it declined with it
    validation: dict = field(default_factory=dict)  # validation-only cases of a backend that does not validate
    divergences: dict[str, Divergence] = field(default_factory=dict)
    scope: list[str] | None = None   # the declared formats drawn inside (None: the default case stream)
    exercised: dict = field(default_factory=dict)  # (format or "other", op) -> cases the backend was judged on
    faults: list = field(default_factory=list)  # (case index, or None while shrinking; op, kind, first line)
    gave_up: str = ""        # why the backend was given up on (failed restarts in a row): the rest not run
    interrupted: str = ""    # the signal that stopped the run (SIGINT, SIGTERM)
    not_run: int = 0         # cases asked for and never judged (backend gave up, chunks that killed workers)
    worker_deaths: list = field(default_factory=list)  # --jobs workers that died, and what became of their cases
    write_errors: list[str] = field(default_factory=list)  # minimal cases that could not be written (why)

    @property
    def failed(self) -> bool:
        """Anything but a complete run on which the backend agreed and never faulted (a worker that died and whose
        cases a new worker judged is reported, not failed: every case has its verdict)."""
        return bool(self.divergences or self.faults or self.gave_up or self.interrupted or self.not_run)

    def progress(self, seconds: float) -> str:
        """One line on a run under way: what a long campaign logs every ``PROGRESS_SECONDS``."""
        diverging = sum(d.count for d in self.divergences.values())
        return (f"[progress] {self.cases:,} cases in {seconds:,.0f} s ({self.cases / max(seconds, 1e-9):,.1f}/s): "
                f"{diverging} diverging in {len(self.divergences)} classes, {len(self.faults)} faults")

    def lines(self) -> list[str]:
        rate = self.cases / self.seconds if self.seconds else 0.0
        out = [(f"qconform fuzz: {self.cases} cases in {self.seconds:.1f} s ({rate:,.0f}/s), seed {self.seed}, "
               f"backend {self.backend}, profile {self.profile}"),
               "  " + ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items()))]
        for reason, n in sorted(self.declines.items(), key=lambda kv: -kv[1])[:DECLINES_SHOWN]:
            out.append(f"    declined {n} x {reason}")
        if len(self.declines) > DECLINES_SHOWN:
            out.append(f"    declined {sum(sorted(self.declines.values())[:-DECLINES_SHOWN])} x other reasons")
        for reason, n in sorted(self.validation.items(), key=lambda kv: -kv[1]):
            out.append(f"    not applicable {n} x {reason}")
        if self.scope is not None:
            out.append(f"  drawn inside: {', '.join(self.scope)}")
        out += self.exercised_lines()
        out += self.fault_lines()
        if not self.divergences:
            # a backend that declined (or was not given) every case has shown nothing: say so, not just "no divergence"
            judged = self.statuses.get(PASSED, 0) + self.statuses.get(FAILED, 0)
            out.append("  no divergence" if judged else "  no divergence, but no case was judged (passed or failed)")
        for div in sorted(self.divergences.values(), key=lambda d: -d.count):
            ops = ", ".join(f"{op} x{n}" for op, n in sorted(div.ops.items(), key=lambda kv: -kv[1]))
            out.append(f"\nDIVERGENCE x{div.count} (first at case {div.first_index}; {ops}): {div.signature}")
            if len(div.indices) > 1:
                more = len(div.indices) - INDICES_SHOWN
                out.append(f"  its cases (judge them again with the same options and --at): "
                           f"{compact(div.indices[:INDICES_SHOWN])}" + (f" and {more} more" if more > 0 else ""))
            every = [c for c, n in div.explained.items() if n == div.count]
            if every:
                out.append(f"  explained on all {div.count} cases by: {'; '.join(map(_named, every))}")
            some = sorted(((n, c) for c, n in div.explained.items() if n < div.count), reverse=True)[:3]
            if some:
                out.append("  on some cases also: " + "; ".join(f"{_named(c)} ({n}/{div.count})" for n, c in some))
            if div.case is not None:
                minimal = div.shrunk.startswith("shrunk")
                label = "minimal case" if minimal else f"first case ({div.shrunk or 'not shrunk'})"
                out.append(f"  {label}: {div.case.describe()}")
                if minimal and div.shrunk != "shrunk":
                    out.append(f"  ({div.shrunk})")
                for name, a in div.case.inputs.items():
                    out.append(f"    {name} = {np.array2string(a.astype(np.float32) if a.dtype.kind == 'V' or str(a.dtype) == 'bfloat16' else a, threshold=40, max_line_width=110)}")
            if div.verdict is not None and div.verdict.message:
                out += ["  " + line for line in div.verdict.message.splitlines()[1:12]]
            if div.written is not None:
                out.append(f"  wrote {div.written}/; rerun with:\n    qconform run --backend "
                           f"{_quote(self.backend)} --profile {self.profile} --vectors {div.written}")
        return out


    def fault_lines(self) -> list[str]:
        """The backend's faults (each counted, whether or not the case could be judged again), a backend that gave
        up, workers that died, an interrupt: what the run did not judge, and why."""
        out = []
        if self.faults:
            kinds = collections.Counter(kind for _, _, kind, _ in self.faults)
            during = sum(1 for i, *_ in self.faults if i is None)
            times = "once" if len(self.faults) == 1 else f"{len(self.faults)} times"
            out.append(f"  FAULTS: the backend faulted {times} ("
                       + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
                       + (f"; {during} of them while shrinking" if during else "") + ")")
            for index, op, kind, line in self.faults[:FAULTS_SHOWN]:
                where = f"case {index}" if index is not None else "while shrinking"
                out.append(f"    {where} ({op}): {kind}: {line}")
            if len(self.faults) > FAULTS_SHOWN:
                out.append(f"    ... and {len(self.faults) - FAULTS_SHOWN} more")
        for death in self.worker_deaths:
            out.append(f"  WORKER DIED: {death}")
        if self.gave_up:
            out.append(f"  BACKEND GAVE UP: {_first_line(self.gave_up)}")
        if self.not_run:
            out.append(f"  NOT RUN: {self.not_run} cases")
        if self.interrupted:
            out.append(f"  INTERRUPTED ({self.interrupted}) after {self.cases} cases: the divergences below are "
                       "those found so far, shrunk only until the interrupt")
        return out

    def exercised_lines(self) -> list[str]:
        """Per format (or ``other``), the ops the judged cases exercised, with counts."""
        per: dict[str, dict[str, int]] = {}
        for (where, op), n in self.exercised.items():
            per.setdefault(where, {})[op] = n
        if not per:
            return ["  exercised: nothing (no case applied to the backend)"]
        lines = ["  exercised (judged cases per format and op):"]
        for where in sorted(per, key=lambda w: (w in ("other", "no scheme"), w)):
            ops = per[where]
            lines.append(f"    {where}: {sum(ops.values())} ("
                         + ", ".join(f"{op} {n}" for op, n in sorted(ops.items(), key=lambda kv: -kv[1])) + ")")
        return lines


def _named(explanation: str) -> str:
    """An explanation as the class report prints it: a whole-answer match reads "matches mutant ties-even"."""
    return explanation if ": " in explanation else f"matches {explanation}"


def _quote(spec: str) -> str:
    import shlex
    return shlex.quote(spec)


# ---- digest mode --------------------------------------------------------------------------------------------

def outcome_bytes(outcome, contracts: dict) -> bytes:
    """A canonical form of one backend answer: errors by code, data by bit pattern (every NaN alike, signed
    zeros distinct); an output under an ``allclose`` contract contributes only its dtype and shape."""
    if isinstance(outcome, Fault):
        return f"fault:{outcome.kind}".encode()
    if isinstance(outcome, Declined):  # a declined case hashes alike whatever the reason: it was not answered
        return b"declined"
    if isinstance(outcome, Error):
        code = outcome.code
        if code is None:
            code = oracle.classify_panic(outcome.message)
        return f"error:{code}".encode()
    h = hashlib.sha256()
    for name in sorted(outcome.outputs):
        a = np.ascontiguousarray(outcome.outputs[name])
        h.update(f"{name}:{a.dtype.str}:{list(a.shape)};".encode())
        if name in contracts:
            continue
        if a.dtype.kind == "f" or str(a.dtype) == "bfloat16":
            wide = a.astype(np.float32)
            bits = wide.view(np.uint32).copy()
            bits[np.isnan(wide)] = 0x7FC00000
            h.update(bits.tobytes())
        else:
            h.update(a.tobytes())
    h.update(json.dumps(outcome.values, sort_keys=True, default=str).encode())
    return h.digest()


CHECKPOINT = 4096


@dataclass
class DigestRun:
    digest: str
    cases: int               # cases hashed (fewer than asked when the backend gave up)
    checkpoints: list[str]   # the chain after every CHECKPOINT cases
    faults: list = field(default_factory=list)  # (case index, kind, first line) of each fault: no answer
    gave_up: str = ""        # why the backend was given up on; the chain stops there


def digest_run(backend, profile: str, *, seed: int, cases: int, ops=None, start: int = 0,
               progress=None, capabilities=None, formats=()) -> DigestRun:
    """Cases ``start..start+cases`` through ``backend`` (no oracle, no judging): chain_i = sha256(chain_{i-1}
    || sha256(outcome_i)); the chain starts from the seed, profile and ops (and the scope's formats, when there
    is one). The cases are the ones ``qconform fuzz`` draws for ``capabilities`` (default: the backend's own;
    pass the tested backend's when digesting the reference) and ``formats``: inside their scope (``scope_of``),
    so case ``i`` is the same case in both runs and in a judged rerun of it. A case outside ``capabilities`` is
    not sent and hashes as "not applicable"."""
    caps = capabilities if capabilities is not None else backend.hello.capabilities
    scope = scope_of(caps, tuple(formats), ops)
    head = [seed, profile, ops or "all"] + ([scope.labels()] if scope is not None else [])
    chain = hashlib.sha256(json.dumps(head).encode()).digest()
    checkpoints, faults, done = [], [], 0
    batch = BATCH if hasattr(backend, "run_many") else 1
    for first in range(start, start + cases, batch):
        if getattr(backend, "gave_up", ""):
            break
        indices = range(first, min(first + batch, start + cases))
        drawn = [draw_case(RandomDraw(f"{seed}:{i}"), profile, ops, scope) for i in indices]
        sent = [c for c in drawn if caps.not_applicable(_as_case(c, False)) is None]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            requests = [(c.op, c.params, c.inputs) for c in sent]
            answers = backend.run_many(requests) if batch > 1 else [backend.run(*r) for r in requests]
        answered = {id(c): o for c, o in zip(sent, answers)}
        for i, case in zip(indices, drawn):
            outcome = answered.get(id(case))
            with np.errstate(all="ignore"):
                compare = contracts(_as_case(case, False), profile) if case.op in TOLERANT_OPS else {}
            data = b"not applicable" if outcome is None else outcome_bytes(outcome, compare)
            if isinstance(outcome, Fault) and outcome.kind in FAULT_KINDS:
                faults.append((i, outcome.kind, _first_line(outcome.detail)))
            chain = hashlib.sha256(chain + hashlib.sha256(data).digest()).digest()
            done += 1
            if (i - start + 1) % CHECKPOINT == 0:
                checkpoints.append(chain.hex())
                if progress:
                    progress(i + 1)
    return DigestRun(chain.hex(), done, checkpoints, faults, getattr(backend, "gave_up", "") or "")


def first_difference(a, b, profile: str, *, seed: int, cases: int, ops=None,
                     ca: list[str], cb: list[str], formats=()) -> int | None:
    """The first case where two backends answer differently: bisect over the checkpoints (the chains agree up
    to some checkpoint and differ after it, as a chain never re-converges), then replay that stretch."""
    lo, hi = 0, len(ca)  # first differing checkpoint is in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if ca[mid] == cb[mid]:
            lo = mid + 1
        else:
            hi = mid
    first = lo * CHECKPOINT
    caps = a.hello.capabilities
    for i in range(first, min(cases, first + CHECKPOINT)):
        ra = digest_run(a, profile, seed=seed, cases=1, ops=ops, start=i, formats=formats)
        rb = digest_run(b, profile, seed=seed, cases=1, ops=ops, start=i, capabilities=caps, formats=formats)
        if ra.digest != rb.digest:
            return i
    return None
