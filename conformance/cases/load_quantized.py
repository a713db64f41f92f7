"""``load_quantized``: the floats burn reconstructs from a quantized tensor's *stored* bytes (spec §7.2, §7.5, §6).

A loader of burn-saved weights meets ``TensorData`` bytes, not codes and decoded scales: the values in their
store, the block scales in their stored dtype, the global last (spec §7.1). Each vector here hands over such
bytes, written as the burn release named in the alias writes them (``bytes-0.22``: one byte per value whatever
the store, burn <= 0.22.1; ``packed-lines``: a packed store packed line by line, burn >= 0.23.0-pre.1), for
every store with every scale dtype. Under the other release the same bytes are read as that release reads them:
which is exactly the question a loader of old files asks.
"""

from __future__ import annotations

import numpy as np

import oracle as o
from oracle import QuantScheme

from . import case, f16, f32, i8, rng, scheme, u8

# The release whose QuantizedBytes::new writes each layout (the profile's ``value_layout``).
WRITERS = {"bytes-0.22": "burn-0.22.1/flex", "packed-lines": "burn-0.23.0-pre.1/flex"}

# The code range a loader may meet per value: every code the value's quantizer can store.
_INT_RANGE = {"Q8S": (-127, 127), "Q8F": (-128, 127), "Q4S": (-7, 7), "Q4F": (-8, 7), "Q2S": (-1, 1),
              "Q2F": (-2, 1)}


def stored_codes(r: np.random.Generator, value: str, shape: tuple[int, ...]) -> np.ndarray:
    """Codes as a quantizer of ``value`` leaves them: integers in range, or finite minifloat bit patterns."""
    if value in _INT_RANGE:
        lo, hi = _INT_RANGE[value]
        return r.integers(lo, hi + 1, size=shape).astype(np.int8)
    if value == "E2M1":
        return r.integers(0, 16, size=shape).astype(np.int8)
    bits = r.integers(0, 256, size=shape).astype(np.uint8)
    special = (bits & 0x7F) == 0x7F if value == "E4M3" else (bits & 0x7C) == 0x7C  # NaN (E4M3), inf/NaN (E5M2)
    return np.where(special, bits & 0xF0, bits).astype(np.uint8).view(np.int8)


def stored_scales(r: np.random.Generator, dtype: str, count: int, two_level: bool) -> np.ndarray:
    """Block scales as burn's quantizer stores them: weight-like magnitudes, on the dtype's grid; a two-level
    scheme's UE4M3 block scales span the format's range (the global carries the magnitude)."""
    if two_level:
        return f32(r.uniform(1.0, 448.0, size=count))
    if dtype == "UE8M0":
        return np.exp2(r.integers(-12, -3, size=count)).astype(np.float32)
    return np.exp(r.uniform(np.log(1e-3), np.log(5e-2), size=count)).astype(np.float32)


def _stored(sch: dict, codes: np.ndarray, scales: np.ndarray, glob: np.ndarray | None, layout: str) -> np.ndarray:
    """The bytes burn's ``into_data()`` holds for this tensor, as the layout's release writes them."""
    qt = o.QTensor(codes, scales.ravel(), glob, QuantScheme.from_json(sch))
    return o.to_bytes(qt, profile=WRITERS[layout])


def _lq(alias, sch, shape, data, dtype="f32", *, spec=("§7.2", "§7.5", "§6"), tags=(), reason=""):
    return case(alias, "load_quantized", {"scheme": sch, "shape": list(shape), "dtype": dtype}, {"bytes": data},
                spec=spec, tags=tags, reason=reason)


def _tensor_cases(name: str, sch: dict, shape: tuple[int, ...], reason: str, dtype: str = "f32") -> list:
    """The bytes of a tensor drawn for ``sch`` (codes and scales as burn's quantizer leaves them) as each release
    writes them: one vector per distinct layout (``every-release`` when they agree, as for a Native store)."""
    parsed = QuantScheme.from_json(sch)
    r = rng(f"load_quantized/{name}")
    codes = stored_codes(r, parsed.value.name, shape)
    count = max(o.blocks.num_params(shape, parsed), 1)
    two_level = parsed.global_scale_dtype() is not None
    scales = stored_scales(r, parsed.scale_dtype().name, count, two_level)
    glob = f32([float(np.float32(r.uniform(1e-5, 1e-4)))]) if two_level else None
    written = {layout: _stored(sch, codes, scales, glob, layout) for layout in WRITERS}
    if np.array_equal(*written.values()):
        return [_lq(f"load_quantized/{name}/every-release", sch, shape, written["bytes-0.22"], dtype,
                    reason=f"{reason} (every release writes these bytes)")]
    return [_lq(f"load_quantized/{name}/{layout}", sch, shape, data, dtype,
                spec=("§7.2", "§7.5", "§6") + (("§11",) if layout == "packed-lines" else ()),
                reason=f"{reason} (bytes as {WRITERS[layout]} writes them)") for layout, data in written.items()]


# store -> the value its matrix row uses (the value a real format keeps in that store).
_STORE_VALUE = {"Native": ("Q8S", "Native"), "PackedU32": ("Q4S", ("PackedU32", 0)),
                "PackedNative": ("E2M1", ("PackedNative", 0))}


def _matrix() -> list:
    """Every store with every scale dtype: F32/F16/BF16/UE8M0 block scales over blocks of 32 (the GGUF and MX
    shapes), UE4M3 blocks of 16 under an F32 global (the NVFP4 shape)."""
    out = []
    for store, (value, st) in _STORE_VALUE.items():
        sname = store.lower()
        for dtype in ("F32", "F16", "BF16", "UE8M0"):
            sch = scheme(value, store=st, block=[32], block_dtype=dtype)
            out += _tensor_cases(f"{value.lower()}-{sname}/block-32-{dtype.lower()}", sch, (8, 256),
                                 f"{value} {store} with {dtype} block scales over 1x32 blocks of a weight matrix")
        sch = scheme(value, store=st, block=[16], block_dtype="UE4M3", tensor="F32")
        out += _tensor_cases(f"{value.lower()}-{sname}/two-level-16-ue4m3", sch, (8, 256),
                             f"{value} {store}, UE4M3 scales over blocks of 16 under an F32 global (NVFP4 shape)")
    return out


def _more_formats() -> list:
    """The other values and stores, per-tensor scales, N-D and partial blocks, half outputs."""
    rows = [
        ("q8s-native/tensor-f32", scheme("Q8S"), (8, 256), "int8 per tensor, the default weight format"),
        ("q8f-native/tensor-f32", scheme("Q8F"), (4, 64), "Q8F codes reach -128"),
        ("e4m3-native/block-32-ue8m0", scheme("E4M3", block=[32], block_dtype="UE8M0"), (8, 256),
         "MXFP8: E4M3 codes decoded by value, UE8M0 scales"),
        ("e5m2-native/tensor-f32", scheme("E5M2"), (4, 64), "E5M2 codes per tensor"),
        ("e4m3-native/tensor-f32", scheme("E4M3"), (4, 64), "FP8 per tensor"),
        ("q8s-packedu32/tensor-f32", scheme("Q8S", store=("PackedU32", 0)), (4, 64),
         "Q8S packed four to a word: the words' little-endian bytes are the codes"),
        ("q8s-packedu32/rows-of-6", scheme("Q8S", store=("PackedU32", 0)), (4, 6),
         "rows of 6 Q8 codes: 0.23 pads each row to 2 words"),
        ("q4s-packedu32/tensor-f32", scheme("Q4S", store=("PackedU32", 0)), (4, 64), "int4 per tensor, packed"),
        ("q4s-packedu32/rows-of-5", scheme("Q4S", store=("PackedU32", 0)), (3, 5),
         "rows of 5 Q4 codes: 0.23 pads each row to a whole word"),
        ("q2s-packedu32/tensor-f32", scheme("Q2S", store=("PackedU32", 0)), (4, 64), "int2 per tensor, packed"),
        ("q4s-packedu32-d1/block-2x2-f32", scheme("Q4S", store=("PackedU32", 1), block=[2, 2]), (8, 4),
         "PackedU32(1) packs the columns, and stores the block scales column by column in 0.23"),
        ("e2m1-packednative/tensor-f32", scheme("E2M1", store=("PackedNative", 0)), (4, 64),
         "FP4 two codes a byte, per tensor"),
        ("e4m3-packednative/block-32-ue8m0", scheme("E4M3", store=("PackedNative", 0), block=[32],
                                                    block_dtype="UE8M0"), (4, 64),
         "E4M3 in PackedNative: one byte a code"),
        ("q8s-native/block-2x16-f16", scheme("Q8S", block=[2, 16], block_dtype="F16"), (2, 4, 64),
         "N-D blocks on a rank-3 tensor: the F16 scales row-major over the block grid"),
        ("q8s-native/block-32-f16-partial", scheme("Q8S", block=[32], block_dtype="F16"), (4, 40),
         "a last dim of 40 with blocks of 32: the partial block has its own scale"),
        ("q4s-packedu32/block-32-f16-rank-1", scheme("Q4S", store=("PackedU32", 0), block=[32], block_dtype="F16"),
         (96,), "a rank-1 Q4_0-shaped tensor: the flat unpack and the line unpack agree"),
    ]
    out = []
    for name, sch, shape, why in rows:
        out += _tensor_cases(name, sch, shape, why)
    for dt in ("f16", "bf16"):
        out += _tensor_cases(f"q8s-native/block-32-f16/{dt}-output", scheme("Q8S", block=[32], block_dtype="F16"),
                             (4, 64), f"the f32 product cast to {dt} once", dt)
    return out


# Scale bytes at the edges of each stored dtype (little-endian), decoded exactly then multiplied by the codes.
EDGE_SCALES = {
    "F16": (f16(0.5).view(np.uint8), u8(0x01, 0x00), u8(0x00, 0x7C), u8(0x00, 0x7E), u8(0x00, 0x80)),
    "BF16": (u8(0x00, 0x3F), u8(0x01, 0x00), u8(0x80, 0x7F), u8(0xC0, 0x7F), u8(0x00, 0x80)),
    "UE8M0": (u8(0x7F), u8(0x00), u8(0xFE), u8(0xFF), u8(0x01)),
    "UE4M3": (u8(0x38), u8(0x01), u8(0x7E), u8(0x7F), u8(0x80)),
}
EDGE_WHY = {"F16": "0.5, the smallest subnormal, +inf, NaN, -0",
            "BF16": "0.5, the smallest subnormal, +inf, NaN, -0",
            "UE8M0": "2^0, byte 0 (decoded 2^-127 as the f32 subnormal 0x00400000), 2^127, 0xFF (NaN), 2^-126",
            "UE4M3": "1.0, the smallest subnormal 2^-9, 448, NaN (0x7F), -0 (0x80)"}


def _edge_scales() -> list:
    """Native Q8S, five blocks of 4, one per edge scale: the bytes are built by hand (codes, then the scale
    region), so the decoder of each stored dtype meets exactly these bit patterns."""
    codes = i8([[1, -1, 127, -127], [2, -3, 0, 5], [1, -1, 0, 64], [7, 0, -7, 1], [3, -2, 1, 0]]).ravel()
    out = []
    for dtype, scale_bytes in EDGE_SCALES.items():
        sch = scheme("Q8S", block=[4], block_dtype=dtype)
        data = np.concatenate([codes.view(np.uint8), *scale_bytes])
        out.append(_lq(f"load_quantized/q8s-native/block-4-{dtype.lower()}/edge-scales", sch, (20,), data,
                       spec=("§4.2", "§7.2", "§6"),
                       reason=f"stored {dtype} scales {EDGE_WHY[dtype]}: each decoded exactly, then e * q"))
    glob = np.concatenate([codes.view(np.uint8)[:8], u8(0x38, 0x30), f32([2.0**-20]).view(np.uint8)])
    out.append(_lq("load_quantized/q8s-native/two-level-4-ue4m3/global", scheme("Q8S", block=[4], block_dtype="UE4M3",
                                                                                tensor="F32"), (8,), glob,
                   spec=("§7.2", "§6"), reason="block scales 1.0 and 0.5 under a 2^-20 global: e = global * s"))
    return out


def _hand_worked() -> list:
    """Bytes worked by hand from spec §7.4, and the one layout burn reads differently from how it writes."""
    ex1 = u8(0x81, 0xB9, 0x00, 0x23, 0xD4, 0x36, 0x68, 0x3C)
    nibbles = np.concatenate([i8(0, 1, -1, 2, -2, 3, 5, 7).view(np.uint8), f32([0.5]).view(np.uint8)])
    return [
        _lq("load_quantized/q8s-native/tensor-f32/spec-example", scheme("Q8S"), (4,), ex1,
            spec=("§7.4", "§6"), reason="spec §7.4 example 1: codes [-127, -71, 0, 35] times 0.014173228"),
        _lq("load_quantized/q8s-native/two-level-global-f16/ndarray-rewrites",
            scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F16"), (8,),
            np.concatenate([i8(1, -1, 2, -2, 3, -3, 4, -4).view(np.uint8), u8(0x38, 0x30), f16(0.5).view(np.uint8)]),
            spec=("§7.1", "§7.2", "§8 #4"),
            reason="a two-level scheme with an F16 global: the reader takes its 2 bytes (flex dequantizes with "
                   "global 0.5), but burn-ndarray's dequantize writes the loaded parts again and asserts an f32 "
                   "global (found by fuzzing load_quantized)"),
        _lq("load_quantized/q4s-packedu32/tensor-f32/nibble-reread", scheme("Q4S", store=("PackedU32", 0)), (8,),
            nibbles, spec=("§7.2", "§7.3", "§11"),
            reason="the bytes burn <= 0.22.1 writes for Q4S PackedU32 codes [0 1 -1 2 -2 3 5 7] (one byte each): "
                   "its own reader unpacks them as nibbles of u32 words ([0 0 1 0 -1 -1 2 0] times 0.5); burn "
                   "0.23 refuses 8 value bytes for 8 Q4 codes (one word)"),
    ]


def _validation() -> list:
    """Bytes a loader should refuse: burn's reader panics (a length check from 0.23 on)."""
    ex1 = u8(0x81, 0xB9, 0x00, 0x23, 0xD4, 0x36, 0x68, 0x3C)
    return [
        _lq("load_quantized/q8s-native/tensor-f32/truncated", scheme("Q8S"), (4,), ex1[:3], spec=("§7.2", "§8 #9"),
            reason="3 bytes for a 4-byte scale region: burn panics"),
        _lq("load_quantized/q8s-native/tensor-f32/extra-byte", scheme("Q8S"), (4,), np.concatenate([u8(7), ex1]),
            spec=("§7.2", "§8 #2"), reason="5 value bytes for 4 elements: the count does not fill the shape"),
        _lq("load_quantized/q8s-native/tensor-f32/short-values", scheme("Q8S"), (4,), ex1[1:],
            spec=("§7.2", "§8 #2"), reason="3 value bytes for 4 elements"),
    ]


def cases():
    return _hand_worked() + _matrix() + _more_formats() + _edge_scales() + _validation()
