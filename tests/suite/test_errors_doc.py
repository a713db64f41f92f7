"""docs/errors.md is generated from the panic catalogue and the suite (`python -m conformance.errors_doc`)."""

from __future__ import annotations

import oracle
from conformance import errors_doc


def test_every_code_has_its_section_source_and_template():
    text = errors_doc.render()
    for code, site in oracle.CATALOGUE.items():
        assert f"\n## {code}\n" in text
        assert site.source in text and site.spec in text


def test_check_fails_on_a_stale_page_and_passes_on_a_fresh_one(tmp_path, capsys):
    page = tmp_path / "errors.md"
    page.write_text(errors_doc.render().replace("ndarray.nan_code", "ndarray.nan"), encoding="utf-8")
    assert errors_doc.main(["--check", "--out", str(page)]) == 1
    assert errors_doc.main(["--out", str(page)]) == 0
    assert errors_doc.main(["--check", "--out", str(page)]) == 0


def test_the_committed_page_is_current():
    assert errors_doc.PAGE.read_text(encoding="utf-8") == errors_doc.render()
