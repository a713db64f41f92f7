"""Float ops on a quantized tensor as burn routes them (docs/spec/float-ops.md): what ``Tensor::abs``,
``Tensor::add``, ``Tensor::sum_dim``, ``Tensor::sort``, ``Tensor::stack``, ``Tensor::matmul``, ... give when the
tensor holds a ``TensorPrimitive::QFloat``, and the kind of that result.

burn-tensor's bridge (``src/bridge/ops/float.rs``) sends each call either to ``into_float`` (the tensor
dequantized to the device's float dtype, f32, then the float op: a float result) or to a ``Dispatch::q_*``
method. ``Dispatch`` forwards only the layout ops and ``q_matmul`` to the backend (burn-dispatch
``src/ops/qtensor.rs``), so every other ``q_*`` is ``QTensorOps``'s trait default on every backend
(burn-backend ``src/backend/ops/qtensor.rs``):

* ``dequant_op_flow!``: dequantize, the float op, and requantize only under ``QuantPropagation::Propagate``; the
  device default is ``Inhibit``, so the result is **float**;
* ``dequant_op_quant!``: dequantize, the float op, then the public ``quantize_dynamic`` under the input's scheme:
  the result is **quantized** (``abs``, ``sort``, ``topk``, ``cat``; ``max_dim`` is ``q_argmax`` then
  ``q_gather``, itself requantized);
* ``q_argmax`` / ``q_argmin``: dequantize, then the float op: an **int** result, read here through
  ``Tensor::float`` (indices below 2^24 are exact).

Each step below is one such call as JSON; :data:`ROUTES` says which route it takes, and a route is the same for
every release and backend the project builds (the backends' own ``q_argmax``/``q_argmin`` overrides are never
reached through ``Dispatch``). The float results are exact: elementwise ops are IEEE operations rounded once; a
reduction whose order burn does not fix (``sum``, ``mean_dim``, a matmul with a quantized side) is exact only
where every order gives the same f32 answer, which :func:`check_order_free` demands of its inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
import math

import numpy as np

from .choices import FLOAT_CLAMP, FLOAT_TOPK, NEG
from .dequantize import COMPILE_FAILURES, FP8_SCALAR_FAILURES, MATMUL_I8_FAILURES
from .errors import (BurnPanic, UndefinedBehaviour, panic, read_by_sort, rust_debug_f32, skipped_below,
                     surfaced_at_read)
from .layout import NOT_FORWARDED, Errored, failed_on_stream, load_deferred, read_back, step, stream_step
from .layout_checks import check_wgsl_matmul
from .profile import Profile
from .qtensor import QTensor
from .quantize import quantize_dynamic
from .routes import check_matmul, float_i8, requantized_by, route, values
from .scheme import NATIVE, QuantScheme
from .support import fused_inputs, fused_read
from .views import PURE_MOVES, check_matmul_rank, vecmat_swap
from .vocabulary import FLOAT_STEPS

COMPARISONS = {"greater_elem": np.greater, "greater_equal_elem": np.greater_equal, "lower_elem": np.less,
               "lower_equal_elem": np.less_equal, "equal_elem": np.equal}
"""The ``Tensor`` comparisons with a scalar: steps of their own (a Bool result read as floats) and the ``compare``
that builds ``mask_fill``'s and ``mask_where``'s mask."""

VALUE_KEEPING = frozenset({"abs", "sort", "topk", "max_dim", "min_dim", "stack"})
"""Float ops whose every result element is an element of the input or its magnitude, exact in f32: after them (and
pure moves) a user expects ``dequantize(op(q)) == op(dequantize(q))``; burn's requantization can break that."""

_F32_MAX = float(np.finfo(np.float32).max)
_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def other_side(s: dict, x: np.ndarray) -> np.ndarray:
    """A binary step's other operand: ``"rhs": "self"`` (the same quantized tensor: ``q.clone().add(q)``, burn's
    ``q_add`` of two QFloat tensors) or a float tensor, ``"rhs": [..]`` with its ``"shape"`` (as given: a
    ``"rhs_scheme"`` is :func:`quantized_operand`'s)."""
    if s.get("rhs") == "self":
        return x
    if not isinstance(s.get("rhs"), list) or not isinstance(s.get("shape"), list):
        raise ValueError(f"step {s}: \"rhs\" must be \"self\" or a list of numbers with its \"shape\"")
    return np.asarray(s["rhs"], dtype=np.float32).reshape(s["shape"])


def quantized_operand(s: dict, profile: Profile) -> QTensor | None:
    """A second quantized tensor, of its own scheme: the float ``"rhs"`` of a binary op, ``mask_where`` or a matmul
    quantized on the device under ``"rhs_scheme"`` (``Tensor::from_data(rhs).quantize_dynamic(&rhs_scheme)``, made
    before the op is called, so its panics come first); None for a step without one. burn-tensor's ``q_bin_ops!``
    sends two QFloat sides to ``q_add`` (``dequant_op_flow!``: the lhs dequantized, then the rhs), ``mask_where``
    takes both through ``into_float``, ``q_matmul`` dequantizes each side: a float result in every case
    (burn-tensor-0.22.1 src/bridge/ops/float.rs:22-40, :159-165; burn-backend-0.22.1 src/backend/ops/qtensor.rs:56-78)."""
    if "rhs_scheme" not in s:
        return None
    if not isinstance(s.get("rhs"), list):
        raise ValueError(f"step {s}: \"rhs_scheme\" quantizes a float \"rhs\" (a list of numbers with its \"shape\")")
    return on_device(other_side(s, np.zeros(0, np.float32)), QuantScheme.from_json(s["rhs_scheme"]), profile)


def check_order_free(terms: np.ndarray, axis: int) -> None:
    """A sum of ``terms`` along ``axis`` whose order burn leaves to the backend (a SIMD reduction, a GEMM's
    blocking) gives one f32 answer in every order when every term is an f32 and every partial sum is exact: all
    terms are multiples of one power of two ``u`` and their magnitudes add up to at most ``2^24 u`` and to at most
    f32's largest finite value (every partial sum is then an integer multiple of ``u`` that f32 holds exactly; past
    f32's range an order that adds the large terms first overflows to inf, found by fuzzing burn-flex 0.22.1: -inf
    for a sum whose exact value is 2^127). Anything else depends on the order, and so
    does the sign of a sum whose terms are all -0.0: +0.0 from an accumulator that starts at +0.0, -0.0 from one
    that starts with the first term (found by fuzzing: burn-flex's GEMM gives -0.0 for ``-127 * 0.0`` twice)."""
    t = np.asarray(terms, dtype=np.float64)
    if (np.signbit(t) & (t == 0)).all(axis=axis).any():
        raise UndefinedBehaviour("a sum of -0.0 terms only: its sign is where the backend's accumulator starts")
    finite = np.isfinite(t).all() and (t.astype(np.float32).astype(np.float64) == t).all()
    nonzero = np.abs(t[t != 0])
    if finite and nonzero.size:
        unit = np.ldexp(1.0, int(min(np.frexp(v)[1] - 53 + _trailing_bits(v) for v in nonzero)))
        magnitude = np.abs(t).sum(axis=axis)
        finite = bool((magnitude <= 2.0 ** 24 * unit).all() and (magnitude <= _F32_MAX).all())
    if not finite:
        raise UndefinedBehaviour("a sum whose order burn does not fix and whose f32 answer depends on it")


def check_product_exact(factors: np.ndarray, axis: int) -> None:
    """A product along ``axis`` whose order burn leaves to the backend (a reduction's tree, a scan's blocking) has one
    f32 answer in every order when it is exact in every order: every factor finite, the product of the factors'
    odd significands below ``2^24`` (so every partial product's significand fits f32's), and the exponents of every
    partial product within f32's normal range (the largest partial is at most the product of the factors above 1,
    the smallest at least that of the nonzero ones below 1). A zero factor makes any order's product a zero of the
    signs' parity. Anything else depends on the order: an inf times a zero is NaN in one order and not met in
    another, a rounded partial product differs by where it rounds."""
    t = np.abs(np.asarray(factors, dtype=np.float64))
    if not np.isfinite(t).all():
        raise UndefinedBehaviour("a product of inf or NaN factors: which NaN it gives, or whether inf meets 0, is the "
                                 "order's")
    nonzero = np.where(t == 0, 1.0, t)
    significand = np.ldexp(np.frexp(nonzero)[0], 24)  # an f32's 24-bit significand as an integer
    trailing = np.log2(significand.astype(np.int64) & -significand.astype(np.int64))
    odd_bits = np.log2(significand) - trailing
    logs = np.log2(nonzero)
    exact = (odd_bits.sum(axis=axis) < 24 - 1e-9) & (np.maximum(logs, 0).sum(axis=axis) < 128 - 1e-9) & \
        (np.minimum(logs, 0).sum(axis=axis) >= -126)
    if not np.all(exact):
        raise UndefinedBehaviour("a product whose order burn does not fix and whose f32 answer depends on it")


def check_signed_zeros(x: np.ndarray, axis: int) -> None:
    """+0.0 and -0.0 compare equal, so which of them an unstable sort (or a max) puts where is the backend's
    algorithm's choice; a dequantized tensor never holds -0.0 (code 0 is +0), a float one can (found by fuzzing:
    burn-flex's sort placed them otherwise than numpy's)."""
    zeros = x == 0
    negative = np.signbit(x) & zeros
    if (negative.any(axis=axis) & (zeros & ~negative).any(axis=axis)).any():
        raise UndefinedBehaviour("+0.0 and -0.0 along a sorted axis: their order is the sort algorithm's")


def total_order_sort(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """burn's float sort on every backend the project builds: ``sort_unstable_by(f32::total_cmp)``, the reverse for
    descending (burn-flex-0.23.0-pre.1 src/ops/sort.rs:40-43, :121-126; burn-backend-0.22.1 src/backend/ops/sort.rs:113-124
    with burn-std-0.22.1 src/element/base.rs:204 for ndarray and the GPU builds, which sort on the host). IEEE's total
    order: -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN, so signed zeros and NaNs have one place each, and the
    elements are moved, bits and all: numpy's ``np.sort`` rewrites every NaN to 0x7FC00000, which a requantization
    to E5M2 then encodes as 0x7E where burn keeps the decoded NaN's 0x7FFFE000 and writes 0x7F (found by fuzzing
    burn-flex 0.23.0-pre.1, docs/findings.md). Elements with equal keys have equal bits, so stability is moot."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.int32)
    key = bits ^ ((bits >> 31) & np.int32(0x7FFFFFFF))  # total_cmp's key: a negative float's magnitude bits flipped
    order = np.argsort(key, axis=axis, kind="stable")
    out = np.take_along_axis(x, order, axis)
    return np.ascontiguousarray(np.flip(out, axis) if descending else out)


def total_order_argsort(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """burn's ``float_argsort``: the indices ``sort_unstable_by`` leaves under ``f32::total_cmp`` (the reverse
    comparison for descending; burn-flex-0.23.0-pre.1 src/ops/sort.rs:84-87, burn-backend-0.22.1
    src/backend/ops/sort.rs:271-297 for ndarray and, read back to the host, the GPU builds). Where two elements of an
    axis have the same bits, their indices' order is the unstable sort's algorithm's: undefined."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.int32)
    ordered = np.sort(bits, axis=axis)
    if (np.diff(ordered, axis=axis) == 0).any():
        raise UndefinedBehaviour("equal elements along an argsort's axis: their indices' order is the unstable sort's")
    key = bits ^ ((bits >> 31) & np.int32(0x7FFFFFFF))
    order = np.argsort(key, axis=axis, kind="stable")
    return np.ascontiguousarray(np.flip(order, axis) if descending else order)


def _times_minus_one(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return x * np.float32(-1)


NEGATIONS = NEG.steps({"times_minus_one": _times_minus_one, "flip": np.negative})


def _ordered(x: np.ndarray, lo: np.float32, hi: np.float32) -> np.ndarray:
    """``if x < min {min} else if x > max {max} else {x}``: a NaN, and a zero on a zero bound, stay as they are."""
    return np.where(x < lo, lo, np.where(x > hi, hi, x)).astype(np.float32)


def _rust_clamp(x: np.ndarray, lo: np.float32, hi: np.float32) -> np.ndarray:
    if not lo <= hi:
        raise panic("flex.clamp_reversed", min=rust_debug_f32(lo), max=rust_debug_f32(hi))
    return _ordered(x, lo, hi)


def _zero_ties(x: np.ndarray, lo: np.float32, hi: np.float32) -> None:
    """A GPU min or max of +0.0 and -0.0 returns either (GLSL.std.450 leaves it open, and lavapipe's code
    generation picked the bound in one kernel and the value in another): a zero reaching a zero bound of the
    other sign is undefined (a reversed range answers a bound whatever the zeros)."""
    if not lo <= hi:
        return
    zero = x == 0
    for bound in (lo, hi):
        if bound == 0 and (zero & (np.signbit(x) != np.signbit(bound))).any():
            raise UndefinedBehaviour("a zero clamped against a zero bound of the other sign: which of the two the "
                                     "GPU's min/max returns is its code generation's pick")


def _max_then_min(x: np.ndarray, lo: np.float32, hi: np.float32) -> np.ndarray:
    _zero_ties(x, lo, hi)
    return np.fmin(np.fmax(x, lo), hi).astype(np.float32)  # maxNum/minNum: a NaN gives way to the bound


def _min_then_max(x: np.ndarray, lo: np.float32, hi: np.float32) -> np.ndarray:
    _zero_ties(x, lo, hi)
    return np.where(np.isnan(x), x, np.maximum(np.minimum(x, hi), lo)).astype(np.float32)


CLAMPS = FLOAT_CLAMP.steps({"ordered": _ordered, "rust_clamp": _rust_clamp, "max_then_min": _max_then_min,
                            "min_then_max": _min_then_max})


class SortedTopK:
    """burn-backend's ``float_topk`` default: ``float_sort`` descending, then the first ``k`` (burn-backend-0.22.1
    src/backend/ops/tensor.rs, the CPU backends)."""

    def check_layout(self, x: np.ndarray, dim: int, k: int) -> None:
        """A host sort reads the logical tensor: no layout matters."""

    def values(self, x: np.ndarray, dim: int, k: int) -> np.ndarray:
        check_signed_zeros(x, dim)
        return np.ascontiguousarray(np.take(total_order_sort(x, dim, True), np.arange(k), axis=dim))


class KernelTopK(SortedTopK):
    """cubek-reduce's TopK reduction (burn-cubecl's ``float_topk`` -> ``reduce_dim``): each element is inserted into
    ``k`` descending slots that start at ``floor``, and enters only if it is not below the last (``topk_insert``,
    cubek-reduce-0.3.1 src/components/instructions/topk.rs:55-95, ``reaches`` in base.rs:183-192; 0.3.0-pre.3
    walks every slot, which keeps the same values). A -inf below the floor never enters, so its slot reads the
    floor; a NaN compares false, so each later insertion moves it one slot down and drops the slot below it."""

    def __init__(self, floor: float):
        self.floor = np.float32(floor)

    def check_layout(self, x: np.ndarray, dim: int, k: int) -> None:
        """An axis of stride > 1 is reduced *perpendicular*, a vector of adjacent outputs per unit; with more than
        one slot, lavapipe's results then hold the top value again in lower slots for some shapes (every GPU build:
        ``[2, 6, 8]`` along dim 0, k 2, repeats it in slot 1 of the first 16 of 48 columns; ``[2, 48]``, ``[2, 8,
        8]`` and ``[2, 12, 8]`` are right), a pattern that also depends on the values: not modelled. The stride is
        the one the device's tensor has (``x``'s memory order, :func:`device_order`)."""
        if k > 1 and x.shape[dim] > 1 and x.strides[dim] != x.itemsize:
            raise UndefinedBehaviour("a GPU topk with k > 1 along an axis of stride > 1: cubek-reduce's "
                                     "perpendicular TopK repeats the top value in lower slots for some shapes "
                                     "(docs/findings.md)")

    def values(self, x: np.ndarray, dim: int, k: int) -> np.ndarray:
        if np.isnan(x).any():
            raise UndefinedBehaviour("a NaN in a GPU topk: where it ends up, and which value it drops, follows the "
                                     "kernel's insertion order")
        return super().values(np.where(x < self.floor, self.floor, x).astype(np.float32), dim, k)


TOPKS = FLOAT_TOPK.steps({"sort": SortedTopK(), "min_slots": KernelTopK(np.finfo(np.float32).min),
                          "inf_slots": KernelTopK(-np.inf)})


def _trailing_bits(v: float) -> int:
    """How many low bits of ``v``'s 53-bit significand are zero."""
    m = int(np.ldexp(np.frexp(v)[0], 53))
    return (m & -m).bit_length() - 1


def _keep(x: np.ndarray, reduced: np.ndarray, dim: int) -> np.ndarray:
    return np.ascontiguousarray(np.expand_dims(reduced, dim).astype(np.float32))


def compute(x: np.ndarray, s: dict, profile: Profile, other: np.ndarray | None = None) -> np.ndarray:
    """The float op of step ``s`` on the dequantized values ``x`` (f32), as ``profile``'s float kernels give it
    (``neg``'s NaN sign; the rest is the same on every backend); ``other``: a binary op's other side, dequantized
    (:func:`quantized_operand`), else the step's own."""
    op = s["op"]
    if op == "abs":
        return np.abs(x)
    if op == "neg":
        return profile.step(NEGATIONS)(x)
    if op == "sqrt":
        return np.sqrt(x)
    if op == "add_scalar":
        return x + np.float32(s["value"])
    if op == "clamp":
        with np.errstate(over="ignore"):  # a bound past f32's range is `as f32`'s inf
            lo, hi = np.float32(s["min"]), np.float32(s["max"])
        return profile.step(CLAMPS)(x, lo, hi)
    if op in _BINARY:
        with np.errstate(all="ignore"):
            return _BINARY[op](x, other_side(s, x) if other is None else other).astype(np.float32)
    if op in ("mask_fill", "mask_where"):
        if s.get("compare") not in COMPARISONS:
            raise ValueError(f"step {s}: \"compare\" must be one of {', '.join(COMPARISONS)}")
        mask = COMPARISONS[s["compare"]](x, np.float32(s["value"]))
        if op == "mask_fill":
            source = np.float32(s["fill"])
        else:
            source = np.broadcast_to(other_side(s, x) if other is None else other, x.shape)
        return np.ascontiguousarray(np.where(mask, source, x).astype(np.float32))
    if op in COMPARISONS:  # a Bool tensor read through Tensor::float: 1.0 or 0.0 (a NaN compares false)
        return COMPARISONS[op](x, np.float32(s["value"])).astype(np.float32)
    if op == "sum":
        check_order_free(x.ravel(), 0)
        return np.asarray([x.astype(np.float64).sum()], np.float32)
    if op in ("sum_dim", "mean_dim"):
        d = s["dim"]
        check_order_free(x, d)
        total = x.astype(np.float64).sum(axis=d).astype(np.float32)  # exact: check_order_free
        if op == "mean_dim":  # ndarray's mean_axis and flex's mean_dim divide the f32 sum by the dim's size
            total = total / np.float32(x.shape[d])
        return _keep(x, total, d)
    if op == "cumsum":  # every prefix sum exact (check_order_free), so the scan's order does not matter
        d = s["dim"]
        check_order_free(x, d)
        first = np.take(x, [0], axis=d)
        if (np.signbit(first) & (first == 0)).any():
            raise UndefinedBehaviour("a prefix of one -0.0: a scan that copies its first term keeps -0.0, one that "
                                     "adds it to a +0.0 accumulator gives +0.0")
        return np.ascontiguousarray(np.cumsum(x.astype(np.float64), axis=d).astype(np.float32))
    if op in ("prod", "prod_dim", "cumprod"):
        d = 0 if op == "prod" else s["dim"]
        factors = x.ravel() if op == "prod" else x
        check_product_exact(factors, d)
        if op == "cumprod":
            return np.ascontiguousarray(np.cumprod(x.astype(np.float64), axis=d).astype(np.float32))
        product = np.prod(factors.astype(np.float64), axis=d).astype(np.float32)  # exact: check_product_exact
        return np.asarray([product], np.float32) if op == "prod" else _keep(x, product, d)
    if op in ("max_dim", "min_dim"):  # the element at the arg index, its bits kept (a NaN's payload too)
        check_signed_zeros(x, s["dim"])
        at = np.expand_dims((np.argmax if op == "max_dim" else np.argmin)(x, axis=s["dim"]), s["dim"])
        return np.ascontiguousarray(np.take_along_axis(x, at, s["dim"]))
    if op in ("argmax", "argmin"):  # the first index of the extreme value (the first NaN), as f32 (``.float()``)
        return _keep(x, (np.argmax if op == "argmax" else np.argmin)(x, axis=s["dim"]), s["dim"])
    if op == "sort":
        return total_order_sort(x, s["dim"], bool(s.get("descending")))
    if op == "argsort":
        return total_order_argsort(x, s["dim"], bool(s.get("descending"))).astype(np.float32)
    if op == "topk":
        return profile.step(TOPKS).values(x, s["dim"], s["k"])
    raise ValueError(f"unknown float-op step {op!r}; known: {', '.join(FLOAT_STEPS)}")


# --- the routes ------------------------------------------------------------------------------------------------


def as_float(s: dict, held: QTensor | np.ndarray, profile: Profile) -> np.ndarray:
    """``into_float`` / ``dequant_op_flow!`` under ``Inhibit`` / ``q_argmax``: dequantized, then the float op (a
    quantized other side made first, dequantized after the held tensor)."""
    operand = quantized_operand(s, profile)
    with fused_inputs(kernel_inputs(s, np.shape(held.codes if isinstance(held, QTensor) else held), operand, profile)):
        x = device_order(values(held, profile), held, profile)
    if s["op"] == "topk":
        profile.step(TOPKS).check_layout(x, s["dim"], s["k"])
    other = None if operand is None else device_order(values(operand, profile), operand, profile)
    return laid_out(compute(x, s, profile, other), s, x, other)


def device_order(x: np.ndarray, held: QTensor | np.ndarray, profile: Profile) -> np.ndarray:
    """The dequantized values in the memory order of the device's float tensor, as numpy strides: burn-cubecl's
    dequantize of a store packed along an outer dim swaps that axis innermost, writes the values there and hands
    back the permuted view (burn-cubecl-0.22.1 src/kernel/quantization/dequantize.rs:21-45, :66-69, the same in
    0.22.0-pre.3 and 0.23.0-pre.1); every other dequantize, and every CPU one, is row-major."""
    axis = packed_axis(held)
    if profile.kernel != "gpu" or axis is None:
        return x
    return np.moveaxis(np.ascontiguousarray(np.moveaxis(x, axis, -1)), -1, axis)


def laid_out(result: np.ndarray, s: dict, x: np.ndarray, other: np.ndarray | None) -> np.ndarray:
    """``result`` in the memory order burn-cubecl gives step ``s``'s output: an elementwise op (but a comparison,
    whose bool output is a fresh row-major tensor) writes in place into, or in the memory order of, its first
    operand of the output's shape (``can_mut_broadcast``, ``in_memory_order``: burn-cubecl-0.22.1
    src/kernel/binary.rs:226-296, unary_float.rs:44-100, mask/base.rs:14-40); a float other side is row-major.
    Every other op writes a fresh row-major tensor."""
    if s["op"] in ELEMENTWISE and s["op"] not in COMPARISONS:
        for operand in (x, other):
            if operand is not None and operand.shape == result.shape:
                out = np.empty_like(operand, order="K")
                out[...] = result
                return out
    return np.ascontiguousarray(result)


def packed_axis(held: QTensor | np.ndarray) -> int | None:
    """The axis of a store packed along an outer dim (``PackedU32(d)`` / ``PackedNative(d)``, ``d > 0``), else
    None: a float tensor, or a store packed along the innermost dim."""
    if not isinstance(held, QTensor) or not held.scheme.store.packs_outer_dim:
        return None
    return held.codes.ndim - 1 - held.scheme.store.dim


def kernel_inputs(s: dict, shape: tuple[int, ...], operand: QTensor | None, profile: Profile) -> tuple[str, ...]:
    """The inputs of the fused kernel that reads a held Native tensor's codes for step ``s`` on a tensor of ``shape``
    (``support.fused_inputs``; measured on both fused builds' WGSL): a mask op and ``q.op(q)`` read the tensor
    twice, a quantized operand adds its codes (as fusion reads them) and scales; a float other side, or an operand
    dequantized on its own, adds its tensor only where it is broadcast: one of the output's shape is written in
    place (``q.add(f)`` with ``f`` a row: 3 inputs; ``q.add(p)`` with ``p`` NVFP4: 2)."""
    if s["op"] in ("mask_fill", "mask_where") or s.get("rhs") == "self":
        return ("i8", "f32", "i8", "f32")
    read = None if operand is None else fused_read(operand.scheme, profile)
    if read is not None:
        return ("i8", "f32", read, "f32")
    if isinstance(s.get("rhs"), list) and tuple(s["shape"]) != np.broadcast_shapes(shape, tuple(s["shape"])):
        return ("i8", "f32", "f32")
    return ("i8", "f32")


def requantized(s: dict, held: QTensor, profile: Profile) -> QTensor:
    """``dequant_op_quant!``: dequantized, the float op, the public ``quantize_dynamic`` under the held scheme."""
    return requantized_by(lambda h: as_float(s, h, profile), held, profile)


ROUTES: dict[str, Callable[[dict, QTensor, Profile], QTensor | np.ndarray]] = {
    # QTensorOps::q_abs, q_sort, q_topk: dequant_op_quant!; q_max_dim / q_min_dim: q_argmax then q_gather's
    # dequant_op_quant! (burn-backend-0.22.1 src/backend/ops/qtensor.rs:817-819, 991-993, 1070-1075, 1265-1271)
    "abs": requantized, "sort": requantized, "topk": requantized, "max_dim": requantized, "min_dim": requantized,
    # q_neg, q_add_scalar, q_clamp, q_add/q_sub/q_mul/q_div, q_sum, q_sum_dim, q_mean_dim: dequant_op_flow!
    # (qtensor.rs:56-103), the device's propagation Inhibit; q_argmax/q_argmin (qtensor.rs:949-953, 1038-1042);
    # sqrt, mask_fill, mask_where (its source too) and the comparisons: into_float (burn-tensor-0.22.1
    # src/bridge/ops/float.rs:159-175, 887-935)
    # q_prod, q_prod_dim, q_cumsum, q_cumprod: dequant_op_flow! too (qtensor.rs:593-608, 648-665)
    **{op: as_float for op in ("neg", "sqrt", "add_scalar", "clamp", "add", "sub", "mul", "div", "mask_fill",
                               "sum", "sum_dim", "mean_dim", "argmax", "argmin", "prod", "prod_dim", "cumsum",
                               "cumprod", "mask_where", *COMPARISONS)},
    # q_argsort: dequantize, then the float argsort: an int result (qtensor.rs:1315-1324)
    "argsort": as_float,
}


def float_step(held: QTensor | np.ndarray, s: dict, profile: Profile) -> QTensor | np.ndarray:
    """One float-op step on what the backend holds (a float tensor: the float op itself)."""
    if s["op"] == "sum" and profile.sum_crashes:
        raise UndefinedBehaviour("the device crashes (SIGSEGV) in burn's sum reduction")
    if isinstance(held, np.ndarray):
        return as_float(s, held, profile)
    return ROUTES[s["op"]](s, held, profile)


def matmul(held: QTensor | np.ndarray, s: dict, profile: Profile) -> np.ndarray:
    """``Tensor::matmul`` with the held tensor on one side or both: ``"rhs": [..], "shape"`` (times a float rhs),
    ``"lhs": [..], "shape"`` (a float lhs times the held tensor: a quantized rhs), ``"rhs": "self"`` (both sides
    the held tensor, ``q.clone().matmul(q)``) or a second quantized tensor (``"rhs_scheme"``,
    :func:`quantized_operand`). ``q_matmul``
    dequantizes each QFloat side to the float side's dtype (f32) and runs the backend's f32 GEMM: a float result
    (burn-backend-0.22.1 src/backend/ops/qtensor.rs:499-545; burn-ndarray's override differs only by its ternary
    kernel, ``ternary_matmul``'s op)."""
    if profile.gemm_crashes:
        raise UndefinedBehaviour("the device crashes (SIGSEGV) in burn's float matmul kernel")
    check_matmul_rank(np.shape(held.codes if isinstance(held, QTensor) else held), s)
    operand = quantized_operand(s, profile)
    if isinstance(s.get("lhs"), list) and isinstance(s.get("shape"), list):
        lhs = np.asarray(s["lhs"], dtype=np.float32).reshape(s["shape"])
        if isinstance(held, QTensor):
            _check_quantized_matmul(held, lhs.shape, "rhs", profile)
        rhs = values(held, profile) if isinstance(held, QTensor) else held
    elif isinstance(held, QTensor):
        side = "self" if s.get("rhs") == "self" else "lhs"
        lhs = _gemm_lhs(held, other_side(s, held.codes).shape, profile, side)  # the kernel's refusals come first
        rhs = other_side(s, values(held, profile)) if operand is None else values(operand, profile)
    else:
        lhs, rhs = held, other_side(s, held) if operand is None else values(operand, profile)
    if lhs.ndim != rhs.ndim or lhs.shape[-1] != rhs.shape[-2]:
        raise ValueError(f"step {s}: a matmul of shapes {list(lhs.shape)} and {list(rhs.shape)}")
    check_matmul(lhs.shape, {"op": "matmul", "shape": list(rhs.shape)}, profile)
    products = lhs.astype(np.float64)[..., :, :, None] * rhs.astype(np.float64)[..., None, :, :]
    check_order_free(products, -2)
    return np.ascontiguousarray(products.sum(axis=-2).astype(np.float32))


def _check_quantized_matmul(held: QTensor, other_shape: tuple[int, ...], side: str, profile: Profile) -> None:
    """WGSL's refusal of the quantized matmul kernel that reads ``held`` on ``side`` (``check_wgsl_matmul``), where
    the profile routes a matmul of it to that kernel."""
    if route({"op": "matmul", "shape": list(other_shape)}, held, profile) is float_i8:
        check_wgsl_matmul(held, profile, side)


def _gemm_lhs(held: QTensor, rhs_shape: tuple[int, ...], profile: Profile, side: str = "lhs") -> np.ndarray:
    """The values the GEMM sees of a quantized lhs: WGSL's refusal of its matmul kernel first (``oracle/layout.py``'s
    for a matmul step), and burn-tensor's ``[.., B, 1, K] @ [.., 1, K, N]`` turn, which swaps the quantized lhs first (a
    layout step of its own: flex requantizes a per-block tensor; found by fuzzing on burn-flex 0.22.0-pre.3)."""
    s = {"op": "matmul", "shape": list(rhs_shape)}
    _check_quantized_matmul(held, rhs_shape, side, profile)
    swap = vecmat_swap(s, held.codes.shape)
    if swap is None:
        return values(held, profile)
    return values(step(held, swap, profile), profile).reshape(held.codes.shape)


def stack_steps(s: dict, shape: tuple[int, ...]) -> list[dict]:
    """``Tensor::stack(vec![t; copies], dim)``: each copy ``unsqueeze_dim(dim)`` (``q_reshape``), then
    ``Tensor::cat`` (burn-tensor-0.22.1 src/tensor/api/base.rs:2628-2633): the layout steps it is."""
    unsqueezed = [*shape[:s["dim"]], 1, *shape[s["dim"]:]]
    return [{"op": "reshape", "shape": unsqueezed}, {"op": "cat", "dim": s["dim"], "copies": s["copies"]}]


def start(inputs: dict, scheme, profile: Profile) -> tuple[QTensor, BurnPanic | None]:
    """The quantized tensor a chain starts from: ``Tensor::from_data(TensorData::quantized(..))`` of its parts
    (``codes``, ``scales``, ``global``), or ``Tensor::from_data(x).quantize_dynamic(&scheme)`` of a float ``x``
    (any float dtype): quantized on the device, which holds it as it holds a loaded tensor (the CPU backends build
    it through ``TensorData::quantized`` and ``q_from_data``). With it, the panic of an upload wgpu copies only at
    the next flush (``layout.load_deferred``; None where there is none). On a fused build whose float steps are
    stream ops (``errored_float_ops``) a quantize that fails on the stream gives a tensor held in error."""
    if "x" not in inputs:
        codes = np.asarray(inputs["codes"], dtype=np.int8)
        return load_deferred(QTensor(codes, np.asarray(inputs["scales"], dtype=np.float32).ravel(),
                                     inputs.get("global"), scheme), profile)
    try:
        return on_device(inputs["x"], scheme, profile), None
    except BurnPanic as p:
        if not (profile.errored_float_ops and failed_on_stream(p, profile)):
            raise
        # burn-fusion's QuantizeOp failed on the stream: its output holds the failure (the ghost's codes give the shape)
        held_scheme = scheme if profile.moves_packing_dim else scheme.with_store(NATIVE)
        ghost = QTensor(np.zeros(np.shape(inputs["x"]), np.int8), np.zeros(0, np.float32), None, held_scheme)
        return Errored(surfaced_at_read(p), 0, ghost.codes.shape, ghost), None


def on_device(x: np.ndarray, scheme: QuantScheme, profile: Profile) -> QTensor:
    """``Tensor::from_data(x).quantize_dynamic(&scheme)`` as the backend holds it: as it holds a loaded tensor (the
    CPU backends build it through ``TensorData::quantized`` and ``q_from_data``, stored Native where the backend
    does not move a packed dim)."""
    qt = quantize_dynamic(x, scheme, profile=profile)
    held_scheme = scheme if profile.moves_packing_dim else scheme.with_store(NATIVE)
    return QTensor(qt.codes, qt.scales, qt.global_scale, held_scheme)


def expected_by_a_user(held: QTensor, steps: list[dict], profile: Profile) -> np.ndarray | None:
    """``op(dequantize(q))`` for a chain of pure moves and :data:`VALUE_KEEPING` ops (the ``moved`` stage a vector
    checks the invariant with, as ``qlayout``'s); None for any other chain, or where the float chain panics."""
    if isinstance(held, Errored) or not all(s["op"] in PURE_MOVES or s["op"] in VALUE_KEEPING for s in steps):
        return None
    try:
        return run_chain(values(held, profile), steps, profile)[0]
    except (BurnPanic, UndefinedBehaviour):
        return None


HOST_READS = frozenset({"sort", "argsort"})
"""Float ops that read the tensor back to the host on the GPU, a flush that meets a deferred upload's panic:
burn-backend's ``float_sort`` and ``float_argsort`` defaults (``try_read_sync``; burn-cubecl has no sort of its own,
burn-backend-0.22.1 src/backend/ops/tensor.rs:1809-1823, :1878-1890). Measured on 0.22.1 SPIR-V: an oversized E2M1 upload,
then ``sort`` and a refused reshape, fails with the upload's panic; ``topk`` (a kernel) or ``abs`` then the reshape
fail with the reshape's."""


def run_chain(held: QTensor | np.ndarray, steps: list[dict], profile: Profile,
              upload: BurnPanic | None = None) -> tuple[np.ndarray, QTensor | None]:
    """The steps in order (layout steps as ``oracle/layout.py`` routes them, float-op steps by :data:`ROUTES`);
    returns the dequantized result and the quantized tensor held at the end (``None`` for a float result). A
    deferred ``upload`` panic comes at the first flush: a :data:`HOST_READS` step or the read-back, after the host-side
    panics of the steps before it (as in ``qlayout``, ``layout.run_steps``)."""
    if profile.errored_float_ops:
        return stream_chain(held, steps, profile, upload)
    late = None  # a kernel's compile failure: its launch returned, its bytes are never written
    for s in steps:
        if s["op"] in HOST_READS and late is not None:
            raise read_by_sort(late)
        if s["op"] in HOST_READS and upload is not None:
            if profile.read_failure == "returns_unwritten":
                _read_for_sort(held, s, profile)
            raise upload
        try:
            held = _chain_step(held, s, profile)
        except BurnPanic as p:
            past = _past_compile_failure(p, profile)
            if past is None:
                raise
            if s["op"] in HOST_READS:  # the sort reads what its own dequantize never wrote
                raise read_by_sort(p) from None
            late = late or p
            held = _past_step(held, s, past)
    if late is not None:
        raise late
    if upload is not None:
        raise upload
    return read_back(held, profile)


def _chain_step(held, s: dict, profile: Profile):
    """One step of :func:`run_chain` off a fused build's stream."""
    if s["op"] in ROUTES:
        return float_step(held, s, profile)
    if s["op"] == "stack":
        for part in stack_steps(s, np.shape(held.codes if isinstance(held, QTensor) else held)):
            held = step(held, part, profile)
        return held
    if s["op"] == "matmul":
        return matmul(held, s, profile)
    return step(held, s, profile)


def _past_step(held, s: dict, past: Profile, again: Callable | None = None):
    """Step ``s`` as if the kernel that failed to compile had run: ``again`` (the chain's own step, ``_chain_step``
    by default) under ``past``; a matmul whose quantized kernel failed gives a float tensor of its shape (nothing
    reads its values: the read meets the failure)."""
    if s["op"] != "matmul":
        return (again or _chain_step)(held, s, past)
    ghost = np.zeros(held.codes.shape if isinstance(held, QTensor) else np.shape(held), np.float32)
    return np.zeros(np.shape(matmul(ghost, s, past)), np.float32)


def _read_for_sort(held, s: dict, profile: Profile) -> None:
    """A sort's read-back with a deferred upload's panic pending: a compile failure of the sort's own dequantize is
    what the read meets first (any other panic of the step comes after the upload's) where the read returns the
    failure (measured on 0.22.1 WGSL: an oversized E2M1 upload whose UE4M3 scales fail to compile, then ``sort``: the
    compile failure; on 0.22.0-pre.3, whose read panics in the bytes, the upload's panic)."""
    try:
        _chain_step(held, s, profile)
    except BurnPanic as p:
        if _past_compile_failure(p, profile) is not None:
            raise read_by_sort(p) from None
    except UndefinedBehaviour:  # values the upload's panic leaves unread
        pass


# --- a fused build's stream (Profile.errored_float_ops) ----------------------------------------------------------

ELEMENTWISE = frozenset({"abs", "neg", "sqrt", "add_scalar", "clamp", "add", "sub", "mul", "div", "mask_fill",
                         "mask_where", *COMPARISONS})
"""Float ops burn-cubecl-fusion's elementwise fuser takes into one kernel with the dequantize before them, where it
reads the scheme itself (``fused_read``): one fused block, one unit of work (burn-fusion-0.23.0-pre.1
src/stream/execution/scope/base.rs:80-92). A reduction, a sort or a gather runs after a dequantize of its own
(measured: ``reshape`` + ``sum_dim`` of a failed on-device quantize is read 3 deep, ``neg`` + ``matmul`` 2)."""


def units(s: dict, ghost: QTensor | None, profile: Profile) -> list[str]:
    """The units of work burn-fusion runs for float-op step ``s`` on a tensor (``ghost``: the quantized tensor it is,
    None for a float one), in order along the path to the step's output: the dequantize (fused with an
    :data:`ELEMENTWISE` op where fusion reads the scheme), the op, ``Tensor::float``'s cast of ``q_argmax``'s int
    result or a comparison's bool (measured: a two-level comparison is read 2 deep), and the requantize's
    ``QuantizeOp`` (whose first input is the tensor, so its output is one below it). ``max_dim``: ``q_gather``
    dequantizes the tensor again and gathers it (the tensor its first input) before the requantize
    (burn-backend-0.23.0-pre.1 src/backend/ops/qtensor.rs, ``q_max_dim``)."""
    op = s["op"]
    cast = op in ("argmax", "argmin", "argsort") or op in COMPARISONS
    if ghost is None:
        return [op, "cast"] if cast else [op]
    if op in ("max_dim", "min_dim"):
        return ["dequantize", "gather", "quantize"]
    fused = op in ELEMENTWISE and fused_read(ghost.scheme, profile) is not None
    out = [f"dequantize+{op}"] if fused else ["dequantize", op]
    if cast:
        out.append("cast")
    if ROUTES.get(op) is requantized:
        out.append("quantize")
    return out


def _float_shape(shape: tuple[int, ...], s: dict, profile: Profile) -> tuple[int, ...]:
    x = np.zeros(shape, np.float32)
    return np.shape(matmul(x, s, profile) if s["op"] == "matmul" else compute(x, s, profile))


def _host_checks(shape: tuple[int, ...], ghost: QTensor | None, s: dict, profile: Profile) -> None:
    """A requantize's host-side checks run at the call whatever its input holds (burn-backend's ``compute_range``
    asserts the shape against the block size before any op is queued): a stream op's failure or a fused kernel's does
    not stop them."""
    requant = ROUTES.get(s["op"]) is requantized or s["op"] in NOT_FORWARDED or s["op"] == "stack"
    if ghost is None or not requant:
        return
    try:
        quantize_dynamic(np.zeros(shape, np.float32), ghost.scheme, profile=profile)
    except UndefinedBehaviour:  # a value nobody reads (the tensor holds a failure): only the checks matter
        pass
    except BurnPanic as p:
        if not failed_on_stream(p, profile) and _past_compile_failure(p, profile) is None:
            raise


def _errored_float(held: Errored, s: dict, profile: Profile) -> Errored:
    """Float-op step ``s`` on a tensor held in error: each unit of work skipped one deeper; a sort reads its input
    back first, and meets the failure there."""
    work = units(s, held.ghost, profile)
    if s["op"] in HOST_READS:  # what it reads is the dequantized tensor (a float one itself)
        raise read_by_sort(skipped_below(held.failure, held.depth + (held.ghost is not None)))
    shape = _float_shape(held.shape, s, profile)
    _host_checks(shape, held.ghost, s, profile)
    requantized_ghost = held.ghost is not None and work[-1] == "quantize"
    ghost = replace(held.ghost, codes=np.zeros(shape, np.int8)) if requantized_ghost else None
    return Errored(held.failure, held.depth + len(work), shape, ghost)


def _failed_float(held: QTensor, s: dict, p: BurnPanic, profile: Profile) -> Errored:
    """Float-op step ``s`` whose stream op failed with ``p``: where the dequantize failed (the backend's launch, fusion
    declining the scheme) the units after it are skipped; else the requantize's quantize failed, its output the
    error itself. A sort's read of a failed dequantize reports it."""
    p = surfaced_at_read(p)
    work = units(s, held, profile)
    try:
        values(held, profile)
        failed_at = len(work) - 1  # the dequantize ran: the last unit (the quantize) failed
    except UndefinedBehaviour:  # it ran, on what is not there
        failed_at = len(work) - 1
    except BurnPanic:
        failed_at = 0
    if s["op"] in HOST_READS:
        raise read_by_sort(p)
    shape = _float_shape(held.codes.shape, s, profile)
    _host_checks(shape, held, s, profile)
    ghost = replace(held, codes=np.zeros(shape, np.int8)) if work[-1] == "quantize" else None
    return Errored(p, len(work) - 1 - failed_at, shape, ghost)


def _failed_operand(held, s: dict, profile: Profile) -> Errored | None:
    """The output of step ``s`` whose quantized operand (``quantized_operand``) failed its on-device quantize on the
    stream: it holds that failure one unit below for a matmul (``q_matmul`` is one op) or for an :data:`ELEMENTWISE`
    op whose kernel reads the operand's scheme itself, two where the operand's dequantize runs alone (measured on
    both fused builds: ``q.sub(p)`` with ``p`` Native Q8S is read 1 deep, ``q.mul(p)`` with ``p`` Native E4M3 2 deep).
    None when the step has no such operand or its quantize did not fail on the stream."""
    if "rhs_scheme" not in s:
        return None
    try:
        quantized_operand(s, profile)
        return None
    except BurnPanic as p:
        if not failed_on_stream(p, profile):
            raise
        failure = surfaced_at_read(p)
    # An elementwise op's own dequantize of the held tensor failing too: the output holds that (measured: q.mul(p),
    # q two-level); q_matmul, one op, holds the operand's.
    own = None if s["op"] == "matmul" or not isinstance(held, QTensor) else \
        _stream_failure(lambda: values(held, profile), profile)
    if own is not None:
        return _failed_float(held, s, own, profile)
    fused = s["op"] == "matmul" or (s["op"] in ELEMENTWISE and
                                    fused_read(QuantScheme.from_json(s["rhs_scheme"]), profile) is not None)
    ghost = np.zeros(np.shape(held.codes if isinstance(held, QTensor) else held), np.float32)
    if s["op"] == "matmul":  # numpy's broadcast, without the GEMM's own checks of values nobody computes
        shape = np.matmul(ghost, np.zeros(s["shape"], np.float32)).shape
    else:
        shape = np.shape(compute(ghost, {k: v for k, v in s.items() if k != "rhs_scheme"}, profile))
    return Errored(failure, 1 if fused else 2, shape, None)


def _stream_failure(run: Callable[[], object], profile: Profile) -> BurnPanic | None:
    """The stream op's failure ``run`` raises, None if it raises none (a compile failure, which errors no tensor,
    and undefined values count as none)."""
    try:
        run()
    except BurnPanic as p:
        if failed_on_stream(p, profile):
            return p
    except UndefinedBehaviour:
        pass
    return None


def stream_step_float(held, s: dict, profile: Profile):
    """One step of a chain on burn-fusion's stream: a failure is held by the step's output (:class:`Errored`)."""
    failed = None if isinstance(held, Errored) else _failed_operand(held, s, profile)
    if failed is not None:
        return failed
    if isinstance(held, Errored):
        if s["op"] in ROUTES:
            return _errored_float(held, s, profile)
        if s["op"] == "matmul":
            return Errored(held.failure, held.depth + 1, _float_shape(held.shape, s, profile), None)
        if s["op"] == "stack":
            for part in stack_steps(s, held.shape):
                held = _errored_layout(held, part, profile)
            return held
        return _errored_layout(held, s, profile)
    if s["op"] in ROUTES:
        try:
            return float_step(held, s, profile)
        except BurnPanic as p:
            if not (failed_on_stream(p, profile) and isinstance(held, QTensor)):
                raise
            return _failed_float(held, s, p, profile)
    if s["op"] == "stack":
        for part in stack_steps(s, np.shape(held.codes if isinstance(held, QTensor) else held)):
            held = stream_step_float(held, part, profile)
        return held
    if s["op"] == "matmul":
        return _stream_matmul(held, s, profile)
    return stream_step(held, s, profile)


def _stream_matmul(held, s: dict, profile: Profile):
    """``matmul`` on the stream: burn-fusion runs ``q_matmul`` as one op (src/ops/qtensor.rs), so a failed one is
    its float output's own error, and a matmul on a tensor held in error is skipped one deeper."""
    try:
        return matmul(held, s, profile)
    except BurnPanic as p:
        if not (failed_on_stream(p, profile) and isinstance(held, QTensor)):
            raise
        return Errored(surfaced_at_read(p), 0, _float_shape(held.codes.shape, s, profile), None)


def _errored_layout(held: Errored, s: dict, profile: Profile):
    """A layout step on a tensor held in error (``Errored.then``), except that a step burn-dispatch does not forward
    (``NOT_FORWARDED``) runs its trait default's three units, the dequantize, the float op and the quantize
    (measured: ``gather`` then ``abs`` of a failed on-device quantize is read 6 deep: 3 + 2 + the read's 1); its
    requantize's host-side checks still run."""
    out = held.then(s, profile)
    if isinstance(out, Errored):
        if s["op"] in NOT_FORWARDED and held.ghost is not None:
            out = replace(out, depth=out.depth + 2)
        _host_checks(out.shape, held.ghost, s, profile)
    return out


def _past_compile_failure(p: BurnPanic, profile: Profile) -> Profile | None:
    """The profile that runs the step again past a kernel's compile failure ``p`` (the fused i8 read, WGSL's scalar
    fp8 scale: both "bytes never written", cubecl-runtime's ``Unwritten``, no stream op's error), None for any other
    panic."""
    if p.code == profile.fused_i8_panic:
        return profile.with_(fused_i8_panic=None)
    if p.code in MATMUL_I8_FAILURES:
        return profile
    if p.code in FP8_SCALAR_FAILURES:
        return profile.with_(**{field: tuple(c for c in getattr(profile, field) if c != "wgsl.fp8_scales")
                                for field in ("quantize_checks", "dequantize_checks")})
    return None


def stream_chain(held, steps: list[dict], profile: Profile, upload: BurnPanic | None = None):
    """:func:`run_chain` on a fused build (``Profile.errored_float_ops``). A kernel's compile failure (the fused i8
    read, ``fused_i8_panic``; WGSL's scalar fp8 scale, ``wgsl.fp8_scalar_unwritten``) is no stream op's: the launch
    returns and the bytes are never written, so it is met only by a read of bytes nothing errored (measured: ``abs``
    of a Native Q8S tensor reads its failed requantize, skipped 1, where ``neg`` reads the compile failure); the
    chain goes on past it as if the kernel had run. A deferred ``upload`` panic is what a read meets last: after a
    failure the tensor holds, and after a compile failure on the way (measured on the fused 0.22.1 WGSL binary: an
    oversized E2M1 upload with UE4M3 scales reads the scale's compile failure bare, after ``abs``, ``topk`` or
    ``sort``, and a refused reshape's failure after a reshape)."""
    late = None
    for s in steps:
        if s["op"] in HOST_READS and not isinstance(held, Errored):
            if late is not None:
                raise read_by_sort(late)
            if upload is not None:
                _read_for_sort(held, s, profile)
                raise upload
        try:
            held = stream_step_float(held, s, profile)
        except BurnPanic as p:
            past = _past_compile_failure(p, profile)
            if past is None:
                raise
            late = late or p
            if s["op"] in HOST_READS:
                raise read_by_sort(p) from None
            held = _past_step(held, s, past, stream_step_float)
    if isinstance(held, Errored) or (late is None and upload is None):
        return read_back(held, profile)
    if late is not None:
        raise late
    try:
        read_back(held, profile)
    except BurnPanic as p:
        if p.code in COMPILE_FAILURES:
            raise p from None
    except UndefinedBehaviour:  # what the upload's panic leaves unread
        pass
    raise upload
