"""The table of builds (adapters/burn/releases.toml) against what it names: every profile the oracle does not mark
`modelled` has a CI build, every row's manifest, features and binaries exist, each binary claims the row's profile
(its release read off compat.rs's cfg ladder under the row's features), and the release features are spelled by
exact version in every manifest. Each check returns its problems, so the tests below can also show it failing."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
import tomllib
from pathlib import Path

import pytest

import oracle

ROOT = Path(__file__).resolve().parents[2]
BURN = ROOT / "adapters" / "burn"

# scripts/ is not a package; registered before it runs, as dataclasses look their module up in sys.modules.
_spec = importlib.util.spec_from_file_location("qconform_releases", ROOT / "scripts" / "releases.py")
releases = sys.modules.setdefault("qconform_releases", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(releases)

ROWS = releases.rows()
MANIFESTS = {p.relative_to(BURN).as_posix(): tomllib.loads(p.read_text()) for p in sorted(BURN.glob("**/Cargo.toml"))
             if "target" not in p.parts}
STATUS = {name: p.status for name, p in oracle.PROFILES.items()}


def _release_feature(version: str) -> str:
    return "release-" + re.sub(r"[.]", "-", version)


def _enabled(manifest: dict, requested: tuple[str, ...]) -> set[str]:
    """The manifest's own features a build turns on: its defaults plus ``requested``, closed over the feature table
    (``dep:`` and ``crate/feature`` entries are not features of the harness)."""
    table = manifest["features"]
    todo, on = [*table.get("default", []), *requested], set()
    while todo:
        f = todo.pop()
        if f not in on and "/" not in f and not f.startswith("dep:"):
            on.add(f)
            todo.extend(table.get(f, []))
    return on


_CFG = re.compile(r'#\[cfg\((.*)\)\]\s*pub const BURN_VERSION: &str = "([^"]+)";')


def _cfg_true(expr: str, features: set[str]) -> bool:
    """A cfg predicate of compat.rs (``feature = ".."``, ``all(..)``, ``any(..)``, ``not(..)``) under ``features``."""
    expr = expr.strip()
    if m := re.fullmatch(r'feature = "([^"]+)"', expr):
        return m.group(1) in features
    m = re.fullmatch(r"(all|any|not)\((.*)\)", expr, re.DOTALL)
    assert m, f"compat.rs: a cfg predicate this reader does not know: {expr}"
    args, depth, start = [], 0, 0
    for i, ch in enumerate(m.group(2) + ","):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            args.append(_cfg_true(m.group(2)[start:i], features))
            start = i + 1
    return {"all": all, "any": any, "not": lambda a: not a[0]}[m.group(1)](args)


def burn_version(features: set[str]) -> list[str]:
    """The BURN_VERSION compat.rs compiles to under ``features`` (a list: the ladder must give exactly one)."""
    text = (BURN / "src" / "compat.rs").read_text()
    return [version for expr, version in _CFG.findall(text) if _cfg_true(expr, features)]


def _backend(source: Path) -> str | None:
    """``Target::BACKEND`` of a binary's source: the part of the profile it claims after the release."""
    m = re.search(r'const BACKEND: &\'static str = "([^"]+)";', source.read_text())
    return m and m.group(1)


def row_problems(rows: list, manifests: dict) -> list[str]:
    """What a row names that its manifest does not build as the row says."""
    problems = []
    for row in rows:
        where = f"{row.build} ({', '.join(row.binaries)})"
        manifest = manifests.get(row.manifest)
        if manifest is None:
            problems.append(f"{where}: no manifest {row.manifest}")
            continue
        pin = manifest["dependencies"]["burn-tensor"]["version"]
        if pin != f"={row.release}":
            problems.append(f"{where}: {row.manifest} pins burn-tensor {pin}, the row says {row.release}")
        unknown = set(row.features) - set(manifest["features"])
        if unknown:
            problems.append(f"{where}: {row.manifest} has no features {sorted(unknown)}")
        on = _enabled(manifest, row.features)
        if burn_version(on) != [row.release]:
            problems.append(f"{where}: compat.rs's BURN_VERSION under {sorted(on)} is {burn_version(on)}, "
                            f"not [{row.release!r}] (the release features)")
        bins = {b["name"]: b for b in manifest.get("bin", [])}
        for binary, profile in zip(row.binaries, row.profiles):
            if binary not in bins:
                problems.append(f"{where}: {row.manifest} declares no [[bin]] {binary}")
                continue
            missing = set(bins[binary].get("required-features", [])) - on
            if missing:
                problems.append(f"{where}: {binary} needs features {sorted(missing)} the row does not turn on")
            # target.rs's `profile`: a build with burn's `fusion` feature claims the fused variant of its backend.
            fused = "-fused" if "fusion" in on else ""
            claimed = f"burn-{row.release}/{_backend((BURN / row.manifest).parent / bins[binary]['path'])}{fused}"
            if claimed != profile:
                problems.append(f"{where}: {binary} claims {claimed} in its handshake, the row says {profile}")
    return problems


def profile_problems(rows: list, status: dict[str, str]) -> list[str]:
    """Profiles a row claims that the oracle lacks, and profiles the oracle says were run that no build reruns: a CI
    row, or a row `make burn-all` builds (every row that runs on this machine: not CUDA), where CI's budget leaves a
    build out (docs/burn-harness.md, "Measured")."""
    claimed = {p for r in rows for p in r.profiles}
    built = {p for r in rows if r.ci or "cuda" not in r.features for p in r.profiles}
    problems = [f"a row claims {p}, which is not a profile of the oracle" for p in sorted(claimed - set(status))]
    problems += [f"{name} is `{s}` but no row of releases.toml that CI or `make burn-all` builds claims it"
                 for name, s in status.items() if s != "modelled" and name not in built]
    return problems


def test_the_table_parses_and_names_each_binary_once():
    binaries = [b for r in ROWS for b in r.binaries]
    assert len(binaries) == len(set(binaries))
    declared = {b["name"] for m in MANIFESTS.values() for b in m.get("bin", [])}
    assert set(binaries) == declared, "every [[bin]] of the Cargo manifests is one row's binary, and only those"


def test_every_row_is_what_its_manifest_builds():
    assert row_problems(ROWS, MANIFESTS) == []


def test_every_profile_run_against_burn_has_a_ci_build():
    assert profile_problems(ROWS, STATUS) == []


def test_the_checks_see_a_missing_row_and_a_wrong_row():
    """The two checks above can fail: a proven profile whose row is dropped, a row with a wrong release or feature."""
    flex = next(r for r in ROWS if "burn-0.22.1/flex" in r.profiles)
    without = [r for r in ROWS if r is not flex]
    assert any("burn-0.22.1/flex" in p for p in profile_problems(without, STATUS))
    assert any("not a profile" in p for p in profile_problems([dataclasses.replace(flex, profiles=(
        "burn-9.9.9/flex", "burn-0.22.1/flex"))], STATUS))
    wrong_release = dataclasses.replace(flex, release="0.22.0-pre.3", profiles=("burn-0.22.0-pre.3/ndarray",
                                                                                "burn-0.22.0-pre.3/flex"))
    assert any("pins burn-tensor" in p for p in row_problems([wrong_release], MANIFESTS))
    assert any("BURN_VERSION" in p for p in row_problems([wrong_release], MANIFESTS))
    wgpu = next(r for r in ROWS if "burn-0.22.1/wgpu" in r.profiles)
    assert any("needs features" in p for p in row_problems([dataclasses.replace(wgpu, features=())], MANIFESTS))
    assert any("claims burn-0.22.1/wgpu" in p for p in row_problems(
        [dataclasses.replace(wgpu, profiles=("burn-0.22.1/vulkan",))], MANIFESTS))
    fused = next(r for r in ROWS if "burn-0.22.1/wgpu-fused" in r.profiles)
    assert any("claims burn-0.22.1/wgpu-fused" in p for p in row_problems(
        [dataclasses.replace(fused, profiles=("burn-0.22.1/wgpu",))], MANIFESTS)), "a default build claims the fused profile"


def test_release_features_are_named_by_exact_version_in_every_manifest():
    """compat.rs's ladder tests one feature per release after the first, ``release-`` + the version with dashes;
    every manifest declares all of them, so the shared sources' cfgs are known features in every build."""
    used = set(re.findall(r'feature = "(release-[^"]+)"', "".join(p.read_text() for p in (BURN / "src").rglob("*.rs"))))
    first, *later = sorted({r.release for r in ROWS}, key=lambda v: [r.release for r in ROWS].index(v))
    assert used == {_release_feature(v) for v in later}, (first, later)
    for path, manifest in MANIFESTS.items():
        assert {f for f in manifest["features"] if f.startswith("release-")} == used, path


@pytest.mark.parametrize("features, version", [(set(), "0.22.0-pre.3"), ({"release-0-22-1"}, "0.22.1"),
                                               ({"release-0-22-1", "release-0-23-0-pre-1"}, "0.23.0-pre.1")])
def test_the_cfg_ladder_reading(features, version):
    assert burn_version(features) == [version]


def test_build_sh_names_builds_only_through_the_table():
    script = (BURN / "build.sh").read_text()
    assert "releases.py" in script
    assert "qconform-burn-" not in script, "build.sh names a binary: add it to releases.toml instead"
    assert [releases.plan_line(r) for r in releases.select([], ROWS)] == [releases.plan_line(r) for r in ROWS if r.ci]
    assert releases.select(["0.23"], ROWS) == [r for r in ROWS if r.build == "0.23.0-pre.1"]
    with pytest.raises(ValueError, match="unknown build 'nope'"):
        releases.select(["nope"], ROWS)


def test_plan_lines_keep_an_empty_feature_field():
    cpu = next(r for r in ROWS if r.build == "pre3")
    assert releases.plan_line(cpu) == "cargo-target|Cargo.toml||qconform-burn-pre3-ndarray qconform-burn-pre3-flex"
    assert releases.plan_line(cpu, "simd") == ("cargo-target-defaults|Cargo.toml|simd|"
                                               "qconform-burn-pre3-ndarray qconform-burn-pre3-flex")
    gpu = next(r for r in ROWS if not r.lean)
    assert releases.plan_line(gpu, "simd") == releases.plan_line(gpu), "BURN_FEATURES reaches only lean rows"


def test_the_harness_doc_table_is_generated_from_the_table():
    assert releases.doc_table(ROWS) in (ROOT / "docs" / "burn-harness.md").read_text(), (
        "docs/burn-harness.md's binaries table is stale: paste `python3 scripts/releases.py doc`")


def test_a_malformed_row_is_refused_by_name(tmp_path):
    bad = tmp_path / "releases.toml"
    bad.write_text('[[row]]\nbuild = "x"\nrelease = "1"\n')
    with pytest.raises(ValueError, match=r"row 1 \(x\): missing fields \['aliases'"):
        releases.rows(bad)


def test_the_gpu_scripts_default_builds_come_from_the_table():
    assert releases.names(ROWS, ci=True, feature="wgpu") == ["gpu-0.22.1", "gpu-0.23.0-pre.1-fused"]
    assert releases.names(ROWS, feature="cuda") == ["cuda-pre3", "cuda-0.22.1"]
    assert releases.names(ROWS, ci=True, feature="cuda") == [], "CUDA is never built in CI"
    assert set(releases.names(ROWS, without="cuda")) == {r.build for r in ROWS} - {"cuda-pre3", "cuda-0.22.1"}
    for script in ("burn-gpu.sh", "gpu-check.sh"):
        assert "releases.py names" in (ROOT / "scripts" / script).read_text(), script


def test_every_binary_run_here_is_fuzzed_and_the_budget_is_read_per_binary():
    for row in ROWS:
        # CI rows are fuzzed in every CI run; the rows `make burn-all` adds carry their budget too; CUDA runs nowhere here.
        runs_here = "cuda" not in row.features
        assert (row.ci_fuzz > 0) == runs_here, f"{row.build}: fuzzed exactly when it runs on this machine"
        assert runs_here or not row.ci, f"{row.build}: CUDA is never built in CI"
        for binary in row.binaries:
            assert releases.ci_fuzz(binary, ROWS) == row.ci_fuzz
    with pytest.raises(ValueError, match="no row builds 'qconform-burn-nothing'"):
        releases.ci_fuzz("qconform-burn-nothing", ROWS)
    assert "releases.py ci-fuzz" in (ROOT / "scripts" / "burn-conformance.sh").read_text()
