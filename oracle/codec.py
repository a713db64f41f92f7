"""Bytes: stored scales, the ``TensorData`` layout of a quantized tensor, and u32 packing (spec §4.2, §7).

Layout written by ``QuantizedBytes::new``: ``[values | block scales | global]``, densely concatenated,
little-endian, no padding. The values are one i8 per element whatever the store up to burn 0.22.1; from
0.23.0-pre.1 a packed store is packed in padded lines (``oracle/packing.py``). The profile field
``value_layout`` picks the layout (``LAYOUTS``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .blocks import num_params
from .choices import VALUE_LAYOUT, FixedStep
from .errors import panic
from .packing import block_scale_order, pack_lines, packed_order, unpack_lines, value_bytes
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .qtensor import QTensor
from .rounding import round_up
from .scheme import QuantScheme, QuantStore, QuantValue, ScaleDtype, shape_debug

# --- scales (§4.2) -------------------------------------------------------------------------------------------


def encode_scales(scales: np.ndarray, dtype: ScaleDtype, *, profile: str | Profile = DEFAULT_PROFILE) -> np.ndarray:
    """Each f32 scale in ``dtype``'s bytes: F32 verbatim; F16/BF16 round-to-nearest-even (``half``'s
    ``from_f32``, NaN quieted with its payload kept); UE4M3 the signed E4M3FN byte, saturating at ±448; UE8M0 the
    exponent byte (burn >= 0.22.0) or ``not implemented``."""
    prof = get_profile(profile)
    s = np.asarray(scales, dtype=np.float32).ravel()
    bits = s.view(np.uint32)
    nan = np.isnan(s)
    if dtype is ScaleDtype.F32:
        out = s
    elif dtype is ScaleDtype.F16:
        with np.errstate(over="ignore"):
            half = s.astype(np.float16).view(np.uint16)
        quiet = ((bits >> 16) & 0x8000) | 0x7E00 | ((bits >> 13) & 0x3FF)
        out = np.where(nan, quiet.astype(np.uint16), half)
    elif dtype is ScaleDtype.BF16:
        with np.errstate(invalid="ignore"):
            cast = s.astype(ml_dtypes.bfloat16).view(np.uint16)
        out = np.where(nan, ((bits >> 16) | 0x40).astype(np.uint16), cast)
    elif dtype is ScaleDtype.UE4M3:
        out = np.clip(s, -448.0, 448.0).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    else:
        if not prof.ue8m0:
            raise panic("bytes.ue8m0")
        exponent = (round_up(s, dtype, ue8m0=True).view(np.uint32) >> 23).astype(np.uint8)
        out = np.where(nan, np.uint8(0xFF), exponent)
    return np.ascontiguousarray(out).astype(out.dtype.newbyteorder("<")).view(np.uint8)


def decode_scales(data: np.ndarray, dtype: ScaleDtype, *, profile: str | Profile = DEFAULT_PROFILE) -> np.ndarray:
    """Stored scale bytes back to f32 (exact); a trailing partial entry is ignored, as ``as_chunks`` does."""
    prof = get_profile(profile)
    raw = np.asarray(data, dtype=np.uint8).ravel()
    whole = raw[: raw.size - raw.size % dtype.size]
    if dtype is ScaleDtype.F32:
        return whole.view("<f4").astype(np.float32)
    if dtype is ScaleDtype.F16:
        return whole.view("<f2").astype(np.float32)
    if dtype is ScaleDtype.BF16:
        return whole.view("<u2").astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
    if dtype is ScaleDtype.UE4M3:
        return whole.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    if not prof.ue8m0:
        raise panic("bytes.ue8m0")
    decoded = np.where(whole == 0, np.uint32(0x00400000), whole.astype(np.uint32) << 23).view(np.float32)
    return np.where(whole == 0xFF, np.float32(np.nan), decoded).astype(np.float32)


# --- TensorData layout (§7.1, §7.2) ---------------------------------------------------------------------------


def to_bytes(qtensor: QTensor, *, profile: str | Profile = DEFAULT_PROFILE) -> np.ndarray:
    """``TensorData::quantized(values, shape, scheme, scales, global).bytes`` of a quantized tensor."""
    prof = get_profile(profile)
    codes, scheme, global_scale = np.asarray(qtensor.codes, dtype=np.int8), qtensor.scheme, qtensor.global_scale
    scales = np.asarray(qtensor.scales, dtype=np.float32).ravel()
    layout = prof.step(LAYOUTS)
    values = layout.write(codes, scheme)
    if scheme.block_size() is None:
        if scales.size == 0:
            raise panic("scale.slice_out_of_bounds")
        scales = scales[:1]
    elif (order := layout.scale_order(codes.shape, scheme)) is not None:
        if order.size and order.max() >= scales.size:
            raise panic("scale.index_out_of_bounds", len=scales.size, index=int(order[order >= scales.size][0]))
        scales = scales[order]
    parts = [values, encode_scales(scales, scheme.scale_dtype(), profile=prof)]
    dtype = scheme.global_scale_dtype()
    if dtype is not None and global_scale is not None:
        if dtype is not ScaleDtype.F32:
            raise panic("bytes.global_not_f32", scheme=scheme.debug(), left=dtype.name, right="F32")
        parts.append(encode_scales(np.asarray(global_scale, dtype=np.float32).ravel()[:1], dtype, profile=prof))
    elif dtype is not None:
        raise panic("bytes.global_missing", scheme=scheme.debug())
    elif global_scale is not None:
        raise panic("bytes.global_unexpected", scheme=scheme.debug())
    return np.concatenate(parts)


def from_bytes(data: np.ndarray, shape: tuple[int, ...], scheme: QuantScheme, *,
               profile: str | Profile = DEFAULT_PROFILE, validated: bool = False, owned: bool = True) -> QTensor:
    """``QuantizedBytes::into_vec_i8``: the values, block scales and global of ``data``, split as the profile's
    ``value_layout`` reads them. With ``validated``, ``data`` arrives through ``TensorData::from_bytes``, which
    checks its length first on a profile that ``validates_data_length``. ``owned=False``: the codes may be a view
    of ``data`` (bytes written for this one read, as dequantize's round trip writes them: no copy of the codes)."""
    prof = get_profile(profile)
    raw = np.asarray(data, dtype=np.uint8).ravel()
    shape = tuple(shape)
    layout = prof.step(LAYOUTS)
    if validated and prof.validates_data_length:
        check_data_length(raw.size, shape, scheme, prof)
    values, split = layout.read(raw, shape, scheme, scale_bytes(shape, scheme), prof)
    block, glob = read_params(raw[split:], shape, scheme, prof)
    if owned and np.may_share_memory(values, raw):
        values = values.copy()
    if values.size == math.prod(shape):
        values = values.reshape(shape)
    return QTensor(values, block, glob, scheme)


def scale_bytes(shape: tuple[int, ...], scheme: QuantScheme) -> int:
    """The bytes of the block scales and the global a ``shape`` tensor's data ends with."""
    glob_dtype = scheme.global_scale_dtype()
    return scheme.scale_dtype().size * num_params(shape, scheme) + (0 if glob_dtype is None else glob_dtype.size)


def read_params(params: np.ndarray, shape: tuple[int, ...], scheme: QuantScheme,
                profile: Profile) -> tuple[np.ndarray, np.ndarray | None]:
    """The block scales (row-major, whatever order the layout stores them in) and the global of the bytes after
    the values: the global is the last ``global_scale_size`` bytes, the block scales all before it."""
    glob_dtype = scheme.global_scale_dtype()
    glob_size = 0 if glob_dtype is None else glob_dtype.size
    block = decode_scales(params[: max(params.size - glob_size, 0)], scheme.scale_dtype(), profile=profile)
    if (order := profile.step(LAYOUTS).scale_order(shape, scheme)) is not None and order.size == block.size:
        row_major = np.zeros_like(block)
        row_major[order] = block
        block = row_major
    glob = None if glob_dtype is None else decode_scales(params[params.size - glob_size:], glob_dtype,
                                                         profile=profile)
    return block, glob


class OneBytePerValue:
    """burn-std <= 0.22.1: values are one i8 each whatever the store; the reader takes every byte before the
    parameters as values, not truncated to the element count (4/2-bit PackedU32 words are unpacked flat), so the
    codes have the tensor's shape only when their count fills it."""

    empty_words_refused = True
    """``into_vec_i8`` casts a PackedU32 buffer to u32 words with bytemuck; the empty buffer of a tensor built by
    ``TensorData::quantized`` is dangling and 1-aligned, so the cast panics (burn-flex, found by fuzzing)."""

    def write(self, codes: np.ndarray, scheme: QuantScheme) -> np.ndarray:
        return codes.ravel().view(np.uint8)

    def uploaded(self, scheme: QuantScheme) -> QuantScheme:
        """The scheme a GPU's ``q_from_data`` upload reads the bytes as: one byte per value, whatever the store
        (the device buffer is sized for the store, so 4/2-bit codes overflow it: ``oversized_upload_panic``)."""
        return scheme.with_store(QuantStore.NATIVE)

    def device_values(self, qtensor: QTensor, prof: Profile) -> np.ndarray:
        """What a GPU's value buffer hands ``q_into_data``: 4/2-bit PackedU32 codes packed into u32 words (the last
        dim holds whole words), which this reader then unpacks flat; one byte per value otherwise (a store packed
        along an outer axis never gets here: the reader refuses it first)."""
        codes, scheme = np.asarray(qtensor.codes, dtype=np.int8), qtensor.scheme
        if scheme.store.kind == "PackedU32" and scheme.value.size_bits < 8:
            return pack_u32(codes.ravel(), scheme.value, profile=prof).astype("<u4").view(np.uint8)
        return self.write(codes, scheme)

    def scale_order(self, shape: tuple[int, ...], scheme: QuantScheme) -> np.ndarray | None:
        return None

    def value_bytes(self, shape: tuple[int, ...], scheme: QuantScheme) -> int:
        return math.prod(shape)

    def read(self, raw: np.ndarray, shape: tuple[int, ...], scheme: QuantScheme, scale_bytes: int,
             prof: Profile) -> tuple[np.ndarray, int]:
        store, value = scheme.store, scheme.value
        if store.kind == "PackedU32" and store.packs_outer_dim:
            raise panic("bytes.packed_dim", left=store.dim, right=0)
        if store.kind == "PackedNative" or (store.kind == "PackedU32" and value.is_float):
            raise panic("bytes.unsupported_store")
        if raw.size < scale_bytes:
            raise panic("bytes.too_short")
        split = raw.size - scale_bytes
        values = raw[:split].view(np.int8)  # a view: from_bytes copies it unless the bytes are its own
        if store.kind == "PackedU32" and value.size_bits < 8:
            if split % 4:
                raise panic("bytes.not_u32_multiple")
            values = unpack_u32(raw[:split].view("<u4").astype(np.uint32), value, math.prod(shape), profile=prof)
        return values, split

    def unpack_u32(self, words: np.ndarray, value: QuantValue, numel: int, prof: Profile) -> np.ndarray:
        """``unpack_q_to_i8s``: each word yields ``min(32/bits, numel - i*32/bits)`` sign-extended fields (in
        release builds the subtraction wraps, so surplus words yield whole words). The public path to it (the
        reader under ``PackedU32``) refuses a float value, as it does for ``from_bytes``."""
        if value.is_float:
            raise panic("bytes.unsupported_store")
        bits = value.size_bits
        per_word = 32 // bits
        shifts = prof.step(PACKING)(per_word, bits)
        fields = ((words[:, None] >> shifts) & np.uint32((1 << bits) - 1)).astype(np.uint8)
        signed = ((fields << (8 - bits)).view(np.int8) >> (8 - bits)).astype(np.int8)
        remaining = numel - np.arange(words.size, dtype=np.int64) * per_word
        taken = np.where(remaining < 0, per_word, np.minimum(per_word, remaining))  # usize wraps: a whole word
        return signed[np.arange(per_word) < taken[:, None]]


@dataclass(frozen=True)
class PackedLines:
    """burn-std >= 0.23.0-pre.1 (``oracle/packing.py``): a packed store packed line by line along its packed dim,
    each line padded to whole words (:meth:`lines`), block scales of an outer packed dim in the same order; the
    reader asserts the values' exact byte count."""

    empty_words_refused = False  # words are read line by line, not cast from the buffer

    def _packed(self, scheme: QuantScheme) -> bool:
        return scheme.store.kind != "Native"

    def lines(self, shape: tuple[int, ...], scheme: QuantScheme) -> np.ndarray:
        """The lines the values are packed in: ``PackedOrder``'s, along the packed dim."""
        return packed_order(shape, scheme.store.dim)

    def write(self, codes: np.ndarray, scheme: QuantScheme) -> np.ndarray:
        if not self._packed(scheme):
            return codes.ravel().view(np.uint8)
        return pack_lines(codes, self.lines(codes.shape, scheme), scheme)

    def uploaded(self, scheme: QuantScheme) -> QuantScheme:
        """The scheme a GPU's ``q_from_data`` upload reads the bytes as: the store's own, since its padded lines
        are the device's words (burn-cubecl stores the packed axis innermost, whole words per line)."""
        return scheme

    def device_values(self, qtensor: QTensor, prof: Profile) -> np.ndarray:
        """What a GPU's value buffer hands ``q_into_data``: the padded lines themselves (see :meth:`uploaded`)."""
        return self.write(np.asarray(qtensor.codes, dtype=np.int8), qtensor.scheme)

    def scale_order(self, shape: tuple[int, ...], scheme: QuantScheme) -> np.ndarray | None:
        return block_scale_order(shape, scheme)

    def value_bytes(self, shape: tuple[int, ...], scheme: QuantScheme) -> int:
        return value_bytes(shape, scheme) if self._packed(scheme) else math.prod(shape)

    def read(self, raw: np.ndarray, shape: tuple[int, ...], scheme: QuantScheme, scale_bytes: int,
             prof: Profile) -> tuple[np.ndarray, int]:
        if raw.size < scale_bytes:
            raise panic("bytes.too_short")
        split = raw.size - scale_bytes
        _check_values_length(split, shape, scheme, self.value_bytes(shape, scheme))
        if not self._packed(scheme):
            return raw[:split].view(np.int8), split  # a view: from_bytes copies it unless the bytes are its own
        return unpack_lines(raw[:split], shape, self.lines(shape, scheme), scheme), split

    def unpack_u32(self, words: np.ndarray, value: QuantValue, numel: int, prof: Profile) -> np.ndarray:
        """The words as the value region of a ``[numel]`` tensor under ``PackedU32(0)``: one padded line."""
        scheme = QuantScheme.default().with_value(value).with_store(QuantStore.packed_u32(0))
        _check_values_length(words.size * 4, (numel,), scheme, self.value_bytes((numel,), scheme))
        return unpack_lines(words.astype("<u4").view(np.uint8), (numel,), self.lines((numel,), scheme), scheme)


def _check_values_length(actual: int, shape: tuple[int, ...], scheme: QuantScheme, expected: int) -> None:
    """``split_values_off``'s assert (burn-std >= 0.23.0-pre.1, quantization/base.rs:326-332)."""
    if actual != expected:
        raise panic("bytes.values_length", shape=shape_debug(shape), scheme=scheme.debug(), expected=expected,
                    actual=actual, left=actual, right=expected)


LAYOUTS = VALUE_LAYOUT.steps({"bytes": OneBytePerValue(), "packed_lines": PackedLines()})


def check_data_length(length: int, shape: tuple[int, ...], scheme: QuantScheme, profile: Profile) -> None:
    """``TensorData::try_from_bytes`` of a QFloat dtype (burn-std >= 0.23.0-pre.1, data/tensor/base.rs:252-275):
    the layout must exist for ``shape`` (a packed dim within the rank, a block no longer than the rank) and the
    bytes must be exactly values + block scales + global."""
    layout = profile.step(LAYOUTS)
    block = scheme.block_size()
    packed_dim_missing = scheme.store.kind != "Native" and scheme.store.dim >= max(len(shape), 1)
    if packed_dim_missing or (block is not None and len(block) > len(shape)):
        raise panic("data.invalid_layout", shape=list(shape), scheme=scheme.debug())
    glob = scheme.global_scale_dtype()
    expected = (layout.value_bytes(shape, scheme) + num_params(shape, scheme) * scheme.scale_dtype().size
                + (0 if glob is None else glob.size))
    if length != expected:
        raise panic("data.invalid_length", shape=list(shape), scheme=scheme.debug(), len=length)


def into_data(qtensor: QTensor, *, profile: str | Profile = DEFAULT_PROFILE) -> QTensor:
    """What a user sees of a quantized tensor: ``into_data()`` (the CPU backends' ``q_into_data`` writes
    ``TensorData::quantized(values, shape, scheme, scales, global)``) read back with ``into_vec_i8``. It differs
    from what the backend holds only where the backend holds something its own bytes cannot say: flex keeps
    extra scales, whose bytes then read back as values. The GPU profile answers with its logical parts."""
    prof = get_profile(profile)
    if not prof.observes_through_bytes:
        return qtensor
    data = to_bytes(qtensor, profile=prof)
    scheme, codes = qtensor.scheme, np.asarray(qtensor.codes, dtype=np.int8)
    if not prof.writes_packed_words:
        return from_bytes(data, codes.shape, scheme, profile=prof)
    # burn-cubecl's q_into_data: `TensorData::from_bytes` of its buffers (the values as the device holds them, then
    # the scales), which checks the layout on a release that validates_data_length
    layout = prof.step(LAYOUTS)
    values = layout.device_values(qtensor, prof)
    data = np.concatenate([values, data[layout.value_bytes(codes.shape, scheme):]])
    return from_bytes(data, codes.shape, scheme, profile=prof, validated=True)


# --- u32 packing (§7.3) -------------------------------------------------------------------------------------


def pack_u32(codes: np.ndarray, value: QuantValue, *, profile: str | Profile = DEFAULT_PROFILE) -> np.ndarray:
    """Pack ``32 / bits`` codes per little-endian u32, code k at bits ``[k*bits, (k+1)*bits)``, zero-padded to a
    whole word (burn's ``pack_i8s_to_u32s`` for 8-bit values, the GPU ``pack_q`` layout for 4/2-bit ones)."""
    prof = get_profile(profile)
    bits = value.size_bits
    per_word = 32 // bits
    c = np.asarray(codes, dtype=np.int8).ravel()
    padded = np.zeros(-(-c.size // per_word) * per_word, dtype=np.uint32)
    padded[: c.size] = c.view(np.uint8) & ((1 << bits) - 1)
    lanes = padded.reshape(-1, per_word)
    shifts = prof.step(PACKING)(per_word, bits)
    return np.bitwise_or.reduce(lanes << shifts, axis=1).astype(np.uint32) if lanes.size else padded


def unpack_u32(words: np.ndarray, value: QuantValue, numel: int, *,
               profile: str | Profile = DEFAULT_PROFILE) -> np.ndarray:
    """The codes burn's public reader gives for u32 words of ``numel`` values (``unpack_q_to_i8s`` up to 0.22.1,
    one padded line of ``QuantizedBytes`` from 0.23.0-pre.1): see the profile's ``value_layout``."""
    prof = get_profile(profile)
    return prof.step(LAYOUTS).unpack_u32(np.asarray(words, dtype=np.uint32).ravel(), value, numel, prof)


def _lsb_first(per_word: int, bits: int) -> np.ndarray:
    return np.arange(per_word, dtype=np.uint32) * np.uint32(bits)


# The bit offset of each code of a word.
PACKING = FixedStep("packing", _lsb_first, "code k of a u32 word at bits [k*bits, (k+1)*bits)")
