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
import hashlib
import itertools
import json
import re
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from random import Random

import numpy as np

import oracle
from oracle.vocabulary import level

from .. import diagnose
from ..hypotheses import FAMILIES
from ..cases import Case
from ..compare import FAILED, PASSED
from ..contracts import TOLERANT_OPS, contracts
from ..generate import PROFILES, CaseError, canonical_json, expect
from ..protocol import Declined, Error, Fault
from ..runner import Runner
from ..tags import data_tags, outcome_tags, structural_tags
from ..outputs import OutputError, write_folder
from ..vectors import Expected, Vector, vector_id, write_suite
from ..formats import formats_of
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
    choices: list = field(default_factory=list)
    case: FuzzCase | None = None
    verdict: object = None
    written: Path | None = None


BATCH = 64  # requests in flight through a backend with run_many
# A digest hashes only the dtype and shape of an output compared within a tolerance; contracts.TOLERANT_OPS names
# the ops whose contracts can give one (qlayout's, for a chain holding a matmul, runs the oracle on its prefix).


class _Prefetched:
    """The runner's backend: answers a request whose reply already arrived in a batch, else asks the backend."""

    def __init__(self, backend):
        self.backend, self.hello, self.waiting = backend, backend.hello, {}

    def run(self, op, params, inputs):
        outcome = self.waiting.pop(id(inputs), None)
        return outcome if outcome is not None else self.backend.run(op, params, inputs)

    def close(self):
        self.backend.close()


class Undefined(Exception):
    """burn's behaviour on this case is undefined under the profile (e.g. a GPU kernel reading out of bounds):
    there is nothing to compare, the case is counted and skipped."""


class OracleCrash(Exception):
    """The oracle failed with something other than a burn panic: a finding about the oracle itself."""


class Fuzzer:
    def __init__(self, backend_spec: str, *, profile: str | None = None, ops: list[str] | None = None,
                 seed: int = 0, timeout: float = 30.0, backend=None, diagnose: bool = True, jobs: int = 1,
                 formats=(), expectations=None):
        """``jobs`` > 1: cases are judged by that many worker processes, each with its own backend opened from
        ``backend_spec`` (so not with a ``backend`` object); the report is the same as with one.
        ``formats``: named formats (conformance/formats.py) to draw inside, instead of what the backend
        declares; ``expectations``: a known-failure ledger (``Expectations``), matched against each case's
        alias (``op/value[-store]/level/fuzz``) like ``qconform run`` matches a vector's."""
        if jobs > 1 and backend is not None:
            raise ValueError("jobs > 1 opens a backend per worker from its spec: pass a spec, not a backend")
        self.spec, self.ops, self.seed, self.jobs = backend_spec, ops, seed, jobs
        self.formats, self.expectations = tuple(formats), expectations
        self.runner = Runner(_Suite(list(PROFILES)), backend_spec, profile=profile, timeout=timeout,
                             backend=backend, diagnose=diagnose, expectations=expectations).start()
        self.profile = self.runner.profile
        self._worker_args = (backend_spec, self.profile, ops, seed, timeout, diagnose, self.formats, expectations)
        self._backend = self.runner.backend
        self.runner.backend = _Prefetched(self._backend)
        # Draw inside what the backend declares (or the named formats): None keeps the default case stream.
        self.scope = scope_of(self._backend.hello.capabilities, self.formats, ops)
        self._aliased = expectations is not None and bool(expectations.entries)

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
        for p in profiles or [self.profile]:
            try:
                expected[p] = Expected(**expect(c, p))
            except CaseError as e:
                raise OracleCrash(str(e)) from None
            if expected[p].undefined is not None:
                raise Undefined(f"case {c.alias!r} under {p}: {expected[p].undefined}")
        vid = vector_id(c.op, c.params, c.inputs) if canonical else "fuzz"
        return Vector(vid, c.alias, c.op, c.params, c.inputs, expected)

    def label(self, case: FuzzCase) -> str:
        """The named format a case is (the first of the registry's), else ``other``: the report counts by it."""
        obj = scheme_obj(case.params["scheme"]) if "scheme" in case.params else None
        if obj is None:
            return "no scheme" if "scheme" not in case.params else "other"
        shape = case.params.get("shape") or next((a.shape for k, a in case.inputs.items() if k in ("x", "codes")), None)
        names = formats_of(obj, shape)
        return names[0] if names else "other"

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
        if verdict.status != FAILED:
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
        report = FuzzReport(self.spec, self.profile, self.seed, self.ops,
                            scope=self.scope.labels() if self.scope is not None else None)
        start = time.monotonic()
        judged = self._in_workers(indices, seconds, start) if self.jobs > 1 else self._judged(indices, seconds, start)
        for index, status, sig, found, where in judged:
            report.statuses[status] = report.statuses.get(status, 0) + 1
            report.cases += 1
            if where is not None:
                report.exercised[where] = report.exercised.get(where, 0) + 1
            if sig is not None:
                case, choices, verdict = found
                div = report.divergences.get(sig)
                if div is None:
                    div = report.divergences[sig] = Divergence(sig, first_index=index, choices=choices,
                                                               case=case, verdict=verdict)
                    log(f"[case {index}] new divergence: {sig}")
                div.count += 1
                div.ops[case.op] = div.ops.get(case.op, 0) + 1
                for c in explained_by(getattr(verdict, "diagnosis", None) or {}):
                    div.explained[c] = div.explained.get(c, 0) + 1
        report.seconds = time.monotonic() - start
        report.divergences = merge_by_cause(report.divergences)
        for div in report.divergences.values():
            if shrink:
                self.shrink(div)
            if out is not None:
                try:
                    div.written = self.write(div, Path(out))
                except (OracleCrash, Undefined) as e:  # the divergence stays in the report, unwritten
                    log(f"[case {div.first_index}] not written as a vector: {e}")
                except OutputError as e:  # a full disk: the summary is still printed, the exit status says so
                    report.write_errors.append(str(e))
                    log(f"[case {div.first_index}] not written: {e}")
        return report

    def _judged(self, indices, seconds, start):
        """(index, status, signature, (case, choices, verdict) of a divergence else None), in index order."""
        for index, case, choices in self._drawn(indices, seconds, start):
            verdict, sig = self.judge(case)
            status = status_of(verdict)
            where = None if status in NOT_EXERCISED else (self.label(case), case.op)
            yield index, status, sig, None if sig is None else (case, choices, verdict), where

    def _in_workers(self, indices, seconds, start):
        """``_judged`` spread over ``jobs`` worker processes, chunk by chunk, results taken in index order (so the
        report, first cases included, is the one a single process makes). A few chunks per worker are in
        flight; a time budget stops handing out chunks, and the ones out are finished."""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork: a worker starts in milliseconds with everything imported; it opens its own backend and never
        # uses the parent's (whose pipes it inherits and leaves alone)
        context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        it = iter(indices)
        with ProcessPoolExecutor(self.jobs, mp_context=context, initializer=_worker_start,
                                 initargs=self._worker_args) as pool:
            pending = collections.deque()

            def hand_out():
                chunk = list(itertools.islice(it, CHUNK))
                if chunk:
                    pending.append(pool.submit(_worker_judge, chunk))

            for _ in range(3 * self.jobs):
                hand_out()
            while pending:
                results = pending.popleft().result()
                if seconds is None or time.monotonic() - start < seconds:
                    hand_out()
                yield from results

    def _drawn(self, indices, seconds, start):
        """(index, case, choices) in order; for a backend that takes several requests in flight
        (``run_many``), a batch's requests go out together and the judge finds their answers waiting."""
        batch_size = BATCH if hasattr(self._backend, "run_many") else 1
        it = iter(indices)
        while seconds is None or time.monotonic() - start < seconds:
            batch = [(i, *self.draw(i)) for i in itertools.islice(it, batch_size)]
            if not batch:
                return
            if batch_size > 1:
                self._prefetch([case for _, case, _ in batch])
            yield from batch
            self.runner.backend.waiting.clear()

    def _prefetch(self, cases: list[FuzzCase]) -> None:
        caps = self._backend.hello.capabilities
        wanted = [c for c in cases if caps.not_applicable(_as_case(c, False)) is None]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            outcomes = self._backend.run_many([(c.op, c.params, c.inputs) for c in wanted])
        self.runner.backend.waiting.update({id(c.inputs): o for c, o in zip(wanted, outcomes)})

    # -- shrinking ----------------------------------------------------------------------------------------

    def shrink(self, div: Divergence, budget_s: float = 60.0) -> None:
        """Hypothesis's shrinker on the recorded choices, keeping the divergence's class."""
        from hypothesis import HealthCheck, Phase, settings
        from hypothesis.internal.conjecture.data import Status
        from hypothesis.internal.conjecture.engine import ConjectureRunner
        from hypothesis.internal.escalation import InterestingOrigin

        origin = InterestingOrigin(AssertionError, div.signature, 0, (), ())
        deadline = time.monotonic() + budget_s
        found = {}

        def test(data):
            case = draw_case(DataDraw(data), self.profile, self.ops, self.scope)
            if time.monotonic() > deadline:
                return
            verdict, sig = self.judge(case)
            if sig == div.signature:
                found[tuple(data.choices)] = (case, verdict)
                data.mark_interesting(origin)

        conf = settings(database=None, deadline=None, phases=[Phase.shrink], max_examples=10**6,
                        suppress_health_check=list(HealthCheck))
        runner = ConjectureRunner(test, settings=conf, random=Random(self.seed))
        initial = runner.cached_test_function(div.choices)
        if initial.status != Status.INTERESTING:
            return  # not reproducible (a flaky backend): keep the first case as found
        final = runner.shrink(initial, lambda d: d.status == Status.INTERESTING)
        div.case, div.verdict = found.get(tuple(final.choices), (div.case, div.verdict))

    # -- repro --------------------------------------------------------------------------------------------

    def write(self, div: Divergence, out: Path) -> Path:
        """The minimal case as a one-vector suite (expectations for every profile), like ``qconform repro``."""
        case = div.case
        vector = self.vector(case, PROFILES, canonical=True)
        c = _as_case(case)
        entries = {p: expect(c, p) for p in PROFILES}
        tags = sorted(structural_tags(c) | data_tags(c, entries) | outcome_tags(entries))
        folder = out / vector.id
        # atomically (conformance/outputs.py); the folder is named by the case's content, so one already there
        # is the same case from an earlier run and is replaced
        write_folder(folder, lambda tmp: write_suite(
            tmp, [{"alias": vector.alias, "op": c.op, "params": c.params, "inputs": c.inputs,
                   "tags": tags, "spec": [], "reason": f"qconform fuzz (seed {self.seed}, case "
                   f"{div.first_index}, shrunk): {div.signature}", "expected": entries}],
            suite=f"fuzz-{vector.id}", profiles=list(PROFILES), suite_version="1",
            oracle_version=oracle.__version__), force=True)
        return folder


CHUNK = 256  # cases per task handed to a worker process


_WORKER: Fuzzer | None = None  # a worker process's own fuzzer


def _worker_start(spec, profile, ops, seed, timeout, diagnose, formats, expectations):
    from multiprocessing.util import Finalize

    global _WORKER
    _WORKER = Fuzzer(spec, profile=profile, ops=ops, seed=seed, timeout=timeout, diagnose=diagnose,
                     formats=formats, expectations=expectations)
    Finalize(_WORKER, _WORKER.close, exitpriority=10)  # a subprocess backend says bye when the pool ends


def _worker_judge(indices: list[int]) -> list:
    return list(_WORKER._judged(indices, None, 0.0))


# Statuses of a case that exercised nothing of the backend (not counted among the formats and ops exercised).
NOT_EXERCISED = ("not applicable", "declined", "undefined behaviour (skipped)", "oracle crashed", "skipped")


def status_of(verdict) -> str:
    """How a case counts in the report: the verdict's status, or what kept it from having one."""
    if verdict is None:
        return "oracle crashed"
    return "undefined behaviour (skipped)" if verdict is UNDEFINED else verdict.status


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
    divergences: dict[str, Divergence] = field(default_factory=dict)
    scope: list[str] | None = None   # the declared formats drawn inside (None: the default case stream)
    exercised: dict = field(default_factory=dict)  # (format or "other", op) -> cases the backend was judged on
    write_errors: list[str] = field(default_factory=list)  # minimal cases that could not be written (why)

    @property
    def failed(self) -> bool:
        return bool(self.divergences)

    def lines(self) -> list[str]:
        rate = self.cases / self.seconds if self.seconds else 0.0
        out = [(f"qconform fuzz: {self.cases} cases in {self.seconds:.1f} s ({rate:,.0f}/s), seed {self.seed}, "
               f"backend {self.backend}, profile {self.profile}"),
               "  " + ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items()))]
        if self.scope is not None:
            out.append(f"  drawn inside: {', '.join(self.scope)}")
        out += self.exercised_lines()
        if not self.divergences:
            # a backend that declined (or was not given) every case has shown nothing: say so, not just "no divergence"
            judged = self.statuses.get(PASSED, 0) + self.statuses.get(FAILED, 0)
            out.append("  no divergence" if judged else "  no divergence, but no case was judged (passed or failed)")
        for div in sorted(self.divergences.values(), key=lambda d: -d.count):
            ops = ", ".join(f"{op} x{n}" for op, n in sorted(div.ops.items(), key=lambda kv: -kv[1]))
            out.append(f"\nDIVERGENCE x{div.count} (first at case {div.first_index}; {ops}): {div.signature}")
            every = [c for c, n in div.explained.items() if n == div.count]
            if every:
                out.append(f"  explained on all {div.count} cases by: {'; '.join(map(_named, every))}")
            some = sorted(((n, c) for c, n in div.explained.items() if n < div.count), reverse=True)[:3]
            if some:
                out.append("  on some cases also: " + "; ".join(f"{_named(c)} ({n}/{div.count})" for n, c in some))
            if div.case is not None:
                out.append(f"  minimal case: {div.case.describe()}")
                for name, a in div.case.inputs.items():
                    out.append(f"    {name} = {np.array2string(a.astype(np.float32) if a.dtype.kind == 'V' or str(a.dtype) == 'bfloat16' else a, threshold=40, max_line_width=110)}")
            if div.verdict is not None and div.verdict.message:
                out += ["  " + line for line in div.verdict.message.splitlines()[1:12]]
            if div.written is not None:
                out.append(f"  wrote {div.written}/; rerun with:\n    qconform run --backend "
                           f"{_quote(self.backend)} --profile {self.profile} --vectors {div.written}")
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
    cases: int
    checkpoints: list[str]   # the chain after every CHECKPOINT cases


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
    checkpoints = []
    batch = BATCH if hasattr(backend, "run_many") else 1
    for first in range(start, start + cases, batch):
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
            chain = hashlib.sha256(chain + hashlib.sha256(data).digest()).digest()
            if (i - start + 1) % CHECKPOINT == 0:
                checkpoints.append(chain.hex())
                if progress:
                    progress(i + 1)
    return DigestRun(chain.hex(), cases, checkpoints)


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
