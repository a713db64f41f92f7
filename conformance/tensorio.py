"""Safetensors encode/decode for the dtypes qconform uses.

Everything that carries tensors -- golden-vector shards and protocol messages -- goes through these two
functions, so a blob that one side wrote is exactly what the other side reads. We use the low-level
``safetensors.serialize`` / ``safetensors.deserialize`` API (bytes in, bytes out) because the numpy helper of
the safetensors package cannot represent BF16; ``ml_dtypes.bfloat16`` does.
"""

from __future__ import annotations

import json
import struct

import ml_dtypes
import numpy as np
import safetensors

# safetensors dtype name -> numpy dtype. This is the whole set ops.md allows.
DTYPES: dict[str, np.dtype] = {
    "F32": np.dtype(np.float32),
    "F16": np.dtype(np.float16),
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "I8": np.dtype(np.int8),
    "U8": np.dtype(np.uint8),
    "U32": np.dtype(np.uint32),
    "I64": np.dtype(np.int64),
}
_NAMES = {dt: name for name, dt in DTYPES.items()}
# TensorSpec spells dtypes the torch way.
_SPEC_NAMES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "I8": "int8", "U8": "uint8",
               "U32": "uint32", "I64": "int64"}
_LE = {name: dt.newbyteorder("<") for name, dt in DTYPES.items()}


class TensorIOError(ValueError):
    """A blob that is not a valid safetensors message of the dtypes above."""


def dtype_name(array: np.ndarray) -> str:
    """The safetensors name of an array's dtype; TensorIOError if qconform does not use it."""
    try:
        return _NAMES[array.dtype.newbyteorder("=")]
    except KeyError:
        raise TensorIOError(f"dtype {array.dtype} is not one of {', '.join(DTYPES)}") from None


def encode(tensors: dict[str, np.ndarray], metadata: dict[str, str] | None = None) -> bytes:
    """Serialize named arrays (and string metadata) into one safetensors blob."""
    specs, keep = {}, []
    for name, array in tensors.items():
        kind = dtype_name(array)
        # little-endian, C-contiguous; keep a reference so the pointer stays valid during serialize
        data = np.ascontiguousarray(array, dtype=_LE[kind])
        keep.append(data)
        specs[name] = safetensors.TensorSpec(dtype=_SPEC_NAMES[kind], shape=list(data.shape),
                                             data_ptr=data.ctypes.data if data.size else 0,
                                             data_len=data.nbytes)
    return safetensors.serialize(specs, metadata=metadata)


def read_metadata(blob: bytes) -> dict[str, str]:
    """The ``__metadata__`` map of a safetensors blob (``deserialize`` does not return it)."""
    if len(blob) < 8:
        raise TensorIOError(f"{len(blob)} bytes: too short for a safetensors header")
    (n,) = struct.unpack_from("<Q", blob)
    if n > len(blob) - 8:
        raise TensorIOError(f"header length {n} exceeds the {len(blob) - 8} bytes that follow")
    try:
        header = json.loads(bytes(blob[8:8 + n]))
    except (UnicodeDecodeError, ValueError) as e:
        raise TensorIOError(f"header is not JSON: {e}") from None
    if not isinstance(header, dict):
        raise TensorIOError("header is not a JSON object")
    meta = header.get("__metadata__") or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise TensorIOError("__metadata__ is not a map of strings")
    return meta


def decode(blob: bytes) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Parse a safetensors blob into (named arrays, metadata). Raises TensorIOError on any defect."""
    meta = read_metadata(blob)
    try:
        entries = safetensors.deserialize(bytes(blob))
    except Exception as e:  # noqa: BLE001 - SafetensorError derives from Exception only
        raise TensorIOError(str(e)) from None
    tensors = {}
    for name, entry in entries:
        kind = entry["dtype"]
        if kind not in DTYPES:
            raise TensorIOError(f"tensor {name!r} has dtype {kind}, not one of {', '.join(DTYPES)}")
        array = np.frombuffer(entry["data"], dtype=_LE[kind]).reshape(entry["shape"])
        tensors[name] = array.view(DTYPES[kind]) if _LE[kind] != DTYPES[kind] else array
    return tensors, meta


def bits(array: np.ndarray) -> np.ndarray:
    """The raw element bit patterns as an unsigned-integer view of the same itemsize."""
    return array.view(f"u{array.dtype.itemsize}")
