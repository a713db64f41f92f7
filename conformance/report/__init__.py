"""Results of a run: the JSON report (the one full record), the summary tables, and the HTML page.

The report is plain JSON: run metadata, counts per op and per cell (vector tag), the diagnosis, stale
expectations and every verdict. ``qconform report`` re-renders it; nothing else needs the run to be repeated.
"""

from __future__ import annotations

import json
import shlex
import time
from collections import defaultdict
from pathlib import Path

from .. import diagnose
from ..compare import (
    DECLINED,
    FAILED,
    NOT_APPLICABLE,
    PASSED,
    SKIPPED,
    STATUSES,
    VALIDATION_DECLINED,
    XFAILED,
    XPASSED,
    Verdict,
)
from ..terminal import one_line, safe

REPORT_VERSION = 1
COLUMNS = (PASSED, FAILED, DECLINED, NOT_APPLICABLE, XFAILED, XPASSED, SKIPPED)
HEADS = ("passed", "failed", "declined", "n/a", "xfail", "xpass", "skipped")


def counts(verdicts) -> dict[str, int]:
    c = dict.fromkeys(STATUSES, 0)
    for v in verdicts:
        c[v.status] += 1
    return c


def summary(verdicts: list[Verdict], declared: list[str] = ()) -> dict:
    """Counts in total, per op, per cell (vector tag) and per declared format (every declared one, even with no
    vector: an empty row is what the statement reports as "no vector of format X")."""
    by_op, by_cell, by_format = defaultdict(list), defaultdict(list), {label: [] for label in declared}
    for v in verdicts:
        by_op[v.op].append(v)
        for tag in v.tags:
            if not tag.startswith("op:"):
                by_cell[tag].append(v)
        for label in v.formats:
            by_format.setdefault(label, []).append(v)
    return {"total": counts(verdicts),
            "by_op": {k: counts(vs) for k, vs in sorted(by_op.items())},
            "by_cell": {k: counts(vs) for k, vs in sorted(by_cell.items())},
            "by_format": {k: counts(vs) for k, vs in by_format.items()},
            "scope": scope_of(verdicts),
            "accidents": accidents(verdicts)}


def accidents(verdicts) -> dict:
    """burn's accidents (conformance/accidents.py): validation-only vectors declined, and on the burn-bug vectors
    that passed, how many gave burn's outcome and how many the invariant-respecting one."""
    return {"validation_declined": sum(v.status == NOT_APPLICABLE and v.note.startswith(VALIDATION_DECLINED)
                                       for v in verdicts),
            "gave_burn": sum(v.gave == "burn" for v in verdicts),
            "gave_acceptable": sum(v.gave == "acceptable" for v in verdicts)}


def accidents_line(report: dict) -> str:
    """What the run did with burn's accidents, or '' when it met none."""
    a = report["summary"].get("accidents") or {}
    parts = []
    if a.get("gave_burn") or a.get("gave_acceptable"):
        parts.append(f"burn-bug vectors passed: {a.get('gave_burn', 0)} with burn's outcome, "
                     f"{a.get('gave_acceptable', 0)} with the invariant-respecting one")
    if a.get("validation_declined"):
        parts.append(f"{a['validation_declined']} validation-only vectors declined (the backend does not validate)")
    if report.get("exact_burn"):
        parts.append("judged as burn itself (--exact-burn)")
    return "; ".join(parts)


def arithmetic_only(report: dict) -> bool:
    """The backend declares it does not validate its requests: its claim covers burn's arithmetic only."""
    return (report["backend"].get("capabilities") or {}).get("validates") is False


def scope_of(verdicts) -> dict[str, list[str]]:
    """What passed, op by op: ``{op: [format labels of its passed vectors]}`` (an empty list: the backend declared
    no formats, so the op passed on its flat capabilities)."""
    out: dict[str, set] = defaultdict(set)
    for v in verdicts:
        if v.status == PASSED:
            out[v.op].update(v.formats)
    return {op: sorted(labels) for op, labels in sorted(out.items())}


def declared_formats(backend: dict) -> list[str]:
    """The labels of the formats a backend's hello declares (its JSON as the report records it)."""
    from ..protocol import Capabilities, ProtocolError
    try:
        return Capabilities.from_json(backend.get("capabilities") or {}).declared_formats()
    except ProtocolError:
        return []


def build(verdicts: list[Verdict], *, backend: dict, profile: str, suite: dict, stale: list[str],
          strict: bool, started: float, selected: int | None = None, interrupted: bool = False,
          exact_burn: bool = False) -> dict:
    xpassed = [v.alias for v in verdicts if v.status == XPASSED]
    selected = len(verdicts) if selected is None else selected
    return {"qconform_report": REPORT_VERSION, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "duration_s": round(time.time() - started, 3), "backend": backend, "profile": profile,
            "suite": suite, "strict": strict, "exact_burn": exact_burn,
            "run": {"selected": selected, "not_run": max(0, selected - len(verdicts)), "interrupted": interrupted},
            "summary": summary(verdicts, declared_formats(backend)),
            "diagnosis": diagnose.summarize(verdicts),
            "expectations": {"unmatched": stale, "xpassed": xpassed},
            "verdicts": [v.to_json() for v in verdicts]}


def write(report: dict, path: str | Path) -> None:
    """The JSON report, atomically (conformance/outputs.py): a cut write leaves the old report or none."""
    from ..outputs import write_file
    write_file(path, json.dumps(report, indent=1, default=str) + "\n")


class ReportError(ValueError):
    """A file that is not a readable qconform report (missing, cut, not JSON, not a report)."""


# The parts every printer reads, with their JSON types.
_PARTS = {"backend": dict, "profile": str, "suite": dict, "summary": dict, "expectations": dict, "verdicts": list}


def load(path: str | Path) -> dict:
    try:
        report = json.loads(Path(path).read_bytes())
    except OSError as e:
        raise ReportError(f"{path}: cannot read the report: {e.strerror or e}") from None
    except ValueError as e:  # cut or garbled: JSONDecodeError, or bytes that are not UTF-8
        raise ReportError(f"{path}: not a qconform report (not JSON: {e})") from None
    if not isinstance(report, dict) or report.get("qconform_report") != REPORT_VERSION:
        raise ReportError(f"{path}: not a qconform report (version {REPORT_VERSION})")
    bad = [k for k, kind in _PARTS.items() if not isinstance(report.get(k), kind)]
    if bad or not isinstance(report["summary"].get("total"), dict):
        raise ReportError(f"{path}: not a complete qconform report (missing or malformed: "
                          f"{', '.join(bad or ['summary.total'])})")
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
    head = f"{title:<{width}}  " + "  ".join(f"{c:>8}" for c in HEADS)
    return [head, "-" * len(head)] + [f"{k:<{width}}  " + "  ".join(f"{r.get(c, 0):>8}" for c in COLUMNS)
                                      for k, r in rows.items()]


def _relevant(rows: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """The rows with at least one vector that is not 'not applicable' (the rest says nothing about the backend)."""
    return {k: r for k, r in rows.items() if sum(r.values()) > r[NOT_APPLICABLE] or not sum(r.values())}


def _tables(title: str, rows: dict[str, dict[str, int]], verbose: bool) -> list[str]:
    shown = rows if verbose else _relevant(rows)
    lines = _table(title, shown) if shown else []
    hidden = len(rows) - len(shown)
    if hidden:
        lines.append(f"({hidden} {title} rows entirely not applicable; --verbose shows them)")
    return lines


def suite_label(report: dict) -> str:
    """``core 1a2b3c4d5e6f``: the suite's name and short digest (conformance.vectors.suite_digest)."""
    from ..vectors import short_digest
    suite = report["suite"]
    digest = suite.get("digest")
    return f"{suite.get('name')} {short_digest(digest) if digest else '(digest unknown)'}"


def count_line(report: dict) -> str:
    """``55 passed, 0 failed, 2 declined, 398 not applicable`` (+ xfailed, xpassed, skipped when any) ``of 455
    vectors``: every status of the one total, so the numbers add up to the suite."""
    t = report["summary"]["total"]
    parts = [f"{t[PASSED]} passed", f"{t[FAILED]} failed", f"{t.get(DECLINED, 0)} declined"] + \
        [f"{t[s]} {s}" for s in (XFAILED, XPASSED, SKIPPED) if t[s]] + [f"{t[NOT_APPLICABLE]} not applicable"]
    run, whole = sum(t.values()), report["suite"].get("vectors")
    of = f" of {whole} vectors" if run == whole else f" ({run} of the suite's {whole} vectors selected)"
    return ", ".join(parts) + of


def explain_command(report: dict, verdict: dict) -> str:
    """The ``qconform explain`` line that shows ``verdict``'s vector as this run judged it: its profile (which need
    not be the default one ``explain`` shows) and, for another suite than the core one, its folder."""
    suite = report["suite"]
    where = f" --vectors {shlex.quote(suite['path'])}" if suite.get("name") != "core" and suite.get("path") else ""
    return f"qconform explain {shlex.quote(verdict['alias'])} --profile {shlex.quote(report['profile'])}{where}"


def format_text(report: dict, *, cells: bool = True, failures: int = 20, quiet: bool = False,
                verbose: bool = False, rest: str = "see the JSON report") -> str:
    """The run's summary. ``quiet``: a green run is five lines (counts, scope, profile, suite, OK; after the
    accidents line when the backend gave an acceptable outcome or had validation declined); failures and declined
    vectors are still shown. Default: rows of the op/cell tables that are entirely not applicable are left out (``verbose`` keeps
    them). ``rest``: where the failures past the first ``failures`` are to be read."""
    b, vectors = report["backend"], report["suite"].get("vectors")
    if not report["verdicts"] and not incomplete(report):
        return (f"no vector selected: the selection (-k / -m) matched none of the {vectors} vectors of suite "
                f"{suite_label(report)}; nothing was run")
    s = report["summary"]
    lines = []
    bad = [v for v in report["verdicts"] if v["status"] == FAILED]
    for v in bad[:failures]:
        lines += ["", f"FAILED ({v['kind']}) " + v["message"]]
    if failures and len(bad) > failures:
        lines.append(f"... and {len(bad) - failures} more failures ({rest})")
    if bad:
        lines += ["", "one of them in full (inputs, expected outputs, intermediates): " + explain_command(report, bad[0])]
    if not quiet:
        lines += ["", *_tables("op", s["by_op"], verbose)]
        if cells and s["by_cell"]:
            lines += ["", *_tables("cell", s["by_cell"], verbose)]
        if s.get("by_format"):
            lines += ["", *_table("declared format", s["by_format"])]
        na = [v for v in report["verdicts"] if v["status"] == NOT_APPLICABLE]
        if na:
            reasons = defaultdict(int)
            for v in na:
                reasons[v["note"]] += 1
            lines += ["", f"not applicable: {len(na)} vectors"] + [f"  {n:>5} x {r}" for r, n in reasons.items()]
    lines += _declined(report["verdicts"])  # even with -q: declining must never go unseen
    diag = diagnose.describe(report["diagnosis"])
    if diag:
        lines += ["", "diagnosis:"] + [f"  {d}" for d in diag]
    e = report["expectations"]
    if e["unmatched"]:
        lines += ["", "expectations matching no vector (stale):"] + [f"  {x}" for x in e["unmatched"]]
    if e["xpassed"]:
        lines += ["", "xfail entries that now pass (remove them):"] + [f"  {x}" for x in e["xpassed"]]
    verdict = "FAILED" if failed(report) else "OK"
    if verdict == "OK" and claim_gaps(report):  # no failure is not a claim: say what is missing
        verdict = f"OK (no failures), but no conformance claim: {'; '.join(claim_gaps(report))}"
    if incomplete(report):
        lines += ["", incomplete(report)]
        verdict = "INTERRUPTED" if report["run"].get("interrupted") else verdict
    accidents_seen = report["summary"].get("accidents") or {}
    if accidents_line(report) and not (quiet and not accidents_seen.get("gave_acceptable")
                                       and not accidents_seen.get("validation_declined")):
        lines += ["", accidents_line(report)]  # quiet: only when the claim is not burn's outcome throughout
    if quiet:
        profile = f"profile {report['profile']} (backend {_who(b)})"
        text = "\n".join([*lines, count_line(report), f"scope: {scope_text(report)}", profile,
                          f"suite {suite_label(report)}", verdict])
        return safe(text.lstrip("\n"))  # backend text (messages, stderr, names) never reaches a terminal raw
    lines += ["", count_line(report), f"scope: {scope_text(report)}",
              (f"backend {_who(b)} judged against profile {one_line(report['profile'])}; "
               f"suite {report['suite'].get('name')} ({vectors} vectors, manifest sha256 "
               f"{report['suite'].get('digest') or 'unknown'}); {verdict}")]
    return safe("\n".join(lines))


def _who(backend: dict) -> str:
    """The backend's name and version as one line (the handshake refuses others; a hand-edited report may not)."""
    return one_line(f"{backend.get('name', backend.get('spec'))} {backend.get('version', '')}".strip())


DECLINED_SHOWN = 20  # declined vectors listed by alias per reason in the text summary (the JSON lists all)


def _declined(verdicts: list[dict]) -> list[str]:
    """The declined vectors, grouped by the backend's reason, with their aliases."""
    by_reason = defaultdict(list)
    for v in verdicts:
        if v["status"] == DECLINED:
            by_reason[v["note"]].append(v["alias"])
    if not by_reason:
        return []
    lines = ["", f"declined by the backend ('unsupported'): {sum(map(len, by_reason.values()))} vectors"]
    for reason, aliases in by_reason.items():
        more = f" ... and {len(aliases) - DECLINED_SHOWN} more" if len(aliases) > DECLINED_SHOWN else ""
        lines += [f"  {len(aliases):>5} x {reason}", f"          {', '.join(aliases[:DECLINED_SHOWN])}{more}"]
    return lines


def scope_text(report: dict) -> str:
    """What the passes cover, e.g. ``dequantize x q8_0, quantize x q8_0``; ``quantize, dequantize`` for a backend
    that declares no formats; ``nothing`` when nothing passed."""
    scope = report["summary"].get("scope")
    if scope is None:  # a report from before scopes: the ops with passes
        scope = {op: [] for op, c in report["summary"]["by_op"].items() if c[PASSED]}
    if not scope:
        return "nothing (no applicable vector passed)"
    return ", ".join(f"{op} x {'|'.join(labels)}" if labels else op for op, labels in scope.items())


# ---- conformance statement and badge ----------------------------------------------------------------------

def claim_gaps(report: dict) -> list[str]:
    """Why the report supports no conformance claim; [] when it does. A claim needs: every vector of the suite
    judged (none failed, skipped or xfailed), a known suite digest, at least one pass, and at least one pass
    of each format the backend declares. Not-applicable and declined vectors are allowed, and counted."""
    t, by_format = report["summary"]["total"], report["summary"].get("by_format", {})
    gaps = [text for bad, text in (
        (t[FAILED], f"{t[FAILED]} failed"), (t[XFAILED], f"{t[XFAILED]} xfailed"), (t[SKIPPED], f"{t[SKIPPED]} skipped"),
        (incomplete(report), "incomplete run"),
        (sum(t.values()) != report["suite"].get("vectors"), "not every vector of the suite selected"),
        (not report["suite"].get("digest"), "suite digest unknown"),
        (not t[PASSED], "no applicable vector passed")) if bad]
    for label, c in by_format.items():
        if not sum(c.values()):
            gaps.append(f"no vector of format {label}")
        elif not c[PASSED]:
            gaps.append(f"no vector of format {label} passed")
    return gaps


def conforms(report: dict) -> bool:
    return not claim_gaps(report)


def statement(report: dict) -> str:
    """One line: ``<backend> <version> conforms to <profile> for <scope> on suite <name> <digest>: N passed, 0
    failed, D declined, M not applicable of T vectors``, or the honest negative with what prevents the claim."""
    gaps = claim_gaps(report)
    arithmetic = " (arithmetic only: the backend does not validate its requests)" if arithmetic_only(report) else ""
    claim = f"does not conform to {report['profile']}{arithmetic} ({'; '.join(gaps)})" if gaps else \
        f"conforms to {report['profile']}{arithmetic} for {scope_text(report)}"
    extra = accidents_line(report)
    # one line whatever the report holds: a name with a newline cannot print a forged claim above the real one
    return one_line(f"{_who(report['backend'])} {claim} on suite {suite_label(report)}: {count_line(report)}"
                    + (f"; {extra}" if extra else ""))


def badge(report: dict) -> str:
    """A small shields-style SVG: 'qconform | N/M passed' in green only when the statement claims conformance;
    the failure count in red; otherwise grey with the first gap (never green with 0 passed)."""
    from xml.sax.saxutils import escape
    t = report["summary"]["total"]
    judged = t[PASSED] + t[FAILED] + t[XFAILED] + t[XPASSED] + t.get(DECLINED, 0)
    gaps = claim_gaps(report)
    if not gaps:
        right, color = f"{t[PASSED]}/{judged} passed", "#4c1"
    elif t[FAILED] or t[XFAILED]:
        right, color = f"{t[FAILED] + t[XFAILED]} failed", "#e05d44"
    else:
        right, color = one_line(gaps[0]), "#9f9f9f"
    left = "qconform"
    lw, rw = 6 * len(left) + 10, 6 * len(right) + 10  # about 6 px per character of 11 px Verdana
    title = escape(statement(report))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{lw + rw}" height="20" role="img" '
            f'aria-label="{escape(left)}: {escape(right)}"><title>{title}</title>'
            f'<rect width="{lw}" height="20" fill="#555"/><rect x="{lw}" width="{rw}" height="20" fill="{color}"/>'
            f'<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
            f'<text x="{lw / 2}" y="14">{escape(left)}</text><text x="{lw + rw / 2}" y="14">{escape(right)}</text>'
            f'</g></svg>\n')
