"""``qconform profiles --diff A B`` and the generated docs/upgrading.md (conformance/profile_diff.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conformance import cli, profile_diff, vectors
from conformance.vectors import default_suite_path, load_suite

SUITE = load_suite(default_suite_path())
FLEX_0_22_1, FLEX_0_23 = "burn-0.22.1/flex", "burn-0.23.0-pre.1/flex"
NDARRAY_PRE3, NDARRAY_0_22_1 = "burn-0.22.0-pre.3/ndarray", "burn-0.22.1/ndarray"


def _raw_differ(vector, a, b) -> bool:
    """An independent, cruder count: expectations that are not byte for byte (or text for text) the same."""
    ea, eb = vector.expected[a], vector.expected[b]
    if (ea.error is None) != (eb.error is None):
        return True
    if ea.error is not None:
        return (ea.error["code"], ea.error["message"]) != (eb.error["code"], eb.error["message"])
    if set(ea.outputs) != set(eb.outputs) or ea.values != eb.values:
        return True
    return any(ea.outputs[k].dtype != eb.outputs[k].dtype or ea.outputs[k].shape != eb.outputs[k].shape
               or ea.outputs[k].tobytes() != eb.outputs[k].tobytes() for k in ea.outputs)


_DIFFS: dict = {}


def _diff(a, b):
    """profile_diff.diff, computed once per pair for the whole module (each judges every vector twice)."""
    if (a, b) not in _DIFFS:
        _DIFFS[a, b] = _real_diff(SUITE, a, b)
    return _DIFFS[a, b]


_real_diff = profile_diff.diff


@pytest.fixture
def memo_diff(monkeypatch):
    """The CLI's calls reuse a pair already diffed by the tests; another pair (or suite) is computed for real."""
    monkeypatch.setattr(profile_diff, "diff",
                        lambda suite, a, b: _diff(a, b) if suite.digest == SUITE.digest else _real_diff(suite, a, b))
    monkeypatch.setattr(vectors, "load_suite", lambda path: SUITE if path == default_suite_path() else load_suite(path))


def _group_of(groups, alias):
    return next(g.fields for g in groups if alias in g.aliases)


def test_a_profile_does_not_differ_from_itself():
    groups, total = profile_diff.diff(SUITE, FLEX_0_23, FLEX_0_23)
    assert groups == [] and total == len(SUITE.vectors)


def test_ndarray_0_22_1_differs_only_by_ue8m0_and_its_checkpoint_reader():
    """0.22.1 ndarray = 0.22.0-pre.3 ndarray + UE8M0 scales (docs/findings.md) and burn-pack 0.22.1's reader (spec
    §13.6); the vectors that differ are exactly those whose expectations differ byte for byte (ndarray's contracts
    are all exact)."""
    groups, _ = profile_diff.diff(SUITE, NDARRAY_PRE3, NDARRAY_0_22_1)
    assert [g.fields for g in groups] == [("ue8m0",), ("checkpoint_reader",)]
    assert all(a.startswith("load_checkpoint/") for a in groups[1].aliases)
    assert sorted(groups[0].aliases + groups[1].aliases) == sorted(v.alias for v in SUITE.vectors
                                                                   if _raw_differ(v, NDARRAY_PRE3, NDARRAY_0_22_1))
    scales = {v.alias: {t for t in v.tags if t.startswith("scale:")} for v in SUITE.vectors}
    assert all("scale:UE8M0" in scales[a] for a in groups[0].aliases  # the MX formats' vectors among them
               if not a.startswith("load_checkpoint/"))  # a file names no scheme in its params


def test_flex_0_23_groups_name_the_change_each_vector_pins():
    groups, _ = _diff(FLEX_0_22_1, FLEX_0_23)
    assert _group_of(groups, "quantize/q8s/tensor/half-even-shift") == ("tie",)
    assert _group_of(groups, "quantize/q8s/tensor/reciprocal-split") == ("division",)
    assert _group_of(groups, "to_bytes/q4s-packed/rank-2/padded-lines") == ("value_layout",)
    assert _group_of(groups, "unpack_u32/e2m1/nibbles-unsigned") == ("value_layout",)
    assert _group_of(groups, "from_bytes/q8s/tensor/extra-bytes") == ("validates_data_length",)
    assert _group_of(groups, "dequantize/e4m3/tensor/minifloat-values") == ("float_codes",)
    # Every group's vectors are distinct and the biggest group comes first.
    aliases = [a for g in groups for a in g.aliases]
    assert len(aliases) == len(set(aliases))
    assert [len(g.aliases) for g in groups] == sorted((len(g.aliases) for g in groups), reverse=True)
    # A vector outside every group expects the same outcome under both profiles.
    same = next(v for v in SUITE.vectors if v.alias == "dequantize/q8s/tensor/spec-example")
    assert same.alias not in aliases and not _raw_differ(same, FLEX_0_22_1, FLEX_0_23)


def test_cli_diff_text_and_json(capsys, memo_diff):
    groups, _ = _diff(FLEX_0_22_1, FLEX_0_23)
    n = sum(len(g.aliases) for g in groups)
    # The crude count cannot judge a vector compared within a tolerance (a GEMM's bits differ anyway): both
    # counts leave those out, and the rest must agree vector for vector.
    inexact = {v.alias for v in SUITE.vectors
               if any(c.get("kind") != "exact" for c in v.expected[FLEX_0_23].compare.values())}
    assert {a for g in groups for a in g.aliases} - inexact == {
        v.alias for v in SUITE.vectors if v.alias not in inexact and _raw_differ(v, FLEX_0_22_1, FLEX_0_23)}
    assert cli.main(["profiles", "--diff", FLEX_0_22_1, FLEX_0_23]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{n} of {len(SUITE.vectors)} vectors expect a different outcome under {FLEX_0_23}")
    assert "tie: away -> even" in text and "value_layout: bytes -> packed_lines" in text
    assert cli.main(["profiles", "--diff", FLEX_0_22_1, FLEX_0_23, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["differ"] == n == sum(g["count"] for g in data["groups"])
    tie = next(g for g in data["groups"] if g["fields"] == ["tie"])
    assert tie["changes"] == [{"field": "tie", "a": "away", "b": "even"}] and tie["count"] == len(tie["vectors"])
    assert cli.main(["profiles", "--diff", FLEX_0_22_1, "burn-9.9.9/flex"]) == 2


def test_upgrading_check_fails_on_a_stale_page_and_passes_on_a_fresh_one(tmp_path, monkeypatch, capsys):
    """The `--check` mechanism, on a stand-in rendering; that the committed guide is current is `make docs-check`
    (`qconform profiles --upgrading docs/upgrading.md --check`), which renders it from the whole suite."""
    monkeypatch.setattr(profile_diff, "upgrading_markdown", lambda suite: "# Upgrading\n\nrendered\n")
    monkeypatch.setattr(vectors, "load_suite", lambda path: SUITE)  # not read by the stand-in
    page = tmp_path / "upgrading.md"
    assert cli.main(["profiles", "--upgrading", str(page), "--check"]) == 1  # missing
    assert cli.main(["profiles", "--upgrading", str(page)]) == 0 and page.read_text() == "# Upgrading\n\nrendered\n"
    assert cli.main(["profiles", "--upgrading", str(page), "--check"]) == 0
    page.write_text(page.read_text() + "edited by hand\n")
    assert cli.main(["profiles", "--upgrading", str(page), "--check"]) == 1


def test_the_guide_has_a_section_per_upgrade_path():
    text = (Path(__file__).resolve().parents[2] / "docs" / "upgrading.md").read_text()
    for a, b in profile_diff.upgrade_paths():
        assert f"## `{a}` → `{b}`" in text
    for a, b in [(NDARRAY_PRE3, NDARRAY_0_22_1), (NDARRAY_PRE3, FLEX_0_23), (FLEX_0_22_1, FLEX_0_23)]:
        assert (a, b) in profile_diff.upgrade_paths()


@pytest.mark.parametrize("value", [frozenset({"b", "a"}), ("x",), None, True, "even"])
def test_values_are_shown_plainly(value):
    shown = profile_diff._show(value)
    assert "frozenset" not in shown and "(" not in shown and np.ndim(shown) == 0
