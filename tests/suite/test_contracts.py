"""The comparison contracts live in one public module (conformance/contracts.py) that the generator and the fuzzer
both import, and no module of the suite reaches into another's private names (the fuzzer once imported
``generate._contracts`` and ``generate._canonical_json``)."""

from __future__ import annotations

import ast
from pathlib import Path

from conformance import contracts, generate
from conformance.fuzz import engine

ROOT = Path(__file__).resolve().parents[2]


def test_the_generator_and_the_fuzzer_ask_the_same_contracts():
    assert generate.contracts is contracts.contracts
    assert engine.contracts is contracts.contracts
    assert engine.TOLERANT_OPS is contracts.TOLERANT_OPS


def private_imports(folder: Path) -> list[str]:
    """``from M import _name`` anywhere under ``folder``: a private helper used outside its module."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                found += [f"{path.relative_to(folder)}: from {'.' * node.level}{node.module or ''} import {a.name}"
                          for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_suite_module_imports_a_private_name():
    # conformance/ only: oracle/layout.py imports dequantize's `_reload`, left to the oracle/layout.py split
    # (issue 19, point 4).
    assert private_imports(ROOT / "conformance") == []


def test_the_check_sees_a_private_import(tmp_path):
    (tmp_path / "fuzz.py").write_text("from .generate import PROFILES, _contracts\n")
    assert private_imports(tmp_path) == ["fuzz.py: from .generate import _contracts"]
