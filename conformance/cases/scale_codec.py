"""``encode_scales`` / ``decode_scales``: the stored-scale codecs (spec §4.2; UE8M0 §11)."""

from __future__ import annotations

import numpy as np

import oracle

from . import F32_MAX, F32_TINY, case, f32, from_bits

_BYTES = {"F32": 4, "F16": 2, "BF16": 2, "UE4M3": 1, "UE8M0": 1}


def _le(patterns, width: int) -> np.ndarray:
    dtype = {4: "<u4", 2: "<u2", 1: "u1"}[width]
    return np.array(patterns, dtype=dtype).view(np.uint8)


DECODE_PATTERNS = {
    "F32": [0x00000000, 0x80000000, 0x00000001, 0x00800000, 0x3F800000, 0x3C6836D4, 0x7F7FFFFF, 0x7F800000,
            0xFF800000, 0x7FC00000, 0x7F800001, 0xBF800000],
    "F16": [0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x2342, 0x3C00, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01,
            0xBC00],
    "BF16": [0x0000, 0x8000, 0x0001, 0x0080, 0x3F80, 0x3E9A, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0xBF80],
}


def cases():
    out = []
    for dt in ("F32", "F16", "BF16", "UE4M3", "UE8M0"):
        low = dt.lower()
        extra = ("§11",) if dt == "UE8M0" else ()
        if dt == "UE8M0":
            grid = f32(2.0**-127, 2.0**-20, 0.5, 1.0, 4.0, 2.0**127)
        else:
            grid = oracle.round_up(f32(0.3, 1 / 3, 1e-3, 7.7e-4, 0.014173228, 0.035433073, 1.0, 448.0),
                                   oracle.ScaleDtype[dt])
        out.append(case(
            f"encode_scales/{low}/on-grid", "encode_scales", {"dtype": dt}, {"scales": grid},
            tags=("class:on-grid",), spec=("§4.2",) + extra,
            reason="rounded-up scales (what backends store) encode losslessly; little-endian bytes"))
        out.append(case(
            f"decode_scales/{low}/on-grid-bytes", "decode_scales", {"dtype": dt},
            {"bytes": _grid_bytes(dt, grid)}, spec=("§4.2",) + extra,
            reason="the bytes of rounded-up scales decode back to exactly those scales"))
        if dt in ("F32", "UE8M0"):
            pass
        else:
            out.append(case(
                f"encode_scales/{low}/off-grid-nearest", "encode_scales", {"dtype": dt},
                {"scales": f32(0.3, 1 / 3, 1e-3, 7.7e-4, 0.1, 2.6363892e-05, 10.000001)},
                spec=("§4.2",),
                reason="a scale handed to TensorData::quantized that is not on the grid is stored "
                       "round-to-nearest-even (the codec does not round up)"))
        specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, -0.5, F32_MAX, 1e5, 500.0, F32_TINY]
        out.append(case(
            f"encode_scales/{low}/specials", "encode_scales", {"dtype": dt}, {"scales": f32(specials)},
            tags=("class:saturate",), spec=("§4.2",) + extra,
            reason="NaN, infinities, signed zeros, a negative scale and overflow: F16 overflows to inf, UE4M3 "
                   "saturates to 448 and keeps the sign bit, BF16/F16 keep NaN"))
        if dt in ("F16", "BF16"):
            out.append(case(
                f"encode_scales/{low}/nan-payloads", "encode_scales", {"dtype": dt},
                {"scales": from_bits([0x7F800001, 0x7FC00000, 0xFFC00001, 0x7FA5A5A5, 0xFF812345])},
                tags=("class:nan",), spec=("§4.2",),
                reason="the half crate quiets NaNs and keeps the top payload bits (numpy's float16 cast does "
                       "not quiet, ml_dtypes' bfloat16 drops the payload)"))
        if dt in DECODE_PATTERNS:
            data = _le(DECODE_PATTERNS[dt], _BYTES[dt])
        else:
            data = np.arange(256, dtype=np.uint8)
        out.append(case(
            f"decode_scales/{low}/patterns", "decode_scales", {"dtype": dt}, {"bytes": data},
            spec=("§4.2",) + extra,
            reason=("every byte value, the sign bit included (a negative UE4M3 byte decodes negative, 0x7F/0xFF "
                    "are NaN)" if dt in ("UE4M3", "UE8M0") else
                    "zeros, subnormals, the normal boundary, the largest value, infinities and NaNs")))
    return out


def _grid_bytes(dt: str, grid: np.ndarray) -> np.ndarray:
    if dt == "F32":
        return grid.astype("<f4").view(np.uint8)
    if dt == "F16":
        return grid.astype("<f2").view(np.uint8)
    if dt == "BF16":
        return (grid.view(np.uint32) >> 16).astype("<u2").view(np.uint8)
    if dt == "UE4M3":
        import ml_dtypes
        return grid.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    return (grid.view(np.uint32) >> 23).astype(np.uint8)
