"""``save_checkpoint`` / ``load_checkpoint``: a quantized tensor in a burnpack file (docs/spec/checkpoint.md).

Saves cover every value, store, level and scale dtype; each expected file is what the profile's release writes
(or burn-pack's refusal: the length burn-store declares is not the bytes' length, the #5349 class). Loads read the
files each release writes (``written-by-<release>``), so every profile's expectation answers "what does this
release make of that release's file" (the cross-release matrix, docs/upgrading.md), and hostile files: truncated,
lying lengths, an unknown scheme variant, huge declared sizes, a wrong header.
"""

from __future__ import annotations

import struct

import numpy as np

import oracle as o
from oracle import QuantScheme
from oracle import checkpoint as ck

from . import case, f32, rng, scheme
from .load_quantized import stored_codes, stored_scales

# The release whose burn-pack and QuantizedBytes write each file of a load vector.
WRITERS = {"0.22.0-pre.3": "burn-0.22.0-pre.3/flex", "0.22.1": "burn-0.22.1/flex",
           "0.23.0-pre.1": "burn-0.23.0-pre.1/flex"}

_VALUES = {"Native": ("Q8S", "Q8F", "Q4S", "Q4F", "Q2S", "Q2F", "E4M3", "E5M2", "E2M1"),
           "PackedU32": ("Q8S", "Q8F", "Q4S", "Q4F", "Q2S", "Q2F"),
           "PackedNative": ("E2M1",)}
_STORES = {"Native": "Native", "PackedU32": ("PackedU32", 0), "PackedNative": ("PackedNative", 0)}
_LEVELS = {"tensor-f32": {}, "block-32-f32": {"block": [32], "block_dtype": "F32"},
           "block-32-f16": {"block": [32], "block_dtype": "F16"},
           "block-32-bf16": {"block": [32], "block_dtype": "BF16"},
           "block-32-ue8m0": {"block": [32], "block_dtype": "UE8M0"},
           "two-level-16-ue4m3": {"block": [16], "block_dtype": "UE4M3", "tensor": "F32"}}


def _parts(name: str, sch: dict, shape: tuple[int, ...]) -> dict:
    """Codes and scales as burn's quantizer leaves them, drawn for ``sch``."""
    parsed = QuantScheme.from_json(sch)
    r = rng(f"checkpoint/{name}")
    count = max(o.blocks.num_params(shape, parsed), 1)
    two_level = parsed.global_scale_dtype() is not None
    inputs = {"codes": stored_codes(r, parsed.value.name, shape),
              "scales": stored_scales(r, parsed.scale_dtype().name, count, two_level)}
    if two_level:
        inputs["global"] = f32([float(np.float32(r.uniform(1e-5, 1e-4)))])
    return inputs


def _saves() -> list:
    out = []
    for store, values in _VALUES.items():
        for value in values:
            for level, kw in _LEVELS.items():
                sch = scheme(value, store=_STORES[store], **kw)
                name = f"{value.lower()}-{store.lower()}/{level}"
                out.append(case(f"save_checkpoint/{name}", "save_checkpoint", {"scheme": sch},
                                _parts(name, sch, (2, 64)), spec=("§13.3", "§13.4", "§13.5"),
                                reason=f"a [2, 64] {value} {store} tensor, {level}: the file burn-store writes"))
    for value, shape, why in (("Q4S", (3, 5), ("rows of 5 Q4 codes: burn <= 0.22.1 writes one byte a code where "
                                               "quantized_data_len declares 3 words (#5349)")),
                              ("Q2S", (3, 3), "rows of 3 Q2 codes: one word written, 3 declared"),
                              ("Q8S", (3, 6), "rows of 6 Q8 codes: the flat packing and the lines disagree")):
        sch = scheme(value, store=("PackedU32", 0))
        name = f"{value.lower()}-packedu32/tensor-f32/rows-{shape[1]}"
        out.append(case(f"save_checkpoint/{name}", "save_checkpoint", {"scheme": sch}, _parts(name, sch, shape),
                        spec=("§13.5",), reason=why))
    return out


def _file(profile: str, sch: dict, inputs: dict) -> bytes:
    qt = o.QTensor(inputs["codes"], inputs["scales"], inputs.get("global"), QuantScheme.from_json(sch))
    return ck.save_checkpoint(qt, profile=profile)


def _load(alias: str, data: bytes, reason: str, spec=("§13.6",)):
    return case(alias, "load_checkpoint", {}, {"file": np.frombuffer(data, dtype=np.uint8).copy()}, spec=spec,
                reason=reason)


def _loads() -> list:
    """The files each release writes, one per format a release can save, read by every profile."""
    rows = [("q8s", "Native", "tensor-f32", (4, 64)), ("q8s", "Native", "block-32-f16", (4, 64)),
            ("q8s", "Native", "block-32-ue8m0", (4, 64)), ("e4m3", "Native", "block-32-ue8m0", (4, 64)),
            ("q4s", "PackedU32", "block-32-f16", (4, 64)), ("q4s", "PackedU32", "tensor-f32", (3, 8)),
            ("q2s", "PackedU32", "block-32-bf16", (2, 64)), ("e2m1", "PackedNative", "two-level-16-ue4m3", (2, 64)),
            ("q8s", "PackedU32", "tensor-f32", (2, 8))]
    out = []
    for value, store, level, shape in rows:
        sch = scheme(value.upper(), store=_STORES[store], **_LEVELS[level])
        name = f"{value}-{store.lower()}/{level}"
        inputs = _parts(f"load/{name}", sch, shape)
        files: dict[bytes, list[str]] = {}
        for release, writer in WRITERS.items():
            try:
                files.setdefault(_file(writer, sch, inputs), []).append(release)
            except o.BurnPanic:
                continue  # this release cannot save it (its save vector pins the refusal)
        for data, releases in files.items():
            writers = "every-release" if len(releases) == len(WRITERS) else "written-by-" + "+".join(releases)
            out.append(_load(f"load_checkpoint/{name}/{writers}", data,
                             f"a {list(shape)} {value.upper()} {store} {level} tensor as burn "
                             f"{', '.join(releases)} saves it", spec=("§13.6", "§13.7")))
    return out


def _meta(sch: dict, shape: list, start: int, end: int, *, name: str = ck.NAME) -> dict:
    return {"tensors": {name: {"dtype": {"QFloat": ck.scheme_to_serde(QuantScheme.from_json(sch))},
                               "shape": shape, "data_offsets": [start, end]}}}


def _raw(meta: dict, payload: bytes, *, magic: int = ck.MAGIC, version: int = 1, size: int | None = None) -> bytes:
    """A container written by hand around ``meta`` (so a descriptor can lie), the payload at the data section."""
    blob = ck.cbor_encode(meta)
    head = struct.pack("<IHI", magic, version, len(blob) if size is None else size) + blob
    return head + bytes(ck.data_section_start(len(blob)) - len(head)) + payload


def _hostile() -> list:
    """Files a loader must refuse or read exactly as burn does, never guess at (issue 24, item 5)."""
    sch = scheme("Q8S", block=[4], block_dtype="F16")
    codes = np.arange(-4, 4, dtype=np.int8)
    payload = codes.tobytes() + np.array([0.5, 0.25], dtype=np.float16).tobytes()  # 12 bytes
    good = _raw(_meta(sch, [8], 0, 12), payload)
    unknown = _meta(sch, [8], 0, 12)
    unknown["tensors"][ck.NAME]["dtype"]["QFloat"]["value"] = "Q3S"
    unknown_scale = _meta(sch, [8], 0, 12)
    unknown_scale["tensors"][ck.NAME]["dtype"]["QFloat"]["block"]["dtype"] = "UE5M2"
    missing = _meta(sch, [8], 0, 12)
    del missing["tensors"][ck.NAME]["shape"]
    rows = [
        ("valid", good, "a hand-written file: 8 Q8S codes, two F16 block scales"),
        ("truncated-payload", good[:-3], "the last 3 payload bytes cut off"),
        ("truncated-in-padding", good[:ck.HEADER_SIZE + len(ck.cbor_encode(_meta(sch, [8], 0, 12))) + 12],
         "cut where 0.22.0-pre.3 believes the file ends (header + metadata + 12, ignoring the alignment padding)"),
        ("truncated-header", good[:7], "7 bytes: no whole header"),
        ("truncated-metadata", good[:40], "the header declares more metadata than the file holds"),
        ("lying-length-short", _raw(_meta(sch, [8], 0, 10), payload),
         "the descriptor declares 10 bytes for a 12-byte tensor (the #5349 class)"),
        ("lying-length-long", _raw(_meta(sch, [8], 0, 16), payload + bytes(4)),
         "the descriptor declares 16 bytes for a 12-byte tensor, 4 zero bytes after it"),
        ("lying-shape", _raw(_meta(sch, [6], 0, 12), payload), "shape [6] over the bytes of 8 codes"),
        ("unknown-value", _raw(unknown, payload), "QuantValue `Q3S`: no such variant"),
        ("unknown-scale-dtype", _raw(unknown_scale, payload), "ScaleDtype `UE5M2`: no such variant"),
        ("missing-shape", _raw(missing, payload), "a descriptor without its shape"),
        ("huge-declared-size", _raw(_meta(sch, [8], 0, 1 << 40), payload), "a tensor declaring 2^40 bytes"),
        ("offsets-backwards", _raw(_meta(sch, [8], 12, 0), payload), "data_offsets (12, 0)"),
        ("bad-magic", _raw(_meta(sch, [8], 0, 12), payload, magic=0x46464F43), "not a burnpack file"),
        ("newer-version", _raw(_meta(sch, [8], 0, 12), payload, version=2), "format version 2"),
        ("huge-metadata-size", _raw(_meta(sch, [8], 0, 12), payload, size=200 * 1024 * 1024),
         "a header declaring 200 MiB of metadata"),
        ("other-name", _raw(_meta(sch, [8], 0, 12, name="bias"), payload), "the record holds no `weight`"),
    ]
    return [_load(f"load_checkpoint/q8s-native/block-4-f16/{alias}", data, why) for alias, data, why in rows]


def cases() -> list:
    return _saves() + _loads() + _hostile()
