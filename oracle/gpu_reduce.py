"""Which input elements burn-cubecl's reductions fold: cubek-reduce's unit routine on a strided input.

burn-cubecl reduces one axis per launch (``reduce_dim``; a full ``float_min``/``float_max`` reduces every axis in
turn, smallest first: burn-cubecl-0.22.1 src/kernel/reduce/base.rs:170-185, :377-381). An axis of stride 1 is read
*parallel*, any other *perpendicular*: each unit folds a vector of ``V`` elements adjacent in memory, one vector per
step along the reduced axis, and writes them to ``V`` adjacent outputs (cubek-reduce-0.3.1 src/launch/base.rs:95-98,
src/components/readers/perpendicular.rs:40-67, src/components/writers/layout.rs). Where memory's adjacent elements are
not the output's, a unit's vector folds other elements than its outputs': ``V`` is bounded by the axes that come in
the same order in the input's and the output's strides, but cubek counts every such axis, not only a common run of
the smallest (``generate_vector_size``: ``filter_map`` where the comment says "the head of each list until they are
different", src/launch/utils.rs:57-95), and a unit's start offset is divided down to a whole vector. The same code in
cubek-reduce 0.3.0-pre.3 and 0.4.0-pre.1. Found by fuzzing burn 0.22.1's SPIR-V binary (seed 20261212): the per-tensor
range of a permuted view with a unit dim read half the tensor.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import UndefinedBehaviour
from .strides import row_major


def reduce_order(shape) -> list[int]:
    """The axes a full reduction folds, in order: burn-cubecl's ``argsort`` of the shape (stable)."""
    return sorted(range(len(shape)), key=lambda a: shape[a])


def perpendicular_width(shape, strides, axis: int, sizes: list[int]) -> int:
    """``generate_vector_size`` in perpendicular mode on a GPU (no CPU cores reported), with the output contiguous:
    the widest of ``sizes`` that divides the bound and the reduced axis' stride, where the stride is the product of
    the dims inside it (``tensor_vector_size_perpendicular``, cubecl-core-0.11.3 src/lib.rs:185-220), else 1."""
    out = [1 if a == axis else n for a, n in enumerate(shape)]
    out_strides = row_major(out)
    inside = [a for a in sorted(range(len(shape)), key=lambda a: strides[a])]
    inside = inside[:inside.index(axis)]
    outside = [a for a in sorted(range(len(shape)), key=lambda a: out_strides[a]) if a != axis]
    bound = math.prod(out[i] for i, o in zip(inside, outside) if i == o)
    step = strides[axis]
    if step != math.prod(n for n, st in zip(shape, strides) if st < step):
        return 1
    return max((v for v in sizes if v <= bound and bound % v == 0 and step % v == 0), default=1)


def reduce_dim_reads(shape, strides, axis: int, sizes: list[int]) -> np.ndarray:
    """The memory offsets each output element of ``reduce_dim(axis)`` folds, shaped ``[*output, shape[axis]]`` (the
    output is ``shape`` with ``axis`` at 1, contiguous). Parallel reads are the logical ones."""
    out = tuple(1 if a == axis else n for a, n in enumerate(shape))
    k = np.arange(shape[axis])
    if strides[axis] == 1 or not math.prod(out):
        coords = np.indices(out).reshape(len(shape), -1)
        base = (coords * np.asarray(strides)[:, None]).sum(axis=0)
        return (base[:, None] + k[None, :] * strides[axis]).reshape(*out, len(k))
    width = perpendicular_width(shape, strides, axis, sizes)
    first = np.arange(0, math.prod(out), width)  # each unit's first output element
    coords = np.stack(np.unravel_index(first, out))
    start = (coords * np.asarray(strides)[:, None]).sum(axis=0) // width * width
    lane = start[:, None] + np.arange(width)[None, :]  # [units, V]: the vector's elements in memory
    reads = lane[:, :, None] + (k * (strides[axis] // width * width))[None, None, :]
    return reads.reshape(-1, len(k))[:math.prod(out)].reshape(*out, len(k))


def memory(x: np.ndarray, strides) -> tuple[np.ndarray, np.ndarray]:
    """The buffer a view ``x`` with ``strides`` lies in, rebuilt from the view (``buffer[sum(c * strides)] = x[c]``),
    and which of its elements the view covers."""
    offsets = (np.indices(x.shape).reshape(x.ndim, -1) * np.asarray(strides, dtype=np.int64)[:, None]).sum(axis=0)
    size = int(offsets.max()) + 1 if offsets.size else 0
    buffer, covered = np.zeros(size, x.dtype), np.zeros(size, np.bool_)
    buffer[offsets], covered[offsets] = x.reshape(-1), True
    return buffer, covered


def gather(buffer: np.ndarray, covered: np.ndarray, reads: np.ndarray) -> np.ndarray:
    """The elements at ``reads``; one the view does not cover is memory the oracle cannot know."""
    if reads.size and (reads.max() >= buffer.size or not covered[reads].all()):
        raise UndefinedBehaviour("a strided reduction reads memory outside the view (cubek-reduce's perpendicular "
                                 "vectors start at a whole vector below the view's element)")
    return buffer[reads]
