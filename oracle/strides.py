"""burn-std's stride analysis: when a tensor's strides are row-major, and what a reshape does to a strided tensor
(keep it as metadata with new strides, or copy it). burn-cubecl runs it on every reshape, of a float tensor
(``oracle.views.view_strides``, ``reduce_blocks``' split in ``oracle.calibration``) and of a quantized one's values
(``oracle.layout_checks``).
"""

from __future__ import annotations

import math

import numpy as np

from .errors import panic


def row_major(shape) -> tuple[int, ...]:
    return tuple(int(v) for v in np.cumprod([1] + list(shape[::-1]))[:-1][::-1])


def is_contiguous(shape, strides, unit_free: bool) -> bool:
    """burn-std's ``is_contiguous``: every stride the row-major one; from 0.22.1 a size-1 dim's stride is never
    applied and so never compared (``unit_free``, ``Profile.contiguity_ignores_unit_dims``)."""
    return all(e == st or (unit_free and d == 1) for e, st, d in zip(row_major(shape), strides, shape))


def reshape_analysis(shape, strides, new, unit_free: bool) -> str:
    """burn-std's ``reshape_analysis`` of a tensor with ``strides`` towards ``new`` (burn-std-0.22.1
    src/tensor/mod.rs:229-288, the same in 0.22.0-pre.3 and 0.23.0-pre.1): ``contiguous``, ``smaller_rank``,
    ``nochange``, ``broadcasted`` (new leading unit dims), ``split`` (each old dim the product of a run of new
    ones) or ``highly_permuted``. Its split scan matches runs of new dims against the old ones and, once every old
    dim is matched, still reads the next: a 0-size dim matches early (0 == 0, or keeps the product 0), so a later
    non-unit dim indexes past the old shape, Rust's bounds check panics (found by fuzzing on burn-wgpu 0.22.1
    `vulkan`: a ``[4, 4, 0]`` permuted view split into ``[1, 4, 1, 4, 0, 2]``)."""
    shape, new = list(shape), list(new)
    if not shape or is_contiguous(shape, strides, unit_free):
        return "contiguous"
    if len(new) < len(shape):
        return "smaller_rank"
    lead = len(new) - len(shape)
    if lead == 0:
        return "nochange" if new == shape else "highly_permuted"
    if new[lead:] == shape and all(d == 1 for d in new[:lead]):
        return "broadcasted"
    prod, i = 1, 0
    for d in new:
        prod *= d
        if d == 1:
            continue
        if i == len(shape):
            raise panic("cubecl.reshape_analysis_index", len=len(shape), index=i)
        if prod == shape[i]:
            prod, i = 1, i + 1
        elif prod > shape[i]:
            return "highly_permuted"
    return "split"


def reshape_action(shape, strides, new, unit_free: bool) -> tuple[int, ...] | None:
    """burn-std's ``reshape_action``: the new strides where the reshape only rewrites metadata, ``None`` where
    burn-cubecl copies the tensor into a fresh contiguous one (``Recompute``; burn-cubecl-0.22.1
    src/ops/base.rs:308-336)."""
    kind = reshape_analysis(shape, strides, new, unit_free)
    if kind == "contiguous":
        return row_major(new)
    if kind == "nochange":
        return tuple(strides)
    if kind == "broadcasted":
        return (math.prod(shape),) * (len(new) - len(shape)) + tuple(strides)
    if kind == "split":
        return split_strides(shape, strides, new)
    return None


def split_strides(shape, strides, new) -> tuple[int, ...]:
    """burn-std's ``split_strides``: from the innermost dim out, each new dim takes the stride of the old dim it
    splits, times the new dims inside it; old unit dims never anchor a run (their stride may be anything)."""
    def skip_units(i):
        while i > 0 and shape[i] == 1:
            i -= 1
        return i
    out, i = [1] * len(new), skip_units(len(shape) - 1)
    stride, prod = strides[i], 1
    for k in range(len(new) - 1, -1, -1):
        prod *= new[k]
        out[k] = stride
        if new[k] == 1:
            continue
        if prod == shape[i]:
            i = skip_units(max(i - 1, 0))
            stride, prod = strides[i], 1
        else:
            stride *= new[k]
    return tuple(out)
