"""A loader of burn-quantized weights, written from qconform's docs alone (no oracle, no burn): it answers the
one op a loader needs, ``load_quantized`` (docs/ops.md), with the ``loader`` capabilities preset and
``validates: false`` (it reconstructs, it does not police its input).

    qconform run --backend python:examples.loader_backend:Loader -q             # burn 0.23 files
    qconform run --backend python:examples.loader_backend:Loader022 -q          # burn 0.22.1 files

What it implements, and where each rule is written down:

* the bytes are ``[values | block scales | global]`` (docs/spec/bytes.md §7.1); the scale region is
  ``num_params`` scales of the scheme's scale dtype (§1.8, §4.2), then a two-level scheme's global in its
  per-tensor dtype (§7.2: 4 bytes of f32 as burn writes it);
* the values: one byte per value for a Native store; a packed store in lines (§7.1b, burn >= 0.23.0-pre.1), or,
  in a burn 0.22 file, one byte per value whatever the store (§7.1);
* the product ``x = f32(f32(global * s) * f32(q))`` with minifloat codes decoded by value (docs/spec/dequantize.md,
  burn-flex).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

BYTES = {"F32": 4, "F16": 2, "BF16": 2, "UE8M0": 1, "UE4M3": 1}
BITS = {"Q8F": 8, "Q8S": 8, "Q4F": 4, "Q4S": 4, "Q2F": 2, "Q2S": 2, "E4M3": 8, "E5M2": 8, "E2M1": 4}
MINIFLOATS = {"E4M3": ml_dtypes.float8_e4m3fn, "E5M2": ml_dtypes.float8_e5m2, "E2M1": ml_dtypes.float4_e2m1fn}


def decode_scales(raw: np.ndarray, dtype: str) -> np.ndarray:
    """§4.2: F32/F16/BF16 little-endian floats, UE4M3 an E4M3FN byte, UE8M0 an exponent byte (0 is 2^-127, 0xFF
    NaN)."""
    if dtype == "F32":
        return raw.view("<f4").astype(np.float32)
    if dtype == "F16":
        return raw.view("<f2").astype(np.float32)
    if dtype == "BF16":
        return raw.view("<u2").astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
    if dtype == "UE4M3":
        return raw.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    bits = np.where(raw == 0, np.uint32(0x00400000), raw.astype(np.uint32) << 23)
    return np.where(raw == 0xFF, np.float32(np.nan), bits.view(np.float32)).astype(np.float32)


def code_values(codes: np.ndarray, value: str, by_value: bool = True) -> np.ndarray:
    """An integer code is itself; a minifloat code its value (an E2M1 code is the low nibble), or up to burn
    0.22.1 the integer it is (docs/spec/dequantize.md: decoded by value from 0.23.0-pre.1)."""
    if value not in MINIFLOATS or not by_value:
        return codes.astype(np.float32)
    bits = codes.view(np.uint8) & (0xF if value == "E2M1" else 0xFF)
    return bits.view(MINIFLOATS[value]).astype(np.float32)


def block_dims(shape, size) -> list[int]:
    """The block extents per dim: leading dims the block does not name are 1 (§1.7)."""
    return [1] * (len(shape) - len(size)) + list(size[-len(shape):] if size else [])


def store_of(scheme: dict) -> tuple[str, int]:
    store = scheme["store"]
    return ("Native", 0) if store == "Native" else next(iter(store.items()))


class Loader:
    """burn >= 0.23.0-pre.1: packed stores in padded lines."""

    packed_lines = True
    profile = "burn-0.23.0-pre.1/flex"

    def hello(self):
        return {"name": "docs-loader", "version": "1", "profile": self.profile,
                "capabilities": {"preset": "loader", "validates": False}}

    def run(self, op, params, inputs):
        scheme, shape = params["scheme"], tuple(params["shape"])
        raw = np.asarray(inputs["bytes"], dtype=np.uint8).ravel()
        block = scheme["block"]
        grid = ([-(-d // b) for d, b in zip(shape, block_dims(shape, block["size"]))] if block else [1])
        dtype = block["dtype"] if block else scheme["tensor"] or "F32"
        glob_bytes = BYTES[scheme["tensor"]] if block and scheme["tensor"] else 0  # §7.2: the per-tensor dtype's size
        split = raw.size - math.prod(grid) * BYTES[dtype] - glob_bytes
        scales = decode_scales(raw[split: raw.size - glob_bytes], dtype)
        glob = decode_scales(raw[raw.size - glob_bytes:], scheme["tensor"])[0] if glob_bytes else None
        kind, dim = store_of(scheme)
        if kind != "Native" and self.packed_lines and dim:  # §7.1b: block scales in the packed lines' order too
            scales = self.unswap(scales, grid, dim)
        codes = self.values(raw[:split], shape, scheme["value"], kind, dim)
        q = code_values(codes, scheme["value"], by_value=self.packed_lines)
        e = scales.reshape(grid) if block else scales[:1].reshape([1] * len(shape))
        if glob is not None:
            e = np.float32(glob) * e
        for axis, b in enumerate(block_dims(shape, block["size"]) if block else []):
            e = np.repeat(e, b, axis=axis)
        e = e[tuple(slice(0, d) for d in shape)]
        with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN scales are data, not errors
            x = np.multiply(e, q, dtype=np.float32)
        return {"x": x.astype({"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[params["dtype"]])}

    @staticmethod
    def unswap(scales, grid, dim):
        """Stored in lines along the packed axis (swapped innermost): back to row-major over the grid."""
        axis = len(grid) - 1 - dim
        swapped = list(grid)
        swapped[axis], swapped[-1] = swapped[-1], swapped[axis]
        return np.swapaxes(scales.reshape(swapped), axis, -1).ravel()

    def values(self, raw, shape, value, kind, dim):
        numel = math.prod(shape)
        if kind == "Native" or (not self.packed_lines and raw.size == numel):
            return raw.view(np.int8).reshape(shape)  # one byte per value (§7.1)
        bits = BITS[value]
        per_word = (32 if kind == "PackedU32" else max(8, bits)) // bits
        word_bytes = 4 if kind == "PackedU32" else max(1, bits // 8)
        axis = len(shape) - 1 - dim if self.packed_lines else len(shape) - 1
        moved = list(shape)
        moved[axis], moved[-1] = moved[-1], moved[axis]
        line = moved[-1]
        words_per_line = -(-line // per_word)
        words = np.zeros((raw.size // word_bytes, 4), dtype=np.uint8)
        words[:, :word_bytes] = raw.reshape(-1, word_bytes)
        words = words.view("<u4").astype(np.uint32).reshape(-1, words_per_line, 1)
        fields = (words >> (np.arange(per_word, dtype=np.uint32) * bits)) & ((1 << bits) - 1)
        fields = fields.reshape(words.shape[0], -1)[:, :line].astype(np.uint8)
        if value not in MINIFLOATS:  # two's complement in `bits` bits
            fields = ((fields << (8 - bits)).view(np.int8) >> (8 - bits)).view(np.uint8)
        return np.swapaxes(fields.reshape(moved), axis, -1).view(np.int8)


class Loader022(Loader):
    """burn 0.22.1 files: every value one byte whatever the store (§7.1); what the writer meant, not what burn
    0.22's own reader makes of its packed stores (the suite accepts either, docs/findings.md)."""

    packed_lines = False
    profile = "burn-0.22.1/flex"

    def hello(self):  # burn 0.22 has no reader for PackedNative, nor for fp8/fp4 codes in PackedU32 words
        out = super().hello()
        out["capabilities"]["stores"] = ["Native", "PackedU32"]
        return out

    def values(self, raw, shape, value, kind, dim):
        if kind == "PackedU32" and dim:  # §7.2: no burn 0.22 file holds one; its reader refuses it
            from conformance import BackendError
            raise BackendError("bytes.packed_dim", "burn 0.22 reads values packed along the innermost dim only")
        return super().values(raw, shape, value, kind, dim)
