"""burn-std's reshape analysis (``oracle/strides.py``), on hand-worked strides: burn-std's own test shapes
(``src/tensor/mod.rs`` tests) and the fuzzed case whose split scan runs past the old shape."""

from __future__ import annotations

import pytest

from oracle.errors import BurnPanic
from oracle.strides import is_contiguous, reshape_action, reshape_analysis, split_strides
from oracle.views import view_strides


def test_unit_dims_and_contiguity():
    # [32, 1, 1, 1] with strides [1, 32, 32, 32]: only dim 0 is ever indexed (burn-std 0.22.1), but pre.3 compares
    assert is_contiguous((32, 1, 1, 1), (1, 32, 32, 32), unit_free=True)
    assert not is_contiguous((32, 1, 1, 1), (1, 32, 32, 32), unit_free=False)
    assert reshape_analysis((32, 1, 1, 1), (1, 32, 32, 32), (4, 8, 1, 1, 1), True) == "contiguous"


@pytest.mark.parametrize("new, kind", [
    ((1, 32, 32), "broadcasted"),  # leading unit dims, the rest unchanged
    ((32, 32, 1), "split"),  # a trailing unit dim matches no old dim
    ((4, 8, 32), "split"),  # 4 * 8 = 32, then 32
    ((8, 4, 32), "split"),
    ((64, 16), "highly_permuted"),  # same rank, another shape
    ((32, 32), "nochange"),
    ((1024,), "smaller_rank"),
    ((2, 32, 16), "highly_permuted"),  # 2 * 32 = 64 > 32: no run of new dims makes the old dim
])
def test_transposed_square(new, kind):
    assert reshape_analysis((32, 32), (1, 32), new, True) == kind


def test_actions_give_strides_or_a_copy():
    assert reshape_action((32, 32), (1, 32), (1, 32, 32), True) == (1024, 1, 32)
    # [4, 8] split from the old dim 0 of stride 1: 8 keeps 1, 4 steps over 8 of them; 32 keeps its stride 32
    assert reshape_action((32, 32), (1, 32), (4, 8, 32), True) == (8, 1, 32)
    assert reshape_action((32, 32), (1, 32), (64, 16), True) is None
    assert reshape_action((2, 3), (3, 1), (3, 2), True) == (2, 1)  # contiguous: row-major for the new shape


def test_split_strides_skip_old_unit_dims():
    # [26, 1] with strides [1, 0] (a repeat_dim broadcast view) to [26, 1, 1]: dim 0 keeps stride 1, not the 0
    assert split_strides((26, 1), (1, 0), (26, 1, 1)) == (1, 1, 1)


def test_a_zero_size_dim_runs_the_split_scan_past_the_old_shape():
    # x [4, 0, 4] (strides [0, 4, 1]) permuted [0, 2, 1]: [4, 4, 0] with strides [0, 1, 4], not contiguous. Its block
    # split [1, 4, 1, 4, 0, 2]: 4 matches dim 0, 4 dim 1, 0 dim 2, then the 2 reads shape[3] of a rank-3 shape
    with pytest.raises(BurnPanic) as e:
        reshape_analysis((4, 4, 0), (0, 1, 4), (1, 4, 1, 4, 0, 2), True)
    assert e.value.message == "index out of bounds: the len is 3 but the index is 3"
    # contiguous, the same shape never reaches the scan
    assert reshape_analysis((4, 4, 0), (0, 0, 1), (1, 4, 1, 4, 0, 2), True) == "contiguous"


def test_a_view_reshape_keeps_strides_where_burn_does():
    # [2, 3] transposed ([3, 2], strides [1, 3]) then unsqueezed: a metadata update, not a copy
    assert view_strides((2, 3), [{"op": "transpose"}, {"op": "reshape", "shape": [1, 3, 2]}]) == (6, 1, 3)
    # transposed then flattened: a smaller rank, copied (row-major)
    assert view_strides((2, 3), [{"op": "transpose"}, {"op": "reshape", "shape": [6]}]) == (1,)


def test_an_empty_slice_is_a_fresh_tensor():
    # [3, 2, 5] sliced to [0, 2, 5] is a fresh empty tensor (strides [10, 5, 1]), permuted [0, 2, 1]: [0, 5, 2] with
    # strides [10, 1, 5]; sliced again on its size-0 dim, burn-tensor returns another fresh one, row-major [10, 2, 1]
    # (found by fuzzing: a permuted stride there runs the split scan past the shape, and burn did not panic)
    steps = [{"op": "slice", "ranges": [[4, -2, -2]]}, {"op": "permute", "axes": [0, 2, 1]}]
    assert view_strides((3, 2, 5), steps) == (10, 1, 5)
    assert view_strides((3, 2, 5), steps + [{"op": "slice", "ranges": [[0, -1, 1]]}]) == (10, 2, 1)
