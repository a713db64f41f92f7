"""The float semantics of a layout step: what one ``Tensor`` call does to a plain array (spec §9).

A *step* is one ``Tensor`` call, as JSON: ``{"op": "reshape", "shape": [..]}``, ``{"op": "transpose"}``,
``{"op": "swap_dims", "dims": [a, b]}``, ``{"op": "permute", "axes": [..]}``, ``{"op": "flip", "axes": [..]}``,
``{"op": "slice", "ranges": [[start, end, step], ..]}``, ``{"op": "select", "dim": d, "indices": [..]}``,
``{"op": "gather", "dim": d, "indices": [..], "shape": [..]}`` (an index tensor, flat row-major),
``{"op": "repeat_dim", "dim": d, "times": n}``, ``{"op": "cat", "dim": d, "copies": n}`` (the tensor
concatenated with itself), ``{"op": "expand", "shape": [..]}``,
``{"op": "mul_scalar", "value": v}``, ``{"op": "matmul", "rhs": [..], "shape": [..]}`` (times a float tensor;
the product is exact then rounded once, a backend's GEMM is compared within its error bound).

These are also what the codes undergo when they move; what a backend does with a step on a *quantized* tensor is
``oracle/routes.py``'s.
"""

from __future__ import annotations

import math

import numpy as np

from .choices import FixedStep
from .errors import UndefinedBehaviour, panic
from .strides import reshape_action, row_major
from .vocabulary import LAYOUT_STEPS

STEP_OPS = LAYOUT_STEPS
# Steps that only move (or repeat) elements: for them a user expects dequantize(op(q)) == op(dequantize(q)).
PURE_MOVES = frozenset({"reshape", "transpose", "swap_dims", "permute", "flip", "slice", "select", "gather",
                        "repeat_dim", "cat", "expand"})
PERMUTES = ("transpose", "swap_dims", "permute")


def axes_of(step: dict, rank: int) -> list[int]:
    """The permutation a permute-like step applies (``None`` for other steps)."""
    axes = list(range(rank))
    if step["op"] == "transpose":
        axes[-2], axes[-1] = axes[-1], axes[-2]
    elif step["op"] == "swap_dims":
        a, b = step["dims"]
        axes[a], axes[b] = axes[b], axes[a]
    elif step["op"] == "permute":
        axes = list(step["axes"])
    return axes


def apply(a: np.ndarray, step: dict) -> np.ndarray:
    """The step on a plain array (numpy's view semantics equal burn's element semantics for each op)."""
    op = step["op"]
    if op == "reshape":
        check_reshape_count(a.shape, step["shape"])
        return a.reshape(step["shape"])
    if op in ("transpose", "swap_dims", "permute"):
        return a.transpose(axes_of(step, a.ndim))
    if op == "flip":
        return np.flip(a, tuple(step["axes"]))
    if op == "slice":
        return a[tuple(burn_slice(r, n) for r, n in zip(step["ranges"], a.shape))]
    if op == "select":
        return np.take(a, np.asarray(step["indices"], dtype=np.int64), axis=step["dim"])
    if op == "gather":
        idx = np.asarray(step["indices"], dtype=np.int64).reshape(step["shape"])
        return np.take_along_axis(a, idx, axis=step["dim"])
    if op == "cat":
        return np.concatenate([a] * step["copies"], axis=step["dim"])
    if op == "repeat_dim":
        reps = [1] * a.ndim
        reps[step["dim"]] = step["times"]
        return np.tile(a, reps)
    if op == "expand":
        return np.broadcast_to(a, step["shape"])
    if op == "matmul":
        lhs = a.astype(np.float64)
        rhs = np.asarray(step["rhs"], dtype=np.float32).reshape(step["shape"]).astype(np.float64)
        check_gemm_order(lhs, rhs)
        with np.errstate(over="ignore"):  # an exact sum past f32's range is inf in f32, as every order gives
            return np.matmul(lhs, rhs).astype(np.float32)
    if op == "mul_scalar":
        return (a.astype(np.float32) * np.float32(step["value"])).astype(np.float32)
    raise ValueError(f"unknown layout step {op!r}; known: {', '.join(STEP_OPS)}")


F32_MAX = float(np.finfo(np.float32).max)


def check_gemm_order(lhs: np.ndarray, rhs: np.ndarray) -> None:
    """An f32 GEMM rounds every partial sum to f32, in an order that is the backend's. With ``P`` and ``N`` the
    magnitude sums of one output's positive and negative products, an order that adds the positives first reaches
    +inf exactly when ``P > f32::MAX`` (and -inf when ``N`` is), one that interleaves them need not. So the answer
    depends on the order where both can overflow (+inf meets -inf: NaN, or either inf), or where one can and the
    exact sum ``P - N`` is finite in f32 (found by fuzzing: burn-flex gives inf where the exact sum is 1.06e37, and
    NaN where an inf input's -inf product meets positive products past f32::MAX). Everywhere else every order gives
    the exact sum's f32 rounding, ``±inf`` included, within the GEMM bound; an inf times a 0, or products of both
    infinities, are NaN in every order."""
    with np.errstate(invalid="ignore", over="ignore"):
        prod = lhs[..., :, :, None] * rhs[..., None, :, :]  # [.., m, k, n]: each product once (no inf * 0 of a split)
        pos, neg = np.where(prod > 0, prod, 0).sum(axis=-2), np.where(prod < 0, -prod, 0).sum(axis=-2)
        big_p, big_n = pos > F32_MAX, neg > F32_MAX
        defined = np.isnan(prod).any(axis=-2) | (np.isinf(pos) & np.isinf(neg))
        either = (big_p & big_n) | ((big_p ^ big_n) & (np.abs(pos - neg) <= F32_MAX))
    if (either & ~defined).any():
        raise UndefinedBehaviour("an f32 GEMM whose partial sums overflow in some summation order and not in "
                                 "another: the answer is the backend's summation order's")


def burn_slice(r: list[int], size: int) -> slice:
    """burn's ``Slice::new(start, Some(end), step)`` on a dim of ``size``, as a numpy view: negative bounds count
    from the end and every bound is clamped into ``0..=size`` (``convert_signed_index``); the elements are those of
    ``start..end``, every ``step``-th counted from ``start`` for a positive step and from the *last* element of the
    range for a negative one (``Slice::output_size``: ``ceil(len / |step|)``; burn-std-0.22.1
    src/tensor/slice.rs:493-545). numpy's ``slice(start, end, -k)`` walks from ``start`` down instead."""
    start, end, by = r
    lo, hi = (min(size, max(0, size + i if i < 0 else i)) for i in (start, end))
    if lo >= hi:
        return slice(0, 0)
    if by > 0:
        return slice(lo, hi, by)
    return slice(hi - 1, lo - 1 if lo > 0 else None, by)


def resolve_step(shape: tuple[int, ...], s: dict, zero_keeps_dim: bool) -> dict:
    """Step ``s`` on a tensor of ``shape`` with its ``reshape`` target as burn reads it: where ``zero_keeps_dim``
    (``Profile.reshape_zero_keeps_dim``), a 0 at index ``i`` is the source's dim ``i`` (past the source's rank,
    ``self.dims[idx]`` panics); otherwise the target is literal. Then its element count is checked, as burn-tensor's
    ``ReshapeArgs::into_shape`` does before any backend's reshape runs. A ``matmul`` step's float side is checked
    against the rank here too (:func:`check_matmul_rank`), before the step reaches any route."""
    if s["op"] == "matmul":
        check_matmul_rank(shape, s)
    if s["op"] != "reshape":
        return s
    if zero_keeps_dim and 0 in s["shape"]:
        past = [i for i, n in enumerate(s["shape"]) if n == 0 and i >= len(shape)]
        if past:
            raise panic("tensor.reshape_zero_index", len=len(shape), index=past[0])
        s = dict(s, shape=[shape[i] if n == 0 else n for i, n in enumerate(s["shape"])])
    # burn-tensor's `into_shape` checks the count before the backend's reshape sees the target (its checks come after)
    check_reshape_count(shape, s["shape"])
    return s


def check_matmul_rank(shape: tuple[int, ...], s: dict) -> None:
    """``Tensor<B, D>::matmul(other: Tensor<B, D>)``: a float other side of another rank is no call burn's typed API
    can make, so such a step is a malformed request, not a panic of burn's."""
    other = s.get("shape")
    if isinstance(other, list) and len(other) != len(shape):
        raise ValueError(f"a matmul step's float side has rank {len(other)} ({other}), the tensor rank {len(shape)} "
                         f"({list(shape)}): burn's matmul takes two tensors of the same rank")


def check_reshape_count(shape: tuple[int, ...], target: list[int]) -> None:
    """burn-tensor's element-count check of a reshape target (a 0 reaches here as the profile reads it)."""
    if math.prod(target) != math.prod(shape):
        raise panic("tensor.reshape_count", source=list(shape), target=list(target))


def resolved(shape: tuple[int, ...], steps: list[dict], zero_keeps_dim: bool) -> list[dict]:
    """The chain's steps as burn reads them (:func:`resolve_step`), followed through the shapes (a panic of any
    step's is raised)."""
    out, probe = [], np.zeros(shape, np.bool_)  # zeros: a matmul probe never overflows
    for s in steps:
        out.append(resolve_step(probe.shape, s, zero_keeps_dim))
        probe = apply(probe, out[-1])
    return out


def view(x: np.ndarray, steps: list[dict]) -> np.ndarray:
    """A float tensor after the float steps (a non-contiguous view of ``x``), materialized row-major."""
    for step in steps:
        x = apply(x, step)
    return np.ascontiguousarray(x)


VIEW_READ = FixedStep("view_read", view, "a non-contiguous input is read in its logical (row-major view) order "
                      "(burn-ndarray into_data, burn-flex to_contiguous)")


def view_strides(shape: tuple[int, ...], steps: list[dict], unit_free: bool = True) -> tuple[int, ...]:
    """The element strides of burn-cubecl's float view after ``steps`` on a contiguous tensor: permutes permute the
    strides (``ops/base.rs:103-160``), ``expand`` gives broadcast dims stride 0, a reshape follows
    :func:`reshape_action` (a copy is row-major), a step-1 slice at offset 0 keeps to metadata
    (``kernel/index/slice.rs:18-47``) but an empty one is a fresh empty tensor (burn-tensor-0.22.1
    src/tensor/api/base.rs:1357-1360); everything else (flip, select, gather, cat, repeat) is written by a kernel
    into a fresh contiguous tensor. An approximation, not measured: an offset slice is a copy (burn keeps the view
    when both offsets are multiples of the device's memory alignment)."""
    shape, strides = tuple(shape), row_major(shape)
    for s in steps:
        new = apply(np.empty(shape, np.bool_), s).shape
        if s["op"] in PERMUTES:
            strides = tuple(strides[a] for a in axes_of(s, len(shape)))
        elif s["op"] == "expand":
            lead = len(new) - len(shape)
            strides = tuple(0 if i < lead or shape[i - lead] != n else strides[i - lead] for i, n in enumerate(new))
        elif s["op"] == "slice" and new == shape and 0 not in new:
            pass  # offsets 0 at both ends: the same buffer, strides kept
        elif s["op"] == "reshape":
            strides = reshape_action(shape, strides, new, unit_free) or row_major(new)
        else:
            strides = row_major(new)
        shape = new
    return strides


def is_identity(step: dict, rank: int) -> bool:
    """burn-tensor's ``Tensor::swap_dims(d, d)`` and ``Tensor::permute`` with the identity axes return the tensor
    itself before reaching the backend (burn-tensor-0.22.0-pre.3 src/tensor/api/base.rs:470, :519; 0.22.1 :507,
    :556; 0.23.0-pre.1 :532, :581): no route runs, not even flex's requantization."""
    return step["op"] in ("swap_dims", "permute") and axes_of(step, rank) == list(range(rank))


def vecmat_swap(s: dict, shape: tuple[int, ...]) -> dict | None:
    """burn-tensor's ``Tensor::matmul`` computes ``[.., B, 1, K] @ [.., 1, K, N]`` as ``[.., 1, B, K] @ [.., 1, K,
    N]`` (burn-tensor-0.22.0-pre.3 src/tensor/api/numeric.rs:817-838, 0.22.1 and 0.23.0-pre.1 :841): it calls
    ``swap_dims(D-3, D-2)`` on the lhs first and on the product after. On a quantized lhs that swap is a layout op
    of its own (flex requantizes a block tensor), so the GEMM can see other values than the user's. Returns the
    swap step, or ``None`` when the shapes do not take that turn."""
    rank = len(shape)
    if s["op"] != "matmul" or rank < 3 or shape[-2] != 1 or s["shape"][-3] != 1:
        return None
    return {"op": "swap_dims", "dims": [rank - 3, rank - 2]}
