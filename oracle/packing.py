"""Packed lines: how burn-std >= 0.23.0-pre.1 lays the values of a packed store out in ``TensorData`` bytes.

``QuantizedBytes::new`` packs a ``PackedU32(d)`` / ``PackedNative(d)`` tensor as cubecl stores it
(``burn-std-0.23.0-pre.1/src/tensor/quantization/packing.rs``): the packed axis (``d`` counted from the innermost)
is *swapped* with the innermost axis, the result is read row-major as lines along that axis, and each line is
packed into little-endian words (value ``k`` of a word at bits ``[k*bits, (k+1)*bits)``), its last word padded with
zeros. Block scales of a block scheme packed along an outer axis (``d != 0``) are stored in the same order over the
block grid. Reading back sign-extends integer fields and keeps a float code's bits (an E2M1 code is its nibble).

Up to 0.22.1 values were one byte each whatever the store (``codec.py``); the profile field ``value_layout``
picks between the two.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import panic
from .scheme import QuantScheme


def packed_order(dims: tuple[int, ...], packed_dim: int) -> np.ndarray:
    """``PackedOrder::new(dims, packed_dim)``: the row-major positions of a tensor of ``dims`` in stored order, as
    a ``[lines, line_len]`` array (a scalar is one line of one value)."""
    dims = tuple(dims) or (1,)
    if packed_dim >= len(dims):
        raise panic("bytes.packed_dim_rank", packed_dim=packed_dim, rank=len(dims))
    axis = len(dims) - packed_dim - 1
    positions = np.arange(math.prod(dims), dtype=np.int64).reshape(dims)
    # The line count is spelled out: numpy cannot infer a -1 next to a zero-length line (an empty tensor).
    line_count = math.prod(d for i, d in enumerate(dims) if i != axis)
    return np.swapaxes(positions, axis, -1).reshape(line_count, dims[axis])


def word_layout(scheme: QuantScheme) -> tuple[int, int, int]:
    """``PackedWordLayout``: (bits per value, values per word, bytes per word). ``PackedU32`` words are u32s;
    ``PackedNative`` words are the value's native pack (a byte of two E2M1 codes, a byte per other value)."""
    bits = scheme.value.size_bits
    word_bits = scheme.store.size_bits(scheme.value)
    return bits, word_bits // bits, -(-word_bits // 8)


def pack_lines(codes: np.ndarray, order: np.ndarray, scheme: QuantScheme) -> np.ndarray:
    """``PackedOrder::pack``: the value bytes of a packed store whose lines are ``order`` (``[lines, line_len]``
    row-major positions, :func:`packed_order`'s), every line padded to whole words."""
    bits, per_word, word_bytes = word_layout(scheme)
    flat = np.asarray(codes, dtype=np.int8).ravel()
    n_lines, length = order.shape
    words_per_line = -(-length // per_word)
    fields = np.zeros((n_lines, words_per_line * per_word), dtype=np.uint32)
    fields[:, :length] = flat.view(np.uint8)[order] & ((1 << bits) - 1)
    shifts = np.arange(per_word, dtype=np.uint32) * bits
    words = np.bitwise_or.reduce(fields.reshape(n_lines, words_per_line, per_word) << shifts, axis=2)
    le = words.astype("<u4").reshape(-1).view(np.uint8).reshape(-1, 4)[:, :word_bytes]
    return np.ascontiguousarray(le).ravel()


def value_bytes(shape: tuple[int, ...], scheme: QuantScheme) -> int:
    """Bytes :func:`pack_lines` writes for a tensor of ``shape`` in burn's lines (``storage_elements`` times the
    word size)."""
    _, per_word, word_bytes = word_layout(scheme)
    dims = list(shape) or [1]
    axis = len(dims) - scheme.store.dim - 1
    dims[axis] = -(-dims[axis] // per_word)
    return math.prod(dims) * word_bytes


def unpack_lines(data: np.ndarray, shape: tuple[int, ...], order: np.ndarray, scheme: QuantScheme) -> np.ndarray:
    """``PackedOrder::unpack``: the row-major codes of ``data`` (exactly its lines' bytes long), read in the lines
    ``order``."""
    bits, per_word, word_bytes = word_layout(scheme)
    n_lines, length = order.shape
    words_per_line = -(-length // per_word)
    padded = np.zeros((n_lines * words_per_line, 4), dtype=np.uint8)
    padded[:, :word_bytes] = np.asarray(data, dtype=np.uint8).reshape(-1, word_bytes)
    words = padded.view("<u4").astype(np.uint32).reshape(n_lines, words_per_line, 1)
    shifts = np.arange(per_word, dtype=np.uint32) * bits
    fields = ((words >> shifts) & np.uint32((1 << bits) - 1)).astype(np.uint8).reshape(n_lines, words_per_line * per_word)[:, :length]
    if not scheme.value.is_float:  # sign-extend an integer field; a float code is its bits
        fields = ((fields << (8 - bits)).view(np.int8) >> (8 - bits)).view(np.uint8)
    out = np.zeros(math.prod(shape), dtype=np.uint8)
    out[order] = fields
    return out.view(np.int8)


def block_scale_order(shape: tuple[int, ...], scheme: QuantScheme) -> np.ndarray | None:
    """``ValueLayout::block_scale_order``: the stored order of the block scales (positions in the row-major block
    grid), for a block scheme packed along an outer axis; None when they are stored row-major."""
    size = scheme.block_size()
    if not scheme.store.packs_outer_dim or size is None:
        return None
    return packed_order(tuple(size.num_blocks(shape)), scheme.store.dim).ravel()
