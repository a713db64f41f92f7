"""Quantized tensors in motion: layout ops applied to a QFloat tensor through burn's public ``Tensor`` API
(spec §9), and quantizing a non-contiguous view.

A *step* is one ``Tensor`` call, as JSON: ``{"op": "reshape", "shape": [..]}``, ``{"op": "transpose"}``,
``{"op": "swap_dims", "dims": [a, b]}``, ``{"op": "permute", "axes": [..]}``, ``{"op": "flip", "axes": [..]}``,
``{"op": "slice", "ranges": [[start, end, step], ..]}``, ``{"op": "select", "dim": d, "indices": [..]}``,
``{"op": "gather", "dim": d, "indices": [..], "shape": [..]}`` (an index tensor, flat row-major),
``{"op": "repeat_dim", "dim": d, "times": n}``, ``{"op": "cat", "dim": d, "copies": n}`` (the tensor
concatenated with itself), ``{"op": "expand", "shape": [..]}``,
``{"op": "mul_scalar", "value": v}``, ``{"op": "matmul", "rhs": [..], "shape": [..]}`` (times a float tensor;
the product is exact then rounded once, a backend's GEMM is compared within its error bound).

What a backend does with a step on a quantized tensor is one of a few *routes* (burn's routing, §9.1: burn-tensor's
bridge → ``Dispatch`` → the backend's ``q_*`` override or the trait default):

* ``move``: the codes move, the scheme and the stored scale list stay as they were (per-tensor everywhere on the
  CPU; ndarray also for per-block reshape/flip/slice/select, whose scale list then no longer follows its blocks);
* ``move_grid``: the codes move, the scale grid and the scheme's block dims are permuted with them (ndarray's
  ``q_permute``, which ``swap_dims``/``transpose`` reach);
* ``move_reshape``, ``move_grid_gpu``: ``move`` and ``move_grid`` after burn-cubecl's own checks (its
  ``q_reshape`` limits; a permute of a scale tensor a reshape left at its old rank);
* ``float_i8``: ``float`` after WGSL's refusal of a Native tensor's matmul kernel;
* ``private``: dequantize to f32, apply the float op, requantize with flex's own ``quantize_dynamic`` under the
  input scheme (block dims permuted for permute/swap): flex's ``block_safe_layout_op`` on per-block tensors;
* ``requantize``: the trait default ``dequant_op_quant!``: dequantize, float op, the public ``quantize_dynamic``
  (``compute_range`` → ``compute_q_params`` → ``quantize``) with the input scheme;
* ``float``: the result is a plain float tensor (burn-tensor's ``expand`` and every arithmetic op dequantize);
* a panic code: the backend refuses the op.

Each profile's choice is a row of :data:`ROUTES` (picked by ``Profile.layout``); nothing here branches on a
backend's name.
"""

from __future__ import annotations

import math

import numpy as np

from . import choices as c
from .blocks import BlockLayout, params_shape
from .codec import into_data
from .dequantize import _reload, dequantize
from .errors import CATALOGUE, BurnPanic, UndefinedBehaviour, panic
from .profiles import Profile
from .qtensor import QTensor
from .quantize import quantize, quantize_dynamic
from .scales import validated_scale
from .scheme import NATIVE, BlockSize, QuantScheme, QuantStore, ScaleDtype, shape_debug
from .stages import Stages
from .support import check_dequantize, deferred_panic
from .vocabulary import LAYOUT_STEPS

STEP_OPS = LAYOUT_STEPS
# Steps that only move (or repeat) elements: for them a user expects dequantize(op(q)) == op(dequantize(q)).
PURE_MOVES = frozenset({"reshape", "transpose", "swap_dims", "permute", "flip", "slice", "select", "gather",
                        "repeat_dim", "cat", "expand"})

# Not forwarded by Dispatch (gather, repeat_dim, cat: the trait default), or dequantized by burn-tensor's bridge.
_CPU_DEFAULTS = {"gather": "requantize", "repeat_dim": "requantize", "cat": "requantize", "expand": "float",
                 "mul_scalar": "float", "matmul": "float"}
# burn-cubecl's routes as run on lavapipe (WGSL and SPIR-V alike): burn-cubecl's reshape limits (ops/base.rs:330-375)
# and its scale-grid permute check are routes of their own; flip and the gathers as for CUDA.
_LAVAPIPE = {
    "reshape": ("move_reshape", "move_reshape"), "transpose": ("move_grid_gpu", "move_grid_gpu"),
    "swap_dims": ("move_grid_gpu", "move_grid_gpu"), "permute": ("move_grid_gpu", "move_grid_gpu"),
    "flip": ("cubecl.q_flip", "cubecl.q_flip"), "slice": ("requantize", "requantize"),
    "select": ("requantize", "requantize"), **{k: (v, v) for k, v in _CPU_DEFAULTS.items()},
}

# (route for a per-tensor scheme, route for a block scheme) per step, per ``Profile.layout``.
ROUTES: dict[str, dict[str, tuple[str, str]]] = c.LAYOUT.steps({
    # burn-ndarray ops/qtensor.rs:276-428: codes move; only q_permute follows the blocks.
    "ndarray": {
        "reshape": ("move", "move"), "transpose": ("move_grid", "move_grid"),
        "swap_dims": ("move_grid", "move_grid"), "permute": ("move_grid", "move_grid"),
        "flip": ("move", "move"), "slice": ("move", "move"), "select": ("move", "move"),
        **{k: (v, v) for k, v in _CPU_DEFAULTS.items()},
    },
    # burn-flex ops/qtensor.rs:253-394: per-tensor codes move; blocks go through block_safe_layout_op.
    "flex": {
        "reshape": ("move", "private"), "transpose": ("move", "private"), "swap_dims": ("move", "private"),
        "permute": ("move", "private"), "flip": ("move", "private"), "slice": ("move", "private"),
        "select": ("move", "private"),
        **{k: (v, v) for k, v in _CPU_DEFAULTS.items()},
    },
    # burn-cubecl ops/base.rs (spec §9.3, not run here): metadata moves; q_flip is unimplemented!(); the
    # rest are trait defaults. Per-block reshape is modelled only where it keeps every block whole.
    "cubecl": {
        "reshape": ("move", "move"), "transpose": ("move_grid", "move_grid"),
        "swap_dims": ("move_grid", "move_grid"), "permute": ("move_grid", "move_grid"),
        "flip": ("cubecl.q_flip", "cubecl.q_flip"), "slice": ("requantize", "requantize"),
        "select": ("requantize", "requantize"), **{k: (v, v) for k, v in _CPU_DEFAULTS.items()},
    },
    # burn-wgpu with WGSL, measured on lavapipe: the lavapipe routes below, and a quantized matmul whose i8 input
    # WGSL cannot declare.
    "wgpu": {**_LAVAPIPE, "matmul": ("float_i8", "float_i8")},
    # the same kernels as SPIR-V: the matmul compiles (Native i8 exists), but lavapipe crashes in it (gemm_crashes)
    "vulkan": _LAVAPIPE,
})

# The kernel WGSL refuses for a Native (i8) lhs, as cubecl names it for the suite's f32 operands (measured).
_WGSL_MATMUL_KERNEL = "matmul_entry_lhs_f32_lhs_size_1_rhs_f32_rhs_size_1_acc_f32_acc_size_1"

PERMUTES = ("transpose", "swap_dims", "permute")


# --- the float op of each step (numpy; also what the codes undergo when they move) ---------------------------


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
        return a.reshape(step["shape"])
    if op in ("transpose", "swap_dims", "permute"):
        return a.transpose(axes_of(step, a.ndim))
    if op == "flip":
        return np.flip(a, tuple(step["axes"]))
    if op == "slice":
        ranges = [slice(*r) for r in step["ranges"]]
        return a[tuple(ranges)]
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
        rhs = np.asarray(step["rhs"], dtype=np.float32).reshape(step["shape"]).astype(np.float64)
        return np.matmul(a.astype(np.float64), rhs).astype(np.float32)
    if op == "mul_scalar":
        return (a.astype(np.float32) * np.float32(step["value"])).astype(np.float32)
    raise ValueError(f"unknown layout step {op!r}; known: {', '.join(STEP_OPS)}")


def view(x: np.ndarray, steps: list[dict]) -> np.ndarray:
    """A float tensor after the float steps (a non-contiguous view of ``x``), materialized row-major."""
    for step in steps:
        x = apply(x, step)
    return np.ascontiguousarray(x)


VIEW_READS = c.VIEW_READ.steps({"logical": view})


def _row_major(shape) -> tuple[int, ...]:
    return tuple(int(v) for v in np.cumprod([1] + list(shape[::-1]))[:-1][::-1])


def view_strides(shape: tuple[int, ...], steps: list[dict]) -> tuple[int, ...]:
    """The element strides of burn-cubecl's float view after ``steps`` on a contiguous tensor: permutes permute the
    strides (``ops/base.rs:103-160``), ``expand`` gives broadcast dims stride 0, a step-1 slice at offset 0 and a
    reshape keep to metadata (``kernel/index/slice.rs:18-47``, ``ops/base.rs:268-278``); everything else (flip,
    select, gather, cat, repeat) is written by a kernel into a fresh contiguous tensor. Approximations, not
    measured: a reshape gets row-major strides (burn keeps a strided view's where ``reshape_action`` can), and an
    offset slice is a copy (burn keeps the view when both offsets are multiples of the memory alignment)."""
    shape, strides = tuple(shape), _row_major(shape)
    for s in steps:
        new = apply(np.empty(shape, np.bool_), s).shape
        if s["op"] in PERMUTES:
            strides = tuple(strides[a] for a in axes_of(s, len(shape)))
        elif s["op"] == "expand":
            lead = len(new) - len(shape)
            strides = tuple(0 if i < lead or shape[i - lead] != n else strides[i - lead] for i, n in enumerate(new))
        elif s["op"] == "slice" and new == shape:
            pass  # offsets 0 at both ends: the same buffer, strides kept
        else:
            strides = _row_major(new)  # a reshape of a strided view is approximated by its copy
        shape = new
    return strides


# --- one step on a quantized tensor -------------------------------------------------------------------------


def _route(step: dict, qt: QTensor, profile: Profile) -> str:
    per_tensor, per_block = ROUTES[profile.layout][step["op"]]
    return per_tensor if qt.scheme.block_size() is None else per_block


def permute_block_dims(scheme: QuantScheme, rank: int, axes: list[int]) -> QuantScheme:
    """``QuantScheme::permute_block_dims``: the block extents follow the tensor's axes (canonicalized again)."""
    size = scheme.block_size()
    if size is None:
        return scheme
    dims = size.to_dim_vec(rank)
    return scheme.per_block(BlockSize([dims[a] for a in axes]), scheme.scale_dtype())


def _moved_scheme(step: dict, qt: QTensor) -> QuantScheme:
    if step["op"] in ("transpose", "swap_dims", "permute"):
        return permute_block_dims(qt.scheme, qt.codes.ndim, axes_of(step, qt.codes.ndim))
    return qt.scheme


def _follow_packing(scheme: QuantScheme, step: dict, rank: int, profile: Profile) -> QuantScheme:
    """The store of a moved tensor: flex >= 0.23.0-pre.1 and the GPU (``moves_packing_dim``) keep a packed store,
    whose dim goes where ``profile.packing_dim`` says; elsewhere the loaded tensor is Native already."""
    if not profile.moves_packing_dim or scheme.store.kind == "Native":
        return scheme
    return PACKING_DIMS[profile.packing_dim](scheme, step, rank)


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


PACKING_DIMS = c.PACKING_DIM.steps({"follows_axes": _packed_dim_follows_axes})


def _scale_grid(qt: QTensor) -> np.ndarray:
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


def _move_grid(step: dict, qt: QTensor, *, grid: bool = True, dims: bool = True) -> QTensor:
    """ndarray ``q_permute``: codes, the scale grid (``params_shape``) and the block dims permuted alike (the
    mutants leave the grid or the dims behind)."""
    axes = axes_of(step, qt.codes.ndim)
    scales = qt.scales
    if grid and qt.scheme.block_size() is not None:
        scales = _scale_grid(qt).transpose(axes).ravel()
    scheme = permute_block_dims(qt.scheme, qt.codes.ndim, axes) if dims else qt.scheme
    return QTensor(qt.codes.transpose(axes), scales, qt.global_scale, scheme)


def flex_quantize_dynamic(x: np.ndarray, scheme: QuantScheme, profile: Profile) -> QTensor:
    """burn-flex's own ``QTensorOps::quantize_dynamic`` (``ops/qtensor.rs:67-142``), reached only from inside flex
    (its per-block layout ops). Per block ``alpha`` = the largest ``|x|``, folded from 0 with ``f32::max`` (a NaN is
    skipped); ``s = 2 * alpha / (b - a)``; two-level: ``global = validated(max(s) / M)``, blocks ``validated(s /
    global)``. The codes then follow flex's quantize arithmetic with those scales."""
    size = scheme.block_size()
    layout = BlockLayout(x.shape, size)
    index = _block_index(layout)
    peaks = np.zeros(layout.block_count(), dtype=np.float32)
    np.fmax.at(peaks, index.ravel(), np.abs(x.astype(np.float32)).ravel())
    a, b = scheme.value.range()
    with np.errstate(all="ignore"):
        raw = (np.float32(2.0) * peaks) / np.float32(b - a)
        glob = None
        if scheme.global_scale_dtype() is None:
            scales = validated_scale(raw, scheme.scale_dtype(), profile)
        else:
            peak = np.float32(max(0.0, float(np.nanmax(raw)) if raw.size else 0.0))
            glob = validated_scale(np.array([peak / np.float32(scheme.scale_dtype().max_representable())],
                                            dtype=np.float32), scheme.global_scale_dtype(), profile)
            scales = validated_scale(raw / glob[0], scheme.scale_dtype(), profile)
    return quantize(x, scheme, scales, glob, profile=profile)


def _block_index(layout: BlockLayout) -> np.ndarray:
    """``block_of`` of every element, as an array of the tensor's shape."""
    index = np.zeros(layout.shape, dtype=np.int64)
    stride = 1
    for dim in reversed(range(len(layout.shape))):
        coord = np.arange(layout.shape[dim]) // layout.block[dim]
        index += (coord * stride).reshape([-1 if d == dim else 1 for d in range(len(layout.shape))])
        stride *= layout.blocks[dim]
    return index


def values(held: QTensor | np.ndarray, profile: Profile) -> np.ndarray:
    """What ``Tensor::dequantize`` gives of a held tensor (a float result is itself). ndarray's dequantize
    (burn-ndarray ops/qtensor.rs:541-553) writes the codes and the scale list it holds into ``QuantizedBytes``
    and reads them back for the *current* shape, whose reader takes that shape's scale count off the end
    (§8 #9 when the bytes are fewer), then its strategy asserts one scale per block (§8 #29): a kept scale list
    can violate either after a move."""
    if isinstance(held, np.ndarray):
        return held
    if profile.kernel == "gpu":  # the held tensor is dequantized in place: the launch checks, no reload's
        check_dequantize(held.scheme, held.codes.shape, profile)
    size = held.scheme.block_size()
    if size is not None and profile.asserts_block_count:
        blocks = BlockLayout(held.codes.shape, size).block_count()
        width = held.scheme.scale_dtype().size
        if held.codes.size + width * held.scales.size < width * blocks:
            raise panic("bytes.too_short")
        if blocks != held.scales.size:
            raise panic("ndarray.block_count", count=held.scales.size, shape=shape_debug(held.codes.shape),
                        block=size.debug(), left=blocks, right=held.scales.size)
    return dequantize(held, "f32", profile=profile, held=True)


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


def step(held: QTensor | np.ndarray, s: dict, profile: Profile) -> QTensor | np.ndarray:
    """One ``Tensor`` call on what the backend holds."""
    if s["op"] == "matmul" and profile.gemm_crashes:
        raise UndefinedBehaviour("the device crashes (SIGSEGV) in burn's float matmul kernel")
    if isinstance(held, np.ndarray):
        return np.ascontiguousarray(apply(held, s))
    rank = held.codes.ndim
    if is_identity(s, rank):
        return held
    if s["op"] == "matmul" and _route(s, held, profile) == "float_i8":
        _check_wgsl_matmul(held, profile)  # the kernel's declarations fail to compile whatever view it gets
    swap = vecmat_swap(s, held.codes.shape)
    if swap is not None:  # one of the swapped dims is 1: swapping back is a reshape
        return np.ascontiguousarray(apply(values(step(held, swap, profile), profile).reshape(held.codes.shape), s))
    route = _route(s, held, profile)
    if route == "move_reshape":
        _check_gpu_reshape(held, s["shape"], profile)
        route = "move"
    if route == "move_grid_gpu":
        _check_gpu_scale_permute(held, s)
        route = "move_grid"
    if route == "float_i8":  # checked above, before the swap
        route = "float"
    if route == "move":
        return QTensor(apply(held.codes, s), held.scales, held.global_scale,
                       _follow_packing(held.scheme, s, rank, profile))
    if route.startswith("move_"):
        moved = _move_grid(s, held, grid=route != "move_dims", dims=route != "move_grid_only")
        memory = [(held.memory_axes or tuple(range(rank)))[a] for a in axes_of(s, rank)]  # strides follow the axes
        strided = rank > 0 and memory[-1] != rank - 1  # a second move can bring the innermost axis back
        return QTensor(moved.codes, moved.scales, moved.global_scale, _follow_packing(moved.scheme, s, rank, profile),
                       strided, tuple(memory))
    if route in CATALOGUE:  # the backend refuses the step before it reads anything
        raise panic(route)
    moved = np.ascontiguousarray(apply(values(held, profile), s))
    if route == "float":
        return moved
    if route == "private":
        return flex_quantize_dynamic(moved, _follow_packing(_moved_scheme(s, held), s, rank, profile), profile)
    if route == "requantize":
        return quantize_dynamic(moved, held.scheme, profile=profile)
    raise panic(route)


def _check_wgsl_matmul(qt: QTensor, profile: Profile) -> None:
    """A one-level Native tensor goes into the quantized matmul kernel, whose i8 (or scalar fp8) input WGSL cannot
    declare (measured); a two-level one is dequantized first (and meets the i8 refusal). A one-level fp8 lhs
    fails to compile packed in u32 words too (E4M3/E5M2 ``PackedU32``: the kernel reads a scalar fp8; measured,
    found by fuzzing, seed 2)."""
    if qt.scheme.is_two_level():
        return
    fp8 = qt.scheme.value.is_float and qt.scheme.value.size_bits == 8
    if fp8 and qt.scheme.store.kind in ("Native", "PackedU32"):
        raise deferred_panic("wgsl.fp8_scalar", profile)
    if qt.scheme.store.kind != "Native":
        return
    # Where naga reports the i8 binding, as measured: an F16 scale binding adds an `enable f16;` line and more
    # bindings before the codes' (v13 on line 8), otherwise v5 on line 7; the caret sits under the type.
    f16 = qt.scheme.scale_dtype() is ScaleDtype.F16
    line, var = (8, "v13") if f16 else (7, "v5")
    col = 56 + len(var)
    raise deferred_panic("wgsl.matmul_i8", profile, kernel=_WGSL_MATMUL_KERNEL, line=line, col=col, var=var,
                         pad=" " * col)


def _check_gpu_scale_permute(qt: QTensor, s: dict) -> None:
    """burn-cubecl permutes the scale tensor with the tensor's axes. A reshape that kept a single block's scale
    (``ops/base.rs:368-375``) left it at its old rank-1 shape, so a permutation indexes that shape out of bounds
    (measured: reshape ``[2] -> [2, 1]`` under ``per_block([2])``, then transpose)."""
    if qt.scheme.block_size() is None or qt.scales.size >= math.prod(params_shape(qt.codes.shape, qt.scheme)):
        return
    axes = axes_of(s, qt.codes.ndim)
    index = next((a for a in axes if a >= 1), None)
    if index is not None:
        raise panic("scale.index_out_of_bounds", len=1, index=index)


def _check_gpu_reshape(qt: QTensor, shape: list[int], profile: Profile) -> None:
    """burn-cubecl's ``q_reshape`` limits (``ops/base.rs:302-375``): the packed dim of the new shape holds whole
    words (the store's dim kept as it is); an N-D block survives only an unsqueeze (new leading unit dims); a 1-D
    block may not span rows once the new last dim is shorter than it, and from 0.22.1 a lone one may not be spread
    over several rows either (``reshape_refuses_spread_block``, 0.22.1 ``ops/base.rs:410-425``)."""
    store = qt.scheme.store
    if store.kind != "Native" and 0 <= len(shape) - 1 - store.dim < len(shape):
        extent = shape[len(shape) - 1 - store.dim]  # the new shape's extent at the packed dim holds whole words
        if extent % qt.scheme.num_quants():
            raise panic("cubecl.reshape_packed_dim", dim=extent, factor=qt.scheme.num_quants())
    size = qt.scheme.block_size()
    if size is None:
        return
    current, new = list(qt.codes.shape), list(shape)
    n_new = max(len(new) - len(current), 0)
    unsqueeze = n_new > 0 and new[n_new:] == current
    values = _values_reshape(qt, new, profile)
    if len(size.dims) > 1 and values == "contiguous" and not unsqueeze:  # the same shape included (measured)
        raise panic("cubecl.reshape_nd_block")
    if len(size.dims) > 1 and values == "split":
        raise panic("cubecl.reshape_split_nd_block")
    kept = len(size.dims) == 1 and new and new[-1] < size.dims[0]
    if kept and qt.scales.size > 1:
        raise panic("cubecl.reshape_split_block")
    if kept and profile.reshape_refuses_spread_block and math.prod(new) > new[-1]:
        raise panic("cubecl.reshape_spread_block", shape=shape_debug(new), block=size.debug())
    if values == "recompute":
        if qt.scheme.value.size_bits < 8 and not qt.scheme.value.is_float and not unsqueeze:  # Q4/Q2 only
            raise panic("cubecl.reshape_recompute_sub_byte")
        if not kept and math.prod(params_shape(tuple(new), qt.scheme)) > 1:
            raise panic("cubecl.reshape_recompute_block")


def _values_reshape(qt: QTensor, new: list[int], profile: Profile) -> str:
    """burn-std's ``reshape_analysis`` of the stored values (``tensor/mod.rs:216-275``) as ``q_reshape`` runs it: on
    the words view (the packed dim divided, ``tensor/quantization.rs:71-83``) with the memory's strides (the last
    dim divided at load, permuted since: ``memory_axes``), towards the new shape's words. ``contiguous`` and the
    metadata-only kinds update strides; a tensor neither contiguous nor only gaining unit or split dims is
    ``recompute`` (its buffer would be copied)."""
    store, rank = qt.scheme.store, qt.codes.ndim
    if store.kind == "PackedNative" or not rank:
        return "contiguous"
    n = qt.scheme.num_quants() if store.kind == "PackedU32" else 1
    axes = list(qt.memory_axes) if qt.memory_axes is not None else list(range(rank))
    loaded = [qt.codes.shape[axes.index(j)] for j in range(rank)]
    memory = _row_major(loaded[:-1] + [loaded[-1] // n])
    strides = [memory[a] for a in axes]

    def words(shape):
        out = list(shape)
        out[len(out) - 1 - store.dim] = -(-out[len(out) - 1 - store.dim] // n)
        return out
    old, target = words(qt.codes.shape), words(new)
    unit_free = profile.contiguity_ignores_unit_dims  # a size-1 dim's stride is never applied
    if all(e == st or (unit_free and d == 1) for e, st, d in zip(_row_major(old), strides, old)):
        return "contiguous"
    if len(target) < len(old):
        return "recompute"
    lead = len(target) - len(old)
    if lead == 0:
        return "nochange" if old == target else "recompute"
    if target[lead:] == old and all(d == 1 for d in target[:lead]):
        return "broadcast"
    prod, i = 1, 0
    for d in target:
        prod *= d
        if d == 1:
            continue
        if prod == old[i]:
            prod, i = 1, i + 1
        elif prod > old[i]:
            return "recompute"
    return "split"


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


def check_steps(shape: tuple[int, ...], steps: list[dict]) -> None:
    """Validates a chain against shapes (a malformed vector is the author's error, not a burn panic)."""
    probe = np.zeros(shape, dtype=np.float32)
    for s in steps:
        if s.get("op") not in STEP_OPS:
            raise ValueError(f"unknown layout step {s!r}")
        probe = apply(probe, s)
        if probe.size == 0 or math.prod(probe.shape) == 0:
            raise ValueError(f"step {s!r} gives an empty tensor (burn returns a float tensor then)")
