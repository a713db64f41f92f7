"""Every reference the repository makes resolves: to a file in the repository, to a § of docs/spec, or to a line
of burn's published crates (when cargo has them on disk).

A user who clones the repository has docs/spec and nothing else of the machine it was written on, so a citation of
a file outside it (an absolute path, the earlier write-up the spec was first drafted from) is a dead link.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "docs" / "spec"

# Spelled in pieces so that this file does not cite them itself.
OUTSIDE = ["/" + "work/", "shared" + "/spec", "shared" + "/design", "burn-quant-" + "semantics", "numerics-" + "notes"]


def tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    files = []
    for name in names.splitlines():
        path = ROOT / name
        if path.suffix in {".safetensors", ".lock", ".png", ".svg"} or not path.is_file():
            continue
        try:
            files.append((path, path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue
    return files


@pytest.fixture(scope="module")
def files():
    return tracked_text_files()


def test_no_citation_of_a_file_outside_the_repository(files):
    bad = [f"{p.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}"
           for p, text in files for needle in OUTSIDE for m in re.finditer(re.escape(needle), text)]
    assert not bad, "cites files outside the repository:\n" + "\n".join(bad)


REPO_PATH = re.compile(r"\b(?:oracle|conformance|tests|scripts|docs|examples|vectors|adapters|bench)/[\w./-]*\w"
                       r"\.(?:py|md|json|sh|rs|toml|html)\b")
WHEEL_ONLY = "conformance/data/"  # setup.py's copy of the suite and schemas inside an installed wheel


def test_every_repository_path_cited_exists(files):
    """`oracle/quantize.py`, `docs/errors.md`, ...: a module moved or a page renamed leaves no dead reference."""
    bad = [f"{p.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}"
           for p, text in files for m in REPO_PATH.finditer(text)
           if not m.group(0).startswith(WHEEL_ONLY) and not (ROOT / m.group(0)).exists()]
    assert not bad, "cites repository files that do not exist:\n" + "\n".join(bad)


def spec_index() -> tuple[set[str], dict[str, str]]:
    """The § anchors docs/spec/README.md lists, and the page each maps to."""
    anchors, pages = set(), {}
    for line in (SPEC / "README.md").read_text().splitlines():
        m = re.match(r"\| (§[^|]+) \|[^|]*\| \[([\w.-]+\.md)\]", line)
        if not m:
            continue
        for token in re.findall(r"§(\d+)(?:\.(\d+)([a-z]?))?(?:-§\d+\.(\d+))?", m.group(1)):
            top, sub, letter, last = token
            if not sub:
                anchors.add(top)
            elif last:
                anchors.update(f"{top}.{i}" for i in range(int(sub), int(last) + 1))
            else:
                anchors.add(f"{top}.{sub}{letter}")
            anchors.add(top)
        for anchor in [a for a in anchors if a not in pages]:
            pages[anchor] = m.group(2)
    return anchors, pages


def test_the_index_maps_sections_1_to_12_to_pages_that_say_what_they_cover():
    anchors, pages = spec_index()
    assert {str(i) for i in range(1, 13)} <= anchors
    assert set(pages.values()) == {p.name for p in SPEC.glob("*.md")} - {"README.md"}, "a page missing from the index"
    for anchor, page in pages.items():
        text = (SPEC / page).read_text()
        covers = re.search(r"Covers \*\*(.+?)\*\*", text)
        assert covers, f"{page} does not state the § numbers it covers"
        top = anchor.split(".")[0]
        assert f"§{top}" in covers.group(1), f"{page} is indexed for §{anchor} but covers {covers.group(1)}"


CITATION = re.compile(r"§(\d+(?:\.\d+[a-z]?)?)(?:\s*#(\d+))?")


def panic_rows() -> int:
    """The last row of the panic catalogue, as panics.md states what it covers (``§8 (#1-#N)``)."""
    return int(re.search(r"Covers \*\*§8 \(#1-#(\d+)\)\*\*", (SPEC / "panics.md").read_text()).group(1))


def test_every_cited_section_resolves_to_the_index(files):
    anchors, _ = spec_index()
    last_row = panic_rows()
    assert f"§8 (#1-#{last_row})" in (SPEC / "README.md").read_text(), "the index and panics.md disagree on §8"
    bad = []
    for path, text in files:
        for m in CITATION.finditer(text):
            section, row = m.group(1), m.group(2)
            if section not in anchors or (row and section == "8" and not 1 <= int(row) <= last_row):
                line = text[:m.start()].count("\n") + 1
                bad.append(f"{path.relative_to(ROOT)}:{line}: {m.group(0)}")
    assert not bad, "§ citations with no entry in docs/spec/README.md:\n" + "\n".join(bad)


def test_the_resolution_check_can_fail():
    anchors, _ = spec_index()
    assert "5.2" in anchors and "7.4b" in anchors and "8" in anchors
    assert "3.5" not in anchors and "14" not in anchors


# A published crate's file: `burn-std-0.22.0-pre.3/src/tensor/quantization.rs`, optionally `:141` or `:82-186`.
FULL = r"(?:burn|cubecl|cubek)[a-z-]*-\d+\.\d+\.\d+(?:-pre\.\d+)?/src/[\w/.-]+\.rs"
CRATE_CITATION = re.compile(rf"({FULL}):(\d+)")
REGISTRY = os.path.expanduser("~/.cargo/registry/src/*/")


def resolve(text: str) -> tuple[list[tuple[int, str, str, list[int]]], list[str]]:
    """Every `path:line` citation of a spec page, resolved to a full crate path: (page line, as written, file,
    lines), and the citations that resolve to nothing.

    Pages abbreviate as a reader would: a full path once, then its file name (`base.rs:1242`, the latest full path
    with that name), an alias the page declares (`... .rs` (written `scheme.rs`)), or a bare `:336` (same file as
    the citation before it)."""
    text = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.DOTALL)
    text = re.sub(r"``.*?``", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.DOTALL)
    aliases = {m.group(2): m.group(1) for m in re.finditer(r"`([^`]+\.rs)`[^`]{0,60}?written\s+`([^`]+)`", text)}
    aliases |= {m.group(1): m.group(2) for m in re.finditer(r"`([^`]+\.rs)` alone is\s+`([^`]+)`", text)}
    fulls, current, out, bad = [], None, [], []
    for span in re.finditer(r"`([^`]+)`", text):
        line = text[:span.start()].count("\n") + 1
        for part in re.split(r",\s*", span.group(1).strip()):
            m = re.match(r"^(.*?\.rs)?(?::(\d+)(?:-(\d+))?)?(\s.*)?$", part)
            if not m or (m.group(1) is None and m.group(2) is None) or part.startswith(("~", "http")):
                continue
            path, lines = m.group(1) or "", [int(n) for n in m.group(2, 3) if n]
            if not path:
                file = current
            elif re.fullmatch(FULL, path):
                file = path
                fulls.append(path)
            elif path in aliases:
                file = aliases[path]
            else:
                file = next((f for f in reversed(fulls) if f.endswith("/" + path)), None)
            if file is None:
                bad.append(f"line {line}: `{part}`")
                continue
            current = file
            if lines:
                out.append((line, part, file, lines))
    return out, bad


def cited_lines() -> list[tuple[str, str, str, int]]:
    """(page, crate, path, line) of every citation: all of docs/spec and docs/errors.md, the full-form ones of
    the other docs (which also mention burn's git layout in prose)."""
    out = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        if page.parent == SPEC or page.name == "errors.md":
            resolved, _ = resolve(text)
            out += [(page.name, *file.split("/", 1), n) for _, _, file, lines in resolved for n in lines]
        else:
            out += [(page.name, *m.group(1).split("/", 1), int(m.group(2))) for m in CRATE_CITATION.finditer(text)]
    return out


def test_every_spec_citation_resolves_to_a_file():
    bad = [f"{page.name}: {b}" for page in sorted(SPEC.glob("*.md")) for b in resolve(page.read_text())[1]]
    assert not bad, "citations a reader cannot follow:\n" + "\n".join(bad)


def test_the_resolver_follows_abbreviations_and_can_fail():
    text = ("`burn-std-0.22.0-pre.3/src/tensor/quantization.rs` (written `q.rs`) and `burn-ndarray-0.22.0-pre.3/src/"
            "ops/base.rs:12`, then `q.rs:5`, `:7`, `base.rs:9-11` and `nowhere.rs:3`")
    resolved, bad = resolve(text)
    assert [(f.split("/")[0], n) for _, _, f, n in resolved] == [
        ("burn-ndarray-0.22.0-pre.3", [12]), ("burn-std-0.22.0-pre.3", [5]), ("burn-std-0.22.0-pre.3", [7]),
        ("burn-ndarray-0.22.0-pre.3", [9, 11])]
    assert bad == ["line 1: `nowhere.rs:3`"]


def test_spec_pages_cite_burns_published_crates():
    crates = {crate for _, crate, _, _ in cited_lines()}
    assert {"burn-std-0.22.0-pre.3", "burn-ndarray-0.22.0-pre.3", "burn-flex-0.22.0-pre.3",
            "cubecl-common-0.11.0-pre.3", "cubek-quant-0.3.0-pre.3"} <= crates


def test_cited_lines_exist_in_the_published_crates():
    """Skipped crate by crate when cargo has not downloaded it (the burn harness build does)."""
    checked, missing, bad = 0, set(), []
    for page, crate, path, line in cited_lines():
        found = glob.glob(REGISTRY + crate)
        if not found:
            missing.add(crate)
            continue
        source = Path(found[0]) / path
        if not source.is_file():
            bad.append(f"{page}: {crate}/{path} does not exist")
            continue
        lines = source.read_text(encoding="utf-8").splitlines()
        if line > len(lines) or not lines[line - 1].strip():
            bad.append(f"{page}: {crate}/{path}:{line} is past the end or blank")
        checked += 1
    assert not bad, "\n".join(bad)
    if not checked:
        pytest.skip(f"none of the cited crates is on disk ({len(missing)} crates)")
