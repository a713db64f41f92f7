"""The generator: the committed suite is up to date, refusals, a readable --check diff.

Determinism across processes is what `make vectors-check` proves on every CI run: a generation in a fresh process
must equal the committed bytes. Here one generation per module serves every test that needs the whole suite."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conformance import generate as gen
from conformance.cases import case, f32, scheme

COMMITTED = gen.VECTORS / "core"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fresh") / "core"
    gen.generate("core", folder)
    return folder


def test_committed_suite_is_up_to_date(fresh):
    """What `qconform generate --check` verifies in CI: a fresh generation equals vectors/core byte for byte."""
    committed, regenerated = gen.suite_files(COMMITTED), gen.suite_files(fresh)
    if committed != regenerated:
        lines = gen.diff_manifests(json.loads(committed.get("manifest.json", b"{}")),
                                   json.loads(regenerated["manifest.json"]))
        pytest.fail("vectors/core is stale; run `qconform generate`:\n  " + "\n  ".join(lines[:40]))


def test_check_command(monkeypatch, tmp_path, capsys):
    """The CLI path of `qconform generate [--check]`, on a two-case suite (the whole one is vectors-check's)."""
    monkeypatch.setattr(gen, "suite_cases", lambda suite: [case("round_up/a", **GOOD),
                                                           case("round_up/b", **dict(GOOD, params={"dtype": "BF16"}))])
    out = tmp_path / "core"
    assert gen.main_generate("core", out, False) == 0 and "wrote" in capsys.readouterr().out
    assert gen.main_generate("core", out, True) == 0
    assert "up to date" in capsys.readouterr().out
    (out / "manifest.json").write_text((out / "manifest.json").read_text().replace("BF16", "F16"))
    assert gen.main_generate("core", out, True) == 1
    assert "differs from a fresh generation" in capsys.readouterr().out


def test_check_reports_added_removed_changed(fresh, tmp_path, capsys):
    stale = tmp_path / "core"
    stale.mkdir()
    for name, blob in gen.suite_files(fresh).items():
        (stale / name).write_bytes(blob)
    manifest = json.loads((stale / "manifest.json").read_text())
    removed = manifest["vectors"].pop(0)
    manifest["vectors"][0]["reason"] = "edited"
    first_profile = manifest["profiles"][0]
    outcomes = manifest["vectors"][1]["outcomes"]  # first_profile leaves its outcome for one of its own
    outcomes[0]["profiles"].remove(first_profile)
    outcomes.insert(0, {"profiles": [first_profile], "error": {"code": "x.y", "message": "m"}})
    manifest["vectors"].append(dict(manifest["vectors"][2], id="0" * 20, alias="round_up/old-alias"))
    (stale / "manifest.json").write_text(json.dumps(manifest))
    assert gen.main_generate("core", stale, True) == 1
    out = capsys.readouterr().out
    assert f"added   {removed['id']} {removed['alias']}" in out
    assert "removed 00000000000000000000 round_up/old-alias" in out
    assert f"changed {manifest['vectors'][0]['id']} {manifest['vectors'][0]['alias']}: reason" in out
    line = next(x for x in out.splitlines() if x.strip().startswith(f"changed {manifest['vectors'][1]['id']}"))
    assert f"expected[{first_profile}]." in line and "error" in line and "outputs" in line


def _build(monkeypatch, cases):
    monkeypatch.setattr(gen, "suite_cases", lambda suite: cases)
    return gen.build("core")


GOOD = {"op": "round_up", "params": {"dtype": "F16"}, "inputs": {"scales": f32(0.3)}, "spec": ("§4.1",), "reason": "a reason"}


@pytest.mark.parametrize("bad, message", [
    ([case("round_up/a", **GOOD), case("round_up/a", **dict(GOOD, inputs={"scales": f32(0.5)}))], "duplicate alias"),
    ([case("round_up/a", **GOOD), case("round_up/b", **GOOD)], "same id"),
    ([case("Round_up/A", **GOOD)], "alias"),
    ([case("quantize/a", **GOOD)], "starting with its op"),
    ([case("round_up/a", **dict(GOOD, inputs={"scales": np.float64([0.3])}))], "dtype float64"),
    ([case("round_up/a", **dict(GOOD, inputs={"Scales!": f32(0.3)}))], "input name"),
    ([case("round_up/a", **dict(GOOD, params={"dtype": "F16", "x": float("nan")}))], "not plain JSON"),
    ([case("round_up/a", **dict(GOOD, reason=""))], "reason"),
    ([case("round_up/a", **dict(GOOD, spec=("4.1",)))], "spec sections"),
    ([case("round_up/a", **dict(GOOD, tags=("nocolon",)))], "axis:value"),
    ([case("round_up/a", **dict(GOOD, params={"dtype": "F99"}))], "oracle failed"),
    ([case("quantize/a", "quantize", {"scheme": scheme("Q8S"), "api": "tensor"},
           {"x": f32(1.0, 2.0), "scales": f32([1.0])}, tags=("class:tie-even-pos",), spec=("§5",), reason="why")],
     "does not show it"),
])
def test_generator_refuses(monkeypatch, bad, message):
    with pytest.raises(gen.CaseError, match=message):
        _build(monkeypatch, bad)


def test_seeds_come_from_the_alias():
    from conformance.cases import rng
    assert rng("a/b").integers(0, 2**32, 4).tolist() == rng("a/b").integers(0, 2**32, 4).tolist()
    assert rng("a/b").integers(0, 2**32, 4).tolist() != rng("a/c").integers(0, 2**32, 4).tolist()


def test_budget():
    size = sum(len(b) for b in gen.suite_files(COMMITTED).values())
    assert size <= 25_000_000
