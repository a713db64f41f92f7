"""Block layout: which block scale governs each element (spec §1.7, §1.8).

Blocks are N-D rectangles, not flat chunks: a ``[2, 2]`` block on a ``[2, 4]`` tensor holds elements 0, 1, 4, 5.
``block_of`` is burn's scalar definition; the vectorized paths below (views when every dim is a whole number of
blocks, a repeated scale grid otherwise) compute the same mapping without a per-element loop.
"""

from __future__ import annotations

import math

import numpy as np

from .scheme import BlockSize, QuantScheme


def params_shape(shape: tuple[int, ...], scheme: QuantScheme) -> list[int]:
    """The shape of the block-scale grid: ``[1]`` per-tensor, else ``num_blocks(shape)`` (the global of a
    two-level scheme is not part of it)."""
    size = scheme.block_size()
    return [1] if size is None else size.num_blocks(shape)


def num_params(shape: tuple[int, ...], scheme: QuantScheme) -> int:
    return math.prod(params_shape(shape, scheme))


def layout_of(shape: tuple[int, ...], scheme: QuantScheme) -> BlockLayout | WholeTensor:
    """The block layout of a block scheme; a per-tensor scheme is one block covering the tensor."""
    size = scheme.block_size()
    return WholeTensor(shape) if size is None else BlockLayout(shape, size)


class BlockLayout:
    """``BlockLayout::new(shape, block)``: extents per axis and the block grid."""

    def __init__(self, shape: tuple[int, ...], block: BlockSize):
        self.shape = tuple(int(d) for d in shape)
        self.block = block.to_dim_vec(len(self.shape))
        self.blocks = block.num_blocks(self.shape)

    def block_count(self) -> int:
        """How many blocks (scales) the tensor has: the product of ``BlockSize.num_blocks(shape)``."""
        return math.prod(self.blocks)

    def divides(self) -> bool:
        return all(d % b == 0 for d, b in zip(self.shape, self.block))

    def block_of(self, index: int) -> int:
        """Row-major element index → row-major block index (burn's loop, last dim first)."""
        block, stride = 0, 1
        for dim in reversed(range(len(self.shape))):
            coordinate = index % self.shape[dim]
            index //= self.shape[dim]
            block += coordinate // self.block[dim] * stride
            stride *= self.blocks[dim]
        return block

    def blocks_of(self, index: np.ndarray) -> np.ndarray:
        """:meth:`block_of` of many row-major indices at once."""
        coords = np.unravel_index(np.asarray(index, dtype=np.int64), self.shape)
        return np.ravel_multi_index([c // b for c, b in zip(coords, self.block)], self.blocks).astype(np.int64)

    def split_shape(self) -> list[int]:
        """``[n0, b0, n1, b1, ...]``: the view in which each block is a sub-array (divisible shapes only)."""
        return [v for d, b in zip(self.shape, self.block) for v in (d // b, b)]

    def per_element(self, grid: np.ndarray) -> np.ndarray:
        """The block values spread over the elements, as an array broadcastable against ``x`` reshaped with
        :meth:`element_view`."""
        grid = np.asarray(grid).reshape(self.blocks)
        if self.divides():
            return grid.reshape([v for n in self.blocks for v in (n, 1)])
        full = grid
        for axis, extent in enumerate(self.block):
            full = np.repeat(full, extent, axis=axis)
        return full[tuple(slice(0, d) for d in self.shape)]

    def spread(self, grid: np.ndarray) -> np.ndarray:
        """The block values as a full array of the tensor's shape (a read-only broadcast where possible)."""
        per = self.per_element(grid)
        return np.broadcast_to(per, self.split_shape()).reshape(self.shape) if self.divides() else per

    def element_view(self, x: np.ndarray) -> np.ndarray:
        """``x`` in the layout :meth:`per_element` broadcasts against."""
        return x.reshape(self.split_shape()) if self.divides() else x


class WholeTensor:
    """A per-tensor scheme's layout: one block covering the tensor (of any shape, empty included), with the
    interface of :class:`BlockLayout`."""

    def __init__(self, shape: tuple[int, ...]):
        self.shape = tuple(int(d) for d in shape)

    def block_count(self) -> int:
        return 1

    def divides(self) -> bool:
        return True

    def per_element(self, grid: np.ndarray) -> np.ndarray:
        return np.asarray(grid).reshape([1] * len(self.shape))

    def spread(self, grid: np.ndarray) -> np.ndarray:
        return np.broadcast_to(self.per_element(grid), self.shape)

    def element_view(self, x: np.ndarray) -> np.ndarray:
        return x


def kernel_scale_index(index: np.ndarray, shape: tuple[int, ...], block: BlockSize, scales_shape: tuple[int, ...]
                       ) -> np.ndarray:
    """Which scale of the given buffer burn-cubecl's ``BlockScaledLayout`` reads for the elements at row-major
    ``index``: it walks the *scale tensor's* dims, last first, dividing ``index`` by the tensor's extent of the
    same dim number and counting blocks with the scale tensor's strides (cubek-quant-0.3.0-pre.3
    src/layout/scales.rs:144-160, built from the scale binding at quantize.rs:331, :342). When the scale tensor
    has the tensor's rank (``params_shape``, what ``compute_q_params`` returns) that is the element's block;
    ``Tensor::quantize`` takes its scales as a ``Tensor<1>``, so on a tensor of rank >= 2 it walks only dim 0:
    element ``p`` reads scale ``(p mod shape[0]) // block[0]``."""
    extents = block.to_dim_vec(len(shape))
    strides = [math.prod(scales_shape[d + 1:]) for d in range(len(scales_shape))]
    offs, read = np.asarray(index, dtype=np.int64), np.zeros(np.shape(index), dtype=np.int64)
    for dim in reversed(range(len(scales_shape))):
        offs, local = np.divmod(offs, shape[dim])
        read += local // extents[dim] * strides[dim]
    return read


def kernel_block_start(index: np.ndarray, shape: tuple[int, ...], block: BlockSize, scales_shape: tuple[int, ...]
                       ) -> np.ndarray:
    """Whether ``BlockScaledLayout::is_block_start`` elects the unit at ``index`` to write its scale: the same
    walk as :func:`kernel_scale_index` (scales.rs:179-194)."""
    extents = block.to_dim_vec(len(shape))
    offs, start = np.asarray(index, dtype=np.int64), np.ones(np.shape(index), dtype=bool)
    for dim in reversed(range(len(scales_shape))):
        offs, local = np.divmod(offs, shape[dim])
        start &= local % extents[dim] == 0
    return start
