#!/usr/bin/env python3
"""Fuzz cases per second, in one run: drawing alone, the oracle against itself in process, each real burn binary
through the subprocess protocol (judged against its own profile), the same with ``--jobs`` worker processes, and
digest mode (no oracle, no judging).

    python bench/bench_fuzz.py [--cases N] [--seed S] [--jobs J] [--binaries DIR] [--format NAME]

Two rates per row: cases per wall-clock second, and cases per CPU-second (this process, its workers and its
backend processes): on the shared machine the second moves much less with the load, and their ratio shows how
much of a core the row really got.

A case is drawn, answered by the oracle (the expectation) and by the backend, and judged exactly as in
``qconform fuzz`` (diagnosis only on failures; none are expected). Goals (issue 11): >= 5,000 cases/s in
process, >= 2,000 cases/s through a burn binary. The ``--format`` rows fuzz inside one named format (issue 20:
>= 3,000 *applicable* cases/s in process): the one-format backend of examples/format_backend.py in process, and
each binary with ``--format``; their rates count only the cases that applied.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.backends import open_backend
from conformance.fuzz import engine
from conformance.fuzz.strategies import RandomDraw, draw_case

BINARIES = ("qconform-burn-pre3-ndarray", "qconform-burn-pre3-flex", "qconform-burn-0_22_1-ndarray",
            "qconform-burn-0_22_1-flex")
NDARRAY = "burn-0.22.0-pre.3/ndarray"


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:>9,.0f}"


def cpu() -> float:
    """CPU seconds of this process and of its children that were waited for (a closed backend, finished workers):
    on a shared machine this moves far less with the load than wall time does."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="worker processes for the --jobs rows")
    ap.add_argument("--format", default="q8_0", help="the named format of the --format rows (default q8_0)")
    ap.add_argument("--only-format", action="store_true", help="only the --format rows")
    ap.add_argument("--binaries", type=Path, default=Path(os.environ.get(
        "CARGO_TARGET_DIR", Path.home() / ".cache/qconform/cargo-target")) / "release")
    args = ap.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)
    n = args.cases
    print(f"{n} cases per row, seed {args.seed}, load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")
    print(f"{'what':<52} {'cases/s':>9} {'per CPU-s':>9}  statuses")

    if args.only_format:
        return format_rows(args, [b for b in BINARIES if (args.binaries / b).exists()])
    start, used = time.perf_counter(), cpu()
    with np.errstate(all="ignore"):
        for i in range(n):
            draw_case(RandomDraw(f"{args.seed}:{i}"), NDARRAY)
    print(f"{'drawing only (ndarray profile)':<52} {rate(n, time.perf_counter() - start)} {rate(n, cpu() - used)}")

    found = [b for b in BINARIES if (args.binaries / b).exists()]
    rows = [("oracle vs oracle, in process", "oracle", 1)]
    rows += [(f"{b} (subprocess)", f"subprocess:{args.binaries / b}", 1) for b in found]
    rows += [(f"oracle vs oracle, --jobs {args.jobs}", "oracle", args.jobs)]
    rows += [(f"{b}, --jobs {args.jobs}", f"subprocess:{args.binaries / b}", args.jobs) for b in found[:1]]
    for label, spec, jobs in rows:
        start, used = time.perf_counter(), cpu()
        f = engine.Fuzzer(spec, seed=args.seed, jobs=jobs)
        report = f.run(cases=n, shrink=False, log=lambda m: None)
        f.close()
        took, spent = time.perf_counter() - start, cpu() - used
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(report.statuses.items()))
        print(f"{label:<52} {rate(n, took)} {rate(n, spent)}  {statuses}; {len(report.divergences)} classes")

    for label, spec in [("digest, oracle in process", "oracle")] + \
            [(f"digest, {b}", f"subprocess:{args.binaries / b}") for b in found]:
        start, used = time.perf_counter(), cpu()
        backend = open_backend(spec)
        engine.digest_run(backend, backend.hello.profile, seed=args.seed, cases=n)
        backend.close()
        print(f"{label:<52} {rate(n, time.perf_counter() - start)} {rate(n, cpu() - used)}")
    return format_rows(args, found)


def format_rows(args, found) -> int:
    """Applicable cases per second inside one named format: in process (the oracle behind the format's
    capabilities, examples/format_backend.py; for q8_0 also examples/q8_0_backend.py, a codec of its own, which
    declines what it does not implement) and through the subprocess protocol (each burn binary, ``--format``)."""
    from conformance.backends.python import PythonBackend
    from examples.format_backend import FormatBackend
    rows = [(f"one-format backend {args.format}, in process", lambda: PythonBackend(FormatBackend(args.format)))]
    if args.format == "q8_0":
        from examples.q8_0_backend import Backend as Q8_0
        rows.append(("examples/q8_0_backend.py, in process", lambda: PythonBackend(Q8_0())))
    rows += [(f"{b} --format {args.format} (subprocess)", f"subprocess:{args.binaries / b}") for b in found]
    for label, spec in rows:
        start, used = time.perf_counter(), cpu()
        backend = spec() if callable(spec) else None
        f = engine.Fuzzer("format" if callable(spec) else spec, backend=backend, seed=args.seed,
                          formats=[args.format])
        report = f.run(cases=args.cases, shrink=False, log=lambda m: None)
        f.close()
        took, spent = time.perf_counter() - start, cpu() - used
        applied = report.cases - report.statuses.get("not applicable", 0)
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(report.statuses.items()))
        print(f"{label + ', applicable':<52} {rate(applied, took)} {rate(applied, spent)}  {statuses}; "
              f"{len(report.divergences)} classes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
