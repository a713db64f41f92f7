"""Every layout step and view of the oracle against numbers written by hand from burn's ``Tensor`` docs (issue 26).

The expectations are literal lists, worked from burn-tensor's documented semantics of each call (``reshape``
keeps the row-major order, ``flip`` reverses every listed axis, ``slice`` takes ``start..end`` by ``step``,
``cat``/``repeat_dim`` append whole copies along a dim, ``gather`` reads ``x[.., idx[i], ..]`` per element, ...),
never from the oracle: a step that goes wrong in the oracle fails here even when the golden vectors were
regenerated with it. Floats are compared on bit patterns.
"""

import numpy as np
import pytest

import oracle as o
from oracle import QuantScheme, QuantValue, ScaleDtype
from oracle.views import apply, is_identity, vecmat_swap, view, view_strides

# x2 = [[0, 1, 2], [3, 4, 5]]; x3[i][j][k] = 100 i + 10 j + k (shape [2, 3, 2]): each digit names its index.
X2 = np.arange(6, dtype=np.float32).reshape(2, 3)
X3 = np.array([[[100 * i + 10 * j + k for k in range(2)] for j in range(3)] for i in range(2)], np.float32)


def bits(a) -> list:
    return np.ascontiguousarray(np.asarray(a, np.float32)).view(np.uint32).tolist()


def same(actual, expected):
    expected = np.asarray(expected, np.float32)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert bits(actual) == bits(expected), (actual.tolist(), expected.tolist())


STEPS_2D = [
    ({"op": "reshape", "shape": [3, 2]}, [[0, 1], [2, 3], [4, 5]]),
    ({"op": "reshape", "shape": [6]}, [0, 1, 2, 3, 4, 5]),
    ({"op": "reshape", "shape": [1, 2, 3]}, [[[0, 1, 2], [3, 4, 5]]]),
    ({"op": "transpose"}, [[0, 3], [1, 4], [2, 5]]),
    ({"op": "swap_dims", "dims": [1, 0]}, [[0, 3], [1, 4], [2, 5]]),
    ({"op": "swap_dims", "dims": [1, 1]}, [[0, 1, 2], [3, 4, 5]]),
    ({"op": "permute", "axes": [1, 0]}, [[0, 3], [1, 4], [2, 5]]),
    ({"op": "flip", "axes": [0]}, [[3, 4, 5], [0, 1, 2]]),
    ({"op": "flip", "axes": [1]}, [[2, 1, 0], [5, 4, 3]]),
    ({"op": "flip", "axes": [0, 1]}, [[5, 4, 3], [2, 1, 0]]),
    ({"op": "slice", "ranges": [[1, 2, 1]]}, [[3, 4, 5]]),  # fewer ranges than dims: the rest whole
    ({"op": "slice", "ranges": [[0, 2, 1], [1, 3, 1]]}, [[1, 2], [4, 5]]),
    ({"op": "slice", "ranges": [[0, 2, 1], [0, 3, 2]]}, [[0, 2], [3, 5]]),
    ({"op": "slice", "ranges": [[0, 2, 2], [1, 3, 1]]}, [[1, 2]]),
    ({"op": "select", "dim": 0, "indices": [1, 1, 0]}, [[3, 4, 5], [3, 4, 5], [0, 1, 2]]),
    ({"op": "select", "dim": 1, "indices": [2, 0]}, [[2, 0], [5, 3]]),
    ({"op": "gather", "dim": 1, "indices": [2, 0, 1, 1], "shape": [2, 2]}, [[2, 0], [4, 4]]),
    ({"op": "gather", "dim": 0, "indices": [1, 0, 1], "shape": [1, 3]}, [[3, 1, 5]]),
    ({"op": "gather", "dim": 0, "indices": [1, 1, 1, 0, 0, 0], "shape": [2, 3]}, [[3, 4, 5], [0, 1, 2]]),
    ({"op": "cat", "dim": 0, "copies": 2}, [[0, 1, 2], [3, 4, 5], [0, 1, 2], [3, 4, 5]]),
    ({"op": "cat", "dim": 1, "copies": 2}, [[0, 1, 2, 0, 1, 2], [3, 4, 5, 3, 4, 5]]),
    ({"op": "cat", "dim": 1, "copies": 1}, [[0, 1, 2], [3, 4, 5]]),
    ({"op": "repeat_dim", "dim": 0, "times": 3}, [[0, 1, 2], [3, 4, 5]] * 3),
    ({"op": "repeat_dim", "dim": 1, "times": 2}, [[0, 1, 2, 0, 1, 2], [3, 4, 5, 3, 4, 5]]),
    ({"op": "mul_scalar", "value": -0.5}, [[-0.0, -0.5, -1], [-1.5, -2, -2.5]]),
    ({"op": "matmul", "rhs": [1, 0, 0, 1, 1, 1], "shape": [3, 2]}, [[2, 3], [8, 9]]),
]


@pytest.mark.parametrize("step,expected", STEPS_2D, ids=lambda v: v.get("op") if isinstance(v, dict) else "")
def test_step_on_a_2x3_tensor(step, expected):
    same(apply(X2, step), expected)


STEPS_3D = [
    ({"op": "transpose"}, [[[0, 10, 20], [1, 11, 21]], [[100, 110, 120], [101, 111, 121]]]),
    ({"op": "swap_dims", "dims": [0, 2]}, [[[0, 100], [10, 110], [20, 120]], [[1, 101], [11, 111], [21, 121]]]),
    # permute(axes): out dim i is input dim axes[i], so out[k][i][j] = x[i][j][k]
    ({"op": "permute", "axes": [2, 0, 1]}, [[[0, 10, 20], [100, 110, 120]], [[1, 11, 21], [101, 111, 121]]]),
    ({"op": "permute", "axes": [1, 2, 0]}, [[[0, 100], [1, 101]], [[10, 110], [11, 111]], [[20, 120], [21, 121]]]),
    ({"op": "flip", "axes": [0, 2]}, [[[101, 100], [111, 110], [121, 120]], [[1, 0], [11, 10], [21, 20]]]),
    ({"op": "flip", "axes": [0, 1, 2]}, [[[121, 120], [111, 110], [101, 100]], [[21, 20], [11, 10], [1, 0]]]),
    ({"op": "flip", "axes": [1]}, [[[20, 21], [10, 11], [0, 1]], [[120, 121], [110, 111], [100, 101]]]),
    ({"op": "slice", "ranges": [[1, 2, 1], [0, 3, 2]]}, [[[100, 101], [120, 121]]]),
    ({"op": "slice", "ranges": [[0, 2, 1], [1, 3, 1], [1, 2, 1]]}, [[[11], [21]], [[111], [121]]]),
    ({"op": "select", "dim": 2, "indices": [1]}, [[[1], [11], [21]], [[101], [111], [121]]]),
    ({"op": "gather", "dim": 1, "indices": [2, 0, 1, 1], "shape": [2, 1, 2]}, [[[20, 1]], [[110, 111]]]),
    ({"op": "cat", "dim": 0, "copies": 2},
     [[[0, 1], [10, 11], [20, 21]], [[100, 101], [110, 111], [120, 121]]] * 2),
    ({"op": "cat", "dim": 1, "copies": 2},
     [[[0, 1], [10, 11], [20, 21]] * 2, [[100, 101], [110, 111], [120, 121]] * 2]),
    ({"op": "cat", "dim": 2, "copies": 3},
     [[[0, 1] * 3, [10, 11] * 3, [20, 21] * 3], [[100, 101] * 3, [110, 111] * 3, [120, 121] * 3]]),
    ({"op": "repeat_dim", "dim": 1, "times": 2},
     [[[0, 1], [10, 11], [20, 21]] * 2, [[100, 101], [110, 111], [120, 121]] * 2]),
    ({"op": "reshape", "shape": [3, 4]}, [[0, 1, 10, 11], [20, 21, 100, 101], [110, 111, 120, 121]]),
]


@pytest.mark.parametrize("step,expected", STEPS_3D, ids=lambda v: v.get("op") if isinstance(v, dict) else "")
def test_step_on_a_2x3x2_tensor(step, expected):
    same(apply(X3, step), expected)


def test_expand_broadcasts_unit_dims_and_adds_leading_ones():
    row = X2[:1]  # [[0, 1, 2]]
    same(apply(row, {"op": "expand", "shape": [2, 3]}), [[0, 1, 2], [0, 1, 2]])
    col = np.array([[7], [8]], np.float32)
    same(apply(col, {"op": "expand", "shape": [2, 2, 3]}), [[[7, 7, 7], [8, 8, 8]]] * 2)


def test_matmul_rounds_the_exact_product_once():
    """[1 + 2^-12, 2^-15] . [1 + 2^-12, 2^-15] is 1 + 2^-11 + 2^-24 + 2^-30 exactly, just above the tie between
    1 + 2^-11 and 1 + 2^-11 + 2^-23, so it rounds up: 0x3F801001. In f32 the first product is the tie itself and
    rounds to even (1 + 2^-11, 0x3F801000); the 2^-30 then cannot lift it."""
    lhs = np.array([[1 + 2.0**-12, 2.0**-15]], np.float32)
    out = apply(lhs, {"op": "matmul", "rhs": [1 + 2.0**-12, 2.0**-15], "shape": [2, 1]})
    assert bits(out) == [[0x3F801001]]


def test_mul_scalar_rounds_in_f32():
    """f32(0.1) * 3 = 40265319 * 2^-27, rounded to 24 bits: 10066330 * 2^-25 = 0x3E99999A."""
    out = apply(np.array([0.1], np.float32), {"op": "mul_scalar", "value": 3.0})
    assert bits(out) == [0x3E99999A]


def test_a_chain_is_each_step_in_order():
    # transpose [[0, 3], [1, 4], [2, 5]], flip rows -> [[2, 5], [1, 4], [0, 3]], then rows 0 and 2 of it
    chain = [{"op": "transpose"}, {"op": "flip", "axes": [0]}, {"op": "slice", "ranges": [[0, 3, 2]]}]
    out = view(X2, chain)
    same(out, [[2, 5], [0, 3]])
    assert out.flags["C_CONTIGUOUS"]


def test_view_strides_follow_burn_cubecl_metadata():
    assert view_strides((2, 3), []) == (3, 1)
    assert view_strides((2, 3), [{"op": "transpose"}]) == (1, 3)
    assert view_strides((2, 3, 4), [{"op": "permute", "axes": [2, 0, 1]}]) == (1, 12, 4)
    assert view_strides((2, 3, 4), [{"op": "swap_dims", "dims": [0, 1]}]) == (4, 12, 1)
    assert view_strides((1, 3), [{"op": "expand", "shape": [2, 3]}]) == (0, 1)
    assert view_strides((2, 1), [{"op": "expand", "shape": [4, 2, 3]}]) == (0, 1, 0)
    assert view_strides((2, 3), [{"op": "slice", "ranges": [[0, 2, 1], [0, 3, 1]]}]) == (3, 1)  # whole: kept
    assert view_strides((2, 3), [{"op": "transpose"}, {"op": "slice", "ranges": [[0, 3, 1]]}]) == (1, 3)
    assert view_strides((2, 3), [{"op": "slice", "ranges": [[0, 2, 1], [0, 2, 1]]}]) == (2, 1)  # copied
    assert view_strides((2, 3), [{"op": "transpose"}, {"op": "flip", "axes": [0]}]) == (2, 1)  # copied
    assert view_strides((2, 3), [{"op": "cat", "dim": 0, "copies": 2}]) == (3, 1)


def test_identity_steps_and_the_vecmat_turn():
    assert is_identity({"op": "swap_dims", "dims": [1, 1]}, 2)
    assert is_identity({"op": "permute", "axes": [0, 1, 2]}, 3)
    assert not is_identity({"op": "permute", "axes": [0, 2, 1]}, 3)
    assert not is_identity({"op": "transpose"}, 2)
    mm = {"op": "matmul", "rhs": [0.0] * 6, "shape": [1, 3, 2]}
    assert vecmat_swap(mm, (2, 1, 3)) == {"op": "swap_dims", "dims": [0, 1]}
    assert vecmat_swap(mm, (2, 2, 3)) is None  # two rows: no turn
    assert vecmat_swap({"op": "matmul", "rhs": [0.0] * 6, "shape": [3, 2]}, (1, 3)) is None  # rank 2


def test_an_unknown_step_is_named_and_an_empty_range_gives_an_empty_tensor():
    with pytest.raises(ValueError, match="unknown layout step 'roll'"):
        apply(np.zeros((2, 3), np.float32), {"op": "roll"})
    # burn's Slice: start 1, end 1 along dim 0 is empty, dim 1 kept whole
    assert view(np.zeros((2, 3), np.float32), [{"op": "slice", "ranges": [[1, 1, 1]]}]).shape == (0, 3)


# --- the same steps on quantized tensors, as each backend routes them (spec §9.1-9.3) -------------------------

NDARRAY, FLEX = "burn-0.22.0-pre.3/ndarray", "burn-0.22.0-pre.3/flex"
Q8S = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S)
BLOCK2 = Q8S.per_block([2], ScaleDtype.F32)
CODES = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.int8)


def qlayout(scheme, codes, scales, steps, profile):
    return o.run("qlayout", {"scheme": scheme.to_json(), "steps": steps},
                 {"codes": codes, "scales": np.asarray(scales, np.float32)}, profile=profile)


@pytest.mark.parametrize("profile", [NDARRAY, FLEX])
def test_per_tensor_flip_of_both_axes_moves_the_codes(profile):
    out = qlayout(Q8S, CODES, [0.5], [{"op": "flip", "axes": [0, 1]}], profile)
    assert out["codes"].tolist() == [[8, 7, 6, 5], [4, 3, 2, 1]]
    assert out["scales"].tolist() == [0.5]
    same(out["x"], [[4, 3.5, 3, 2.5], [2, 1.5, 1, 0.5]])


def test_ndarray_block_flip_of_both_axes_keeps_the_scale_list():
    """scales [1, 2, 3, 4] per block of 2 stay in place while the codes reverse: [[8, 7 | 6, 5], [4, 3 | 2, 1]]
    meet 1, 2, 3, 4."""
    out = qlayout(BLOCK2, CODES, [1, 2, 3, 4], [{"op": "flip", "axes": [0, 1]}], NDARRAY)
    assert out["codes"].tolist() == [[8, 7, 6, 5], [4, 3, 2, 1]]
    assert out["scales"].tolist() == [1, 2, 3, 4]
    same(out["x"], [[8, 7, 12, 10], [12, 9, 8, 4]])


def test_flex_block_flip_of_both_axes_requantizes_what_the_user_sees():
    """flex dequantizes ([[1, 2, 6, 8], [15, 18, 28, 32]]), flips ([[32, 28, 18, 15], [8, 6, 2, 1]]) and
    requantizes each block of 2 symmetric: scale = max|x| / 127, code = round(x / scale)."""
    out = qlayout(BLOCK2, CODES, [1, 2, 3, 4], [{"op": "flip", "axes": [0, 1]}], FLEX)
    maxima = np.array([32, 18, 8, 2], np.float32)
    scales = maxima / np.float32(127)  # one f32 division of the same rational as 2 max / 254
    assert bits(out["scales"]) == bits(scales)
    # x / s for [32, 28 | 18, 15 | 8, 6 | 2, 1]: 127, 111.125, 127, 105.83, 127, 95.25, 127, 63.5 -> half away
    assert out["codes"].tolist() == [[127, 111, 127, 106], [127, 95, 127, 64]]


@pytest.mark.parametrize("profile", [NDARRAY, FLEX])
def test_per_tensor_cat_along_rows_requantizes_the_doubled_tensor(profile):
    """q_cat is the trait default (dequantize, cat, quantize_dynamic): codes [[64, -30]] at 0.5 hold [32, -15];
    stacked along dim 0 and requantized, max|x| = 32 gives scale 32/127 and codes 127, -59.53 -> -60."""
    codes = np.array([[64, -30]], np.int8)
    out = qlayout(Q8S, codes, [0.5], [{"op": "cat", "dim": 0, "copies": 2}], profile)
    assert out["codes"].tolist() == [[127, -60], [127, -60]]
    assert bits(out["scales"]) == bits([np.float32(32) / np.float32(127)])


def test_per_tensor_repeat_dim_along_columns_tiles_the_row():
    codes = np.array([[64, -30], [1, 2]], np.int8)
    out = qlayout(Q8S, codes, [0.5], [{"op": "repeat_dim", "dim": 1, "times": 2}], NDARRAY)
    # [[32, -15, 32, -15], [0.5, 1, 0.5, 1]] at 32/127: 0.5 / (32/127) = 1.98 -> 2, 1 -> 3.97 -> 4
    assert out["codes"].tolist() == [[127, -60, 127, -60], [2, 4, 2, 4]]


def test_ndarray_block_permute_of_rank_3_moves_the_scale_grid():
    """codes [1, 2, 4] with blocks [1, 1, 2]: scales s[i][j] for block (i, j); permute [1, 0, 2] swaps the grid's
    first two axes: [[10, 20], [30, 40]]^T flattened is [10, 30, 20, 40]."""
    codes = np.array([[[1, 2, 3, 4], [5, 6, 7, 8]]], np.int8).reshape(1, 2, 4)
    out = qlayout(BLOCK2, codes, [10, 20, 30, 40], [{"op": "permute", "axes": [1, 0, 2]}], NDARRAY)
    assert out["codes"].tolist() == [[[1, 2, 3, 4]], [[5, 6, 7, 8]]]
    assert out["scales"].tolist() == [10, 20, 30, 40]  # the grid [1, 2, 2] -> [2, 1, 2]: the same order
    out = qlayout(BLOCK2, codes.reshape(2, 4), [10, 20, 30, 40], [{"op": "transpose"}], NDARRAY)
    assert out["scales"].tolist() == [10, 30, 20, 40]


def test_ndarray_reshape_to_more_blocks_than_scales_panics_on_the_block_count():
    """[1, 8] under per_block([4]) holds 2 scales; reshaped to [4, 2] the same block size gives 4 blocks (one per
    row). The bytes are long enough (8 codes + 2 * 4 scale bytes = 16 = 4 * 4), so the reader is satisfied and
    the strategy's one-scale-per-block assertion is what refuses it."""
    codes = np.arange(1, 9, dtype=np.int8).reshape(1, 8)
    with pytest.raises(o.BurnPanic) as e:
        qlayout(Q8S.per_block([4], ScaleDtype.F32), codes, [1, 2], [{"op": "reshape", "shape": [4, 2]}], NDARRAY)
    assert e.value.code == "ndarray.block_count"
    assert "2 blocks for a Shape { dims: [4, 2] } tensor" in e.value.message


def test_expand_of_a_quantized_tensor_is_a_float_tensor():
    codes = np.array([[2, -4]], np.int8)
    out = qlayout(Q8S, codes, [0.25], [{"op": "expand", "shape": [3, 2]}], NDARRAY)
    assert out["quantized"] is False
    same(out["x"], [[0.5, -1], [0.5, -1], [0.5, -1]])


@pytest.mark.parametrize("op, first", [("qlayout", {"op": "mul_scalar", "value": 0.5}), ("float_ops", {"op": "abs"})])
def test_a_matmul_with_a_float_side_of_another_rank_is_a_malformed_step(op, first):
    # burn's typed API cannot make the call (Tensor<B, D>::matmul takes a Tensor<B, D>): a clear error, no crash
    params = {"scheme": {"block": None, "mode": "Symmetric", "store": "Native", "tensor": None, "value": "Q8S"},
              "steps": [first, {"op": "matmul", "rhs": [1.0, 2.0], "shape": [1, 2]}]}
    inputs = {"codes": np.array([3], np.int8), "scales": np.array([0.5], np.float32)}
    with pytest.raises(ValueError, match="same rank"):
        o.run(op, params, inputs, profile="burn-0.22.1/flex")
