"""Manifest format 2 (docs/vector-format.md): each vector states each distinct outcome once, with the profiles
that share it; format 1 suites (an expectation per profile) still load, to the same expectations."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import suites  # the runner tests' small synthetic suite (conftest.py puts it on the path)

from conformance.vectors import FORMAT_VERSION, VectorError, load_suite, outcomes_by_profile, write_suite

ROOT = Path(__file__).resolve().parents[2]
A, B = suites.A, suites.B


def manifest(d: Path) -> dict:
    return json.loads((d / "manifest.json").read_text())


def by_alias(m: dict, alias: str) -> dict:
    return next(v for v in m["vectors"] if v["alias"] == alias)


def test_profiles_that_agree_share_one_outcome_and_those_that_differ_get_their_own(suite_dir):
    m = manifest(suite_dir)
    assert m["format_version"] == FORMAT_VERSION == 2
    same = by_alias(m, "round_up/f16/basic")
    assert [o["profiles"] for o in same["outcomes"]] == [[A, B]] and "expected" not in same
    ties = by_alias(m, "quantize/q8s/ties")  # away from zero under A, to even under B (suites.py)
    assert [o["profiles"] for o in ties["outcomes"]] == [[A], [B]]
    assert ties["outcomes"][0]["outputs"]["codes"] != ties["outcomes"][1]["outputs"]["codes"]
    err = by_alias(m, "quantize/q8s/global-error")  # an error under A, outputs under B
    assert [sorted(o) for o in err["outcomes"]] == [["error", "profiles"],
                                                     ["compare", "outputs", "profiles", "values"]]


def test_outcomes_follow_the_profile_order_given_not_the_dict_order(tmp_path):
    vecs = suites.vectors()
    for v in vecs:
        v["expected"] = dict(reversed(list(v["expected"].items())))
    write_suite(tmp_path, vecs, suite="test", profiles=[A, B])
    ties = by_alias(manifest(tmp_path), "quantize/q8s/ties")
    assert [o["profiles"] for o in ties["outcomes"]] == [[A], [B]]


def test_the_committed_suite_states_no_outcome_twice():
    m = manifest(ROOT / "vectors" / "core")
    for v in m["vectors"]:
        bodies = [json.dumps({k: x for k, x in o.items() if k != "profiles"}, sort_keys=True) for o in v["outcomes"]]
        assert len(set(bodies)) == len(bodies), v["alias"]
        order = [m["profiles"].index(o["profiles"][0]) for o in v["outcomes"]]
        assert order == sorted(order), v["alias"]  # deterministic: by each outcome's first profile
        for o in v["outcomes"]:
            assert o["profiles"] == sorted(o["profiles"], key=m["profiles"].index), v["alias"]


def _as_format_1(m: dict) -> dict:
    """The same suite written the v1 way, by hand: every profile's expectation in full under ``expected``."""
    m = json.loads(json.dumps(m))
    m["format_version"] = 1
    for v in m["vectors"]:
        v["expected"] = {p: {k: x for k, x in o.items() if k != "profiles"}
                         for o in v.pop("outcomes") for p in o["profiles"]}
    return m


def test_a_format_1_suite_loads_to_the_same_expectations(suite_dir, tmp_path):
    old = tmp_path / "v1"
    old.mkdir()
    for f in suite_dir.iterdir():
        (old / f.name).write_bytes(f.read_bytes())
    (old / "manifest.json").write_text(json.dumps(_as_format_1(manifest(suite_dir))))
    new_suite, old_suite = load_suite(suite_dir), load_suite(old)
    for nv, ov in zip(new_suite.vectors, old_suite.vectors, strict=True):
        for p in (A, B):
            n, o = nv.expected[p], ov.expected[p]
            assert (n.error, n.undefined, n.values, n.compare) == (o.error, o.undefined, o.values, o.compare)
            assert n.outputs.keys() == o.outputs.keys()
            assert all(np.array_equal(n.outputs[k], o.outputs[k]) for k in n.outputs)


def test_the_committed_format_1_repro_suites_still_load():
    for folder in sorted(m.parent for m in (ROOT / "docs" / "repro").glob("*/manifest.json")):
        suite = load_suite(folder)
        assert suite.vectors and all(set(v.expected) == set(suite.profiles) for v in suite.vectors), folder


def test_outcomes_by_profile_reads_both_formats():
    outcome = {"outputs": {"x": "s#t"}, "values": {}, "compare": {}}
    v2 = {"outcomes": [{"profiles": [A, B], **outcome}, {"profiles": ["c"], "error": {"code": "a.b", "message": "m"}}]}
    assert outcomes_by_profile(v2) == {A: outcome, B: outcome, "c": {"error": {"code": "a.b", "message": "m"}}}
    assert outcomes_by_profile({"expected": {A: outcome}}) == {A: outcome}


def edit(suite_dir: Path, alias: str, fn) -> None:
    m = manifest(suite_dir)
    fn(by_alias(m, alias))
    (suite_dir / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("change, fragment", [
    (lambda v: v["outcomes"][1]["profiles"].append(A), f"profile(s) ['{A}'] have more than one outcome"),
    (lambda v: v["outcomes"][0]["profiles"].append(A), f"profile(s) ['{A}'] have more than one outcome"),
    (lambda v: v["outcomes"].pop(), "expected profiles ['test/a'] differ from the manifest's"),
    (lambda v: v["outcomes"][0].update(profiles=[]), "outcomes[0] must be an object with a non-empty list"),
    (lambda v: v["outcomes"][0].pop("profiles"), "outcomes[0] must be an object with a non-empty list"),
    (lambda v: v["outcomes"][0].update(profiles=["test/z"]), "differ from the manifest's"),
    (lambda v: v.update(outcomes=[]), "'outcomes' must be a non-empty list"),
    (lambda v: v.pop("outcomes"), "'outcomes' must be a list (format v2) or 'expected' an object (v1)"),
])
def test_a_broken_outcome_list_is_refused_naming_the_vector(suite_dir, change, fragment):
    edit(suite_dir, "quantize/q8s/ties", change)
    with pytest.raises(VectorError) as e:
        load_suite(suite_dir)
    assert "'quantize/q8s/ties'" in str(e.value) and fragment in str(e.value), str(e.value)


def test_an_unknown_format_version_is_refused(suite_dir):
    m = manifest(suite_dir)
    m["format_version"] = 3
    (suite_dir / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(VectorError, match="version 3 is not 'qconform-vectors' version 1 or 2"):
        load_suite(suite_dir)
