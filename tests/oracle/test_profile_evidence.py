"""What a profile is, read by concern, and what has been run against it, as data (issue 19, point 3)."""

from __future__ import annotations

import dataclasses

import oracle
from conformance.profile_diff import field_docs
from oracle.profile import CONCERNS, Profile
from oracle.profiles import EVIDENCE, PROFILES


def test_every_field_has_exactly_one_concern():
    declared = [f.name for f in dataclasses.fields(Profile)]
    listed = [name for names in CONCERNS.values() for name in names]
    assert sorted(listed) == sorted(declared) and len(listed) == len(set(listed))
    assert set(CONCERNS) == {"identity", "arithmetic", "scales", "acceptance", "bytes", "layout", "device"}


def test_a_profile_reads_by_concern():
    wgpu = oracle.get_profile("burn-0.22.0-pre.3/wgpu").by_concern()
    assert wgpu["arithmetic"]["tie"] == "even" and wgpu["arithmetic"]["nan_code"] == "lo"
    assert wgpu["layout"]["layout"] == "wgpu" and wgpu["device"]["max_vector_size"] == 255
    assert oracle.get_profile("burn-0.22.0-pre.3/vulkan").by_concern()["device"]["max_vector_size"] == 4


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
        assert e.binary == f"qconform-burn-{_release_token(name)}-{p.backend}", name
        assert e.campaign is not None and e.campaign.cases > 0 and e.campaign.seeds
    assert set(EVIDENCE) <= set(PROFILES)


def test_proven_means_a_campaign_with_no_divergence():
    for name, e in EVIDENCE.items():
        if e.status == "proven":
            assert "diverging" not in e.campaign.result or e.campaign.result.startswith("0 diverging"), name


def test_each_field_docstring_sits_under_its_own_field():
    docs = field_docs()
    assert docs["ternary_fast_path"].startswith("ndarray's multiply-free Q2S matmul")
    assert "Q2S" not in docs["gemm_crashes"]
