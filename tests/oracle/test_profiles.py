"""Profiles are validated data: a misspelt value of any field raises at construction, naming the field."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import oracle
from oracle import choices
from oracle.choices import ProfileError
from oracle.profiles import EVIDENCE, PROFILES, Profile

BASE = oracle.get_profile("burn-0.22.0-pre.3/ndarray")  # written against it (the default before burn 0.23)


def _misspelt(name: str, value: object) -> object:
    """A plausible typo of ``value``: one letter off for text, a text for a bool, an unknown member for a set,
    a text for a number. Derived from the field's own value, so a new field is covered without editing this."""
    if isinstance(value, bool):
        return "true"
    if isinstance(value, str):
        return value[:-1] + ("y" if value[-1] != "y" else "z")
    if isinstance(value, frozenset):
        return frozenset({"f23", "Q8X"})
    if isinstance(value, tuple):
        return ("ndarray.matirx",)
    if value is None or isinstance(value, int):
        return "six"
    raise AssertionError(f"no typo rule for field {name!r} of type {type(value).__name__}")


# `description` is prose: any non-empty text is a valid description, so only its type is checked.
PROSE = {"description"}


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(Profile)])
def test_a_misspelt_value_of_any_field_raises_naming_the_field(field):
    for profile in PROFILES.values():
        value = getattr(profile, field)
        wrong = None if field in PROSE else _misspelt(field, value)
        with pytest.raises(ProfileError, match=f"profile field '{field}'"):
            profile.with_(**{field: wrong})


def test_the_error_lists_the_allowed_values():
    with pytest.raises(ProfileError) as err:
        BASE.with_(tie="awy")
    assert str(err.value) == "profile field 'tie': unknown value 'awy'; allowed: 'away', 'even'"
    with pytest.raises(ProfileError, match="'point_one', 'min_positive', 'none'"):
        BASE.with_(zero_scale="point-one")


def test_the_issue_example_raises_instead_of_quantizing():
    """Issue 8: ``with_(zero_scale="point-one", tie="awy")`` used to quantize [1, 2.5] to [127, 127]."""
    with pytest.raises(ProfileError, match="zero_scale|tie"):
        BASE.with_(zero_scale="point-one", tie="awy")


def test_a_misspelt_field_name_raises():
    with pytest.raises(TypeError):
        BASE.with_(ties="away")


def test_the_name_agrees_with_the_backend():
    with pytest.raises(ProfileError, match="'name'"):
        BASE.with_(name="burn-0.22.0-pre.3/ndaray")
    assert BASE.with_(name="burn-0.23.0-pre.1/ndarray").name == "burn-0.23.0-pre.1/ndarray"
    with pytest.raises(ProfileError, match="'name'"):
        BASE.with_(name="mutant:x")  # a mutant's name is conformance.mutants.MutantProfile's, not a real profile's


def test_sets_are_normalized_and_checked():
    p = BASE.with_(input_dtypes=["f32", "f16"], quantize_checks=["ndarray.matrix"])
    assert p.input_dtypes == frozenset({"f32", "f16"}) and p.quantize_checks == ("ndarray.matrix",)


def test_every_choice_field_of_the_reference_profiles_is_a_known_value():
    for profile in PROFILES.values():
        for f in dataclasses.fields(Profile):
            assert f.metadata["check"](f.name, getattr(profile, f.name)) == getattr(profile, f.name)


def test_a_step_table_must_implement_exactly_its_vocabulary():
    choice = choices.Choice("demo", a="first", b="second")
    with pytest.raises(AssertionError, match="demo"):
        choice.steps({"a": abs})
    table = choice.steps({"a": abs, "b": round})
    assert table["a"] is abs and dict(table) == {"a": abs, "b": round}
    with pytest.raises(TypeError):
        table["c"] = np.negative  # closed: a read-only mapping
    with pytest.raises(TypeError):
        choice.meanings["c"] = "a variant"
    assert not hasattr(choice, "add")


def test_the_reference_vocabulary_holds_no_mutant_value():
    """The wrong variants live in conformance.mutants; the reference's own choice values are each used by a real
    profile or documented as a real behaviour (and the mutants' values are not among them)."""
    from conformance import mutants

    reference = {"clamp": {"after_round", "before_round"}, "value_layout": {"bytes", "packed_lines"}}
    for m in mutants.MUTANTS.values():
        for field, value in m.overrides.items():
            if field in reference:
                assert value not in reference[field], m.name
    for field, values in reference.items():
        assert {getattr(p, field) for p in PROFILES.values()} == values


def test_status_is_data_and_listed():
    """What has been run against a profile is a field, not a name convention: the CPU profiles' real builds pass
    the suite and agreed with the oracle on 200,000 digest cases of every op, qlayout included (docs/fuzzing.md);
    the GPU model has not been run
    (issue 9 measured it diverging on lavapipe)."""
    assert {p.status for p in PROFILES.values()} <= set(choices.STATUS.values)
    assert oracle.get_profile("burn-0.22.0-pre.3/ndarray").status == "proven"
    assert oracle.get_profile("burn-0.22.1/ndarray").status == "proven"
    assert oracle.get_profile("burn-0.22.0-pre.3/cubecl").status == "modelled"
    assert oracle.get_profile("burn-0.22.1/cubecl").status == "modelled"  # no NVIDIA GPU has run it
    assert oracle.get_profile("burn-0.22.1/flex").status == "proven"
    assert oracle.get_profile("burn-0.23.0-pre.1/flex").status == "proven"
    # burn 0.22.1's GPU route on lavapipe: both real binaries pass the suite (docs/findings.md)
    assert oracle.get_profile("burn-0.22.1/wgpu").status == "proven"
    assert oracle.get_profile("burn-0.22.1/vulkan").status == "proven"
    assert oracle.status_line("burn-0.22.0-pre.3/cubecl").startswith("modelled: read from burn's source, not run")
    # burn 0.23.0-pre.1's lean GPU route, fitted to its real binaries (docs/findings.md); WGSL's per-op campaign clean
    assert oracle.get_profile("burn-0.23.0-pre.1/wgpu").status == "proven"
    assert oracle.get_profile("burn-0.23.0-pre.1/vulkan").status == "suite_passing"
    # judged against its real build and still differing: never "modelled" (which says no build was judged), and the
    # listing says how far off it is, from the record
    draft = oracle.get_profile("burn-0.23.0-pre.1/wgpu").with_(status="diverging")
    assert oracle.status_line(draft).endswith("; judged: " + EVIDENCE["burn-0.23.0-pre.1/wgpu"].suite)
    assert "judged:" not in oracle.status_line("burn-0.23.0-pre.1/wgpu")
    # the default-feature build of the same release, judged on its own binary since 2026-12-02
    assert oracle.get_profile("burn-0.23.0-pre.1/wgpu-fused").status == "suite_passing"
    with pytest.raises(ProfileError, match="'status'"):
        BASE.with_(status="proved")
