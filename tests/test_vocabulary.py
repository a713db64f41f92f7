"""One vocabulary (oracle/vocabulary.py): the oracle's ops table, the vector reader, the coverage lattice and the
Rust harness all speak it."""

from __future__ import annotations

import re
from pathlib import Path

import oracle
from conformance import coverage, tags, vectors
from oracle import vocabulary

RUST_OPS = Path(__file__).resolve().parents[1] / "adapters" / "burn" / "src" / "ops.rs"


def _rust_ops() -> tuple[list[str], list[str]]:
    """The harness's declared op list (``pub const OPS``) and the ops its ``run`` dispatches (match arms)."""
    text = RUST_OPS.read_text()
    declared = re.search(r"pub const OPS: &\[&str\] = &\[(.*?)\];", text, re.DOTALL)
    assert declared, "adapters/burn/src/ops.rs has no `pub const OPS: &[&str]`"
    run = re.search(r"pub fn run<[^>]*>\([^)]*\)[^{]*\{\s*match op \{(.*?)\n    \}", text, re.DOTALL)
    assert run, "adapters/burn/src/ops.rs has no `pub fn run` matching on the op"
    return re.findall(r'"([a-z_0-9]+)"', declared.group(1)), re.findall(r'^\s*"([a-z_0-9]+)" =>', run.group(1), re.MULTILINE)


def test_the_rust_harness_serves_exactly_the_vocabulary_ops():
    declared, dispatched = _rust_ops()
    assert declared == list(vocabulary.OPS)
    assert dispatched == list(vocabulary.OPS)


def test_the_oracle_and_the_vector_reader_serve_exactly_the_vocabulary_ops():
    assert tuple(oracle.OPS) == vocabulary.OPS
    assert vectors.KNOWN_OPS == frozenset(vocabulary.OPS)


def test_the_words_are_burns_enum_members():
    assert vocabulary.VALUES == ("Q8F", "Q8S", "Q4F", "Q4S", "Q2F", "Q2S", "E4M3", "E5M2", "E2M1")
    assert vocabulary.SCALE_DTYPES == ("F32", "F16", "BF16", "UE8M0", "UE4M3")
    assert vocabulary.STORES == ("Native", "PackedU32", "PackedNative")
    assert vocabulary.FLOAT_DTYPES == ("f32", "f16", "bf16")
    assert vocabulary.PROFILE_NAMES == tuple(oracle.PROFILES)


def test_the_coverage_lattice_is_spelled_in_the_vocabulary():
    """Every plane spells its axes in the vocabulary (a plane may take a part of one, e.g. the packed stores);
    together the planes span each word list."""
    words = {"value": vocabulary.VALUES, "store": vocabulary.STORES, "level": vocabulary.LEVELS,
             "dtype": vocabulary.FLOAT_DTYPES, "class": tags.VALUE_CLASSES, "scale": vocabulary.SCALE_DTYPES}
    spanned = {axis: set() for axis in words}
    for plane in coverage.PLANES:
        for axis, values in plane.axes:
            if axis in words:
                assert set(values) <= set(words[axis]), (plane.name, axis)
                spanned[axis] |= set(values)
    assert spanned == {axis: set(values) for axis, values in words.items()}


def test_level_of_a_scheme():
    q = oracle.QuantScheme.default()
    assert vocabulary.level(q) == "tensor"
    assert vocabulary.level(q.per_block([4], oracle.ScaleDtype.F16)) == "block"
    assert vocabulary.level(q.per_block([4], oracle.ScaleDtype.UE4M3).per_tensor(oracle.ScaleDtype.F32)) == "two-level"
