"""The oracle's burnpack reader and writer (oracle/checkpoint.py) against hand-worked bytes (docs/spec/checkpoint.md).

Every expected byte here is worked from the spec by hand, not produced by the module: the CBOR heads of RFC 8949,
the header's little-endian fields, the 256-byte alignment, burn-std's ``quantized_data_len`` formula.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

import oracle as o
from oracle import checkpoint as ck
from oracle.qtensor import QTensor

PRE3, V0221, V023 = "burn-0.22.0-pre.3/flex", "burn-0.22.1/flex", "burn-0.23.0-pre.1/flex"
Q8S_F16 = o.QuantScheme.default().with_store(o.NATIVE).with_value(o.QuantValue.Q8S).per_block([4], o.ScaleDtype.F16)
CODES = np.array([1, -2, 3, 4, 5, 6, 7, -8], dtype=np.int8)


def _qt() -> QTensor:
    return QTensor(CODES, np.array([0.5, 0.25], dtype=np.float32), None, Q8S_F16)


def test_cbor_heads_are_rfc_8949_shortest_forms():
    assert ck.cbor_encode(0) == b"\x00"
    assert ck.cbor_encode(23) == b"\x17"
    assert ck.cbor_encode(24) == b"\x18\x18"
    assert ck.cbor_encode(256) == b"\x19\x01\x00"
    assert ck.cbor_encode(1 << 32) == b"\x1b\x00\x00\x00\x01\x00\x00\x00\x00"
    assert ck.cbor_encode({"a": [1, None]}) == b"\xa1\x61a\x82\x01\xf6"
    assert ck.cbor_decode(b"\xa1\x61a\x82\x01\xf6") == {"a": [1, None]}


def test_the_scheme_travels_as_serdes_externally_tagged_form():
    serde = ck.scheme_to_serde(Q8S_F16)
    assert serde == {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None,
                     "block": {"size": {"storage": [4, 1, 1, 1, 1], "len": 1}, "dtype": "F16"}}
    packed = o.QuantScheme.default().with_value(o.QuantValue.Q4S)
    assert ck.scheme_to_serde(packed)["store"] == {"PackedU32": 0}
    assert ck.scheme_from_serde(serde) == Q8S_F16


def test_a_file_is_header_metadata_padding_payload():
    f = ck.save_checkpoint(_qt(), profile=V0221)
    _, version, size = struct.unpack("<IHI", f[:10])
    assert f[:4] == b"NRUB" and version == 1
    meta = ck.cbor_decode(f[10:10 + size])
    desc = meta["tensors"]["weight"]
    assert desc["shape"] == [8] and desc["data_offsets"] == [0, 12]
    assert len(f) == 256 + 12 and f[10 + size:256] == bytes(256 - 10 - size)
    assert f[256:264] == CODES.tobytes() and f[264:] == bytes.fromhex("0038" "0034")  # f16 0.5, 0.25


def test_the_data_section_starts_on_the_next_256_byte_boundary():
    assert [ck.data_section_start(m) for m in (0, 246, 247, 502)] == [256, 256, 512, 512]


def test_tensors_after_the_first_start_on_a_boundary_of_their_own():
    a, b = bytes(range(12)), bytes(range(5))
    f = ck.write_file([("b", Q8S_F16, (8,), a), ("a", Q8S_F16, (3,), b)])  # placed b then a; listed a then b
    size = struct.unpack("<I", f[6:10])[0]
    meta = ck.cbor_decode(f[10:10 + size])
    assert list(meta["tensors"]) == ["a", "b"]
    assert meta["tensors"]["b"]["data_offsets"] == [0, 12] and meta["tensors"]["a"]["data_offsets"] == [256, 261]
    base = 512 if 10 + size > 256 else 256  # two descriptors: more than 246 bytes of metadata
    assert 10 + size <= base and f[10 + size:base] == bytes(base - 10 - size)
    assert f[base:base + 12] == a and f[base + 12:base + 256] == bytes(244) and f[base + 256:] == b


def test_a_load_dequantizes_the_payload():
    loaded = ck.load_checkpoint(ck.save_checkpoint(_qt(), profile=V023), profile=V023)
    assert loaded.shape == (8,) and loaded.scheme == Q8S_F16
    expected = np.array([0.5, -1.0, 1.5, 2.0, 1.25, 1.5, 1.75, -2.0], dtype=np.float32)
    assert loaded.x.view(np.uint32).tolist() == expected.view(np.uint32).tolist()


def test_burn_5349_the_declared_length_is_not_the_written_one():
    """[3, 3] Q4S PackedU32 up to 0.22.1: one byte per code is written (9 + 4 = 13), while quantized_data_len
    counts 3 lines of ceil(3 / 8) = 1 word each (12 + 4 = 16): burn-pack refuses the save."""
    scheme = o.QuantScheme.default().with_value(o.QuantValue.Q4S)
    assert ck.quantized_data_len(scheme, (3, 3), o.get_profile(PRE3)) == 16
    qt = QTensor(np.zeros((3, 3), dtype=np.int8), np.array([1.0], dtype=np.float32), None, scheme)
    with pytest.raises(o.BurnPanic) as err:
        ck.save_checkpoint(qt, profile=PRE3)
    assert err.value.code == "checkpoint.bytes_size_mismatch"
    assert err.value.message.endswith("(expected 16, got 13)")


def _valid() -> bytes:
    return ck.save_checkpoint(_qt(), profile=V0221)


@pytest.mark.parametrize(("data", "code"), [
    (lambda f: f[:9], "checkpoint.invalid_header"),
    (lambda f: b"XXXX" + f[4:], "checkpoint.invalid_magic"),
    (lambda f: f[:4] + b"\x02\x00" + f[6:], "checkpoint.invalid_version"),
    (lambda f: f[:-1], "checkpoint.validation"),
])
def test_hostile_headers_and_truncations_are_burns_named_errors(data, code):
    with pytest.raises(o.BurnPanic) as err:
        ck.load_checkpoint(data(_valid()), profile=V0221)
    assert err.value.code == code


def test_0_22_0_pre_3_measures_truncation_without_the_padding():
    """Cut to header + metadata + 12: pre.3's size check passes (reader.rs:271-295) and the view fails."""
    f = _valid()
    size = struct.unpack("<I", f[6:10])[0]
    cut = f[:10 + size + 12]
    with pytest.raises(o.BurnPanic) as pre3:
        ck.load_checkpoint(cut, profile=PRE3)
    with pytest.raises(o.BurnPanic) as later:
        ck.load_checkpoint(cut, profile=V0221)
    assert "could not be viewed" in pre3.value.message
    assert "File truncated: expected at least 268 bytes" in later.value.message


@pytest.mark.parametrize(("blob", "why"), [
    (b"\xbf\xff", "indefinite"),        # an indefinite-length map
    (b"\xc1\x00", "tag"),               # a tagged item
    (b"\xa1\x61", "ends inside"),        # cut inside a key
    (b"\xa1\x01\x00", "not text"),      # an integer key
])
def test_cbor_the_reader_does_not_model_is_refused_by_name(blob, why):
    head = struct.pack("<IHI", ck.MAGIC, 1, len(blob)) + blob
    with pytest.raises(ck.CheckpointUnmodelled, match=why):
        ck.load_checkpoint(head + bytes(256 - len(head)), profile=V0221)


def test_an_unknown_variant_is_serdes_error_in_rusts_declaration_order():
    meta = {"tensors": {"weight": {"dtype": {"QFloat": dict(ck.scheme_to_serde(Q8S_F16), value="Q3S")},
                                   "shape": [8], "data_offsets": [0, 12]}}}
    blob = ck.cbor_encode(meta)
    head = struct.pack("<IHI", ck.MAGIC, 1, len(blob)) + blob
    with pytest.raises(o.BurnPanic) as err:
        ck.load_checkpoint(head + bytes(256 - len(head)) + bytes(12), profile=V0221)
    assert err.value.message == ('Metadata deserialization error: Semantic(None, "unknown variant `Q3S`, expected '
                                 'one of `Q8F`, `E5M2`, `E4M3`, `Q4F`, `E2M1`, `Q2F`, `Q8S`, `Q4S`, `Q2S`")')
