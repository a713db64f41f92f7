"""The golden burnpack files of vectors/checkpoints/ (recorded from the real builds) against the oracle, and the
check's power to fail (conformance/checkpoints.py, docs/spec/checkpoint.md)."""

from __future__ import annotations

import json
import shutil
import struct

import pytest

from conformance import checkpoints


def test_the_oracle_writes_reads_and_predicts_every_recorded_file():
    assert checkpoints.check() == []


def test_every_release_recorded_every_save_case():
    manifest = checkpoints.load_manifest()
    cases = {c.alias for c in checkpoints.save_cases()}
    for release in checkpoints.WRITERS:
        saved = {f["case"] for f in manifest["files"] if f["release"] == release}
        refused = {r["case"] for r in manifest["refused"] if r["release"] == release}
        assert saved | refused == cases and not saved & refused, release
    readers = {c["reader"] for c in manifest["matrix"]}
    assert set(checkpoints.WRITERS.values()) <= readers
    assert len(manifest["matrix"]) == len(manifest["files"]) * len(readers)


def test_the_files_are_burnpack_containers():
    """Hand-checked facts of §13.2 on every recorded file: the magic, version 1, the payload on a 256 boundary."""
    for entry in checkpoints.load_manifest()["files"]:
        data = (checkpoints.FOLDER / entry["file"]).read_bytes()
        magic, version, size = struct.unpack("<IHI", data[:10])
        assert data[:4] == b"NRUB" and version == 1, entry["file"]
        start = -(-(10 + size) // 256) * 256
        assert data[10 + size:start] == bytes(start - 10 - size), entry["file"]


@pytest.fixture
def copy(tmp_path):
    folder = tmp_path / "checkpoints"
    shutil.copytree(checkpoints.FOLDER, folder)
    return folder


def test_a_changed_file_fails_the_check(copy):
    entry = checkpoints.load_manifest(copy)["files"][0]
    path = copy / entry["file"]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01  # one bit of the last scale
    path.write_bytes(bytes(data))
    problems = checkpoints.check(copy)
    assert any("sha256" in p for p in problems) and any("other bytes" in p for p in problems)


def test_a_changed_matrix_cell_fails_the_check(copy):
    manifest = checkpoints.load_manifest(copy)
    cell = next(c for c in manifest["matrix"] if c["outcome"] == "identical")
    cell["outcome"] = "different"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert any(cell["reader"] in p for p in checkpoints.check(copy))


def test_a_changed_refusal_fails_the_check(copy):
    manifest = checkpoints.load_manifest(copy)
    manifest["refused"][0]["message"] += "!"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert any("refuses with" in p for p in checkpoints.check(copy))
