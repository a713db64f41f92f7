"""``QTensor``: a quantized tensor as a backend holds it (its codes, stored scales, global and scheme)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .scheme import QuantScheme


@dataclass
class QTensor:
    """A quantized tensor: logical ``codes`` (int8, the tensor's shape), the stored ``scales`` (f32, flat
    row-major over the block grid), the two-level ``global_scale`` (f32 ``[1]``) and the ``scheme``."""

    codes: np.ndarray
    scales: np.ndarray
    global_scale: np.ndarray | None
    scheme: QuantScheme
    last_axis_moved: bool = False
    """A permute moved the innermost axis: a GPU tensor is then a strided view, whose kernels read one element per
    unit (``tensor_vector_size_parallel`` wants a unit stride)."""

    memory_axes: tuple[int, ...] | None = None
    """A GPU tensor's codes sit in device memory row-major, as they were loaded or quantized (of the shape
    ``codes.transpose(argsort(memory_axes))``); permutes only permute the strides. ``None``: row-major in the
    current shape (the identity)."""

    scale_rank: int | None = None
    """A GPU tensor's scale tensor's rank where ``q_reshape`` kept its shape (a 1-D block longer than the new last
    dim, burn-cubecl-0.22.1 ``ops/base.rs:411-425``); ``None``: the block grid's, the tensor's own rank."""

    undefined: str | None = None
    """Why the values it holds are undefined (``None``: they are not), e.g. a GPU reshape gave the scale tensor a
    block grid larger than its buffer (``scales`` is then the buffer). The host-side checks of later ops still run
    first; only a result its values reach is undefined."""

    @property
    def shape(self) -> tuple[int, ...]:
        return self.codes.shape
