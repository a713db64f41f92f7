"""``qconform fuzz``: differential fuzzing of a backend against the oracle under a profile (docs/fuzzing.md).

    qconform fuzz --backend SPEC [--profile P] [--ops OP,...] [--format NAME ...] [--expectations TOML]
                  [--cases N | --time SECONDS] [--seed S] [--out DIR] [--jobs N]
    qconform fuzz --digest --backend SPEC [--against SPEC] --cases N [--seed S]
    qconform fuzz --check-determinism --backend SPEC [--cases N] [--seed S]

Exit status: 0 no divergence and no fault (digests equal, every case answered alike twice), 1 divergences or
faults (digests differ, or a fault makes them incomparable; nondeterministic cases), 2 bad arguments, 3 a backend
that cannot start or gave up, 6 a minimal case that could not be written (the verdict is printed), 128 + N
interrupted by signal N (130 Ctrl-C, 143 SIGTERM: the summary and repro suites of what was found are still written).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from ..arguments import compact, count, indices, seconds
from ..outputs import WRITE_FAILED, OutputError, check_inside
from ..runner import RunnerError
from ..terminal import safe

DEFAULT_OUT = Path("out/fuzz")
"""Where minimal repro suites go unless ``--out`` says: under ``out/``, which git ignores, so a fuzz run in a
checkout leaves nothing to commit by accident."""


@contextmanager
def _signals_end_the_run():
    """SIGTERM (a cancelled CI job, ``kill``) ends the run like Ctrl-C: ``KeyboardInterrupt`` with the signal's
    name, which the fuzz loop catches to report what it found. Further signals are ignored until the summary and
    repro suites are written and the backends stopped (bounded: no backend is waited on)."""
    def interrupt(signum, frame):
        for sig in old:  # a second signal (a shell's `timeout` passes its own on) must not cut the cleanup short
            signal.signal(sig, signal.SIG_IGN)
        raise KeyboardInterrupt(signal.Signals(signum).name)
    try:
        old = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: leave the process's handlers alone
        old = {}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _exit_status(report) -> int:
    if report.interrupted:
        return 128 + signal.Signals[report.interrupted].value
    if report.gave_up:
        return 3
    return 1 if report.failed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="qconform fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", required=True, metavar="SPEC")
    ap.add_argument("--profile", help="judge against this profile (default: the one the backend claims)")
    ap.add_argument("--ops", help="comma-separated ops (default: every op with a strategy)")
    ap.add_argument("--format", action="append", default=[], metavar="NAME", dest="formats",
                    help="draw only inside this named format (repeatable; see `qconform coverage --format`); "
                         "default: inside what the backend declares")
    ap.add_argument("--expectations", metavar="TOML", help="known failures and skips (like qconform run), "
                    "matched against each case's alias op/value[-store]/level/fuzz")
    budget = ap.add_mutually_exclusive_group()
    budget.add_argument("--cases", type=count, help="number of cases (default 2000)")
    budget.add_argument("--time", type=seconds, metavar="SECONDS", help="fuzz for this long")
    budget.add_argument("--at", type=indices, metavar="I,J,...", help="judge only these cases of the stream, "
                        "ranges A-B included (the indices a summary lists for a class; the other options as in that "
                        "run)")
    ap.add_argument("--seed", type=int, help="default: a fresh one (always printed)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where minimal repro suites go (default {DEFAULT_OUT})")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--exact-burn", action="store_true", help="the backend is one of burn's own builds: judge by "
                    "burn's outcome alone (no burn-bug alternative accepted, no validation case declined), as "
                    "qconform run --exact-burn")
    ap.add_argument("--timeout", type=seconds, default=30.0, help="per-case backend timeout (s)")
    ap.add_argument("--jobs", type=count, default=1, metavar="N", help="judge cases in N worker processes, each "
                    "with its own backend (same cases, same report; default 1)")
    ap.add_argument("--digest", action="store_true", help="hash every outcome into a chain (no oracle, no "
                    "storage); with --against, compare and bisect to the first differing case")
    ap.add_argument("--against", metavar="SPEC", help="--digest: the other backend (default oracle:PROFILE)")
    ap.add_argument("--check-determinism", action="store_true", help="no oracle: run the cases through two fresh "
                    "backend processes and report the cases whose answers differ (to be declared undefined)")
    args = ap.parse_args(argv)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    ops = args.ops.split(",") if args.ops else None
    from ..formats import get_format
    try:
        for name in args.formats:
            get_format(name)
    except ValueError as e:
        ap.error(str(e))
    print(f"qconform fuzz: seed {seed}", flush=True)
    if args.digest:
        return _digest(args, seed, ops)
    if args.check_determinism:
        return _determinism(args, seed, ops)
    from ..expectations import Expectations, ExpectationsError
    try:
        expectations = Expectations.load(args.expectations) if args.expectations else None
    except (ValueError, ExpectationsError, OSError) as e:
        ap.error(str(e))
    try:
        check_inside(args.out)  # before the work: minimal cases found after an hour must have somewhere to go
    except OutputError as e:
        ap.error(str(e))
    with _signals_end_the_run():
        return _fuzz(args, seed, ops, expectations)


def _fuzz(args, seed: int, ops, expectations) -> int:
    from .engine import Fuzzer
    try:
        fuzzer = Fuzzer(args.backend, profile=args.profile, ops=ops, seed=seed, timeout=args.timeout,
                        jobs=args.jobs, formats=args.formats, expectations=expectations,
                        exact_burn=args.exact_burn)
    except RunnerError as e:
        print(safe(e), file=sys.stderr)
        return 3
    except ValueError as e:  # nothing to draw inside the declared capabilities
        print(f"qconform fuzz: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        print(f"qconform fuzz: interrupted ({e or 'SIGINT'}) while starting the backend", file=sys.stderr)
        return 128 + signal.Signals[str(e) or "SIGINT"].value
    try:
        log = lambda m: print(safe(m), flush=True)  # noqa: E731
        if args.at is not None:
            report = fuzzer.run_indices(args.at, shrink=not args.no_shrink, out=args.out, log=log)
        else:
            cases = args.cases if args.cases is not None or args.time is not None else 2000
            report = fuzzer.run(cases=cases, seconds=args.time, shrink=not args.no_shrink, out=args.out, log=log)
    except RunnerError as e:  # --jobs: a worker's backend did not start
        print(safe(e), file=sys.stderr)
        return 3
    finally:
        fuzzer.close()
    print(safe("\n".join(report.lines())))  # messages and names are the backend's text
    budget = f"--at {compact(args.at)}" if args.at is not None else f"--cases {report.cases}"
    rerun = ["qconform fuzz", f"--backend '{args.backend}'", f"--seed {seed}", budget] + \
        ([f"--profile {args.profile}"] if args.profile else []) + ([f"--ops {args.ops}"] if args.ops else []) + \
        [f"--format {f}" for f in args.formats] + \
        ([f"--expectations {args.expectations}"] if args.expectations else []) + \
        (["--exact-burn"] if args.exact_burn else [])
    print(safe(f"\nsame cases again: {' '.join(rerun)}"))
    if report.write_errors and not (report.interrupted or report.gave_up):
        print(safe(f"qconform fuzz: {len(report.write_errors)} minimal cases not written: "
                   f"{report.write_errors[0]}"), file=sys.stderr)
        return WRITE_FAILED
    return _exit_status(report)


def _determinism(args, seed: int, ops) -> int:
    from .determinism import check
    try:
        report = check(args.backend, profile=args.profile, seed=seed, cases=args.cases or 2000, ops=ops,
                       timeout=args.timeout)
    except RunnerError as e:
        print(e, file=sys.stderr)
        return 3
    print("\n".join(report.lines()))
    return 1 if report.differing else 0


def _digest(args, seed: int, ops) -> int:
    with _signals_end_the_run():
        try:
            return _digests(args, seed, ops)
        except KeyboardInterrupt as e:
            print(f"qconform fuzz --digest: interrupted ({e or 'SIGINT'}); no digest compared", flush=True)
            return 128 + signal.Signals[str(e) or "SIGINT"].value


def _digests(args, seed: int, ops) -> int:
    from ..backends import BackendStartError, open_backend
    from .engine import digest_run, first_difference
    cases = args.cases or 100_000
    try:
        a = open_backend(args.backend, timeout=args.timeout)
    except Exception as e:  # noqa: BLE001
        print(f"backend {args.backend!r} did not start: {e}", file=sys.stderr)
        return 3
    profile = args.profile or a.hello.profile
    runs = {}
    backends = {args.backend: a}
    others = [args.against] if args.against else ([f"oracle:{profile}"] if args.against is None else [])
    try:
        for spec in [args.backend] + others:
            if spec not in backends:
                try:
                    backends[spec] = open_backend(spec, timeout=args.timeout)
                except BackendStartError as e:
                    print(safe(f"backend {spec!r} did not start: {e}"), file=sys.stderr)
                    return 3
            start = time.monotonic()
            runs[spec] = run = digest_run(backends[spec], profile, seed=seed, cases=cases, ops=ops,
                                          capabilities=a.hello.capabilities, formats=args.formats)
            took = time.monotonic() - start
            print(f"digest {run.digest}  {spec}  ({run.cases} of {cases} cases, profile {profile}, {took:.1f} s, "
                  f"{run.cases / took:,.0f}/s)", flush=True)
            if run.faults or run.gave_up:
                return _faulted(spec, run, cases)
        if not others or runs[args.backend].digest == runs[others[0]].digest:
            print("digests equal: the backends agreed on every case" if others else "")
            return 0
        other = others[0]
        i = first_difference(backends[args.backend], backends[other], profile, seed=seed, cases=cases, ops=ops,
                             ca=runs[args.backend].checkpoints, cb=runs[other].checkpoints, formats=args.formats)
        print(f"digests differ; first differing case: {i}")
        if i is None:
            return 1
    finally:
        for b in backends.values():
            b.close()
    # judge and shrink that case like a normal fuzz run would
    from .engine import Fuzzer
    try:
        fuzzer = Fuzzer(args.backend, profile=profile, ops=ops, seed=seed, timeout=args.timeout,
                        formats=args.formats, exact_burn=args.exact_burn)
    except RunnerError as e:
        print(safe(e), file=sys.stderr)
        return 3
    try:
        report = fuzzer.run_indices([i], shrink=not args.no_shrink, out=args.out)
    finally:
        fuzzer.close()
    print(safe("\n".join(report.lines())))
    return WRITE_FAILED if report.write_errors else 1


def _faulted(spec: str, run, cases: int) -> int:
    """A digest over a fault is not comparable (a fault is no answer, and may not recur): say so, never "equal"."""
    if run.faults:
        index, kind, detail = run.faults[0]
        print(safe(f"backend {spec!r} faulted on {len(run.faults)} of {run.cases} cases; the first, case {index}: "
                   f"{kind}: {detail}"))  # the detail is the backend's text
    if run.gave_up:
        print(safe(f"backend {spec!r} gave up after {run.cases} of {cases} cases: {run.gave_up}"))
    print("digests not compared: a digest over a fault says nothing about agreement")
    return 3 if run.gave_up else 1


if __name__ == "__main__":
    sys.exit(main())
