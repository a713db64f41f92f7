"""What a profile is, read by concern, and what has been run against it, as data (issue 19, point 3)."""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import pytest

import oracle
from conformance.fuzz.strategies import DEFAULT_OPS
from conformance.profile_diff import field_docs
from oracle.profile import CONCERNS, Profile
from oracle.profiles import EVIDENCE, PROFILES, PROVING_CASES, Campaign, Evidence

profiles_module = importlib.import_module("oracle.profiles")  # ``oracle.profiles`` is also a function


def test_every_field_has_exactly_one_concern():
    declared = [f.name for f in dataclasses.fields(Profile)]
    listed = [name for names in CONCERNS.values() for name in names]
    assert sorted(listed) == sorted(declared) and len(listed) == len(set(listed))
    assert set(CONCERNS) == {"identity", "arithmetic", "scales", "acceptance", "bytes", "layout", "device", "build"}


def test_a_profile_reads_by_concern():
    wgpu = oracle.get_profile("burn-0.22.0-pre.3/wgpu").by_concern()
    assert wgpu["arithmetic"]["tie"] == "even" and wgpu["arithmetic"]["nan_code"] == "lo"
    assert wgpu["layout"]["layout"] == "wgpu" and wgpu["device"]["max_vector_size"] == 4
    assert oracle.get_profile("burn-0.22.0-pre.3/cubecl").by_concern()["device"]["max_vector_size"] == 255


def _release_token(name: str) -> str:
    """How the harness binaries spell a release: ``pre3`` for 0.22.0-pre.3, else the version with ``_``."""
    release = name.split("/")[0].removeprefix("burn-")
    return "pre3" if release == "0.22.0-pre.3" else release.replace(".", "_").replace("-", "_")


def test_status_comes_from_evidence_naming_each_profiles_own_binary():
    """Every profile with a status above ``modelled`` has its own record, whose binary is its release's and its
    backend's build (a derived profile that inherited its parent's record would name the parent's release)."""
    for name, p in PROFILES.items():
        if p.status == "modelled":
            assert name not in EVIDENCE, name
            continue
        e = EVIDENCE[name]
        assert e.status == p.status
        fused = "-fused" if p.fusion else ""
        assert e.binary == f"qconform-burn-{_release_token(name)}-{p.backend}{fused}", name
        # suite_passing and proven rest on a campaign of that binary; a diverging draft may have none yet
        assert (e.campaign is None and e.status == "diverging") or e.campaign.binary == e.binary, name
    assert set(EVIDENCE) <= set(PROFILES)


def test_proven_exactly_when_the_recorded_campaign_proves_it():
    """Status and record in step (issue 22, point 4): ``proven`` iff the campaign behind it drew at least 20,000
    cases of every op of today's default fuzz set, layout ops included, with no divergence."""
    for name, e in EVIDENCE.items():
        proving = e.campaign is not None and e.campaign.proves(DEFAULT_OPS)
        assert (PROFILES[name].status == "proven") == proving, name


def test_the_records_default_set_is_the_fuzzers():
    assert set(profiles_module._DEFAULT_OPS) == set(DEFAULT_OPS)
    assert {"qlayout", "quantize_view"} <= set(DEFAULT_OPS)


def _campaign(**changes):
    base = dict(seed=1, cases_per_op=PROVING_CASES, ops=tuple(DEFAULT_OPS), date="2026-12-01", binary="b",
                commit="c", diverging=0)
    return Campaign(**(base | changes))


def test_what_a_campaign_must_hold_to_prove():
    assert _campaign().proves(DEFAULT_OPS)
    assert not _campaign(cases_per_op=PROVING_CASES - 1).proves(DEFAULT_OPS)
    assert not _campaign(cases_per_op=None).proves(DEFAULT_OPS)  # a mixed stream's per-op counts unknown
    assert not _campaign(diverging=1).proves(DEFAULT_OPS)
    assert not _campaign(ops=tuple(op for op in DEFAULT_OPS if op != "qlayout")).proves(DEFAULT_OPS)


def test_a_later_run_extends_a_campaign_to_the_ops_it_drew():
    """An op that joined the default set after a campaign (float_ops) is proven by a later run of its own."""
    without = tuple(op for op in DEFAULT_OPS if op != "float_ops")
    assert not _campaign(ops=without).proves(DEFAULT_OPS)
    assert _campaign(ops=without, then=(_campaign(ops=("float_ops",), seed=2),)).proves(DEFAULT_OPS)
    assert not _campaign(ops=without, then=(_campaign(ops=("float_ops",), diverging=1),)).proves(DEFAULT_OPS)
    assert not _campaign(ops=without, then=(_campaign(ops=("float_ops",), cases_per_op=3000),)).proves(DEFAULT_OPS)
    with pytest.raises(ValueError, match="same binary"):
        _campaign(ops=without, then=(_campaign(ops=("float_ops",), binary="other"),))


def test_every_cpu_profile_is_proven_with_float_ops_in_the_default_set():
    assert "float_ops" in DEFAULT_OPS
    for name, p in PROFILES.items():
        if p.kernel == "cpu" and name in EVIDENCE:
            assert p.status == "proven" and profiles_module.short_of_proven(name) == (), name
            assert "float_ops" in EVIDENCE[name].campaign.proven_ops(), name


def test_a_status_below_proven_names_the_ops_that_keep_it_there():
    """The GPU profiles: the ops without a 20,000-case run free of divergences (every default op where none ran), and
    a build that does not claim float_ops says so."""
    for name, e in EVIDENCE.items():
        line = oracle.status_line(name)
        if e.status == "proven":
            assert "short of proven" not in line, name
            continue
        short = profiles_module.short_of_proven(name)
        every = "every default op: " if len(short) == len(DEFAULT_OPS) else ""
        assert short and f"short of proven: {every}{', '.join(short)}" in line, name
        assert ("float_ops not claimed by its build" in line) == ("float_ops" in e.unclaimed), name


def _unclaimed_in_source(backend: str, fused: bool) -> set[str]:
    """``Target::UNCLAIMED`` of a harness binary's source (``adapters/burn/src/bin/<backend>.rs``) for the lean build
    or burn's default one (a const under ``#[cfg(feature = "burn-defaults")]``, or its ``not``)."""
    source = (Path(__file__).resolve().parents[2] / "adapters" / "burn" / "src" / "bin" / f"{backend}.rs").read_text()
    consts = re.findall(r'(#\[cfg\((not\()?feature = "burn-defaults"\)\)?\]\s*)?'
                        r"const UNCLAIMED: &'static \[&'static str\] = &\[([^\]]*)\]", source)
    for cfg, negated, ops in consts:
        if not cfg or bool(negated) != fused:
            return set(re.findall(r'"([a-z_0-9]+)"', ops))
    return set()


def test_the_unclaimed_ops_of_a_record_are_its_builds():
    for name, e in EVIDENCE.items():
        p = PROFILES[name]
        assert set(e.unclaimed) == _unclaimed_in_source(p.backend, p.fusion) & set(DEFAULT_OPS), name
    assert EVIDENCE["burn-0.22.1/wgpu-fused"].unclaimed == ()
    assert EVIDENCE["burn-0.22.1/wgpu"].unclaimed == ()


def test_proven_without_a_proving_campaign_is_refused():
    record = Evidence("proven", "b", "suite", _campaign(diverging=3), "here")
    with pytest.raises(ValueError, match="20,000 cases per default op"):
        profiles_module.status_of(record)


def test_qconform_profiles_shows_the_campaign_behind_each_status(capsys):
    from conformance.cli import main
    assert main(["profiles"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for name, e in EVIDENCE.items():
        at = next(i for i, line in enumerate(lines) if line in (name, f"{name} (default)"))
        shown = "campaign: none run" if e.campaign is None else f"campaign: {e.campaign.describe()}"
        assert lines[at + 3].strip() == f"[{shown}]", name


def test_qconform_profiles_names_the_build_each_profile_describes(capsys):
    from conformance.cli import main
    assert main(["profiles"]) == 0
    lines = capsys.readouterr().out.splitlines()
    build = {line: lines[i + 4].strip() for i, line in enumerate(lines) if line.split(" (")[0] in PROFILES}
    assert build["burn-0.22.1/wgpu-fused"] == "[build: burn's default features (fusion, autotune)]"
    assert build["burn-0.22.1/wgpu"] == "[build: lean, default-features = false (no fusion, no autotune)]"
    assert build["burn-0.22.1/flex (default)"].startswith("[build: lean, default-features = false (scalar code")


def test_each_field_docstring_sits_under_its_own_field():
    docs = field_docs()
    assert docs["ternary_fast_path"].startswith("ndarray's multiply-free Q2S matmul")
    assert "Q2S" not in docs["gemm_crashes"]
