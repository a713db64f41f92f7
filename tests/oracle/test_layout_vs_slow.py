"""The oracle's layout model against its second implementation, ``tests/slow_reference.py`` (issue 26).

Random chains of 1-3 ``Tensor`` calls (every step of ``oracle/views.py``, parameters valid for the shape each
meets, drawn here and not by the fuzzer) on plain f32 tensors and on Native Q8S tensors held by
burn-0.22.0-pre.3's ndarray and flex: either both sides panic, or the values, the codes and the stored scales
agree bit for bit.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oracle as o
import slow_reference as slow
from oracle.views import STEP_OPS, apply, view

SETTINGS = settings(max_examples=100, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))
VIEW_SETTINGS = settings(SETTINGS, max_examples=250)  # cheap: enough draws that every step meets every dim
MAX_ELEMENTS, MAX_RANK = 96, 4
FLOAT_STEPS = ("mul_scalar", "matmul", "expand")


@st.composite
def a_step(draw, shape: tuple, ops) -> dict:
    rank = len(shape)
    op = draw(st.sampled_from([op for op in ops if rank >= 2 or op not in ("transpose", "matmul")]))
    dim = draw(st.integers(0, rank - 1))
    if op == "reshape":
        kind = draw(st.sampled_from(["flatten", "split", "unsqueeze", "merge"]))
        dims = list(shape)
        if kind == "split" and rank < MAX_RANK:
            f = draw(st.sampled_from([f for f in range(1, dims[dim] + 1) if dims[dim] % f == 0]))
            dims[dim:dim + 1] = [f, dims[dim] // f]
        elif kind == "unsqueeze" and rank < MAX_RANK:
            dims.insert(dim, 1)
        elif kind == "merge" and rank >= 2:
            i = min(dim, rank - 2)
            dims[i:i + 2] = [dims[i] * dims[i + 1]]
        else:
            dims = [math.prod(dims)]
        return {"op": "reshape", "shape": dims}
    if op == "transpose":
        return {"op": "transpose"}
    if op == "swap_dims":
        return {"op": "swap_dims", "dims": [dim, draw(st.integers(0, rank - 1))]}
    if op == "permute":
        return {"op": "permute", "axes": draw(st.permutations(list(range(rank))))}
    if op == "flip":
        return {"op": "flip", "axes": sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))}
    if op == "slice":
        ranges = []
        for n in shape[:draw(st.integers(1, rank))]:
            start = draw(st.integers(0, n - 1))
            ranges.append([start, draw(st.integers(start + 1, n)), draw(st.sampled_from([1, 2, 3]))])
        return {"op": "slice", "ranges": ranges}
    if op == "select":
        return {"op": "select", "dim": dim,
                "indices": draw(st.lists(st.integers(0, shape[dim] - 1), min_size=1, max_size=4))}
    if op == "gather":
        index_shape = list(shape)
        index_shape[dim] = draw(st.integers(1, 3))
        n = math.prod(index_shape)
        return {"op": "gather", "dim": dim, "shape": index_shape,
                "indices": draw(st.lists(st.integers(0, shape[dim] - 1), min_size=n, max_size=n))}
    if op in ("cat", "repeat_dim"):
        return {"op": op, "dim": dim, ("copies" if op == "cat" else "times"): draw(st.integers(1, 3))}
    if op == "expand":
        dims = [draw(st.integers(1, 3)) if n == 1 else n for n in shape]
        if rank < MAX_RANK and draw(st.booleans()):
            dims.insert(0, draw(st.integers(1, 2)))
        return {"op": "expand", "shape": dims}
    if op == "mul_scalar":
        return {"op": "mul_scalar", "value": draw(st.sampled_from([2.0, 0.5, -1.0, 0.1, 3.0, 0.0]))}
    n = draw(st.integers(1, 3))
    rhs_shape = list(shape[:-2]) + [shape[-1], n]
    return {"op": "matmul", "shape": rhs_shape,
            "rhs": draw(st.lists(st.integers(-8, 8).map(lambda k: k / 4), min_size=math.prod(rhs_shape),
                                 max_size=math.prod(rhs_shape)))}


@st.composite
def a_chain(draw, shape: tuple, ops=tuple(STEP_OPS)) -> list[dict]:
    probe, steps = np.zeros(shape, np.float32), []
    for _ in range(draw(st.integers(1, 3))):
        s = draw(a_step(probe.shape, ops))
        after = apply(probe, s)
        if not 1 <= after.ndim <= MAX_RANK or not 0 < after.size <= MAX_ELEMENTS:
            continue
        steps.append(s)
        probe = np.zeros(after.shape, np.float32)
    return steps or [{"op": "transpose"} if len(shape) >= 2 else {"op": "flip", "axes": [0]}]


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
# Few significant bits: every product and sum of a matmul is exact in binary64, where the oracle accumulates.
dyadic = st.builds(lambda k, e: k * 2.0 ** -e, st.integers(-64, 64), st.integers(0, 8)) | st.just(-0.0)


def bits(a) -> list:
    return np.ascontiguousarray(np.asarray(a, np.float32)).view(np.uint32).ravel().tolist()


@VIEW_SETTINGS
@given(st.data())
def test_a_view_chain_agrees_with_the_slow_reference(data):
    shape = data.draw(shapes)
    x = np.array(data.draw(st.lists(dyadic, min_size=math.prod(shape), max_size=math.prod(shape))),
                 np.float32).reshape(shape)
    steps = data.draw(a_chain(shape))
    expected, expected_shape = slow.layout_view(slow.from_array(x)[0], shape, steps)
    actual = view(x, steps)
    assert actual.shape == expected_shape, steps
    assert bits(actual) == bits(slow.to_array(expected, "f32", expected_shape)), steps


def _block(data, shape):
    """None (per-tensor), or a block of one or two extents (of 2 or more where the dim allows) that tiles the
    tensor's trailing dims."""
    kind = data.draw(st.sampled_from(["block", "tensor", "block", "grid"]))
    if kind == "tensor":
        return None
    dims = [data.draw(st.sampled_from([d for d in range(2, n + 1) if n % d == 0] or [1])) for n in shape[-2:]]
    return dims if kind == "grid" and len(dims) == 2 else dims[-1:]


@pytest.mark.parametrize("profile", [slow.PRE3_NDARRAY, slow.PRE3_FLEX])
@SETTINGS
@given(data=st.data())
def test_a_quantized_chain_agrees_with_the_slow_reference(profile, data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    block = _block(data, shape)
    scheme = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None,
              "block": None if block is None else {"size": block, "dtype": "F32"}}
    n = math.prod(shape)
    nscales = 1 if block is None else math.prod(slow.num_blocks(shape, tuple(block)))
    codes = data.draw(st.lists(st.integers(-127, 127), min_size=n, max_size=n))
    scales = data.draw(st.lists(st.builds(lambda k, e: k * 2.0 ** -e, st.integers(1, 15), st.integers(0, 10)),
                                min_size=nscales, max_size=nscales))
    steps = data.draw(a_chain(shape))
    try:
        x, held = slow.qlayout(codes, shape, scales, slow.SlowScheme.from_json(scheme), steps, profile)
    except slow.SlowPanic:
        with pytest.raises(o.BurnPanic):
            _oracle(scheme, codes, shape, scales, steps, profile)
        return
    out = _oracle(scheme, codes, shape, scales, steps, profile)
    assert out["quantized"] is (held is not None), steps
    assert bits(out["x"]) == bits(x), steps
    if held is not None:
        assert out["codes"].shape == held.shape and out["codes"].ravel().tolist() == held.codes, steps
        assert bits(out["scales"]) == bits(held.scales), steps


def _oracle(scheme, codes, shape, scales, steps, profile):
    inputs = {"codes": np.array(codes, np.int8).reshape(shape), "scales": np.array(scales, np.float32)}
    return o.run("qlayout", {"scheme": scheme, "steps": steps}, inputs, profile=profile)


def test_the_slow_steps_match_hand_numbers():
    """The second implementation itself, on the hand-worked 2x3 tensor of test_layout_by_hand.py."""
    x = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert slow.layout_step(x, (2, 3), {"op": "flip", "axes": [0, 1]}) == ([5, 4, 3, 2, 1, 0], (2, 3))
    assert slow.layout_step(x, (2, 3), {"op": "cat", "dim": 0, "copies": 2}) == (x + x, (4, 3))
    assert slow.layout_step(x, (2, 3), {"op": "transpose"}) == ([0, 3, 1, 4, 2, 5], (3, 2))
    assert slow.layout_step(x, (2, 3), {"op": "slice", "ranges": [[0, 2, 1], [0, 3, 2]]}) == ([0, 2, 3, 5], (2, 2))
    assert slow.layout_step(x, (2, 3), {"op": "gather", "dim": 1, "indices": [2, 0, 1, 1], "shape": [2, 2]}) == (
        [2, 0, 4, 4], (2, 2))
