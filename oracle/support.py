"""What each backend's ``quantize`` accepts before it does any arithmetic (spec §5.2, §5.4, §7.6).

A profile lists check names in ``quantize_checks``; each check raises burn's panic for a scheme the backend
cannot hold. Keeping them here, one small function each, keeps the arithmetic free of backend branches.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar

from .choices import FUSED_READ, QUANTIZE_CHECK, READ_FAILURE
from .errors import BurnPanic, panic, skipped_below, surfaced_at_read
from .profile import Profile
from .scheme import QuantMode, QuantScheme, ScaleDtype

Check = Callable[[QuantScheme, tuple[int, ...], Profile, int], None]
"""(scheme, tensor shape, profile, scale bindings given: 1, or 2 with a global) -> None or burn's panic."""


def _ndarray_matrix(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int) -> None:
    """ndarray quantizes Symmetric + Native only, with the values of its support matrix (§5.2)."""
    allowed = profile.block_values if scheme.block is not None else profile.tensor_values
    if not (scheme.mode is QuantMode.Symmetric and scheme.store.kind == "Native" and scheme.value.name in allowed):
        raise panic("ndarray.unsupported_scheme", scheme=scheme.debug())


def _cubecl_storage(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int) -> None:
    """``new_quantized``: packed words must tile the last dim (from burn 0.22.1 the packed axis, which it stores
    innermost: ``stores_packed_axis_innermost``); native storage holds whole bytes (§7.6)."""
    kind = scheme.store.kind
    packed = len(shape) - 1 - (scheme.store.dim if profile.stores_packed_axis_innermost else 0)
    if kind == "PackedU32" and shape and shape[packed] % scheme.num_quants() != 0:
        raise panic("cubecl.packed_last_dim")
    if kind == "Native" and scheme.value.name not in ("Q8F", "Q8S", "E4M3", "E5M2"):
        raise panic("cubecl.native_sub_byte")
    if kind == "PackedNative" and scheme.value.name != "E2M1":
        raise panic("cubecl.native_packing", value=scheme.value.name)
    glob = scheme.global_scale_dtype()
    if glob is not None and glob is not ScaleDtype.F32:
        raise panic("cubecl.global_not_f32", scheme=scheme.debug(), left=glob.name, right="F32")


def _cubecl_round_up_rule(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int) -> None:
    if scheme.scale_dtype() is ScaleDtype.UE8M0 and not profile.ue8m0:
        raise panic("cubecl.no_round_up", dtype="UE8M0")


def _cubecl_mode(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int) -> None:
    if scheme.mode is not QuantMode.Symmetric:
        raise panic("cubecl.unsupported_scheme", scheme=scheme.debug())


def _cubecl_block_divisibility(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int) -> None:
    """``check_block_size_compat``: the block's last extent must hold whole packed words, or whole vectors of a
    Native kernel (``native_vector_width``: 1 on a device the oracle gives no vector width, which checks nothing)."""
    size = scheme.block_size()
    if size is None or scheme.store.kind == "PackedNative":
        return
    if not size.dims:  # `block_size.as_slice().last().unwrap()`: the text ndarray's NaN unwrap shares
        raise panic("ndarray.nan_code")
    div = scheme.num_quants() if scheme.store.kind == "PackedU32" else native_vector_width(shape, 4, profile)
    if div == 1 and scheme.store.kind == "Native":
        return
    last = size.dims[-1]  # the block's own last entry, whatever the tensor's rank (cubek-quant lib.rs:30)
    if last % div != 0:
        raise panic("cubecl.block_divisibility", div=div, block_size=last)


def io_vector_sizes(itemsize: int, profile: Profile) -> list[int]:
    """``io_optimized_vector_sizes``: the powers of two, widest first, up to ``min(max_vector_size, 128 bits /
    element bits)`` (cubecl-ir-0.11.3 src/properties.rs:441-446, :580-592); only 1 on a device without a measured
    width (the CUDA model)."""
    widest = 1 if profile.max_vector_size > 16 else min(profile.max_vector_size, 16 // itemsize)
    return [1 << e for e in range(widest.bit_length() - 1, -1, -1)]


def native_vector_width(shape: tuple[int, ...], itemsize: int, profile: Profile) -> int:
    """The vector width a Native kernel reads a contiguous tensor with: the largest power of two up to
    ``min(max_vector_size, 128 bits / element bits)`` dividing the last dim (``io_optimized_vector_sizes``,
    cubecl-runtime-0.11.0-pre.3/src/client.rs:1339-1352; ``tensor_vector_size_parallel``, cubecl-core lib.rs:128-160;
    measured on lavapipe). Profiles without a measured width (the CUDA model) keep 1."""
    if profile.max_vector_size > 16:
        return 1
    width = min(profile.max_vector_size, 16 // itemsize)
    last = shape[-1] if shape else 1
    while last % width:
        width //= 2
    return width


def strided_vector_width(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int, profile: Profile) -> int:
    """``tensor_vector_size_parallel`` on a view (cubecl-core-0.11.0-pre.3/src/lib.rs:128-168): the innermost
    stride must be 1, and every other non-zero stride a multiple of the width, on top of ``native_vector_width``'s
    bound (a transposed view reads one element per unit)."""
    width = native_vector_width(shape, itemsize, profile)
    if shape and strides[-1] != 1:
        return 1
    others = [st for st in strides[:-1] if st != 0]
    while others and min(others) % width:
        width //= 2
    return width


def _cubecl_native_store(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int) -> None:
    """``quantize_native``/``dequantize_native`` launch a Native store only: E2M1 ``PackedNative``, which the launcher
    routes there, falls to the ``Unsupported quantization scheme`` arm (cubek-quant-0.3.0-pre.3/src/quantize.rs:
    317-355, dequantize.rs:316-370; measured on lavapipe)."""
    if scheme.store.kind == "PackedNative":
        raise panic("cubecl.unsupported_scheme", scheme=scheme.debug())


def _cubecl_packed_native(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int) -> None:
    """From cubek-quant 0.3.1 the launchers route only Native Q8/fp8 to the native kernels: a PackedNative store
    (E2M1, the only value it holds) falls to the arm that refuses it on every device, before the i8 question is
    asked (``quantize.rs:343-349``, ``dequantize.rs:275-281``)."""
    if scheme.store.kind == "PackedNative":
        raise panic("cubecl.native_value", value=scheme.value.name)


def _cubecl_scale_bindings(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int) -> None:
    """``check_scale_bindings`` (``cubek-quant-0.3.0-pre.3/src/quantize.rs:218``), before the round-up rule."""
    if bindings != scheme.num_levels():
        raise panic("cubecl.scale_bindings", levels=scheme.num_levels(), bindings=bindings)


def _cubecl_native_i8(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int) -> None:
    """A device without i8 conversion (WGSL has no i8) refuses every Native/PackedNative scheme before the mode
    check (``cubek-quant-0.3.0-pre.3/src/quantize.rs:258-263, :283``); measured on lavapipe."""
    if scheme.store.kind in ("Native", "PackedNative"):
        raise panic("cubecl.native_value", value=scheme.value.name)


def _wgsl_fp8_scales(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int) -> None:
    """cubecl-wgpu packs fp8 four lanes to a u32 and has no scalar fp8, which a UE4M3 scale is (and a UE8M0 one,
    once the release has its round-up rule: burn 0.22.1): the quantize and the dequantize kernels fail to compile,
    and the read-back reports it (measured on every shape tried; no kernel runs for an empty tensor)."""
    fp8 = (ScaleDtype.UE4M3, ScaleDtype.UE8M0) if profile.ue8m0 else (ScaleDtype.UE4M3,)
    if scheme.scale_dtype() in fp8 and math.prod(shape) > 0:
        raise deferred_panic("wgsl.fp8_scalar", profile)


def _cubecl_packed_dim_rank(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int) -> None:
    """A packed dim at or beyond the tensor's rank indexes its shape at ``rank - 1 - dim``, which wraps as a usize
    (measured on burn-wgpu: ``index out of bounds: the len is 1 but the index is 18446744073709551615``)."""
    store, rank = scheme.store, max(len(shape), 1)
    if store.kind != "Native" and store.dim >= rank:
        if profile.stores_packed_axis_innermost:
            raise panic("cubecl.packed_axis_swap", dim=(rank - 1 - store.dim) % 2**64, rank=rank)
        raise panic("scale.index_out_of_bounds", len=rank, index=(rank - 1 - store.dim) % 2**64)


# A launch that fails to compile surfaces at read-back, worded by the release's runtime (``Profile.read_failure``).
_DEFERRED = READ_FAILURE.steps({
    "panics_in_bytes": {"wgsl.fp8_scalar": "wgsl.fp8_scalar", "wgsl.matmul_i8": "wgsl.matmul_i8"},
    "returns_unwritten": {"wgsl.fp8_scalar": "wgsl.fp8_scalar_unwritten", "wgsl.matmul_i8": "wgsl.matmul_i8_unwritten"},
})


@contextmanager
def on_stream(profile: Profile):
    """Ops burn-fusion queues on its stream (a fused build, ``Profile.stream_panics``): their panics surface at the
    read that needs the output (``fusion.deferred``); elsewhere, and for other panics, nothing changes."""
    try:
        yield
    except BurnPanic as p:
        if p.code in profile.stream_panics:
            raise surfaced_at_read(p) from None
        raise


def _backend_reads(scheme: QuantScheme) -> None:
    """No fused kernel: the backend's own dequantize launch reads every quantized tensor."""
    return None


def _cubecl_fusion_reads(scheme: QuantScheme) -> str | None:
    """``FuseType::from_quant_scheme`` and ``from_scale_dtype`` (burn-cubecl-fusion-0.22.1 src/engine/codegen/
    ir.rs:921-957): the type the fused kernel reads the codes as, or None where it declines (a global scale, fp8
    codes, fp8 scales); the panics are raised while fusing, on burn-fusion's device runner thread."""
    store, value = scheme.store, scheme.value.name
    if store.kind == "Native" and value not in ("Q8F", "Q8S", "E4M3", "E5M2"):
        raise panic("fusion.server_panic", error=panic("cubecl.native_sub_byte").message)
    if store.kind == "PackedNative" and value != "E2M1":
        raise panic("fusion.server_panic", error=panic("cubecl.native_packing", value=value).message)
    if scheme.is_two_level() or scheme.scale_dtype() in (ScaleDtype.UE8M0, ScaleDtype.UE4M3):
        return None
    return {"Native": "i8" if value in ("Q8F", "Q8S") else None, "PackedU32": "u32"}.get(store.kind)


_FUSED_READS = FUSED_READ.steps({"none": _backend_reads, "cubecl_fusion": _cubecl_fusion_reads})


def fused_read(scheme: QuantScheme, profile: Profile) -> str | None:
    """The type a fused build's kernel reads ``scheme``'s codes as (``Profile.fused_read``), None where the backend's
    dequantize launch reads them."""
    return profile.step(_FUSED_READS)(scheme)


def i8_binding(var: str, line: int, width: int, binding: int = 0) -> dict[str, object]:
    """Where naga reports a kernel's i8 binding ``var`` (number ``binding``) read ``width`` codes at a time: the
    fields of the ``*i8*`` panics (the caret sits under the type, after ``@group(0) @binding(N) var<storage,
    read_write> ``)."""
    vector = "" if width == 1 else f"vec{width}<"
    array = f"{vector}i8{'>' if vector else ''}"
    col = len(f"@group(0) @binding({binding}) var<storage, read_write> {var}: array<{vector}") + 1
    return {"line": line, "col": col, "var": var, "array": array, "pad": " " * col, "binding": binding}


_FUSED_INPUTS: ContextVar[tuple[str, ...]] = ContextVar("fused_inputs", default=("i8", "f32"))


@contextmanager
def fused_inputs(inputs: tuple[str, ...]):
    """The input bindings, in order, of the fused elementwise kernel a float op builds around its dequantize (the
    codes' and scales' of each quantized tensor it reads, one per float tensor; the output follows): where the i8
    binding that fails to compile is declared (``_check_fused_read``). Without one, a lone dequantize's
    ``("i8", "f32")``."""
    token = _FUSED_INPUTS.set(inputs)
    try:
        yield
    finally:
        _FUSED_INPUTS.reset(token)


def _check_fused_read(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, strided: bool,
                      f16: bool) -> None:
    """The fused elementwise kernel's own read of the codes: where the device cannot declare i8, it fails to
    compile. The kernel declares its bindings from the last (the output) down to the first, after an ``enable f16;``
    line when an f16 output or scale is in it, so naga reports the i8 binding of the highest number, variable
    ``v{1 + 6 * binding}`` (measured: ``q.abs()`` on line 3, ``q.add(f)`` on 4, ``q.mul(q)`` at binding 2 on 3), read
    as the widest vector of the last dim (``native_vector_width``), one by one when strided. No kernel is compiled
    for a tensor without elements (measured: the read returns the empty tensor)."""
    if fused_read(scheme, profile) == "i8" and profile.fused_i8_panic is not None and math.prod(shape) > 0:
        width = 1 if strided else native_vector_width(shape, 1, profile)
        inputs = _FUSED_INPUTS.get()
        binding = max(i for i, kind in enumerate(inputs) if kind == "i8")
        above = len(inputs) - binding  # the later inputs and the output, declared first
        raise panic(profile.fused_i8_panic, **i8_binding(f"v{1 + 6 * binding}", 1 + f16 + above, width, binding))


@contextmanager
def read_below(profile: Profile, depth: int, earlier: frozenset[str] = frozenset()):
    """A stream op's failure, read ``depth`` ops below it (``Profile.errored_handles``: ``fusion.skipped``), or one
    op further for a panic in ``earlier`` (raised by the op before the one ``depth`` counts from); where failures are
    not held by tensors, nothing changes."""
    try:
        yield
    except BurnPanic as p:
        if profile.errored_handles and (p.code == "fusion.deferred" or p.code in profile.stream_panics):
            raise skipped_below(surfaced_at_read(p), depth + (p.root in earlier)) from None
        raise


def deferred_panic(root: str, profile: Profile, **fields):
    """The panic a user meets when reading the output of a launch that failed for ``root`` (a compile error)."""
    return panic(profile.step(_DEFERRED)[root], **fields)


CHECKS: dict[str, Check] = QUANTIZE_CHECK.steps({
    "ndarray.matrix": _ndarray_matrix,
    "cubecl.storage": _cubecl_storage,
    "cubecl.scale_bindings": _cubecl_scale_bindings,
    "cubecl.native_i8": _cubecl_native_i8,
    "wgsl.fp8_scales": _wgsl_fp8_scales,
    "cubecl.packed_dim_rank": _cubecl_packed_dim_rank,
    "cubecl.round_up_rule": _cubecl_round_up_rule,
    "cubecl.native_store": _cubecl_native_store,
    "cubecl.packed_native": _cubecl_packed_native,
    "cubecl.mode": _cubecl_mode,
    "cubecl.block_divisibility": _cubecl_block_divisibility,
})


def check_quantize(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int = 1) -> None:
    for name in profile.quantize_checks:
        CHECKS[name](scheme, shape, profile, bindings)


def check_from_data(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile) -> None:
    """The checks of the backend's ``q_from_data`` (burn-cubecl allocates through ``new_quantized``)."""
    for name in profile.from_data_checks:
        CHECKS[name](scheme, shape, profile, scheme.num_levels())


def check_dequantize(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, *, strided: bool = False,
                     f16: bool = False, fusible: bool = True) -> None:
    """The checks of the backend's dequantize launch (cubek-quant ``dequantize.rs:198-250``), run on burn-fusion's
    stream in a fused build, where a kernel that reads the codes itself (``fused_read``) replaces the launch unless
    the dequantize is not ``fusible`` (inside a backend op): ``strided``, a view whose last axis moved; ``f16``, an
    f16 output or scale in the kernel."""
    with on_stream(profile):
        if fusible and fused_read(scheme, profile) is not None:
            _check_fused_read(scheme, shape, profile, strided, f16)
            return
        for name in profile.dequantize_checks:
            CHECKS[name](scheme, shape, profile, scheme.num_levels())
