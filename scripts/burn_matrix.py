"""The cross-backend matrix: every burn harness binary judged against every profile of the suite.

Prints a markdown section (the one in docs/findings.md was produced by this script): per (backend, profile)
pair, how many vectors diverge and the diagnosis; per divergence cause, a minimal repro command.

    .venv/bin/python scripts/burn_matrix.py $(bash adapters/burn/build.sh)
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

from conformance.backends import open_backend
from conformance.compare import FAILED, NOT_APPLICABLE, PASSED
from conformance.diagnose import rank
from conformance.runner import Runner
from conformance.vectors import default_suite_path, load_suite


def judge(suite, backend, profile: str):
    runner = Runner(suite, "matrix", profile=profile, backend=backend)
    return list(runner.run_all())


def cause(verdict) -> str:
    """The most specific explanation of a failing vector: for an error, which panic; else the one-rule mutant of
    the judged profile it matches (that names the rule), else a profile it behaves as, else its first wrong
    stage."""
    actual = (verdict.details.get("actual_error") or {}).get("code") or "an uncatalogued panic"
    expected = (verdict.details.get("expected_error") or {}).get("code")
    if verdict.kind == "unexpected error":
        return f"panics ({actual}) where the profile answers"
    if verdict.kind == "missing error":
        return f"answers where the profile panics ({expected})"
    if verdict.kind == "wrong error":
        return f"panics ({actual}) where the profile panics ({expected})"
    diagnosis = verdict.diagnosis or {}
    descriptions = diagnosis.get("descriptions") or {}

    for name in sorted(diagnosis.get("matches") or [], key=lambda n: rank(n, verdict.profile))[:1]:
        specific = rank(name, verdict.profile) == 0
        return f"{name}: {descriptions.get(name, '')}" if specific else f"same as {name}"
    stage = diagnosis.get("stage")
    return f"{verdict.kind}" + (f", first wrong stage {stage}" if stage else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binaries", nargs="+", type=Path)
    parser.add_argument("--vectors", type=Path, default=None)
    args = parser.parse_args()
    suite = load_suite(args.vectors or default_suite_path())
    print(f"Suite `{suite.name}`: {len(suite.vectors)} vectors.\n")
    print("| backend (claims) | judged against | passed | diverge | n/a |")
    print("|---|---|---|---|---|")
    details: list[str] = []
    for binary in args.binaries:
        backend = open_backend(f"subprocess:{binary}")
        hello = backend.hello
        for profile in suite.profiles:
            verdicts = judge(suite, backend, profile)
            counts = collections.Counter(v.status for v in verdicts)
            failed = [v for v in verdicts if v.status == FAILED]
            own = " **(own)**" if profile == hello.profile else ""
            print(f"| {hello.name} {hello.version} | {profile}{own} | {counts[PASSED]} | {counts[FAILED]} | "
                  f"{counts[NOT_APPLICABLE]} |")
            if failed:
                details.append(f"\n**{hello.name} {hello.version} judged against {profile}**: {len(failed)} diverge\n")
                by_cause = collections.defaultdict(list)
                for v in failed:
                    by_cause[cause(v)].append(v)
                for text, group in sorted(by_cause.items(), key=lambda kv: -len(kv[1])):
                    details.append(f"* {len(group)}x {text} — e.g. `qconform repro {group[0].alias} "
                                   f"--backend subprocess:{binary.name} --profile {profile}`")
        backend.close()
    print("\n".join(details))
    return 0


if __name__ == "__main__":
    sys.exit(main())
