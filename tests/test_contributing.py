"""docs/contributing.md's checklists, enforced: every place that must name an op names exactly the ops of
oracle/vocabulary.py, and every profile the oracle defines is registered. (The release checklist's table of builds
is tests/harness/test_releases.py.) Each place is read the way a reader of that file would read it, so a step forgotten
there fails here with the place and the op."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import oracle
from conformance.fuzz import strategies
from conformance.generate import suite_cases
from oracle import vocabulary

ROOT = Path(__file__).resolve().parents[1]


def _section(path: str, heading: str) -> str:
    """The text of ``path`` from ``heading`` to the next heading of the same or a higher level."""
    text = (ROOT / path).read_text()
    level = heading.split(" ")[0]
    start = text.index(heading + "\n")
    end = re.compile(rf"^#{{1,{len(level)}}} ", re.MULTILINE).search(text, start + len(heading))
    return text[start:end.start() if end else len(text)]


def _first_cells(markdown: str) -> set[str]:
    """The backticked word opening each table row's first cell (``| `quantize`, `api: ..` |`` gives quantize)."""
    return set(re.findall(r"^\| `(\w+)`", markdown, re.MULTILINE))


def _rust_ops() -> set[str]:
    """Ops the harness both declares (``pub const OPS``) and dispatches (a ``run`` match arm)."""
    text = (ROOT / "adapters" / "burn" / "src" / "ops.rs").read_text()
    declared = re.search(r"pub const OPS: &\[&str\] = &\[(.*?)\];", text, re.DOTALL).group(1)
    arms = re.search(r"pub fn run<[^>]*>\([^)]*\)[^{]*\{\s*match op \{(.*?)\n    \}", text, re.DOTALL).group(1)
    return set(re.findall(r'"(\w+)"', declared)) & set(re.findall(r'^\s*"(\w+)" =>', arms, re.MULTILINE))


def _schema_ops() -> set[str]:
    schema = json.loads((ROOT / "docs" / "schema" / "protocol.schema.json").read_text())
    return set(schema["$defs"]["request"]["properties"]["op"]["enum"])


PLACES: dict[str, Callable[[], set[str]]] = {
    "oracle/ops.py (oracle.OPS)": lambda: set(oracle.OPS),
    "adapters/burn/src/ops.rs (OPS and run)": _rust_ops,
    "docs/ops.md (The operations)": lambda: _first_cells(_section("docs/ops.md", "## The operations")),
    "docs/burn-harness.md (Which burn API serves each op)":
        lambda: _first_cells(_section("docs/burn-harness.md", "## Which burn API serves each op")),
    "docs/schema/protocol.schema.json (request op)": _schema_ops,
    "conformance/cases/ (a core case)": lambda: {c.op for c in suite_cases("core")},
    "conformance/fuzz/strategies.py (OPS or PENDING)": lambda: set(strategies.OPS) | set(strategies.PENDING),
}


def missing(ops: tuple[str, ...], places: dict[str, Callable[[], set[str]]] = PLACES) -> dict[str, list[str]]:
    """Per place, the ops of ``ops`` it does not name, and the names it has that are not ops."""
    found = {}
    for where, read in places.items():
        named = read()
        problems = [f"misses {op}" for op in ops if op not in named]
        problems += [f"names {name}, not an op of oracle/vocabulary.py" for name in sorted(named - set(ops))]
        if problems:
            found[where] = problems
    return found


def test_every_place_names_exactly_the_vocabulary_ops():
    assert missing(vocabulary.OPS) == {}


def test_a_new_op_is_reported_in_every_place_not_yet_done():
    """An op added to the vocabulary alone is missing from each place, by name."""
    report = missing((*vocabulary.OPS, "dequantize_view"))
    assert set(report) == set(PLACES)
    assert all(problems == ["misses dequantize_view"] for problems in report.values())


def test_an_op_dropped_from_one_place_is_reported_there():
    places = dict(PLACES, **{"docs/ops.md (The operations)": lambda: set(vocabulary.OPS) - {"unpack_u32"}})
    assert missing(vocabulary.OPS, places) == {"docs/ops.md (The operations)": ["misses unpack_u32"]}


@pytest.mark.parametrize("heading", ["## The operations", "## Which burn API serves each op"])
def test_the_doc_tables_are_found(heading):
    path = "docs/ops.md" if heading == "## The operations" else "docs/burn-harness.md"
    assert len(_first_cells(_section(path, heading))) >= 10


def unregistered_profiles() -> list[str]:
    """Profile instances some oracle module defines that ``oracle.PROFILES`` does not hold (a profile written but not
    added to the registry is never generated, run or diffed)."""
    found = []
    for info in pkgutil.walk_packages(oracle.__path__, "oracle."):
        for name, value in vars(importlib.import_module(info.name)).items():
            # the registry holds each profile under its name, with the status its evidence gives it
            if isinstance(value, oracle.Profile) and value.name not in oracle.PROFILES:
                found.append(f"{info.name}.{name} ({value.name})")
    return found


def test_every_profile_instance_is_registered():
    assert unregistered_profiles() == []


def test_an_unregistered_profile_is_reported(monkeypatch):
    profiles = importlib.import_module("oracle.profiles")  # `oracle.profiles` is also the listing function
    monkeypatch.setattr(profiles, "_FLEX_0_24", oracle.get_profile("burn-0.22.1/flex").with_(name="burn-0.24.0/flex"),
                        raising=False)
    assert unregistered_profiles() == ["oracle.profiles._FLEX_0_24 (burn-0.24.0/flex)"]
