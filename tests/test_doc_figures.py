"""The figures the docs state about the committed suite are the suite's own (issue 12: 451, 442 and 453 used to
appear in different pages). A figure measured on an earlier suite says so with "when measured"."""

import re
from pathlib import Path

import pytest

from conformance import coverage
from conformance.vectors import default_suite_path, load_suite

ROOT = Path(__file__).resolve().parents[1]
SUITE = default_suite_path()

# (file, pattern whose group 1 is the number of vectors of vectors/core, as the page states it today)
COUNT_CLAIMS = [
    ("README.md", r"`vectors/core/`\*\*: (\d+) golden vectors"),
    ("docs/vector-format.md", r"The committed suite is `vectors/core`: \*\*(\d+) vectors"),
    ("docs/coverage.md", r"## Current figures \(vectors/core, (\d+) vectors\)"),
]


@pytest.fixture(scope="module")
def suite():
    return load_suite(SUITE)


@pytest.mark.parametrize("file,pattern", COUNT_CLAIMS)
def test_stated_vector_count_is_the_suites(suite, file, pattern):
    text = (ROOT / file).read_text()
    found = re.findall(pattern, text)
    assert found, f"{file}: the figure the test reads ({pattern}) is gone; keep one, or update COUNT_CLAIMS"
    assert [int(n) for n in found] == [len(suite.vectors)] * len(found), \
        f"{file} says {found} vectors, vectors/core has {len(suite.vectors)}: update the page"


def test_every_other_suite_size_in_the_docs_is_current_or_marked_as_measured(suite):
    """`NNN vectors` anywhere in the README and docs/ is today's count, or a past measurement that says so.
    findings.md is the record of real-burn runs (subsets and the suite each matrix was measured on), regenerated
    with them, so it is left out."""
    stale = []
    # errors.md and upgrading.md are generated from the suite itself and checked by `make docs-check`.
    generated = {"findings.md", "errors.md", "upgrading.md"}
    pages = [p for p in sorted((ROOT / "docs").glob("*.md")) if p.name not in generated]
    for page in [ROOT / "README.md", *pages]:
        for no, line in enumerate(page.read_text().splitlines(), 1):
            for n in re.findall(r"\b(\d{3})(?:-vector| golden vectors| vectors)\b", line):
                if int(n) != len(suite.vectors) and "when measured" not in line and "diverge" not in line:
                    stale.append(f"{page.relative_to(ROOT)}:{no}: {n} vectors")
    assert not stale, f"vectors/core has {len(suite.vectors)} vectors; stale figures: {stale}"


def test_stated_suite_size_in_megabytes(suite):
    total = sum(f.stat().st_size for f in SUITE.iterdir() if f.is_file())
    m = re.search(r"\*\*\d+ vectors, about ([\d.]+) MB\*\*", (ROOT / "docs/vector-format.md").read_text())
    assert m and float(m.group(1)) == round(total / 1e6, 1), f"vectors/core is {total / 1e6:.2f} MB"


def test_coverage_table_in_the_docs_is_what_qconform_coverage_prints():
    text = (ROOT / "docs/coverage.md").read_text()
    block = re.search(r"## Current figures[^\n]*\n\n```\n(.*?)```", text, re.DOTALL).group(1)
    printed = coverage.format_coverage(coverage.coverage(coverage.load_manifest(SUITE)), False)
    summary = [line for line in printed.splitlines() if not line.startswith(" ")]
    assert block.splitlines() == summary, "docs/coverage.md: paste the summary lines of `qconform coverage`"
