"""The committed suite: valid against the JSON Schema, loadable with its integrity checks, complete per profile."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import oracle
from conformance.vectors import load_suite, outcomes_by_profile

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "vectors" / "core"
SCHEMA = ROOT / "vectors" / "schema" / "manifest.schema.json"


@pytest.fixture(scope="module")
def manifest():
    return json.loads((SUITE / "manifest.json").read_text())


def test_schema_is_valid_2020_12():
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA.read_text()))


def test_manifest_matches_schema(manifest):
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    errors = sorted(validator.iter_errors(manifest), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{e.json_path}: {e.message[:200]}" for e in errors[:20])


def test_every_profile_has_an_expectation_for_every_vector(manifest):
    assert manifest["profiles"] == list(oracle.PROFILES)
    for v in manifest["vectors"]:
        listed = [p for out in v["outcomes"] for p in out["profiles"]]
        assert sorted(listed) == sorted(manifest["profiles"]), v["alias"]  # each exactly once


def test_suite_loads_with_integrity_checks():
    suite = load_suite(SUITE)
    assert len(suite.vectors) > 300
    assert len({v.id for v in suite.vectors}) == len({v.alias for v in suite.vectors}) == len(suite.vectors)


def _burn_is_inexact(v: dict, profile: str) -> bool:
    """Where burn itself gives no single answer: its float GEMM, and a mean summed in a machine-dependent order."""
    if v["op"] == "ternary_matmul":
        return True  # exact only on ndarray's fast path, which the generator decides from the lhs shape
    if v["op"] == "qlayout" and any(s["op"] == "matmul" for s in v["params"]["steps"]):
        return True  # q.matmul(f): a float GEMM on every backend, whatever moves follow it
    if v["op"] == "compute_range" and v["params"].get("calibration") == "minmax" and \
            oracle.get_profile(profile).tensor_extremum == "unpinned":
        return True  # a GPU reduction tree picks between +0 and -0 its own way
    return (v["op"] == "compute_range" and v["params"].get("calibration") == "absmean"
            and oracle.get_profile(profile).mean_summation == "any_order")


def test_allclose_only_where_burn_is_inexact(manifest):
    for v in manifest["vectors"]:
        for profile, e in outcomes_by_profile(v).items():
            for c in e.get("compare", {}).values():
                assert _burn_is_inexact(v, profile) and c["kind"] == "allclose" and c["why"], (v["alias"], profile)
            if v["op"] == "compute_range" and "outputs" in e and not _burn_is_inexact(v, profile):
                assert not e.get("compare"), (v["alias"], profile)


def test_error_codes_are_catalogued(manifest):
    for v in manifest["vectors"]:
        for e in v["outcomes"]:
            if "error" in e:
                assert e["error"]["code"] in oracle.CATALOGUE, v["alias"]
