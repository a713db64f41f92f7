"""A reader of burn's quantized checkpoints, written from docs/spec/checkpoint.md alone (no oracle, no burn): it
answers ``load_checkpoint`` (docs/ops.md) for burn 0.23.0-pre.1's reader, with the ``checkpoint-loader`` preset.

    qconform run --backend python:examples.checkpoint_loader:CheckpointLoader -q

The container (§13.2), the CBOR subset and the scheme's serde form (§13.3) and the reader's checks in 0.23's order
with burn-pack's texts (§13.6) are here; the payload's floats are ``examples/loader_backend.py``'s (§7.1b, §6).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loader_backend import Loader

from conformance import BackendError

MAX_METADATA, MAX_TENSOR = 100 * 1024 * 1024, 10 * 1024 * 1024 * 1024


def validation(text: str) -> BackendError:
    return BackendError("checkpoint.validation", f"Validation error: {text}")


class Cbor:
    """§13.3: definite lengths, shortest heads; text, unsigned integers, arrays, maps, null (what ciborium writes).
    Anything else is refused rather than guessed at."""

    def __init__(self, blob: bytes):
        self.blob, self.at = blob, 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.blob):
            raise BackendError("harness.unmodelled", "CBOR item past the end of the metadata")
        self.at += n
        return self.blob[self.at - n:self.at]

    def item(self):
        head = self.take(1)[0]
        major, info = head >> 5, head & 31
        if head == 0xF6:
            return None
        if info > 27 or major in (1, 2, 6, 7):
            raise BackendError("harness.unmodelled", f"CBOR head 0x{head:02x}")
        n = info if info < 24 else int.from_bytes(self.take(1 << (info - 24)), "big")
        if major == 0:
            return n
        if major == 3:
            return self.take(n).decode()
        if major == 4:
            return [self.item() for _ in range(n)]
        return {self.item(): self.item() for _ in range(n)}


VARIANTS = {"value": ["Q8F", "E5M2", "E4M3", "Q4F", "E2M1", "Q2F", "Q8S", "Q4S", "Q2S"],
            "mode": ["Symmetric", "Lookup"], "dtype": ["F32", "F16", "BF16", "UE8M0", "UE4M3"],
            "tensor": ["F32", "F16", "BF16", "UE8M0", "UE4M3"]}


def serde_error(text: str) -> BackendError:
    return BackendError("checkpoint.metadata_deserialization", f'Metadata deserialization error: Semantic(None, "{text}")')


def need(obj: dict, *fields: str) -> dict:
    for name in fields:
        if name not in obj:
            raise serde_error(f"missing field `{name}`")
    return obj


def variant(name: str, value: str) -> str:
    if value not in VARIANTS[name]:
        raise serde_error(f"unknown variant `{value}`, expected one of " + ", ".join(f"`{v}`" for v in VARIANTS[name]))
    return value


def scheme_of(serde: dict) -> dict:
    """The serde form (§13.3) as the JSON scheme of docs/ops.md (what ``Loader`` takes)."""
    s = need(serde, "value", "store", "mode", "tensor", "block")
    block = None
    if s["block"] is not None:
        b = need(s["block"], "size", "dtype")
        size = need(b["size"], "storage", "len")
        block = {"size": size["storage"][:size["len"]], "dtype": variant("dtype", b["dtype"])}
    tensor = None if s["tensor"] is None else variant("tensor", s["tensor"])
    return {"value": variant("value", s["value"]), "store": s["store"], "mode": variant("mode", s["mode"]),
            "tensor": tensor, "block": block}


def debug(s: dict) -> str:
    """burn's ``{:?}`` of ``DType::QFloat(scheme)`` (docs/ops.md's ``dtype`` value)."""
    store = s["store"] if s["store"] == "Native" else "{}({})".format(*next(iter(s["store"].items())))
    block = "None" if s["block"] is None else (
        f"Some(BlockScale {{ size: BlockSize({s['block']['size']}), dtype: {s['block']['dtype']} }})")
    tensor = "None" if s["tensor"] is None else f"Some({s['tensor']})"
    return (f"QFloat(QuantScheme {{ value: {s['value']}, store: {store}, mode: {s['mode']}, tensor: {tensor}, "
            f"block: {block} }})")


class CheckpointLoader:
    def hello(self):
        return {"name": "docs-checkpoint-loader", "version": "1", "profile": "burn-0.23.0-pre.1/flex",
                "capabilities": {"preset": "checkpoint-loader", "validates": False}}

    def run(self, op, params, inputs):
        data = np.asarray(inputs["file"], dtype=np.uint8).tobytes()
        if len(data) < 10:
            raise BackendError("checkpoint.invalid_header", "Invalid header: insufficient bytes")
        magic, version, m = struct.unpack("<IHI", data[:10])
        if magic != 0x4255524E:
            raise BackendError("checkpoint.invalid_magic", "Invalid magic number")
        if version > 1:
            raise BackendError("checkpoint.invalid_version", "Unsupported version")
        if m > MAX_METADATA:
            raise validation(f"Metadata size {m} exceeds maximum allowed size of {MAX_METADATA} bytes "
                             "(potential DoS attack)")
        if len(data) < 10 + m:
            raise BackendError("checkpoint.invalid_header", "Invalid header: insufficient bytes")
        tensors = need(Cbor(data[10:10 + m]).item(), "tensors")["tensors"]
        described = {name: need(d, "dtype", "shape", "data_offsets") for name, d in sorted(tensors.items())}
        base = -(-(10 + m) // 256) * 256
        for name, d in described.items():  # 0.23.0-pre.1: the ranges, then the file, then the sizes (§13.6)
            start, end = base + d["data_offsets"][0], base + d["data_offsets"][1]
            if end < start:
                raise validation(f"Tensor '{name}' has corrupted offset data: end {end} < start {start}")
        reach = max((base + d["data_offsets"][1] for d in described.values()), default=0)
        if described and len(data) < reach:
            raise validation(f"File truncated: expected at least {reach} bytes, got {len(data)} bytes")
        for name, d in described.items():
            if d["data_offsets"][1] - d["data_offsets"][0] > MAX_TENSOR:
                raise validation(f"Tensor '{name}' size {d['data_offsets'][1] - d['data_offsets'][0]} exceeds "
                                 f"maximum allowed size of {MAX_TENSOR} bytes (potential DoS attack; raise it with "
                                 "`Reader::with_limits`)")
        if "weight" not in described:
            raise BackendError("checkpoint.tensor_not_found", "Tensor not found: weight")
        d = described["weight"]
        scheme = scheme_of(d["dtype"]["QFloat"])
        payload = np.frombuffer(data[base + d["data_offsets"][0]:base + d["data_offsets"][1]], dtype=np.uint8)
        x = Loader().run("load_quantized", {"scheme": scheme, "shape": d["shape"], "dtype": "f32"},
                         {"bytes": payload})["x"]
        return {"x": x, "bytes": payload.copy(), "name": "weight", "shape": d["shape"], "dtype": debug(scheme)}
