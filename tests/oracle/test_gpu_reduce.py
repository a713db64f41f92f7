"""cubek-reduce's reads on a strided input (``oracle/gpu_reduce.py``): on a contiguous tensor every output folds its
own elements; on permuted views with a unit dim, the element sets real burn read, measured on burn 0.22.1's SPIR-V
binary (lavapipe) by moving a single 1000.0 over every element of a zero tensor and seeing which positions reach
the per-tensor max."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from oracle.gpu_reduce import perpendicular_width, reduce_dim_reads, reduce_order
from oracle.strides import row_major

SIZES = [4, 2, 1]  # f32 on lavapipe's Vulkan device (128-bit loads, max_vector_size 4)


@pytest.mark.parametrize("shape", [(3,), (2, 4), (4, 1, 2, 4), (2, 3, 4), (1, 8, 1), (5, 2, 2, 1)])
def test_a_contiguous_tensor_reads_its_own_elements(shape):
    index = np.arange(int(np.prod(shape))).reshape(shape)
    for axis in range(len(shape)):
        want = np.expand_dims(np.moveaxis(index, axis, -1), axis)
        assert np.array_equal(reduce_dim_reads(shape, row_major(shape), axis, SIZES), want)


def _first_pass(shape, axes):
    base = row_major(shape)
    view, strides = tuple(shape[a] for a in axes), tuple(base[a] for a in axes)
    return sorted(set(reduce_dim_reads(view, strides, reduce_order(view)[0], SIZES).ravel().tolist()))


HALF_BY_ROWS = [*range(0, 4), *range(8, 12), *range(16, 20), *range(24, 28)]
HALF_BY_BLOCKS = [*range(0, 8), *range(16, 24)]


@pytest.mark.parametrize("axes, read", [
    ((0, 1, 3, 2), HALF_BY_ROWS), ((0, 3, 1, 2), HALF_BY_ROWS), ((0, 3, 2, 1), HALF_BY_ROWS),
    ((1, 3, 2, 0), HALF_BY_BLOCKS), ((3, 1, 2, 0), HALF_BY_BLOCKS), ((3, 2, 0, 1), HALF_BY_BLOCKS),
    ((3, 2, 1, 0), HALF_BY_BLOCKS),
])
def test_permuted_views_with_a_unit_dim_read_what_burn_read(axes, read):
    # x [4, 1, 2, 4], contiguous; every one of these views reads 16 of its 32 elements
    assert _first_pass((4, 1, 2, 4), axes) == read


def test_other_shapes_burn_read():
    assert _first_pass((3, 1, 2, 4), (1, 3, 2, 0)) == [*range(0, 4), *range(12, 20)]
    assert _first_pass((4, 2, 4), (2, 1, 0)) == list(range(32))  # no unit dim: everything


def test_the_width_counts_an_axis_outside_the_common_run():
    # [4, 1, 4, 2] with strides [8, 8, 1, 4], reducing the unit dim: by stride the input orders its axes 2, 3, 0 and
    # the contiguous output 3, 2, 0; only axis 0 sits at the same place, and cubek counts it: width 4
    assert perpendicular_width((4, 1, 4, 2), (8, 8, 1, 4), 1, SIZES) == 4
    # a stride that is not the product of the dims inside it reads one element per unit
    assert perpendicular_width((4, 1, 2, 4), (8, 16, 4, 1), 1, SIZES) == 1


def test_every_element_is_read_once_without_vectors():
    for axes in itertools.permutations(range(3)):
        base = row_major((2, 3, 4))
        view, strides = tuple((2, 3, 4)[a] for a in axes), tuple(base[a] for a in axes)
        reads = reduce_dim_reads(view, strides, reduce_order(view)[0], [1])
        assert sorted(reads.ravel().tolist()) == list(range(24))
