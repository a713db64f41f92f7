"""`make mutation`'s list (scripts/mutation.py) stays applicable: every mutation's original snippet occurs exactly
once in its file, so a refactor that moves the code cannot silently turn a mutation into a no-op ("stale")."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("qconform_mutation", ROOT / "scripts" / "mutation.py")
mutation = sys.modules.setdefault("qconform_mutation", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(mutation)


@pytest.mark.parametrize("i", range(len(mutation.MUTATIONS)))
def test_each_mutation_applies_to_todays_code(i):
    mut = mutation.MUTATIONS[i]
    text = (ROOT / mut.file).read_text()
    assert text.count(mut.original) == 1, f"mutation #{i + 1} ({mut.file}) is stale: {mut.original!r}"
