"""Quantized tensors in motion: a chain of layout ops applied to a QFloat tensor through burn's public ``Tensor``
API (spec §9), and quantizing a non-contiguous view.

One concept per module: ``oracle/views.py`` is what a step does to a plain array, ``oracle/routes.py`` what a
backend does with it on a quantized tensor (its route, a row of :data:`~oracle.routes.ROUTES` per
``Profile.layout``), ``oracle/layout_checks.py`` burn-cubecl's admission checks. This module chains them: a tensor
loaded from its parts, each step on what the backend holds, the result read back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .codec import into_data
from .dequantize import _reload, stored_axes, stored_swapped
from .errors import BurnPanic, UndefinedBehaviour, skipped_below, surfaced_at_read
from .layout_checks import check_wgsl_matmul
from .profile import Profile
from .qtensor import QTensor
from .routes import ROUTES, check_matmul, float_, float_i8, requantize, route, stand_in, values
from .scheme import NATIVE
from .support import fused_read
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
    if _no_op(s, held.codes.shape, profile):
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


def _no_op(s: dict, shape: tuple[int, ...], profile: Profile) -> bool:
    """A step that leaves the tensor as it is, no op run: an identity, and in a fused build a reshape to the shape it
    has (burn-fusion-0.22.1 src/ops/qtensor.rs:156-159 returns the tensor before burn-cubecl's checks)."""
    same_shape = profile.keeps_same_shape_reshape and s["op"] == "reshape" and list(s["shape"]) == list(shape)
    return is_identity(s, len(shape)) or same_shape


# Layout ops burn-dispatch-0.22.1 does not forward to the backend (no q_gather, q_repeat_dim, q_cat in src/ops/
# qtensor.rs): their trait default (burn-backend-0.22.1 src/backend/ops/qtensor.rs:21-49, :922-935) queues the
# dequantize, the float op and quantize_dynamic's ops on the stream one by one.
NOT_FORWARDED = frozenset({"gather", "repeat_dim", "cat"})


def _depth_below_failure(held: QTensor | np.ndarray, s: dict, profile: Profile) -> int:
    """How many stream ops below the failed one step ``s`` leaves its output: a dequantize that failed is followed by
    the float op (a ``float_`` route; burn-fusion runs ``q_matmul`` as one op, src/ops/qtensor.rs:468), and under a
    trait default also by the quantize (``NOT_FORWARDED``: measured where fusion declines the scheme, a two-level
    one, and for a ``cat`` of copies along a dim of extent 1, a ``stack`` included; otherwise a scheme fusion reads
    fails at depth 0 there; measured on both fused builds in fresh processes, not located)."""
    if not isinstance(held, QTensor):
        return 0
    if route(s, held, profile) in (float_, float_i8):
        return int(s["op"] != "matmul")
    if s["op"] not in NOT_FORWARDED:
        return 0
    along_one = s["op"] == "cat" and s["copies"] > 1 and held.codes.shape[s["dim"]] == 1
    return 2 if along_one or fused_read(held.scheme, profile) is None else 0


@dataclass(frozen=True)
class Errored:
    """A tensor a fused build holds in error (burn-ir-0.22.1 src/handle.rs:60-160, ``Handle::Errored``): a stream op
    ``depth`` ops above it failed with ``failure`` (``fusion.deferred``). Nothing is raised until a read needs it;
    each op run on it is skipped one deeper, and a result burn-tensor makes without the backend
    (``empty_short_cut``) leaves the error behind. ``ghost``: the quantized tensor it stands for (its scheme picks
    the routes of later steps), None for a float one."""

    failure: BurnPanic
    depth: int
    shape: tuple[int, ...]
    ghost: QTensor | None

    @classmethod
    def of_step(cls, held: QTensor | np.ndarray, s: dict, failure: BurnPanic, profile: Profile) -> Errored:
        """The output of step ``s`` on ``held``, whose op failed (``_depth_below_failure`` deep)."""
        floated = isinstance(held, QTensor) and route(s, held, profile) in (float_, float_i8)
        ghost = held if isinstance(held, QTensor) and not floated else None
        shape = np.shape(held.codes if isinstance(held, QTensor) else held)
        return cls(failure, 0, shape, ghost)._moved(s, profile, _depth_below_failure(held, s, profile))

    def _moved(self, s: dict, profile: Profile, depth: int) -> Errored:
        s = resolve_step(self.shape, s, profile.reshape_zero_keeps_dim)
        shape = apply(np.zeros(self.shape, np.float32), s).shape
        ghost = self.ghost and replace(self.ghost, codes=np.zeros(shape, np.int8))
        return Errored(self.failure, self.depth + depth, shape, ghost)

    def then(self, s: dict, profile: Profile) -> Errored | np.ndarray:
        """The next step, skipped (or, where burn-tensor answers it alone, the fresh result)."""
        if _no_op(s, self.shape, profile):
            return self
        if empty_short_cut(s, self.shape):
            return np.zeros(apply(np.zeros(self.shape, np.bool_), s).shape, np.float32)
        floated = self.ghost is not None and route(s, self.ghost, profile) in (float_, float_i8)
        # burn-tensor's vec-mat turn (``vecmat_swap``) is three ops: swap_dims on the lhs, the matmul, swap_dims back
        moved = self._moved(s, profile, 3 if vecmat_swap(s, self.shape) is not None else 1)
        return replace(moved, ghost=None) if floated else moved

    def read(self) -> BurnPanic:
        """What the read reports: a quantized tensor is read through one more op, its dequantize."""
        return skipped_below(self.failure, self.depth + (self.ghost is not None))


def failed_on_stream(p: BurnPanic, profile: Profile) -> bool:
    """Whether ``p`` is a stream op's failure on this build: deferred to a read (``fusion.deferred``) or one of the
    panics burn-fusion's queued ops raise on its device thread (``Profile.stream_panics``)."""
    return p.code == "fusion.deferred" or p.code in profile.stream_panics


QUEUED_LAYOUT_OPS = frozenset({"reshape", "transpose", "swap_dims", "permute", "flip", "select", "slice", "expand"})
"""Layout steps burn-fusion queues as one stream op that runs the backend's own ``q_*`` on its device thread
(burn-fusion src/ops/qtensor.rs: 0.22.1 and 0.23.0-pre.1 alike); ``gather``, ``repeat_dim`` and ``cat`` are trait
defaults above the backend, each of their ops queued on its own."""

QUANTIZE_DYNAMIC_CHECKS = frozenset({"range.block_not_divisible", "range.absmean_two_level",
                                     "qparams.block_dtype_too_wide"})
"""burn-backend's ``quantize_dynamic`` default's host-side asserts: inside a queued layout op (burn-cubecl's
requantizing ``q_select`` / ``q_slice``) they run on the stream too (found by fuzzing the fused 0.23 WGSL binary,
seed 20261216: qlayout case 1007, float_ops case 7127, a ``select`` that leaves a partial block)."""


def queued_failure(p: BurnPanic, s: dict, profile: Profile) -> bool:
    """Whether step ``s``'s panic ``p`` is raised on the stream (:func:`failed_on_stream`), counting the
    requantize's own asserts in a :data:`QUEUED_LAYOUT_OPS` step."""
    return failed_on_stream(p, profile) or (profile.errored_handles and s["op"] in QUEUED_LAYOUT_OPS
                                            and p.code in QUANTIZE_DYNAMIC_CHECKS)


def stream_step(held: QTensor | np.ndarray | Errored, s: dict, profile: Profile):
    """:func:`step` as a fused build runs it: a stream op's failure is held by its output (:class:`Errored`) and
    reported by the read that needs it (``Profile.errored_handles``); elsewhere it is raised at the call."""
    if isinstance(held, Errored):
        return held.then(s, profile)
    try:
        return step(held, s, profile)
    except BurnPanic as p:
        if not (profile.errored_handles and queued_failure(p, s, profile)):
            raise
        return Errored.of_step(held, s, surfaced_at_read(p), profile)


def load(qt: QTensor, profile: Profile) -> QTensor:
    """``Tensor::from_data(TensorData::quantized(..))``: the CPU backends keep the codes and scales they read and
    rewrite the store to Native (``q_from_data``), except flex >= 0.23.0-pre.1, which keeps it
    (``moves_packing_dim``)."""
    codes, scales, glob = _reload(qt, profile)
    scheme = qt.scheme if profile.moves_packing_dim else qt.scheme.with_store(NATIVE)
    memory = stored_axes(qt.scheme, codes.shape) if stored_swapped(qt.scheme, codes.shape, profile) else None
    return QTensor(np.asarray(codes, dtype=np.int8), scales, glob, scheme, memory_axes=memory)


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
        requantized = 0
        for s in steps:
            requantized += isinstance(held, QTensor) and route(s, held, profile) is requantize
            held = step(held, s, profile)
        if profile.upload_flushed_by_launches and requantized >= 2:
            raise UndefinedBehaviour("wgpu copies the oversized upload when cubecl-wgpu's stream flushes: at the "
                                     "read (its range assert), or inside the launch that fills the queue (32 tasks; "
                                     "the read then reports that launch as torn down); two requantizing steps may "
                                     "queue that many, and the oracle does not count launches")
        raise upload
    if stages is not None and all(s["op"] in PURE_MOVES for s in steps):
        try:
            stages.moved = view(values(held, profile), resolved(qt.codes.shape, steps, profile.reshape_zero_keeps_dim))
        except BurnPanic:  # the backend's dequantize refuses what it holds (WGSL: Native codes), or a step panics
            stages.moved = None
    for i, s in enumerate(steps):
        try:
            held = stream_step(held, s, profile)
        except BurnPanic as p:
            if not (_unwritten(p, profile) or (profile.errored_handles and p.code in READ_FAILURES)):
                raise
            return _past_read_failure(held, steps[i:], p, profile)
    return read_back(held, profile)


UNWRITTEN_MATMUL = frozenset({"wgsl.matmul_i8_unwritten", "wgsl.fp8_scalar_unwritten"})
"""A matmul kernel WGSL cannot compile, reported at the read as bytes never written (``read_failure``)."""

READ_FAILURES = frozenset({"fusion.deferred", "fusion.skipped"})
"""A failure a fused build's tensor holds, raised by the read that needs it (``Errored.read``)."""


def _unwritten(p: BurnPanic, profile: Profile) -> bool:
    """A kernel that failed to compile and returned (WGSL's i8 or scalar fp8 declarations, the fused i8 read): its
    output is never written, and only a read of its bytes meets the failure."""
    return p.code in UNWRITTEN_MATMUL or p.code == profile.fused_i8_panic


def _past_read_failure(held: QTensor | np.ndarray, steps: list[dict], failure: BurnPanic,
                       profile: Profile) -> tuple[np.ndarray, None]:
    """``steps[0]`` failed in a way only a read reports: its output is never written (:func:`_unwritten`) or holds
    the failure (:data:`READ_FAILURES`). The later steps run on it (their host-side panics first); a result
    burn-tensor makes alone (``empty_short_cut``) reads nothing of it, and neither does a result with no element
    of unwritten bytes, so it comes back empty (found by fuzzing the 0.22.1 WGSL binary, seed 20261216, qlayout
    cases 25 and 289: a Native Q8S matmul, then ``select`` of no index or a ``reshape`` with a 0; and the fused
    0.23 WGSL binary, qlayout cases 235 and 18119: a fused read of Native Q8S codes, then ``repeat_dim`` 0 times;
    an empty ``select`` whose requantize failed on the stream, then a ``cat`` of empty tensors)."""
    shape = np.shape(held.codes if isinstance(held, QTensor) else held)
    fresh, in_block = False, failure.code == profile.fused_i8_panic
    if in_block:
        _check_block_step(steps[0], shape)
    x = step(np.zeros(shape, np.float32), steps[0], profile)
    for s in steps[1:]:
        if in_block and s["op"] != "mul_scalar":
            _check_block_step(s, x.shape)
            in_block = False
        fresh = fresh or empty_short_cut(s, x.shape)
        x = step(x, s, profile)
    if not (fresh or (x.size == 0 and _unwritten(failure, profile))):
        raise failure
    return np.ascontiguousarray(x, dtype=np.float32), None


def _check_block_step(s: dict, shape: tuple[int, ...]) -> None:
    """The step that reads Native i8 codes in a fused elementwise block, or the one that ends the block, on a tensor
    of ``shape``. A dim of size 1 there makes the outcome the process's: burn-fusion runs the block fused (its i8
    compile failure) or op by op (B::dequantize's launch check, ``Q8S is not supported for native quantization``) by
    what its stream stored before. Measured on the fused 0.23 WGSL binary: qlayout case 56 (``mul_scalar`` twice,
    then ``gather`` on a ``[1]``) reads the launch check first in two fresh processes and the compile failure after
    three other i8 chains; cases 2848, 3118, 3422 and 14239 (an ``expand`` of a ``[1, 4, 2]``, ``[1, 3, 2]`` or
    ``[1, 7, 4]`` tensor; a ``mul_scalar`` of a ``[1, 6, 1]`` one) read the compile failure alone, the launch check
    thousands of cases into a campaign. No tensor without a dim of size 1 was seen to change (a ``select`` along a dim
    of 4, or of 5 in ``float_ops``, reads the compile failure in a fresh process too)."""
    if 1 in shape:
        raise UndefinedBehaviour("a fused read of Native i8 codes in a block on a tensor with a dim of size 1: "
                                 "burn-fusion runs the block fused (the i8 compile failure) or op by op (the "
                                 "dequantize's launch check) by what the process ran before")


def read_back(held: QTensor | np.ndarray | Errored, profile: Profile) -> tuple[np.ndarray, QTensor | None]:
    """What the chain's caller reads of the tensor held at the end: ``dequantize()`` (or the float tensor itself)
    as contiguous f32, and for a quantized one its ``into_data()`` (``None`` for a float result)."""
    if isinstance(held, Errored):
        raise held.read()
    try:
        x = np.ascontiguousarray(values(held, profile), dtype=np.float32)
    except UndefinedBehaviour:
        if isinstance(held, QTensor) and held.undefined is not None:  # values unknown: its store may still be refused
            sure = stand_in(held)
            into_data(QTensor(np.ascontiguousarray(sure.codes), sure.scales, sure.global_scale, sure.scheme),
                      profile=profile)
        raise
    if isinstance(held, np.ndarray):
        return x, None
    return x, into_data(QTensor(np.ascontiguousarray(held.codes), held.scales, held.global_scale, held.scheme),
                        profile=profile)
