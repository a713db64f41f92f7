"""What a backend does with a layout step on a quantized tensor: its *route*, a function of the step, the tensor
it holds and the profile (burn's routing, spec §9.1: burn-tensor's bridge -> ``Dispatch`` -> the backend's ``q_*``
override or the trait default):

* :func:`move`: the codes move, the scheme and the stored scale list stay as they were (per-tensor everywhere on
  the CPU; ndarray also for per-block reshape/flip/slice/select, whose scale list then no longer follows its
  blocks);
* :func:`move_grid`: the codes move, the scale grid and the scheme's block dims are permuted with them (ndarray's
  ``q_permute``, which ``swap_dims``/``transpose`` reach);
* :func:`move_reshape`, :func:`move_grid_gpu`: ``move`` and ``move_grid`` after burn-cubecl's own checks
  (``oracle/layout_checks.py``: its ``q_reshape`` limits; a permute of a scale tensor a reshape left at its old
  rank); a reshape also gives the scale buffer the new shape's block grid;
* :func:`float_i8`: ``float`` after WGSL's refusal of a Native tensor's matmul kernel;
* :func:`private`: dequantize to f32, apply the float op, requantize with flex's own ``quantize_dynamic`` under
  the input scheme (block dims permuted for permute/swap): flex's ``block_safe_layout_op`` on per-block tensors;
* :func:`requantize`: the trait default ``dequant_op_quant!``: dequantize, float op, the public
  ``quantize_dynamic`` (``compute_range`` -> ``compute_q_params`` -> ``quantize``) with the input scheme;
* :func:`float_`: the result is a plain float tensor (burn-tensor's ``expand`` and every arithmetic op
  dequantize);
* a :class:`Refusal`: the backend refuses the op with a panic.

Each profile's choice is a row of :data:`ROUTES` (picked by ``Profile.layout``); nothing here branches on a
backend's name.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .blocks import BlockLayout, num_params, params_shape
from .choices import LAYOUT, FixedStep
from .dequantize import dequantize
from .errors import BurnPanic, UndefinedBehaviour, panic
from .layout_checks import check_gpu_reshape, check_gpu_scale_permute, keeps_scale_shape, kept_memory_axes
from .profile import Profile
from .qtensor import QTensor
from .quantize import flex_quantize_dynamic, quantize_dynamic
from .scheme import QuantScheme, QuantStore, ScaleDtype, shape_debug
from .strides import row_major
from .support import check_dequantize
from .views import apply, axes_of

# --- the routes ------------------------------------------------------------------------------------------------


def move(s: dict, held: QTensor, profile: Profile) -> QTensor:
    """The codes move; the scale list, the global and the scheme (but its packed dim) stay."""
    return QTensor(apply(held.codes, s), held.scales, held.global_scale,
                   follow_packing(held.scheme, s, held.codes.ndim, profile), undefined=held.undefined)


def move_grid(s: dict, held: QTensor, profile: Profile) -> QTensor:
    """ndarray ``q_permute``: codes, the scale grid (``params_shape``) and the block dims permuted alike."""
    axes = axes_of(s, held.codes.ndim)
    scales = held.scales
    if held.scheme.block_size() is not None and held.undefined is None:  # the grid of what is not there
        scales = scale_grid(held).transpose(axes).ravel()
    return permuted(s, held, profile, scales, held.scheme.permute_block_dims(held.codes.ndim, axes))


def move_reshape(s: dict, held: QTensor, profile: Profile) -> QTensor:
    """burn-cubecl's ``q_reshape``: its limits, then the codes move. The scale tensor takes the new shape's block
    grid (``params_shape``) over the same buffer, contiguous from its start, unless a 1-D block is longer than the
    new last dim (its lone scale kept as it is): a grid with fewer blocks keeps the first scales, which then no
    longer follow their blocks, and one with more reads past the buffer (``ops/base.rs:406-445``; measured: the
    words beyond it read as whatever the device memory holds there)."""
    check_gpu_reshape(held, s["shape"], profile)
    moved, shape = move(s, held, profile), s["shape"]
    moved = replace(moved, **reshaped_words(held, shape))
    memory = kept_memory_axes(held, shape, profile)
    if memory is not None:  # the values stay a strided view of their buffer
        moved = replace(moved, memory_axes=memory, last_axis_moved=memory[-1] != len(shape) - 1)
    if held.scheme.block_size() is None or not shape:
        return moved
    if keeps_scale_shape(held.scheme, shape):
        kept = held.codes.ndim if held.scale_rank is None else held.scale_rank
        return replace(moved, scale_rank=None if kept == len(shape) else kept)
    grid = num_params(shape, held.scheme)
    if grid > moved.scales.size:
        return replace(moved, undefined=PAST_BUFFER)
    return replace(moved, scales=moved.scales[:grid])


def reshaped_words(held: QTensor, shape: list[int]) -> dict:
    """``q_reshape`` reshapes the values' *words*, not the elements: the words view (the packed dim divided by the
    packing factor, counted in the old rank) takes the new shape with the packed dim divided again, counted in the
    new rank (``ops/base.rs:345-363``, ``UpdateStrides`` or a contiguous copy of the same words, :476-483). The
    lanes of a word run along the packed axis, so where that axis is an outer one (a store the GPU keeps packed
    along it, 0.23) a reshape that moves it reorders the elements: ``[4, 4] -> [4, 4, 1]`` transposes (burn bug,
    docs/findings.md). The new codes, as fields of the moved tensor (none where nothing changes)."""
    store, n, codes = held.scheme.store, held.scheme.num_quants(), held.codes
    if not store.packs_outer_dim or n == 1 or not shape or codes.ndim <= store.dim:
        return {}
    p, q = codes.ndim - 1 - store.dim, len(shape) - 1 - store.dim
    if codes.shape[p] % n:  # padded words: their count differs from the new shape's, which burn never checks
        return {"undefined": held.undefined or "a reshape of padded words (the packed dim not a whole number of words)"}
    split = (*codes.shape[:p], codes.shape[p] // n, n, *codes.shape[p + 1:])
    lanes = np.moveaxis(codes.reshape(split), p + 1, -1)
    words = [*shape[:q], shape[q] // n, *shape[q + 1:], n]
    return {"codes": np.moveaxis(lanes.reshape(words), -1, q + 1).reshape(shape)}


PAST_BUFFER = "a reshape gave the scale tensor more blocks than its buffer holds: its kernels read past the scales"
FROM_UNDEFINED = "requantized from undefined values"


def stand_in(held: QTensor) -> QTensor:
    """``held`` with a full scale grid (its buffer repeated) for the host-side checks of an op on a tensor whose
    values are undefined: the shapes are burn's, the values are not (the result stays undefined)."""
    if held.undefined is None:
        return held
    grid = num_params(held.codes.shape, held.scheme) if held.scheme.block_size() is not None else held.scales.size
    return replace(held, scales=np.resize(held.scales, grid), undefined=None)


def move_grid_gpu(s: dict, held: QTensor, profile: Profile) -> QTensor:
    """burn-cubecl's permute: the scale tensor is permuted with the axes (which it may not have), then as ndarray."""
    check_gpu_scale_permute(held, s)
    return move_grid(s, held, profile)


def float_(s: dict, held: QTensor, profile: Profile, *, in_backend: bool = False) -> np.ndarray:
    """Dequantized, then the float op: a plain float tensor. ``in_backend``: the dequantize runs inside the backend's
    own op (a trait default), where no fused kernel reads the codes (``values``)."""
    x = values(held, profile, in_backend=in_backend)
    check_matmul(x.shape, s, profile)
    return np.ascontiguousarray(apply(x, s))


def check_matmul(lhs_shape: tuple[int, ...], s: dict, profile: Profile) -> None:
    """A float matmul's own panic (the lhs already dequantized): ``empty_matmul_panic`` for m, k or n of 0; a fused
    build's output of nothing summed is unwritten memory (``k0_matmul_unwritten``)."""
    if s["op"] == "matmul" and profile.empty_matmul_panic and 0 in (lhs_shape[-2], *s["shape"][-2:]):
        raise panic(profile.empty_matmul_panic)
    if s["op"] == "matmul" and profile.k0_matmul_unwritten and lhs_shape[-1] == 0 and math.prod(
            (*lhs_shape[:-1], s["shape"][-1])) > 0:
        raise UndefinedBehaviour("a fused matmul with k = 0 leaves its output unwritten: the allocation's old values")


def float_i8(s: dict, held: QTensor, profile: Profile) -> np.ndarray:
    """``float_``, once WGSL has compiled the matmul (``oracle.layout.step`` checks it before the vec-mat swap)."""
    return float_(s, held, profile)


def private(s: dict, held: QTensor, profile: Profile) -> QTensor:
    """flex's ``block_safe_layout_op``: dequantized, the float op, requantized by flex's own ``quantize_dynamic``
    under the input scheme (its block dims permuted with the axes)."""
    scheme = follow_packing(_moved_scheme(s, held), s, held.codes.ndim, profile)
    return flex_quantize_dynamic(float_(s, held, profile, in_backend=True), scheme, profile)


def requantize(s: dict, held: QTensor, profile: Profile) -> QTensor:
    """The trait default ``dequant_op_quant!``: dequantized, the float op, the public ``quantize_dynamic``."""
    def float_op(h):
        return float_(s, h, profile, in_backend=True)
    out = requantized_by(float_op, held, profile, strides=_float_view_strides(s, held, profile))
    reorders = profile.fused_cat_layout and s["op"] == "cat" and s["copies"] > 1 and out.undefined is None
    if reorders and not _same_in_operand_order(out, float_op, s, held, profile):
        return replace(out, undefined=FUSED_CAT_ORDER)
    return out


FUSED_CAT_ORDER = ("a fused cat of copies of a tensor packed along an outer dim is written in the order "
                   "burn-cubecl-fusion's layout planner picks (the operands' or row-major), and the requantize packs "
                   "it as laid out: the two give other codes here")


def _same_in_operand_order(out: QTensor, float_op, s: dict, held: QTensor, profile: Profile) -> bool:
    """A fused ``cat`` may be written in its operands' memory order (``Profile.fused_cat_layout``): each copy
    dequantized from a store packed along an outer dim holds that axis innermost (``float_ops.device_order``), and
    the requantize's packed quantize reads the cat through its strides (``quantize._packed_reads``). Found by fuzzing
    the fused 0.23 WGSL binary (seed 20261216, float_ops case 12536's ``stack`` of two copies). Measured: the
    operands' order only where the tensor has a dim of extent 1 (a ``stack``'s unsqueeze gives it one), and there not
    always (``[1, 2, 4, 4]``: 3 copies along dim 0 yes, 2 no); the planner's pick is not modelled, so there, where the
    two orders give other codes, the values are undefined. True where the operands' order gives ``out``'s codes, or
    the two orders are one (no outer packed axis, or no dim of extent 1)."""
    if not held.scheme.store.packs_outer_dim or 1 not in held.codes.shape:
        return True
    axis = held.codes.ndim - 1 - held.scheme.store.dim
    shape = list(held.codes.shape)
    shape[s["dim"]] *= s["copies"]
    order = [a for a in range(len(shape)) if a != axis] + [axis]  # outermost first, the packed axis innermost
    in_order = row_major([shape[a] for a in order])
    strides = tuple(in_order[order.index(a)] for a in range(len(shape)))
    try:
        other = requantized_by(float_op, held, profile, strides=strides)
    except (BurnPanic, UndefinedBehaviour):
        other = None
    return other is not None and other.codes.tobytes() == out.codes.tobytes()


def requantized_by(float_op, held: QTensor, profile: Profile, strides: tuple[int, ...] | None = None) -> QTensor:
    """``quantize_dynamic`` of ``float_op(held)`` under the held scheme (a device view with ``strides``, where the
    float op gives one); undefined values requantize into an undefined tensor, after ``quantize_dynamic``'s
    host-side checks on their shape (``float_op`` sees :func:`stand_in`)."""
    out = quantize_dynamic(float_op(stand_in(held)), held.scheme, profile=profile, strides=strides)
    return out if held.undefined is None else replace(out, undefined=FROM_UNDEFINED)


def _float_view_strides(s: dict, held: QTensor, profile: Profile) -> tuple[int, ...] | None:
    """burn-cubecl repeats a dim of size 1 as a view, its stride set to 0 (burn-cubecl-0.22.1
    src/kernel/index/repeat_dim.rs:47-53), which the requantization then reads through its strides (found by
    fuzzing 0.22.1 SPIR-V, float_ops seed 20261213 case 816: the view's innermost stride 0 reads one element per
    unit, so no vector width meets the block's last extent). None: a contiguous result."""
    shape = held.codes.shape
    if not (profile.strided_views and s["op"] == "repeat_dim" and shape[s["dim"]] == 1):
        return None
    strides = list(row_major(shape))
    strides[s["dim"]] = 0
    return tuple(strides)


class Refusal:
    """The backend refuses the step with panic ``code`` before it reads anything."""

    def __init__(self, code: str):
        self.code = code

    def __call__(self, s: dict, held: QTensor, profile: Profile):
        raise panic(self.code)

    def __repr__(self) -> str:
        return f"Refusal({self.code!r})"


# --- the route table -------------------------------------------------------------------------------------------

# Not forwarded by Dispatch (gather, repeat_dim, cat: the trait default), or dequantized by burn-tensor's bridge.
_CPU_DEFAULTS = {"gather": requantize, "repeat_dim": requantize, "cat": requantize, "expand": float_,
                 "mul_scalar": float_, "matmul": float_}
_NO_FLIP = Refusal("cubecl.q_flip")
# burn-cubecl's routes as run on lavapipe (WGSL and SPIR-V alike): burn-cubecl's reshape limits (ops/base.rs:330-375)
# and its scale-grid permute check are routes of their own; flip and the gathers as for CUDA.
_LAVAPIPE = {
    "reshape": (move_reshape, move_reshape), "transpose": (move_grid_gpu, move_grid_gpu),
    "swap_dims": (move_grid_gpu, move_grid_gpu), "permute": (move_grid_gpu, move_grid_gpu),
    "flip": (_NO_FLIP, _NO_FLIP), "slice": (requantize, requantize),
    "select": (requantize, requantize), **{k: (v, v) for k, v in _CPU_DEFAULTS.items()},
}

# (route for a per-tensor scheme, route for a block scheme) per step, per ``Profile.layout``.
ROUTES = LAYOUT.steps({
    # burn-ndarray ops/qtensor.rs:276-428: codes move; only q_permute follows the blocks.
    "ndarray": {
        "reshape": (move, move), "transpose": (move_grid, move_grid),
        "swap_dims": (move_grid, move_grid), "permute": (move_grid, move_grid),
        "flip": (move, move), "slice": (move, move), "select": (move, move),
        **{k: (v, v) for k, v in _CPU_DEFAULTS.items()},
    },
    # burn-flex ops/qtensor.rs:253-394: per-tensor codes move; blocks go through block_safe_layout_op.
    "flex": {
        "reshape": (move, private), "transpose": (move, private), "swap_dims": (move, private),
        "permute": (move, private), "flip": (move, private), "slice": (move, private),
        "select": (move, private),
        **{k: (v, v) for k, v in _CPU_DEFAULTS.items()},
    },
    # burn-cubecl ops/base.rs (spec §9.3, not run here): metadata moves; q_flip is unimplemented!(); the
    # rest are trait defaults. Per-block reshape is modelled only where it keeps every block whole.
    "cubecl": {
        "reshape": (move, move), "transpose": (move_grid, move_grid),
        "swap_dims": (move_grid, move_grid), "permute": (move_grid, move_grid),
        "flip": (_NO_FLIP, _NO_FLIP), "slice": (requantize, requantize),
        "select": (requantize, requantize), **{k: (v, v) for k, v in _CPU_DEFAULTS.items()},
    },
    # burn-wgpu with WGSL, measured on lavapipe: the lavapipe routes above, and a quantized matmul whose i8 input
    # WGSL cannot declare.
    "wgpu": {**_LAVAPIPE, "matmul": (float_i8, float_i8)},
    # the same kernels as SPIR-V: the matmul compiles (Native i8 exists), but lavapipe crashes in it (gemm_crashes)
    "vulkan": _LAVAPIPE,
})


def route(s: dict, held: QTensor, profile: Profile):
    """The route ``profile`` takes for step ``s`` on ``held`` (a per-tensor or a block scheme)."""
    per_tensor, per_block = profile.step(ROUTES)[s["op"]]
    return per_tensor if held.scheme.block_size() is None else per_block


# --- what the routes share -------------------------------------------------------------------------------------


def permuted(s: dict, held: QTensor, profile: Profile, scales: np.ndarray, scheme: QuantScheme) -> QTensor:
    """The codes permuted by a permute-like step ``s``, holding ``scales`` under ``scheme`` (its packed dim
    followed); the memory strides follow the axes."""
    rank = held.codes.ndim
    axes = axes_of(s, rank)
    memory = [(held.memory_axes or tuple(range(rank)))[a] for a in axes]
    strided = rank > 0 and memory[-1] != rank - 1  # a second move can bring the innermost axis back
    return QTensor(held.codes.transpose(axes), scales, held.global_scale, follow_packing(scheme, s, rank, profile),
                   strided, tuple(memory), undefined=held.undefined)


def scale_grid(qt: QTensor) -> np.ndarray:
    """ndarray ``q_permute`` rebuilds the scale grid of the current shape from the scale list it holds with
    ``ArrayD::from_shape_vec(params_shape, list).unwrap()`` (burn-ndarray ops/qtensor.rs:316). A list kept
    through a reshape, flip, slice or select (§9.3) may no longer fill that grid: ndarray's ``ShapeError`` is
    ``OutOfBounds`` for too few scales and ``IncompatibleShape`` for too many (ndarray dimension/mod.rs
    ``can_index_slice_not_custom``, impl_constructors.rs ``from_shape_vec_impl``)."""
    grid = params_shape(qt.codes.shape, qt.scheme)
    need = math.prod(grid)
    if qt.scales.size < need:
        raise panic("ndarray.permute_scales", kind="OutOfBounds", description="out of bounds indexing")
    if qt.scales.size > need:
        raise panic("ndarray.permute_scales", kind="IncompatibleShape", description="incompatible shapes")
    return qt.scales.reshape(grid)


def _moved_scheme(step: dict, qt: QTensor) -> QuantScheme:
    if step["op"] in ("transpose", "swap_dims", "permute"):
        return qt.scheme.permute_block_dims(qt.codes.ndim, axes_of(step, qt.codes.ndim))
    return qt.scheme


def follow_packing(scheme: QuantScheme, step: dict, rank: int, profile: Profile) -> QuantScheme:
    """The store of a moved tensor: flex >= 0.23.0-pre.1 and the GPU (``moves_packing_dim``) keep a packed store,
    whose dim goes where ``PACKING_DIM`` says; elsewhere the loaded tensor is Native already."""
    if not profile.moves_packing_dim or scheme.store.kind == "Native":
        return scheme
    return profile.step(PACKING_DIM)(scheme, step, rank)


def _packed_dim_follows_axes(scheme: QuantScheme, step: dict, rank: int) -> QuantScheme:
    """``QuantScheme::swap_dims``/``permute_dims`` (the dim follows its axis) and ``reshape_packing_dim`` (a dim the
    new rank drops becomes the innermost) (cubecl-common-0.12.0-pre.1/src/quant/scheme.rs:174-228)."""
    store = scheme.store
    if step["op"] in ("transpose", "swap_dims", "permute") and rank:
        axes = axes_of(step, rank)
        new_axis = axes.index(rank - store.dim - 1)
        return scheme.with_store(QuantStore(store.kind, rank - new_axis - 1))
    if step["op"] == "reshape" and store.dim >= max(len(step["shape"]), 1):
        return scheme.with_store(QuantStore(store.kind, 0))
    return scheme


PACKING_DIM = FixedStep("packing_dim", _packed_dim_follows_axes,
                        "a kept packed store's dim follows its axis through transposes and permutations, and "
                        "becomes the innermost when a reshape drops it (QuantScheme::swap_dims / permute_dims / "
                        "reshape_packing_dim)")


def values(held: QTensor | np.ndarray, profile: Profile, *, in_backend: bool = False) -> np.ndarray:
    """What ``Tensor::dequantize`` gives of a held tensor (a float result is itself). ndarray's dequantize
    (burn-ndarray ops/qtensor.rs:541-553) writes the codes and the scale list it holds into ``QuantizedBytes``
    and reads them back for the *current* shape, whose reader takes that shape's scale count off the end
    (§8 #9 when the bytes are fewer), then its strategy asserts one scale per block (§8 #29): a kept scale list
    can violate either after a move. ``in_backend``: the dequantize of a backend op's trait default
    (``dequant_op_quant!`` inside burn-cubecl's ``q_slice``, ...), which a fused build runs as one stream op whose
    inside burn-fusion never sees: the backend's own launch, never a fused read."""
    if isinstance(held, np.ndarray):
        return held
    if profile.kernel == "gpu":  # the held tensor is dequantized in place: the launch checks, no reload's
        check_dequantize(held.scheme, held.codes.shape, profile, strided=held.last_axis_moved,
                         f16=held.scheme.scale_dtype() is ScaleDtype.F16, fusible=not in_backend)
    if held.undefined is not None:
        raise UndefinedBehaviour(held.undefined)
    size = held.scheme.block_size()
    if size is not None and profile.asserts_block_count:
        blocks = BlockLayout(held.codes.shape, size).block_count()
        width = held.scheme.scale_dtype().size
        if held.codes.size + width * held.scales.size < width * blocks:
            raise panic("bytes.too_short")
        if blocks != held.scales.size:
            raise panic("ndarray.block_count", count=held.scales.size, shape=shape_debug(held.codes.shape),
                        block=size.debug(), left=blocks, right=held.scales.size)
    return dequantize(held, "f32", profile=profile, held=True, in_backend=in_backend)
