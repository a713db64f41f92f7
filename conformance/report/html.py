"""A self-contained HTML page for a JSON report: tables, inline-SVG charts of where divergences fall, and every
failure's message. No scripts, no external resources: the file can be attached to a CI run as is."""

from __future__ import annotations

import html
import math

from .. import diagnose
from ..compare import DECLINED, FAILED, NOT_APPLICABLE, PASSED, SKIPPED, XFAILED, XPASSED
from ..terminal import safe
from . import failed, incomplete, statement

COLOURS = {PASSED: "#3a9d5d", FAILED: "#d1453b", NOT_APPLICABLE: "#9aa5b1", XFAILED: "#e3a33b",
           XPASSED: "#7b61c4", SKIPPED: "#cfd6dd", DECLINED: "#5b8fd1"}
ORDER = (PASSED, FAILED, DECLINED, XFAILED, XPASSED, NOT_APPLICABLE, SKIPPED)
CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}h1{margin:0 0 .2em}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ddd;padding:2px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:12px}
.bad{color:#d1453b;font-weight:bold}.ok{color:#3a9d5d;font-weight:bold}.legend span{margin-right:1em}
details{margin:.3em 0}"""


def _e(x) -> str:
    return html.escape(safe(x))  # safe: a lone surrogate could not even be written as UTF-8


def _n(x) -> float:
    """A count or duration from the report; anything else (a hand-edited or hostile report) counts as 0."""
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else 0


def _counts(c) -> dict:
    return {k: _n(v) for k, v in c.items()} if isinstance(c, dict) else {}


def stacked_bars(rows: dict[str, dict[str, int]], title: str) -> str:
    """Horizontal 100%-stacked bars, one per row (op or cell), coloured by status."""
    label_w, bar_w, h = 220, 520, 18
    height = 24 + h * len(rows) + 6
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 60}" height="{height}" '
           f'role="img" aria-label="{_e(title)}"><text x="0" y="14" font-weight="bold">{_e(title)}</text>')]
    for i, (name, c) in enumerate(rows.items()):
        c = _counts(c)
        y, total = 24 + i * h, sum(c.values()) or 1
        out.append(f'<text x="0" y="{y + 13}" font-size="12">{_e(name)}</text>')
        x = label_w
        for status in ORDER:
            w = bar_w * c.get(status, 0) / total
            if w:
                out.append(f'<rect x="{x:.1f}" y="{y + 2}" width="{w:.1f}" height="{h - 4}" '
                           f'fill="{COLOURS[status]}"><title>{_e(name)}: {_e(c[status])} {_e(status)}</title></rect>')
                x += w
        out.append(f'<text x="{label_w + bar_w + 6}" y="{y + 13}" font-size="12">{_e(sum(c.values()))}</text>')
    return "".join(out) + "</svg>"


def _table(title: str, rows: dict[str, dict[str, int]]) -> str:
    head = "".join(f"<th>{_e(s)}</th>" for s in ORDER)
    body = "".join(f"<tr><td>{_e(k)}</td>" + "".join(f"<td>{_e(_counts(r).get(s, 0))}</td>" for s in ORDER)
                   + "</tr>" for k, r in rows.items())
    return f"<table><tr><th>{_e(title)}</th>{head}</tr>{body}</table>"


def _statement(report: dict) -> str:
    """The conformance statement, or why a hand-edited report has none (its counts are not all numbers)."""
    try:
        return statement(report)
    except (TypeError, ValueError, KeyError, AttributeError):
        return "no conformance statement: the report's counts or names are malformed"


def render(report: dict) -> str:
    s, b, verdicts = report["summary"], report["backend"], report["verdicts"]
    ok = not failed(report)
    word = "INTERRUPTED" if (report.get("run") or {}).get("interrupted") else "FAILED"
    legend = "".join(f'<span><svg width="10" height="10"><rect width="10" height="10" fill="{COLOURS[x]}"/></svg> '
                     f"{_e(x)}</span>" for x in ORDER)
    # cells where something diverged, worst first: where divergences fall
    cells = {k: _counts(v) for k, v in s["by_cell"].items()}
    cells = {k: v for k, v in cells.items() if v.get(FAILED) or v.get(XFAILED)}
    cells = dict(sorted(cells.items(), key=lambda kv: -(kv[1].get(FAILED, 0) + kv[1].get(XFAILED, 0)))[:40])
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>qconform report: {_e(b.get('name'))}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>qconform: {_e(b.get('name'))} {_e(b.get('version', ''))}</h1>",
        (f"<p>judged against profile <b>{_e(report['profile'])}</b> on suite <b>{_e(report['suite'].get('name'))}</b>"
        f" ({_e(report['suite'].get('vectors'))} vectors, manifest sha256 "
        f"<code>{_e(report['suite'].get('digest') or 'unknown')}</code>), {_e(report['created'])}, "
        f"{_e(report['duration_s'])} s: "
        f"<span class='{'ok' if ok else 'bad'}'>{'OK' if ok else _e(word)}</span></p>"),
        f"<p class='bad'>{_e(incomplete(report))}</p>" if incomplete(report) else "",
        f"<p class='statement'>{_e(_statement(report))}</p>",
        _table("total", {"all vectors": s["total"]}),
        f"<div class='legend'>{legend}</div>", stacked_bars(s["by_op"], "results per op"),
    ]
    if cells:
        parts.append(stacked_bars(cells, "cells with divergences"))
    diag = diagnose.describe(report["diagnosis"])
    if diag:
        parts.append("<h2>Diagnosis</h2><ul>" + "".join(f"<li>{_e(d)}</li>" for d in diag) + "</ul>")
    e = report["expectations"]
    if e["unmatched"] or e["xpassed"]:
        parts.append("<h2>Stale expectations</h2><ul>"
                     + "".join(f"<li>matches nothing: {_e(x)}</li>" for x in e["unmatched"])
                     + "".join(f"<li>xfail now passes: {_e(x)}</li>" for x in e["xpassed"]) + "</ul>")
    parts += ["<h2>Per op</h2>", _table("op", s["by_op"])]
    if s.get("by_format"):
        parts += ["<h2>Per declared format</h2>", _table("format", s["by_format"])]
    parts += ["<h2>Per cell</h2>", _table("cell", s["by_cell"])]
    bad = [v for v in verdicts if v["status"] in (FAILED, XFAILED)]
    if bad:
        parts.append(f"<h2>Failures ({len(bad)})</h2>")
        parts += [f"<details><summary>{_e(v['status'])} ({_e(v['kind'])}): {_e(v['alias'])}</summary>"
                  f"<pre>{_e(v['message'])}</pre></details>" for v in bad]
    declined = [v for v in verdicts if v["status"] == DECLINED]
    if declined:
        parts.append(f"<h2>Declined by the backend ({len(declined)})</h2><table><tr><th>vector</th><th>reason</th>"
                     "</tr>" + "".join(f"<tr><td>{_e(v['alias'])}</td><td>{_e(v['note'])}</td></tr>"
                                       for v in declined) + "</table>")
    na = [v for v in verdicts if v["status"] == NOT_APPLICABLE]
    if na:
        parts.append(f"<h2>Not applicable ({len(na)})</h2><table><tr><th>vector</th><th>why</th></tr>"
                     + "".join(f"<tr><td>{_e(v['alias'])}</td><td>{_e(v['note'])}</td></tr>" for v in na)
                     + "</table>")
    return "".join(parts) + "</body></html>\n"
