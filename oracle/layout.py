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
from .routes import ROUTES, float_i8, route, values
from .scheme import NATIVE
from .stages import Stages
from .views import PURE_MOVES, STEP_OPS, apply, is_identity, vecmat_swap, view, view_strides

# ROUTES, STEP_OPS, apply, vecmat_swap and view_strides are re-exported for callers that read them from here
# (conformance/generate.py, tests); their home is oracle/routes.py and oracle/views.py.
__all__ = ["ROUTES", "STEP_OPS", "apply", "load", "run_steps", "step", "vecmat_swap", "view_strides"]


def step(held: QTensor | np.ndarray, s: dict, profile: Profile) -> QTensor | np.ndarray:
    """One ``Tensor`` call on what the backend holds."""
    if s["op"] == "matmul" and profile.gemm_crashes:
        raise UndefinedBehaviour("the device crashes (SIGSEGV) in burn's float matmul kernel")
    if isinstance(held, np.ndarray):
        return np.ascontiguousarray(apply(held, s))
    if is_identity(s, held.codes.ndim):
        return held
    if s["op"] == "matmul" and route(s, held, profile) is float_i8:
        check_wgsl_matmul(held, profile)  # the kernel's declarations fail to compile whatever view it gets
    swap = vecmat_swap(s, held.codes.shape)
    if swap is not None:  # one of the swapped dims is 1: swapping back is a reshape
        return np.ascontiguousarray(apply(values(step(held, swap, profile), profile).reshape(held.codes.shape), s))
    return route(s, held, profile)(s, held, profile)


def load(qt: QTensor, profile: Profile) -> QTensor:
    """``Tensor::from_data(TensorData::quantized(..))``: the CPU backends keep the codes and scales they read and
    rewrite the store to Native (``q_from_data``), except flex >= 0.23.0-pre.1, which keeps it
    (``moves_packing_dim``)."""
    codes, scales, glob = _reload(qt, profile)
    scheme = qt.scheme if profile.moves_packing_dim else qt.scheme.with_store(NATIVE)
    return QTensor(np.asarray(codes, dtype=np.int8), scales, glob, scheme)


def _load_deferred(qt: QTensor, profile: Profile) -> tuple[QTensor, BurnPanic | None]:
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
    held, upload = _load_deferred(qt, profile)
    if upload is not None:  # the steps' own host-side panics come first; the read-back then meets the upload's
        for s in steps:
            held = step(held, s, profile)
        raise upload
    if stages is not None and all(s["op"] in PURE_MOVES for s in steps):
        try:
            stages.moved = view(values(held, profile), steps)
        except BurnPanic:  # the backend's dequantize refuses what it holds (WGSL: Native codes)
            stages.moved = None
    for s in steps:
        held = step(held, s, profile)
    x = np.ascontiguousarray(values(held, profile), dtype=np.float32)
    if isinstance(held, np.ndarray):
        return x, None
    return x, into_data(QTensor(np.ascontiguousarray(held.codes), held.scales, held.global_scale, held.scheme),
                        profile=profile)
