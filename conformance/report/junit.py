"""JUnit XML of a report, for CI dashboards: the same verdicts and the same total as the JSON report.

Not-applicable vectors are left out by default (they say nothing about the backend, and a dashboard would count
them as skipped tests); ``keep_not_applicable`` puts them back. Their number is always in the suite's
properties, next to the conformance statement, so the one total still adds up. :func:`junit_xml` writes the
CLI's file (``--junit``); :func:`prune_pytest_junit` applies the same rule to the file pytest's ``--junitxml``
writes for the plugin.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..compare import DECLINED, FAILED, NOT_APPLICABLE, SKIPPED, XFAILED
from ..terminal import safe
from . import statement

# Statuses shown as a JUnit <skipped/>, with the word that says why.
SKIPPED_AS = {DECLINED: "declined by the backend", SKIPPED: "skipped by the expectations",
              XFAILED: "known failure (xfail)", NOT_APPLICABLE: "not applicable"}


def junit_xml(report: dict, *, keep_not_applicable: bool = False) -> str:
    verdicts = [v for v in report["verdicts"] if keep_not_applicable or v["status"] != NOT_APPLICABLE]
    failures = sum(v["status"] == FAILED for v in verdicts)
    skipped = sum(v["status"] in SKIPPED_AS for v in verdicts)
    counts = {"tests": len(verdicts), "failures": failures, "errors": 0, "skipped": skipped}
    root = ET.Element("testsuites", {k: str(n) for k, n in counts.items()})
    suite = ET.SubElement(root, "testsuite", {"name": f"qconform {report['suite'].get('name')}",
                                              **{k: str(n) for k, n in counts.items()},
                                              "time": str(report.get("duration_s", 0))})
    _properties(ET.SubElement(suite, "properties"), report)
    for v in verdicts:
        case = ET.SubElement(suite, "testcase", {"classname": v["op"], "name": v["alias"]})
        if v["status"] == FAILED:
            ET.SubElement(case, "failure", {"type": v.get("kind") or FAILED,
                                            "message": (v.get("message") or "").split("\n")[0]}).text = v["message"]
        elif v["status"] in SKIPPED_AS:
            ET.SubElement(case, "skipped", {"message": f"{SKIPPED_AS[v['status']]}: {v.get('note', '')}".rstrip(": ")})
    ET.indent(root)
    # XML 1.0 has no way to write most control characters, nor a lone surrogate: backend text keeps them as
    # visible escapes (markup never contains them, so this touches only the text and attribute values)
    return safe(ET.tostring(root, encoding="unicode", xml_declaration=True)) + "\n"


def _properties(props: ET.Element, report: dict) -> None:
    """The statement, the profile, the suite's digest and every status count (the one total)."""
    total = report["summary"]["total"]
    for name, value in (("statement", statement(report)), ("profile", report["profile"]),
                        ("suite_digest", report["suite"].get("digest") or ""),
                        *((status.replace(" ", "_"), str(n)) for status, n in total.items())):
        ET.SubElement(props, "property", {"name": name, "value": value})


# The reason the plugin skips a not-applicable vector with (``pytest.skip``): how its testcase is recognised.
NOT_APPLICABLE_REASON = "not applicable: "


def prune_pytest_junit(xml: str, report: dict, *, keep_not_applicable: bool = False) -> str:
    """pytest's ``--junitxml`` of a plugin run, with :func:`junit_xml`'s rule: the testcases of not-applicable
    vectors left out (unless ``keep_not_applicable``) and the suite's counts lowered to match, the statement and
    status counts added as properties, so its tests, failures and skipped agree with the plugin's summary."""
    root = ET.fromstring(xml)
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    for suite in suites:
        dropped = [] if keep_not_applicable else [
            case for case in suite.findall("testcase")
            if any((s.get("message") or "").startswith(NOT_APPLICABLE_REASON) for s in case.findall("skipped"))]
        for case in dropped:
            suite.remove(case)
        for key in ("tests", "skipped"):
            if suite.get(key) is not None:
                suite.set(key, str(int(suite.get(key)) - len(dropped)))
        props = suite.find("properties")
        if props is None:
            props = ET.Element("properties")
            suite.insert(0, props)
        _properties(props, report)
    for key in ("tests", "skipped"):  # a testsuites root that carries totals too
        if root.tag == "testsuites" and root.get(key) is not None:
            root.set(key, str(sum(int(s.get(key) or 0) for s in suites)))
    return safe(ET.tostring(root, encoding="unicode", xml_declaration=True)) + "\n"
