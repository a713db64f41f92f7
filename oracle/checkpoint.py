"""Quantized checkpoints: one quantized tensor in a burnpack file, as burn-store's ``BurnpackStore`` writes and
reads it through burn-pack (docs/spec/checkpoint.md, whose sections the docstrings name).

``save_checkpoint`` gives the file's bytes; ``load_checkpoint`` reads a file back as burn does, or raises burn's
error as a :class:`~oracle.errors.BurnPanic` (its code and burn-pack's ``Display`` text). The reader is strict:
a file that burn would read in a way this module does not model (CBOR it does not decode, a descriptor serde
would fill in from a form it does not parse) is refused with a :class:`CheckpointUnmodelled`, never guessed at.
stdlib and numpy only; the CBOR codec is the subset serde's derive and ciborium produce (§13.3).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np

from .blocks import num_params
from .codec import LAYOUTS, to_bytes
from .dequantize import load_quantized
from .errors import panic
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .qtensor import QTensor
from .scheme import BlockScale, BlockSize, QuantMode, QuantScheme, QuantStore, QuantValue, ScaleDtype

MAGIC = 0x4255524E
"""``MAGIC_NUMBER``: "BURN" as a little-endian u32, so the file starts with the bytes ``NRUB``."""
FORMAT_VERSION = 1
HEADER_SIZE = 10  # magic u32, version u16, metadata size u32
TENSOR_ALIGNMENT = 256
MAX_METADATA_SIZE = 100 * 1024 * 1024
MAX_TENSOR_SIZE = 10 * 1024 * 1024 * 1024  # 64-bit targets
MAX_TENSOR_COUNT = 100_000
MAX_CBOR_DEPTH = 128
NAME = "weight"
"""The record's one tensor (the harness's and the vectors' name for it)."""


class CheckpointUnmodelled(ValueError):
    """A file this reader does not model: burn may read it, but no answer here would be burn's."""


# --- §13.3 CBOR: the subset ciborium writes, read strictly -----------------------------------------------------

def _head(major: int, n: int) -> bytes:
    """A CBOR item head in its shortest form (ciborium writes the shortest)."""
    if n < 24:
        return bytes([major << 5 | n])
    for extra, size, fmt in ((24, 1, ">B"), (25, 2, ">H"), (26, 4, ">I"), (27, 8, ">Q")):
        if n < 1 << (8 * size):
            return bytes([major << 5 | extra]) + struct.pack(fmt, n)
    raise ValueError(f"CBOR integer {n} does not fit in 64 bits")


def cbor_encode(obj: object) -> bytes:
    """Definite-length CBOR of JSON-like data: dicts keep their order (serde writes struct fields in declaration
    order, BTreeMaps sorted), ``None`` is null, tuples and lists are arrays."""
    if obj is None:
        return b"\xf6"
    if isinstance(obj, bool):
        return b"\xf5" if obj else b"\xf4"
    if isinstance(obj, int):
        return _head(0, obj) if obj >= 0 else _head(1, -1 - obj)
    if isinstance(obj, str):
        raw = obj.encode()
        return _head(3, len(raw)) + raw
    if isinstance(obj, (list, tuple)):
        return _head(4, len(obj)) + b"".join(cbor_encode(x) for x in obj)
    if isinstance(obj, dict):
        return _head(5, len(obj)) + b"".join(cbor_encode(k) + cbor_encode(v) for k, v in obj.items())
    raise TypeError(f"no CBOR form for {type(obj).__name__}")


class _Cbor:
    """A strict reader of one CBOR item: definite lengths, unsigned and negative integers, text, arrays, maps,
    null and booleans. Anything else (tags, byte strings, floats, indefinite lengths) is unmodelled."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def _take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise CheckpointUnmodelled(f"the CBOR metadata ends inside an item (offset {self.pos}, {n} bytes needed)")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def _arg(self, info: int) -> int:
        if info < 24:
            return info
        sizes = {24: 1, 25: 2, 26: 4, 27: 8}
        if info not in sizes:
            raise CheckpointUnmodelled(f"CBOR additional info {info} (indefinite length or reserved) is not modelled")
        return int.from_bytes(self._take(sizes[info]), "big")

    def item(self, depth: int = 0) -> object:
        if depth > MAX_CBOR_DEPTH:
            raise panic("checkpoint.metadata_deserialization", error="RecursionLimitExceeded")
        initial = self._take(1)[0]
        major, info = initial >> 5, initial & 31
        if major == 7:
            simple = {20: False, 21: True, 22: None}
            if info not in simple:
                raise CheckpointUnmodelled(f"CBOR simple/float item 0x{initial:02x} is not modelled")
            return simple[info]
        n = self._arg(info)
        if major == 0:
            return n
        if major == 1:
            return -1 - n
        if major == 3:
            try:
                return self._take(n).decode()
            except UnicodeDecodeError:
                raise CheckpointUnmodelled("CBOR text that is not UTF-8 is not modelled") from None
        if major == 4:
            return [self.item(depth + 1) for _ in range(n)]
        if major == 5:
            pairs = [(self.item(depth + 1), self.item(depth + 1)) for _ in range(n)]
            if any(not isinstance(k, str) for k, _ in pairs):
                raise CheckpointUnmodelled("a CBOR map key that is not text is not modelled")
            if len({k for k, _ in pairs}) != len(pairs):
                raise CheckpointUnmodelled("a CBOR map with a repeated key is not modelled")
            return dict(pairs)
        raise CheckpointUnmodelled(f"CBOR major type {major} (byte string or tag) is not modelled")


def cbor_decode(data: bytes) -> object:
    """The one CBOR item ``data`` starts with (ciborium ignores what follows it, and so does this)."""
    return _Cbor(bytes(data)).item()


# --- §13.3 the descriptor: serde's externally tagged form of DType::QFloat(QuantScheme) ------------------------

def _variant(value: object, names: list[str], what: str) -> str:
    """A unit variant as serde reads it: its name as text; another name is serde's ``unknown variant`` error."""
    if not isinstance(value, str):
        raise CheckpointUnmodelled(f"{what} as {type(value).__name__}, not text, is not modelled")
    if value not in names:
        expected = ", ".join(f"`{n}`" for n in names)
        raise panic("checkpoint.metadata_deserialization",
                    error=f'Semantic(None, "unknown variant `{value}`, expected one of {expected}")')
    return value


def _fields(obj: object, required: tuple[str, ...], what: str) -> dict:
    if not isinstance(obj, dict):
        raise CheckpointUnmodelled(f"{what} as {type(obj).__name__}, not a map, is not modelled")
    for name in required:
        if name not in obj:
            raise panic("checkpoint.metadata_deserialization", error=f'Semantic(None, "missing field `{name}`")')
    return obj


def _uint(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise CheckpointUnmodelled(f"{what} = {value!r} is not an unsigned integer this reader models")
    return value


# Declaration order of burn's enums (cubecl-common-0.11.0-pre.3 src/quant/scheme.rs:357-483, burn-std-0.22.0-pre.3
# src/tensor/dtype.rs:10-26): serde's "unknown variant" error lists them in it.
_VALUE_VARIANTS = ["Q8F", "E5M2", "E4M3", "Q4F", "E2M1", "Q2F", "Q8S", "Q4S", "Q2S"]
_STORE_VARIANTS = ["Native", "PackedNative", "PackedU32"]
_MODE_VARIANTS = ["Symmetric", "Lookup"]
_SCALE_VARIANTS = ["F32", "F16", "BF16", "UE8M0", "UE4M3"]
_DTYPE_VARIANTS = ["F64", "F32", "Flex32", "F16", "BF16", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8",
                   "Bool", "QFloat"]


def _newtype_or_unit(value: object, names: list[str], what: str) -> tuple[str, object]:
    """An enum with data as serde's externally tagged form: a one-entry map ``{variant: data}``, or text for a unit
    variant."""
    if isinstance(value, dict) and len(value) == 1:
        (name, data), = value.items()
        return _variant(name, names, what), data
    return _variant(value, names, what), None


def scheme_to_serde(scheme: QuantScheme) -> dict:
    """``QuantScheme``'s serde form: its five fields in declaration order; ``BlockSize`` as its private fields
    (``storage``, five u8 with 1 past the length, and ``len``)."""
    block = None
    if scheme.block is not None:
        dims = list(scheme.block.size.dims)
        block = {"size": {"storage": dims + [1] * (5 - len(dims)), "len": len(dims)},
                 "dtype": scheme.block.dtype.name}
    store = scheme.store.kind if scheme.store.kind == "Native" else {scheme.store.kind: scheme.store.dim}
    return {"value": scheme.value.name, "store": store, "mode": scheme.mode.name,
            "tensor": None if scheme.tensor is None else scheme.tensor.name, "block": block}


def scheme_from_serde(obj: object) -> QuantScheme:
    """The inverse of :func:`scheme_to_serde`, with serde's errors for an unknown variant or a missing field."""
    f = _fields(obj, ("value", "store", "mode", "tensor", "block"), "a QuantScheme")
    value = QuantValue[_variant(f["value"], _VALUE_VARIANTS, "QuantValue")]
    kind, dim = _newtype_or_unit(f["store"], _STORE_VARIANTS, "QuantStore")
    if (kind == "Native") != (dim is None):
        raise CheckpointUnmodelled(f"QuantStore {f['store']!r}: a variant without its data is not modelled")
    store = QuantStore("Native") if kind == "Native" else QuantStore(kind, _uint(dim, "the packed dim"))
    mode = QuantMode[_variant(f["mode"], _MODE_VARIANTS, "QuantMode")]
    scales = _SCALE_VARIANTS
    tensor = None if f["tensor"] is None else ScaleDtype[_variant(f["tensor"], scales, "ScaleDtype")]
    block = None
    if f["block"] is not None:
        b = _fields(f["block"], ("size", "dtype"), "a BlockScale")
        size = _fields(b["size"], ("storage", "len"), "a BlockSize")
        storage, length = size["storage"], _uint(size["len"], "BlockSize.len")
        if not isinstance(storage, list) or len(storage) != 5 or length > 5:
            raise CheckpointUnmodelled(f"BlockSize {size!r} is not five stored extents and a length up to 5")
        dims = [_uint(d, "a block extent") for d in storage[:length]]
        if any(not 1 <= d <= 255 for d in dims) or (dims and dims[0] == 1):
            raise CheckpointUnmodelled(f"BlockSize extents {dims} are not a canonical block this reader models")
        block = BlockScale(BlockSize(dims), ScaleDtype[_variant(b["dtype"], scales, "ScaleDtype")])
    return QuantScheme(value=value, store=store, mode=mode, tensor=tensor, block=block)


@dataclass(frozen=True)
class Descriptor:
    """One tensor's entry in the metadata (``TensorDescriptor``)."""

    name: str
    dtype: str  # the DType variant
    scheme: QuantScheme | None  # for QFloat
    shape: tuple[int, ...]
    start: int
    end: int


def _descriptor(name: str, obj: object) -> Descriptor:
    f = _fields(obj, ("dtype", "shape", "data_offsets"), "a TensorDescriptor")
    kind, data = _newtype_or_unit(f["dtype"], _DTYPE_VARIANTS, "DType")
    if kind != "QFloat" or data is None:
        raise CheckpointUnmodelled(f"DType {f['dtype']!r}: only quantized tensors (QFloat with a scheme) are modelled")
    scheme = scheme_from_serde(data) if kind == "QFloat" else None
    if not isinstance(f["shape"], list):
        raise CheckpointUnmodelled("a shape that is not a list is not modelled")
    offsets = f["data_offsets"]
    if not isinstance(offsets, list) or len(offsets) != 2:
        raise CheckpointUnmodelled("data_offsets that are not a pair are not modelled")
    if f.get("param_id") is not None:
        _uint(f["param_id"], "param_id")
    return Descriptor(name, kind, scheme, tuple(_uint(d, "a dimension") for d in f["shape"]),
                      _uint(offsets[0], "a data offset"), _uint(offsets[1], "a data offset"))


# --- §13.2 the container --------------------------------------------------------------------------------------

def data_section_start(metadata_size: int) -> int:
    """``aligned_data_section_start``: the header and the metadata, rounded up to the alignment."""
    return -(-(HEADER_SIZE + metadata_size) // TENSOR_ALIGNMENT) * TENSOR_ALIGNMENT


def write_file(tensors: list[tuple[str, QuantScheme, tuple[int, ...], bytes]]) -> bytes:
    """``Writer::into_bytes``: each tensor at the next aligned offset in the order given, the descriptors sorted by
    name (a BTreeMap), no padding after the last tensor."""
    descriptors, placed, offset = {}, [], 0
    for name, scheme, shape, payload in tensors:
        start = -(-offset // TENSOR_ALIGNMENT) * TENSOR_ALIGNMENT
        descriptors[name] = {"dtype": {"QFloat": scheme_to_serde(scheme)}, "shape": list(shape),
                             "data_offsets": [start, start + len(payload)]}
        placed.append((start, payload))
        offset = start + len(payload)
    metadata = cbor_encode({"tensors": dict(sorted(descriptors.items()))})
    out = bytearray(struct.pack("<IHI", MAGIC, FORMAT_VERSION, len(metadata)) + metadata)
    base = data_section_start(len(metadata))
    out.extend(bytes(base + offset - len(out)))
    for start, payload in placed:
        out[base + start: base + start + len(payload)] = payload
    return bytes(out)


def quantized_data_len(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile) -> int:
    """burn-std's ``quantized_data_len``: the length burn-store declares before the bytes exist (§13.5), as the
    profile's ``declared_length`` counts it: ``storage_lines`` rounds up only the packed dim, per line, whatever
    the layout writes; ``layout`` is the layout's own length (``codec.check_data_length``)."""
    params = num_params(shape, scheme) * scheme.scale_dtype().size
    glob = scheme.global_scale_dtype()
    tail = params + (0 if glob is None else glob.size)
    if profile.declared_length == "layout":
        return profile.step(LAYOUTS).value_bytes(shape, scheme) + tail
    per = scheme.num_quants()
    if scheme.store.kind != "Native" and per > 1 and shape:
        lines = list(shape)
        axis = len(shape) - scheme.store.dim - 1
        lines[axis] = -(-lines[axis] // per)
        storage = math.prod(lines)
    else:
        storage = -(-math.prod(shape) // per)
    return storage * -(-scheme.store.size_bits(scheme.value) // 8) + tail


def save_checkpoint(qtensor: QTensor, *, profile: str | Profile = DEFAULT_PROFILE) -> bytes:
    """``BurnpackStore::collect_from`` on a record of one quantized tensor (§13.5): the payload is
    ``TensorData::quantized(..)``'s bytes; a payload whose length is not ``quantized_data_len`` is burn-pack's
    ``TensorBytesSizeMismatch`` (the #5349 class)."""
    prof = get_profile(profile)
    payload = to_bytes(qtensor, profile=prof).tobytes()
    shape = tuple(np.asarray(qtensor.codes).shape)
    declared = quantized_data_len(qtensor.scheme, shape, prof)
    if declared != len(payload):
        raise panic("checkpoint.bytes_size_mismatch", expected=declared, got=len(payload), name=NAME)
    return write_file([(NAME, qtensor.scheme, shape, payload)])


@dataclass(frozen=True)
class Loaded:
    """A loaded quantized tensor: its descriptor as read, its payload and what burn dequantizes it to."""

    name: str
    scheme: QuantScheme
    shape: tuple[int, ...]
    payload: np.ndarray
    x: np.ndarray

    def dtype_debug(self) -> str:
        return f"QFloat({self.scheme.debug()})"


def read_file(data: bytes, *, profile: str | Profile = DEFAULT_PROFILE) -> dict[str, tuple[Descriptor, bytes]]:
    """``Reader::from_bytes`` then ``into_tensors``, in burn-pack's order of checks (§13.6): each tensor's descriptor
    and payload, by name."""
    prof = get_profile(profile)
    data = bytes(data)
    if len(data) < HEADER_SIZE:
        raise panic("checkpoint.invalid_header")
    magic, version, metadata_size = struct.unpack("<IHI", data[:HEADER_SIZE])
    if magic != MAGIC:
        raise panic("checkpoint.invalid_magic")
    if version > FORMAT_VERSION:
        raise panic("checkpoint.invalid_version")
    if metadata_size > MAX_METADATA_SIZE:
        raise panic("checkpoint.validation", error=f"Metadata size {metadata_size} exceeds maximum allowed size of "
                    f"{MAX_METADATA_SIZE} bytes (potential DoS attack)")
    if len(data) < HEADER_SIZE + metadata_size:
        raise panic("checkpoint.invalid_header")
    meta = _fields(cbor_decode(data[HEADER_SIZE:HEADER_SIZE + metadata_size]), ("tensors",), "the metadata")
    if not isinstance(meta["tensors"], dict):
        raise CheckpointUnmodelled("tensors that are not a map are not modelled")
    if len(meta["tensors"]) > MAX_TENSOR_COUNT:
        raise panic("checkpoint.validation", error=f"File contains {len(meta['tensors'])} tensors, exceeding maximum "
                    f"of {MAX_TENSOR_COUNT} (potential DoS attack)")
    descriptors = [_descriptor(name, obj) for name, obj in sorted(meta["tensors"].items())]
    base, reader = data_section_start(metadata_size), prof.checkpoint_reader
    if reader == "metadata_end":
        # Measured against the unaligned end of the metadata (burn-pack-0.22.0-pre.3 src/reader.rs:271-295), before
        # any range is checked: a file cut inside the alignment padding's worth of its last tensor passes here and
        # fails when that tensor is viewed.
        _check_truncation(HEADER_SIZE + metadata_size + max((d.end for d in descriptors), default=0),
                          descriptors, data)
    else:
        for d in descriptors:
            _range(d, base, size_check=reader == "ranges_first")
        _check_truncation(max((base + d.end for d in descriptors), default=0), descriptors, data)
    out = {}
    for d in descriptors:  # into_tensors, in name order
        start, end = _range(d, base, size_check=True, hint=reader == "limits")
        if end > len(data):
            raise panic("checkpoint.validation", error=f"Tensor '{d.name}' data range {start}..{end} could not be "
                        f"viewed (source is {len(data)} bytes)")
        out[d.name] = (d, data[start:end])
    return out


def _check_truncation(reach: int, descriptors: list[Descriptor], data: bytes) -> None:
    if descriptors and len(data) < reach:
        raise panic("checkpoint.validation",
                    error=f"File truncated: expected at least {reach} bytes, got {len(data)} bytes")


def _range(d: Descriptor, base: int, *, size_check: bool, hint: bool = False) -> tuple[int, int]:
    """``tensor_range`` (and, from 0.23.0-pre.1 a separate step, ``check_tensor_size``): the absolute byte range
    of a tensor, refused when it runs backwards or is larger than ``MAX_TENSOR_SIZE``."""
    start, end = base + d.start, base + d.end
    if end < start:
        raise panic("checkpoint.validation",
                    error=f"Tensor '{d.name}' has corrupted offset data: end {end} < start {start}")
    if size_check and end - start > MAX_TENSOR_SIZE:
        more = "; raise it with `Reader::with_limits`" if hint else ""
        raise panic("checkpoint.validation", error=f"Tensor '{d.name}' size {end - start} exceeds maximum allowed "
                    f"size of {MAX_TENSOR_SIZE} bytes (potential DoS attack{more})")
    return start, end


def load_checkpoint(data: bytes, *, profile: str | Profile = DEFAULT_PROFILE) -> Loaded:
    """A record's quantized tensor as burn loads it (§13.6): read the file, take its bytes as ``TensorData`` and
    dequantize them (``load_quantized``'s path, f32)."""
    prof = get_profile(profile)
    tensors = read_file(data, profile=prof)
    if NAME not in tensors:
        raise panic("checkpoint.tensor_not_found", name=NAME)
    d, payload = tensors[NAME]
    raw = np.frombuffer(payload, dtype=np.uint8)
    x = load_quantized(raw, d.shape, d.scheme, "f32", profile=prof)
    return Loaded(d.name, d.scheme, d.shape, raw.copy(), x)


__all__ = ["MAGIC", "NAME", "CheckpointUnmodelled", "Loaded", "cbor_decode", "cbor_encode",
           "load_checkpoint", "quantized_data_len", "read_file", "save_checkpoint", "scheme_from_serde",
           "scheme_to_serde", "write_file"]
