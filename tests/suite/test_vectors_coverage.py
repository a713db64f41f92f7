"""The coverage lattice over the committed suite: no empty cell, every catalogued panic covered or excused."""

from __future__ import annotations

from pathlib import Path

import oracle
from conformance import coverage

SUITE = Path(__file__).resolve().parents[2] / "vectors" / "core"


def test_no_empty_cells():
    reports = coverage.coverage(coverage.load_manifest(SUITE))
    empty = coverage.empty_cells(reports)
    assert not empty, "empty cells:\n" + "\n".join(f"  {r.plane}: {r.label}" for r in empty)


def test_out_of_scope_entries_are_used_and_explained():
    reports = coverage.coverage(coverage.load_manifest(SUITE))
    excused = {(r.plane, r.label) for r in reports if not r.vectors and r.out_of_scope}
    for plane, pattern, reason in coverage.OUT_OF_SCOPE:
        assert len(reason) > 20
        assert any(p == plane for p, _ in excused), f"unused out-of-scope entry {plane} {pattern}"


def test_every_catalogued_panic_is_a_cell():
    plane = next(p for p in coverage.PLANES if p.name == "panic")
    assert {cell[0] for cell in plane.cells()} == set(oracle.CATALOGUE)


def test_cli_entry_points(capsys):
    assert coverage.main_coverage(SUITE) == 0
    text = capsys.readouterr().out
    assert "0 empty" in text.splitlines()[-1]
