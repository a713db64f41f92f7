"""Quantized tensors in motion: a chain of layout ops applied to a QFloat tensor through burn's public ``Tensor``
API (spec §9), and quantizing a non-contiguous view.

One concept per module: ``oracle/views.py`` is what a step does to a plain array, ``oracle/routes.py`` what a
backend does with it on a quantized tensor (its route, a row of :data:`~oracle.routes.ROUTES` per
``Profile.layout``), ``oracle/layout_checks.py`` burn-cubecl's admission checks. This module chains them: a tensor
loaded from its parts, each step on what the backend holds, the result read back.
"""

from __future__ import annotations

import numpy as np

from .codec import into_data
from .dequantize import _reload
from .errors import BurnPanic, UndefinedBehaviour
from .layout_checks import check_wgsl_matmul
from .profile import Profile
from .qtensor import QTensor
from .routes import ROUTES, check_matmul, float_i8, route, values
from .scheme import NATIVE
from .stages import Stages
from .views import (PURE_MOVES, STEP_OPS, apply, is_identity, resolve_step, resolved, vecmat_swap, view,
                    view_strides)

# ROUTES, STEP_OPS, apply, resolved, vecmat_swap and view_strides are re-exported for callers that read them from here
# (conformance/generate.py, tests); their home is oracle/routes.py and oracle/views.py.
__all__ = ["ROUTES", "STEP_OPS", "apply", "load", "resolved", "run_steps", "step", "vecmat_swap", "view_strides"]


def empty_short_cut(s: dict, shape: tuple[int, ...]) -> bool:
    """Whether burn-tensor answers step ``s`` on a tensor of ``shape`` with ``K::empty(shape, device,
    creation_dtype())`` before any backend sees the call; a quantized tensor's creation dtype is the device's
    default float (f32), so the result is a float tensor: ``Tensor::slice`` with an empty result (burn-tensor-
    0.22.0-pre.3 src/tensor/api/base.rs:1319-1322, 0.22.1 :1357-1360, 0.23.0-pre.1 :1382-1385),
    ``Tensor::repeat_dim`` 0 times (0.22.0-pre.3 :2296-2304, 0.22.1 :2386-2394) and ``Tensor::cat`` of tensors all
    empty along the dim (0.22.0-pre.3 :2491-2506, 0.22.1 :2587-2597). A non-empty result of an empty tensor, and
    every other step, reaches the backend."""
    if s["op"] == "slice":
        return apply(np.empty(shape, np.bool_), s).size == 0
    if s["op"] == "repeat_dim":
        return s["times"] == 0
    if s["op"] == "cat":
        return shape[s["dim"]] == 0
    return False


def step(held: QTensor | np.ndarray, s: dict, profile: Profile) -> QTensor | np.ndarray:
    """One ``Tensor`` call on what the backend holds (a ``reshape`` target read as the profile's release reads
    it)."""
    s = resolve_step(np.shape(held.codes if isinstance(held, QTensor) else held), s, profile.reshape_zero_keeps_dim)
    if s["op"] == "matmul" and profile.gemm_crashes:
        raise UndefinedBehaviour("the device crashes (SIGSEGV) in burn's float matmul kernel")
    if isinstance(held, np.ndarray):
        check_matmul(held.shape, s, profile)
        return np.ascontiguousarray(apply(held, s))
    if is_identity(s, held.codes.ndim):
        return held
    if empty_short_cut(s, held.codes.shape):
        return np.zeros(apply(held.codes, s).shape, np.float32)
    if s["op"] == "matmul" and route(s, held, profile) is float_i8:
        check_wgsl_matmul(held, profile)  # the kernel's declarations fail to compile whatever view it gets
    swap = vecmat_swap(s, held.codes.shape)
    if swap is not None:  # one of the swapped dims is 1: swapping back is a reshape
        swapped = values(step(held, swap, profile), profile)
        check_matmul(swapped.shape, s, profile)  # the GEMM burn runs is the swapped one
        return np.ascontiguousarray(apply(swapped.reshape(held.codes.shape), s))
    return route(s, held, profile)(s, held, profile)


def load(qt: QTensor, profile: Profile) -> QTensor:
    """``Tensor::from_data(TensorData::quantized(..))``: the CPU backends keep the codes and scales they read and
    rewrite the store to Native (``q_from_data``), except flex >= 0.23.0-pre.1, which keeps it
    (``moves_packing_dim``)."""
    codes, scales, glob = _reload(qt, profile)
    scheme = qt.scheme if profile.moves_packing_dim else qt.scheme.with_store(NATIVE)
    return QTensor(np.asarray(codes, dtype=np.int8), scales, glob, scheme)


def load_deferred(qt: QTensor, profile: Profile) -> tuple[QTensor, BurnPanic | None]:
    """``load``, except that wgpu copies an oversized upload (``oversized_upload_panic``) only when the queued work
    is flushed, at the first read-back: a host-side panic of a later step comes first (measured: a gather's
    requantization refusing its block size before a Q4/E2M1 upload's range panic)."""
    try:
        return load(qt, profile), None
    except BurnPanic as e:
        if e.code != profile.oversized_upload_panic:
            raise
        return load(qt, profile.with_(oversized_upload_panic=None)), e


def run_steps(qt: QTensor, steps: list[dict], profile: Profile,
              stages: Stages | None = None) -> tuple[np.ndarray, QTensor | None]:
    """The steps on a tensor built from its parts; returns the dequantized result and the quantized tensor held
    (``None`` for a float result). ``stages.moved`` receives ``op(dequantize(q))`` for a chain of pure moves:
    what a user expects the result to dequantize to."""
    held, upload = load_deferred(qt, profile)
    if upload is not None:  # the steps' own host-side panics come first; the read-back then meets the upload's
        for s in steps:
            held = step(held, s, profile)
        raise upload
    if stages is not None and all(s["op"] in PURE_MOVES for s in steps):
        try:
            stages.moved = view(values(held, profile), resolved(qt.codes.shape, steps, profile.reshape_zero_keeps_dim))
        except BurnPanic:  # the backend's dequantize refuses what it holds (WGSL: Native codes), or a step panics
            stages.moved = None
    for s in steps:
        held = step(held, s, profile)
    return read_back(held, profile)


def read_back(held: QTensor | np.ndarray, profile: Profile) -> tuple[np.ndarray, QTensor | None]:
    """What the chain's caller reads of the tensor held at the end: ``dequantize()`` (or the float tensor itself)
    as contiguous f32, and for a quantized one its ``into_data()`` (``None`` for a float result)."""
    x = np.ascontiguousarray(values(held, profile), dtype=np.float32)
    if isinstance(held, np.ndarray):
        return x, None
    return x, into_data(QTensor(np.ascontiguousarray(held.codes), held.scales, held.global_scale, held.scheme),
                        profile=profile)
