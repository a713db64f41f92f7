#!/usr/bin/env python3
"""Fuzz cases per second, in one run: drawing alone, the oracle against itself in process, each real burn binary
through the subprocess protocol (judged against its own profile), and digest mode (no oracle, no judging).

    python bench/bench_fuzz.py [--cases N] [--seed S] [--binaries DIR]

A case is drawn, answered by the oracle (the expectation) and by the backend, and judged exactly as in
``qconform fuzz`` (diagnosis only on failures; none are expected). Goals (issue 11): >= 5,000 cases/s in
process, >= 2,000 cases/s through a burn binary.
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--binaries", type=Path, default=Path(os.environ.get(
        "CARGO_TARGET_DIR", Path.home() / ".cache/qconform/cargo-target")) / "release")
    args = ap.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)
    n = args.cases
    print(f"{n} cases per row, seed {args.seed}, load average {os.getloadavg()[0]:.1f}")
    print(f"{'what':<52} {'cases/s':>9}  statuses")

    start = time.perf_counter()
    with np.errstate(all="ignore"):
        for i in range(n):
            draw_case(RandomDraw(f"{args.seed}:{i}"), NDARRAY)
    print(f"{'drawing only (ndarray profile)':<52} {rate(n, time.perf_counter() - start)}")

    rows = [("oracle vs oracle, in process", "oracle", None)]
    rows += [(f"{b} (subprocess)", f"subprocess:{args.binaries / b}", None) for b in BINARIES
             if (args.binaries / b).exists()]
    for label, spec, profile in rows:
        f = engine.Fuzzer(spec, profile=profile, seed=args.seed)
        start = time.perf_counter()
        report = f.run(cases=n, shrink=False, log=lambda m: None)
        took = time.perf_counter() - start
        f.close()
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(report.statuses.items()))
        print(f"{label:<52} {rate(n, took)}  {statuses}; {len(report.divergences)} classes")

    for label, spec in [("digest, oracle in process", "oracle")] + \
            [(f"digest, {b}", f"subprocess:{args.binaries / b}") for b in BINARIES if (args.binaries / b).exists()]:
        backend = open_backend(spec)
        start = time.perf_counter()
        engine.digest_run(backend, backend.hello.profile, seed=args.seed, cases=n)
        took = time.perf_counter() - start
        backend.close()
        print(f"{label:<52} {rate(n, took)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
