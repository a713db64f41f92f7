"""Safetensors encode/decode for the dtypes qconform uses.

Everything that carries tensors -- golden-vector shards and protocol messages -- goes through these two
functions, so a blob that one side wrote is exactly what the other side reads. Writing uses the low-level
``safetensors.serialize`` (the numpy helper of the safetensors package cannot represent BF16;
``ml_dtypes.bfloat16`` does). Reading is our own: it validates the layout like the reference does, then makes
numpy views into the blob instead of copies, and every defect, however hostile the blob, is a TensorIOError.
"""

from __future__ import annotations

import json
import math
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
    name = _NAMES.get(array.dtype)  # a native dtype (nearly every array): no new dtype made per call
    if name is not None:
        return name
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


# A safetensors header is bounded like the reference implementation bounds it; anything larger is hostile.
MAX_HEADER = 100 << 20


def _header(blob) -> tuple[dict, int]:
    """The parsed JSON header of a safetensors blob and where its data region starts."""
    if len(blob) < 8:
        raise TensorIOError(f"{len(blob)} bytes: too short for a safetensors header")
    (n,) = struct.unpack_from("<Q", blob)
    if n > len(blob) - 8 or n > MAX_HEADER:
        raise TensorIOError(f"header length {n} exceeds the {min(len(blob) - 8, MAX_HEADER)} bytes allowed")
    try:
        header = json.loads(bytes(blob[8:8 + n]))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # RecursionError: nesting thousands deep
        raise TensorIOError(f"header is not JSON: {str(e)[:200]}") from None
    if not isinstance(header, dict):
        raise TensorIOError("header is not a JSON object")
    return header, 8 + n


def _metadata(header: dict) -> dict[str, str]:
    meta = header.get("__metadata__") or {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise TensorIOError("__metadata__ is not a map of strings")
    return meta


def read_metadata(blob) -> dict[str, str]:
    """The ``__metadata__`` map of a safetensors blob."""
    return _metadata(_header(blob)[0])


def decode(blob) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Parse a safetensors blob (bytes, bytearray or memoryview) into (named arrays, metadata).

    The arrays are views into ``blob``, not copies: a reply of N bytes costs N bytes, once (the reference
    ``safetensors.deserialize`` copies every tensor). The layout rules are the format's own: known dtypes,
    shapes of non-negative integers whose byte size matches the offsets, tensors packed back to back in
    offset order and covering the data region exactly. Raises TensorIOError on any defect.
    """
    header, start = _header(blob)
    meta = _metadata(header)
    data = memoryview(blob)[start:]
    entries = sorted(((name, e) for name, e in header.items() if name != "__metadata__"),
                     key=lambda ne: _offsets(*ne)[0])
    tensors, end = {}, 0
    for name, entry in entries:
        kind, shape, (lo, hi) = entry.get("dtype"), entry.get("shape"), _offsets(name, entry)
        if kind not in DTYPES:
            raise TensorIOError(f"tensor {name!r:.60} has dtype {kind!r:.20}, not one of {', '.join(DTYPES)}")
        if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
            raise TensorIOError(f"tensor {name!r:.60}: shape {shape!r:.80} is not a list of sizes")
        if lo != end:
            raise TensorIOError(f"tensor {name!r:.60} starts at {lo}, expected {end} (gap or overlap)")
        count = math.prod(shape)
        if count * DTYPES[kind].itemsize != hi - lo or hi > len(data):
            raise TensorIOError(f"tensor {name!r:.60}: {kind}{shape} does not fit offsets [{lo}, {hi}] "
                                f"of a {len(data)}-byte data region")
        try:
            array = np.frombuffer(data, dtype=_LE[kind], count=count, offset=lo).reshape(shape)
        except ValueError as e:  # e.g. [0, 2**40, 2**40]: no bytes, but more elements than numpy can index
            raise TensorIOError(f"tensor {name!r:.60}: shape {shape} is not representable: {e}") from None
        tensors[name] = array.view(DTYPES[kind]) if _LE[kind] != DTYPES[kind] else array
        end = hi
    if end != len(data):
        raise TensorIOError(f"{len(data) - end} bytes after the last tensor")
    return tensors, meta


def _offsets(name, entry) -> tuple[int, int]:
    off = entry.get("data_offsets") if isinstance(entry, dict) else None
    if not (isinstance(off, list) and len(off) == 2 and all(type(o) is int for o in off) and 0 <= off[0] <= off[1]):
        raise TensorIOError(f"tensor {name!r:.60}: data_offsets {off!r:.80} are not [begin, end]")
    return off[0], off[1]


def bits(array: np.ndarray) -> np.ndarray:
    """The raw element bit patterns as an unsigned-integer view of the same itemsize."""
    return array.view(f"u{array.dtype.itemsize}")
