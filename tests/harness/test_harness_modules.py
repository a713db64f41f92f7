"""The Rust harness's modules (adapters/burn/src/*.rs) import one way, as the Python packages do
(tests/test_import_graph.py): every ``crate::module`` a module names, in a ``use`` or inline, is an edge, and the
graph has no cycle (ops.rs and layout.rs once imported each other; their shared plumbing is tensors.rs)."""

from __future__ import annotations

import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "adapters" / "burn" / "src"


def module_graph() -> dict[str, set[str]]:
    """Module -> the crate modules it names (lib.rs, the crate root that declares them all, left out)."""
    modules = {p.stem: p for p in SRC.glob("*.rs") if p.stem != "lib"}
    graph = {}
    for name, path in modules.items():
        text = path.read_text()
        named = set(re.findall(r"\bcrate::(\w+)", text))
        for group in re.findall(r"\buse crate::\{([^}]*)\}", text):
            named |= set(re.findall(r"^\s*(\w+)", group, re.MULTILINE)) | set(re.findall(r",\s*(\w+)", group))
        graph[name] = {m for m in named if m in modules and m != name}
    return graph


def test_the_harness_modules_have_no_cycle():
    try:
        order = list(TopologicalSorter(module_graph()).static_order())
    except CycleError as e:
        raise AssertionError(f"the harness's modules import each other in a cycle: {e.args[1]}") from None
    assert order.index("tensors") < order.index("ops") and order.index("tensors") < order.index("layout")


def test_the_graph_sees_the_imports():
    """The reader finds both a ``use crate::x::..`` and an inline ``crate::x::f(..)`` (ops.rs dispatches to layout)."""
    graph = module_graph()
    assert {"tensors", "target", "layout", "compat"} <= graph["ops"]
    assert "ops" not in graph["layout"]
