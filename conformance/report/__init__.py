"""Results of a run: the JSON report (the one full record), the summary tables, and the HTML page.

The report is plain JSON: run metadata, counts per op and per cell (vector tag), the diagnosis, stale
expectations and every verdict. ``qconform report`` re-renders it; nothing else needs the run to be repeated.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path

from .. import diagnose
from ..compare import FAILED, NOT_APPLICABLE, PASSED, SKIPPED, STATUSES, XFAILED, XPASSED, Verdict
from ..terminal import safe

REPORT_VERSION = 1
COLUMNS = (PASSED, FAILED, NOT_APPLICABLE, XFAILED, XPASSED, SKIPPED)


def counts(verdicts) -> dict[str, int]:
    c = dict.fromkeys(STATUSES, 0)
    for v in verdicts:
        c[v.status] += 1
    return c


def summary(verdicts: list[Verdict]) -> dict:
    by_op, by_cell = defaultdict(list), defaultdict(list)
    for v in verdicts:
        by_op[v.op].append(v)
        for tag in v.tags:
            if not tag.startswith("op:"):
                by_cell[tag].append(v)
    return {"total": counts(verdicts),
            "by_op": {k: counts(vs) for k, vs in sorted(by_op.items())},
            "by_cell": {k: counts(vs) for k, vs in sorted(by_cell.items())}}


def build(verdicts: list[Verdict], *, backend: dict, profile: str, suite: dict, stale: list[str],
          strict: bool, started: float, selected: int | None = None, interrupted: bool = False) -> dict:
    xpassed = [v.alias for v in verdicts if v.status == XPASSED]
    selected = len(verdicts) if selected is None else selected
    return {"qconform_report": REPORT_VERSION, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "duration_s": round(time.time() - started, 3), "backend": backend, "profile": profile,
            "suite": suite, "strict": strict,
            "run": {"selected": selected, "not_run": max(0, selected - len(verdicts)), "interrupted": interrupted},
            "summary": summary(verdicts),
            "diagnosis": diagnose.summarize(verdicts),
            "expectations": {"unmatched": stale, "xpassed": xpassed},
            "verdicts": [v.to_json() for v in verdicts]}


def write(report: dict, path: str | Path) -> None:
    Path(path).write_text(json.dumps(report, indent=1, default=str) + "\n")


def load(path: str | Path) -> dict:
    try:
        report = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a readable qconform report: {e}") from None
    if not isinstance(report, dict) or report.get("qconform_report") != REPORT_VERSION:
        raise ValueError(f"{path}: not a qconform report (version {REPORT_VERSION})")
    return report


def verdicts_of(report: dict) -> list[Verdict]:
    return [Verdict.from_json(v) for v in report["verdicts"]]


def incomplete(report: dict) -> str:
    """Why the report does not cover every selected vector ('' when it does). A report without the 'run'
    record (an older one) is judged by its verdicts alone."""
    run = report.get("run") or {}
    not_run, selected = run.get("not_run", 0), run.get("selected")
    if run.get("interrupted"):
        return f"INTERRUPTED: {not_run} of {selected} selected vectors not run"
    if not_run:
        return f"INCOMPLETE: {not_run} of {selected} selected vectors have no verdict"
    return ""


def failed(report: dict) -> bool:
    """The run's gate: any failure, a run that did not judge every selected vector, or (strict) any stale
    expectation. A report can never say OK while a verdict is missing."""
    t = report["summary"]["total"]
    stale = report["expectations"]["unmatched"] or report["expectations"]["xpassed"]
    return bool(t[FAILED] or incomplete(report) or (report.get("strict") and stale))


# ---- text -----------------------------------------------------------------------------------------------

def _table(title: str, rows: dict[str, dict[str, int]]) -> list[str]:
    width = max([len(title)] + [len(k) for k in rows])
    head = f"{title:<{width}}  " + "  ".join(f"{c:>8}" for c in ("passed", "failed", "n/a", "xfail", "xpass",
                                                                   "skipped"))
    return [head, "-" * len(head)] + [f"{k:<{width}}  " + "  ".join(f"{r[c]:>8}" for c in COLUMNS)
                                      for k, r in rows.items()]


def format_text(report: dict, *, cells: bool = True, failures: int = 20) -> str:
    s = report["summary"]
    lines = []
    bad = [v for v in report["verdicts"] if v["status"] == FAILED]
    for v in bad[:failures]:
        lines += ["", f"FAILED ({v['kind']}) " + v["message"]]
    if failures and len(bad) > failures:
        lines.append(f"... and {len(bad) - failures} more failures (see the JSON report)")
    lines += ["", *_table("op", s["by_op"])]
    if cells and s["by_cell"]:
        lines += ["", *_table("cell", s["by_cell"])]
    t = s["total"]
    lines += ["", *_table("total", {"all": t})]
    na = [v for v in report["verdicts"] if v["status"] == NOT_APPLICABLE]
    if na:
        reasons = defaultdict(int)
        for v in na:
            reasons[v["note"]] += 1
        lines += ["", f"not applicable: {len(na)} vectors"] + [f"  {n:>5} x {r}" for r, n in reasons.items()]
    diag = diagnose.describe(report["diagnosis"])
    if diag:
        lines += ["", "diagnosis:"] + [f"  {d}" for d in diag]
    e = report["expectations"]
    if e["unmatched"]:
        lines += ["", "expectations matching no vector (stale):"] + [f"  {x}" for x in e["unmatched"]]
    if e["xpassed"]:
        lines += ["", "xfail entries that now pass (remove them):"] + [f"  {x}" for x in e["xpassed"]]
    b = report["backend"]
    verdict = "FAILED" if failed(report) else "OK"
    if incomplete(report):
        lines += ["", incomplete(report)]
        verdict = "INTERRUPTED" if report["run"].get("interrupted") else verdict
    su = report["suite"]
    lines += ["", (f"backend {b.get('name')} {b.get('version')} judged against profile {report['profile']}; "
                   f"suite {su.get('name')} ({su.get('vectors')} vectors, manifest sha256 "
                   f"{su.get('digest') or 'unknown'}); {verdict}")]
    return safe("\n".join(lines))  # backend text (messages, stderr, names) never reaches a terminal raw
