"""Mutants are data outside the oracle (issue 19): importing ``conformance.mutants`` changes no step table and no
profile validation, and a mutant applies to any profile it changes."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import oracle
from conformance.mutants import MUTANTS, VARIANTS, MutantProfile

# In a fresh interpreter: every step table (and fixed step) of the oracle, and whether a real profile accepts a
# mutant-only value, before and after importing conformance.mutants.
_PROBE = r"""
import importlib, json, pkgutil, sys
import oracle
from oracle.choices import Choice, FixedStep, ProfileError, Steps

def snapshot():
    tables, vocab = {}, {}
    for info in pkgutil.iter_modules(oracle.__path__):
        module = importlib.import_module(f"oracle.{info.name}")
        for name, obj in vars(module).items():
            if isinstance(obj, Steps):
                tables[f"{info.name}.{name}"] = sorted((k, repr(v)) for k, v in obj.items())
            elif isinstance(obj, FixedStep):
                tables[f"{info.name}.{name}"] = repr(obj.step)
            elif isinstance(obj, Choice):
                vocab[f"{info.name}.{name}"] = list(obj.values)
    try:
        oracle.get_profile("burn-0.22.1/flex").with_(clamp="none")
        accepted = True
    except ProfileError:
        accepted = False
    return {"tables": tables, "vocab": vocab, "clamp_none_accepted": accepted}

before = snapshot()
import conformance.mutants
print(json.dumps({"before": before, "after": snapshot()}))
"""


def test_importing_the_mutants_changes_no_step_table_and_no_validation():
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True).stdout
    seen = json.loads(out)
    assert seen["before"]["clamp_none_accepted"] is False
    assert seen["after"] == seen["before"]
    assert "encode.ENCODERS" in seen["before"]["tables"] and "routes.ROUTES" in seen["before"]["tables"]


def test_a_real_profile_still_refuses_every_variant_value():
    for (field, value) in VARIANTS:
        if field in {f for f in oracle.Profile.__dataclass_fields__}:
            with pytest.raises(oracle.ProfileError, match=f"'{field}'"):
                oracle.get_profile("burn-0.22.1/flex").with_(**{field: value})


def test_a_mutant_applies_to_its_base_and_keeps_the_base_fields():
    for name, m in MUTANTS.items():
        assert m.applies_to(m.base), name
        p = m.profile
        assert isinstance(p, MutantProfile) and p.name == f"mutant:{name}" and p.description == m.description


def test_ties_even_applies_to_any_profile_that_rounds_ties_away():
    """The diagnosis applies a mutant to whatever profile a backend claims: ties-even on burn-0.22.1/flex rounds
    2.5 (x = 2.5, scale 1) to 2 where flex rounds it to 3, and changes nothing on a profile that already rounds
    ties to even."""
    m = MUTANTS["ties-even"]
    flex = oracle.get_profile("burn-0.22.1/flex")
    scheme = oracle.QuantScheme.default().with_store(oracle.NATIVE).with_value(oracle.QuantValue.Q8S)
    x, s = np.float32([2.5, -3.5, 1.5]), np.float32([1.0])
    assert oracle.quantize(x, scheme, s, profile=flex).codes.tolist() == [3, -4, 2]
    assert oracle.quantize(x, scheme, s, profile=m.on(flex)).codes.tolist() == [2, -4, 2]
    assert m.applies_to(flex) and not m.applies_to("burn-0.23.0-pre.1/flex")


def test_a_variant_replaces_one_step_and_only_on_the_mutant():
    """no-clamp: 200 under Q8S wraps to -56 on the mutant (200 - 256), and clamps to 127 on its base."""
    m = MUTANTS["no-clamp"]
    scheme = oracle.QuantScheme.default().with_store(oracle.NATIVE).with_value(oracle.QuantValue.Q8S)
    x, s = np.float32([200.0]), np.float32([1.0])
    assert oracle.quantize(x, scheme, s, profile=m.base).codes.tolist() == [127]
    assert oracle.quantize(x, scheme, s, profile=m.profile).codes.tolist() == [-56]
    assert m.profile.clamp == oracle.get_profile(m.base).clamp  # the field is the base's; its step is not


def test_a_layout_variant_applies_only_where_its_route_row_is():
    assert MUTANTS["grid-not-permuted"].applies_to("burn-0.22.1/ndarray")
    assert not MUTANTS["grid-not-permuted"].applies_to("burn-0.22.1/flex")
    assert MUTANTS["scales-not-sliced"].applies_to("burn-0.22.1/flex")


def test_only_a_mutant_profile_takes_a_mutant_name():
    with pytest.raises(oracle.ProfileError, match="'name'"):
        oracle.get_profile("burn-0.22.1/flex").with_(name="mutant:ties-even")
    assert MUTANTS["ties-even"].profile.with_(tie="away").name == "mutant:ties-even"
    with pytest.raises(oracle.ProfileError, match="'name'"):
        MUTANTS["ties-even"].profile.with_(name="burn-0.22.1/flex")
