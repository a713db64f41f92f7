"""burn-cubecl's admission checks of a layout step on a quantized tensor: what its ``q_reshape``, its scale-grid
permute and WGSL's matmul refuse before (or instead of) moving anything (measured on lavapipe unless cited).

The GPU routes of ``oracle/routes.py`` call these before they move the codes.
"""

from __future__ import annotations

import math

from .blocks import params_shape
from .errors import panic
from .profile import Profile
from .qtensor import QTensor
from .scheme import ScaleDtype, shape_debug
from .support import check_dequantize, deferred_panic, fused_read, i8_binding, native_vector_width
from .strides import reshape_action, reshape_analysis, row_major


def check_wgsl_matmul(qt: QTensor, profile: Profile, side: str = "lhs") -> None:
    """A one-level Native tensor goes into the quantized matmul kernel, whose i8 (or scalar fp8) input WGSL cannot
    declare (measured); a two-level one is dequantized first (and meets the i8 refusal). A one-level fp8 tensor
    fails to compile packed in u32 words too (E4M3/E5M2 ``PackedU32``: the kernel reads a scalar fp8; measured,
    found by fuzzing, seed 2), except in a fused build, whose matmul reads a per-block tensor's words itself
    (``fused_read``, measured: the product of the dequantized codes); a per-tensor one fails there as on the lean
    build (measured on the fused 0.23 WGSL binary: E4M3 and E5M2, ``PackedU32(0)`` and ``(1)``, contiguous or
    transposed; found by fuzzing, seed 20261216, qlayout case 6588). ``side``: where the quantized tensor sits, ``lhs``
    (``q.matmul(f)``), ``rhs`` (``f.matmul(q)``) or ``self`` (``q.matmul(q)``), which decides the binding naga
    reports (:data:`_I8_BINDINGS`)."""
    fused = fused_read(qt.scheme, profile)
    fp8 = qt.scheme.value.is_float and qt.scheme.value.size_bits == 8
    words_read = fused == "u32" and not (fp8 and qt.scheme.block_size() is None)
    if qt.scheme.is_two_level() or words_read:  # burn-cubecl-fusion's matmul reads packed words itself
        return
    if fp8 and qt.scheme.store.kind in ("Native", "PackedU32"):
        raise deferred_panic("wgsl.fp8_scalar", profile)
    if qt.scheme.store.kind != "Native":
        return
    if fused == "i8" and side != "lhs" and qt.scheme.block_size() is not None:
        # the fused matmul reads a per-block tensor's codes on the lhs only: an rhs is the backend's dequantize,
        # whose launch check fails on the stream (measured on both fused builds: bare, at depth 0)
        check_dequantize(qt.scheme, qt.codes.shape, profile, fusible=False)
        return
    var, line, binding = _I8_BINDINGS[side, qt.scheme.scale_dtype() is ScaleDtype.F16]
    width = 1
    if fused == "i8":
        # burn-cubecl-fusion's matmul reads the codes itself (`fused_read`, src/optim/matmul/fuser.rs:53), three
        # lines earlier and as wide vectors as the last dim allows, on either side (measured: an lhs v5 on line 4 as
        # vec4 for [4, 8], v13 on line 5, one by one, for [1, 1, 1, 9]; an rhs and both sides on line 3 as vec4).
        line -= 3
        width = 1 if qt.last_axis_moved else native_vector_width(qt.codes.shape, 1, profile)
    raise deferred_panic("wgsl.matmul_i8", profile, **i8_binding(var, line, width, binding))


# Where naga reports the quantized matmul kernel's i8 binding, by the side the quantized tensor is on and whether its
# scale is F16 (which adds an `enable f16;` line first, and for an lhs more bindings before its codes): (variable, line,
# binding), measured on lavapipe (0.22.1 and 0.23.0-pre.1). naga numbers the variable after the kernel's other values
# (rank 2: v13 for an rhs, v19 for both sides; rank 3: v21, v27), so the variable is opaque in the message and only its
# width (two digits for rhs and self) places the caret.
_I8_BINDINGS = {("lhs", False): ("v5", 7, 0), ("lhs", True): ("v13", 8, 0), ("rhs", False): ("v13", 6, 1),
                ("rhs", True): ("v13", 7, 1), ("self", False): ("v19", 6, 2), ("self", True): ("v19", 7, 2)}


def check_gpu_scale_permute(qt: QTensor, s: dict) -> None:
    """burn-cubecl moves a block tensor's scale metadata with its axes (``ops/base.rs:145-188``). A reshape that kept
    the scale tensor's shape (``QTensor.scale_rank``) left it at another rank: a swap (``transpose``, ``swap_dims``)
    indexes its shape with the first dim past it (Rust's slice ``swap``: measured ``len is 1 but the index is 1`` for
    a ``[1, 3]`` transpose, ``index is 2`` for ``swap_dims(2, 1)`` of ``[1, 1, 3]``), a ``permute`` is refused
    (cubecl-zspace-0.11.3 src/shape.rs:242-248, unwrapped: measured)."""
    rank = qt.scale_rank
    if rank is None or qt.scheme.block_size() is None:
        return
    if s["op"] == "permute":
        raise panic("cubecl.scale_permute_rank", scale_rank=rank, axes=len(s["axes"]))
    dims = s["dims"] if s["op"] == "swap_dims" else [qt.codes.ndim - 2, qt.codes.ndim - 1]
    index = next((d for d in dims if d >= rank), None)
    if index is not None:
        raise panic("cubecl.scale_swap_index", len=rank, index=index)


def keeps_scale_shape(scheme, shape: list[int]) -> bool:
    """``q_reshape`` leaves the scale tensor's shape as it was for a 1-D block longer than the new last dim (one
    block spanning rows, ``ops/base.rs:411-425``); any other block scheme takes the new shape's ``params_shape``."""
    size = scheme.block_size()
    return size is not None and len(size.dims) == 1 and bool(shape) and shape[-1] < size.dims[0]


def check_gpu_reshape(qt: QTensor, shape: list[int], profile: Profile) -> None:
    """burn-cubecl's ``q_reshape`` limits (``ops/base.rs:302-375``): the packed dim of the new shape holds whole
    words (the store's dim kept as it is, indexed past a smaller new rank: found by fuzzing); an N-D block survives only an unsqueeze (new leading unit dims); a 1-D
    block may not span rows once the new last dim is shorter than it, and from 0.22.1 a lone one may not be spread
    over several rows either (``reshape_refuses_spread_block``, 0.22.1 ``ops/base.rs:410-425``)."""
    store = qt.scheme.store
    if store.kind != "Native":
        packed = len(shape) - 1 - store.dim  # `rank - packed_dim - 1` wraps in a release build
        if not 0 <= packed < len(shape):
            raise panic("cubecl.reshape_packed_dim_index", len=len(shape), index=packed % 2**64)
        extent = shape[packed]  # the new shape's extent at the packed dim holds whole words
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
    kept = keeps_scale_shape(qt.scheme, new)
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
    """burn-std's ``reshape_analysis`` of the stored values as ``q_reshape`` runs it (:func:`values_words`): its kind
    (:func:`oracle.strides.reshape_analysis`), ``recompute`` where the buffer would be copied."""
    words = values_words(qt, new)
    if words is None:
        return "contiguous"
    kind = reshape_analysis(*words, profile.contiguity_ignores_unit_dims)
    return "recompute" if kind in ("smaller_rank", "highly_permuted") else kind


def values_words(qt: QTensor, new: list[int]):
    """The stored values as ``q_reshape`` analyses them (``tensor/mod.rs:216-275``): the words view (the packed dim
    divided, ``tensor/quantization.rs:71-83``) with the memory's strides (the last dim divided at load, permuted
    since: ``memory_axes``), and the new shape's words; ``None`` where there is nothing to analyse (a PackedNative
    store, a scalar)."""
    store, rank = qt.scheme.store, qt.codes.ndim
    if store.kind == "PackedNative" or not rank:
        return None
    n = qt.scheme.num_quants() if store.kind == "PackedU32" else 1
    axes = list(qt.memory_axes) if qt.memory_axes is not None else list(range(rank))
    loaded = [qt.codes.shape[axes.index(j)] for j in range(rank)]
    memory = row_major(loaded[:-1] + [loaded[-1] // n])
    strides = [memory[a] for a in axes]

    def words(shape):
        out = list(shape)
        out[len(out) - 1 - store.dim] = -(-out[len(out) - 1 - store.dim] // n)
        return out
    return words(qt.codes.shape), strides, words(new)


def kept_memory_axes(qt: QTensor, new: list[int], profile: Profile) -> tuple[int, ...] | None:
    """The memory order of the values after a reshape that only rewrites their strides (``Broadcasted``, ``Split``,
    ``NoChange`` of a strided tensor: ``ops/base.rs:434-458``): each new axis' place in memory, by its new stride
    (outermost first); ``None`` where the values are row-major after it (a contiguous tensor, or a copy)."""
    words = values_words(qt, new)
    if words is None or qt.memory_axes is None:
        return None
    unit_free = profile.contiguity_ignores_unit_dims
    if reshape_analysis(*words, unit_free) not in ("broadcasted", "split", "nochange"):
        return None
    strides = reshape_action(*words, unit_free)
    order = sorted(range(len(new)), key=lambda i: (-strides[i], i))
    return tuple(order.index(i) for i in range(len(new)))
