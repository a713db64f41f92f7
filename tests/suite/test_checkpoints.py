"""The golden burnpack files of vectors/checkpoints/ (recorded from the real builds) against the oracle, and the
check's power to fail (conformance/checkpoints.py, docs/spec/checkpoint.md)."""

from __future__ import annotations

import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np
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
        _, version, size = struct.unpack("<IHI", data[:10])
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


# ---- a reader written from docs/spec/checkpoint.md alone (examples/checkpoint_loader.py) -------------------------

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import checkpoint_loader


@pytest.fixture(scope="module")
def suite():
    from conformance.vectors import load_suite
    return load_suite(ROOT / "vectors" / "core")


def _run(reader, suite):
    from conformance.backends.python import PythonBackend
    from conformance.runner import Runner
    runner = Runner(suite, "python:test", backend=PythonBackend(reader), diagnose=False, strict_messages=True)
    runner.start()
    return [runner.run_vector(v) for v in suite.vectors if v.op == "load_checkpoint"]


def test_a_reader_written_from_the_spec_passes_the_checkpoint_vectors(suite):
    verdicts = _run(checkpoint_loader.CheckpointLoader(), suite)
    assert [v.alias for v in verdicts if v.status == "failed"] == []
    assert sum(v.status == "passed" for v in verdicts) >= 20


class _NoAlignment(checkpoint_loader.CheckpointLoader):
    """Reads the data section right after the metadata, as if there were no 256-byte padding."""

    def run(self, op, params, inputs):
        data = np.asarray(inputs["file"], dtype=np.uint8)
        size = int(data[6:10].view("<u4")[0])
        shifted = np.concatenate([data[:10 + size], data[-(-(10 + size) // 256) * 256:]])
        pad = np.zeros(-(-(10 + size) // 256) * 256 - 10 - size, dtype=np.uint8)
        return super().run(op, params, {"file": np.concatenate([shifted, pad])})


class _SizeCheckFirst(checkpoint_loader.CheckpointLoader):
    """Checks a tensor's size before the file's length (0.22.1's order, not 0.23's)."""

    def run(self, op, params, inputs):
        data = np.asarray(inputs["file"], dtype=np.uint8).tobytes()
        if len(data) >= 10:
            size = struct.unpack("<I", data[6:10])[0]
            meta = checkpoint_loader.Cbor(data[10:10 + size]).item() if len(data) >= 10 + size else None
            for name, d in sorted((meta or {}).get("tensors", {}).items()) if isinstance(meta, dict) else ():
                start, end = d.get("data_offsets", (0, 0))
                if end - start > checkpoint_loader.MAX_TENSOR:
                    raise checkpoint_loader.validation(f"Tensor '{name}' size {end - start} exceeds maximum "
                                                       f"allowed size of {checkpoint_loader.MAX_TENSOR} bytes "
                                                       "(potential DoS attack)")
        return super().run(op, params, inputs)


@pytest.mark.parametrize("broken", [_NoAlignment, _SizeCheckFirst])
def test_a_broken_reader_fails(broken, suite):
    assert any(v.status == "failed" for v in _run(broken(), suite))


def test_the_checkpoint_loader_preset_claims_load_checkpoint_alone():
    from conformance.protocol import Capabilities
    assert Capabilities.from_json({"preset": "checkpoint-loader"}).ops == frozenset({"load_checkpoint"})
