"""`qconform report --statement` and `--badge`: a claim a project can paste, honest when it does not hold."""

import hashlib
import xml.etree.ElementTree as ET

import suites
from test_cli_ergonomics import _report
from test_plugin import cli

from conformance import report as rep
from conformance.compare import FAILED, NOT_APPLICABLE, PASSED, SKIPPED, XFAILED

SVG = "{http://www.w3.org/2000/svg}"


def test_statement_of_a_conforming_run():
    r = _report({PASSED: [["value:Q8S"]] * 3, NOT_APPLICABLE: [["value:Q4S"]]})
    assert rep.statement(r) == ("b 1 conforms to p for quantize on suite s abababababab: 3 passed, 0 failed, "
                                "0 declined, 1 not applicable of 4 vectors")


def test_statement_is_honest_otherwise():
    for statuses, gap, counts in [
            ({PASSED: [[]] * 2, FAILED: [[]]}, "1 failed", "2 passed, 1 failed, 0 declined, 0 not applicable"),
            ({PASSED: [[]] * 2, XFAILED: [[]]}, "1 xfailed", "2 passed, 0 failed, 0 declined, 1 xfailed"),
            ({PASSED: [[]] * 2, SKIPPED: [[]]}, "1 skipped", "2 passed, 0 failed, 0 declined, 1 skipped")]:
        text = rep.statement(_report(statuses))
        assert text.startswith(f"b 1 does not conform to p ({gap}) on suite s abababababab: " + counts), text
    partial = _report({PASSED: [[]] * 2})
    partial["suite"]["vectors"] = 5  # a -k selection: 2 of 5 judged
    assert rep.statement(partial) == ("b 1 does not conform to p (not every vector of the suite selected) on suite s "
                                      "abababababab: 2 passed, 0 failed, 0 declined, 0 not applicable (2 of the "
                                      "suite's 5 vectors selected)")
    no_digest = _report({PASSED: [[]]})
    del no_digest["suite"]["digest"]  # a report from before digests: no claim about which suite
    assert "does not conform" in rep.statement(no_digest) and "(digest unknown)" in rep.statement(no_digest)


def _svg(r) -> ET.Element:
    root = ET.fromstring(rep.badge(r))
    assert root.tag == SVG + "svg" and int(root.get("height")) == 20
    return root


def test_badge_is_valid_svg_with_the_result():
    ok = _svg(_report({PASSED: [[]] * 3, NOT_APPLICABLE: [[]]}))
    texts = [t.text for t in ok.iter(SVG + "text")]
    assert texts == ["qconform", "3/3 passed"]
    assert ok.find(SVG + "title").text.startswith("b 1 conforms to p")
    assert {r.get("fill") for r in ok.iter(SVG + "rect")} == {"#555", "#4c1"}
    bad = _svg(_report({PASSED: [[]], FAILED: [[]] * 2}))
    assert [t.text for t in bad.iter(SVG + "text")][1] == "2 failed"
    assert "#e05d44" in {r.get("fill") for r in bad.iter(SVG + "rect")}


def test_report_command_prints_the_statement_and_writes_the_badge(tmp_path, suite_dir, lookup_cmd, env):
    run = cli("run", "--backend", "subprocess:" + lookup_cmd(), "--vectors", str(suite_dir), "--report", "r.json",
              "-q", env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    r = cli("report", "r.json", "--statement", "--badge", "b.svg", env=env, cwd=tmp_path)
    digest = hashlib.sha256((suite_dir / "manifest.json").read_bytes()).hexdigest()
    assert r.returncode == 0
    assert r.stdout == f"lookup 1 conforms to {suites.A} for dequantize, quantize, round_up, " \
                       f"scheme_info on suite test {digest[:12]}: 6 passed, 0 failed, 0 declined, 0 not applicable " \
                       "of 6 vectors\n"
    assert [t.text for t in ET.parse(tmp_path / "b.svg").getroot().iter(SVG + "text")] == ["qconform", "6/6 passed"]
