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

    @property
    def shape(self) -> tuple[int, ...]:
        return self.codes.shape
