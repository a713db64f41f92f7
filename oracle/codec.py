"""Bytes: stored scales, the ``TensorData`` layout of a quantized tensor, and u32 packing (spec §4.2, §7).

Layout written by ``QuantizedBytes::new`` (0.22.0-pre.3): ``[values | block scales | global]``, densely
concatenated, little-endian, no padding; values are one i8 per element whatever the store (this release does
not pack ``PackedU32`` data).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .blocks import num_params
from .choices import PACKING
from .errors import panic
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .qtensor import QTensor
from .rounding import round_up
from .scheme import QuantScheme, QuantValue, ScaleDtype

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
    if scheme.block_size() is None:
        if scales.size == 0:
            raise panic("scale.slice_out_of_bounds")
        scales = scales[:1]
    parts = [codes.ravel().view(np.uint8), encode_scales(scales, scheme.scale_dtype(), profile=prof)]
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
               profile: str | Profile = DEFAULT_PROFILE) -> QTensor:
    """``QuantizedBytes::into_vec_i8``: the values, block scales and global of ``data``. All bytes before the
    parameters are values, not truncated to the element count (4/2-bit PackedU32 words are unpacked flat), so
    ``codes`` has ``shape`` only when their count fills it, and is flat otherwise."""
    prof = get_profile(profile)
    raw = np.asarray(data, dtype=np.uint8).ravel()
    count = num_params(tuple(shape), scheme)
    glob_dtype = scheme.global_scale_dtype()
    glob_size = 0 if glob_dtype is None else glob_dtype.size
    scale_bytes = scheme.scale_dtype().size * count + glob_size
    store, value = scheme.store, scheme.value
    if store.kind == "PackedU32" and store.dim != 0:
        raise panic("bytes.packed_dim", left=store.dim, right=0)
    if store.kind == "PackedNative" or (store.kind == "PackedU32" and value.is_float):
        raise panic("bytes.unsupported_store")
    if raw.size < scale_bytes:
        raise panic("bytes.too_short")
    split = raw.size - scale_bytes
    values = raw[:split].view(np.int8).copy()
    if store.kind == "PackedU32" and value.size_bits < 8:
        if split % 4:
            raise panic("bytes.not_u32_multiple")
        values = unpack_u32(raw[:split].view("<u4").astype(np.uint32), value, math.prod(shape), profile=prof)
    params = raw[split:]
    block = decode_scales(params[: params.size - glob_size], scheme.scale_dtype(), profile=prof)
    glob = None if glob_dtype is None else decode_scales(params[params.size - glob_size:], glob_dtype, profile=prof)
    if values.size == math.prod(shape):
        values = values.reshape(shape)
    return QTensor(values, block, glob, scheme)


def into_data(qtensor: QTensor, *, profile: str | Profile = DEFAULT_PROFILE) -> QTensor:
    """What a user sees of a quantized tensor: ``into_data()`` (the CPU backends' ``q_into_data`` writes
    ``TensorData::quantized(values, shape, scheme, scales, global)``) read back with ``into_vec_i8``. It differs
    from what the backend holds only where the backend holds something its own bytes cannot say: flex keeps
    extra scales, whose bytes then read back as values. The GPU profile answers with its logical parts."""
    prof = get_profile(profile)
    if not prof.observes_through_bytes:
        return qtensor
    return from_bytes(to_bytes(qtensor, profile=prof), qtensor.codes.shape, qtensor.scheme, profile=prof)


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
    shifts = SHIFTS[prof.packing](per_word, bits)
    return np.bitwise_or.reduce(lanes << shifts, axis=1).astype(np.uint32) if lanes.size else padded


def unpack_u32(words: np.ndarray, value: QuantValue, numel: int, *,
               profile: str | Profile = DEFAULT_PROFILE) -> np.ndarray:
    """``unpack_q_to_i8s``: each word yields ``min(32/bits, numel - i*32/bits)`` sign-extended fields (in release
    builds the subtraction wraps, so surplus words yield whole words)."""
    prof = get_profile(profile)
    bits = value.size_bits
    per_word = 32 // bits
    w = np.asarray(words, dtype=np.uint32).ravel()
    shifts = SHIFTS[prof.packing](per_word, bits)
    fields = ((w[:, None] >> shifts) & np.uint32((1 << bits) - 1)).astype(np.uint8)
    signed = ((fields << (8 - bits)).view(np.int8) >> (8 - bits)).astype(np.int8)
    remaining = numel - np.arange(w.size, dtype=np.int64) * per_word
    taken = np.where(remaining < 0, per_word, np.minimum(per_word, remaining))  # usize wraps: a whole word
    return signed[np.arange(per_word) < taken[:, None]]


def _lsb_first(per_word: int, bits: int) -> np.ndarray:
    return np.arange(per_word, dtype=np.uint32) * np.uint32(bits)


# The bit offset of each code of a word, by packing order.
SHIFTS = PACKING.steps({"lsb_first": _lsb_first})
