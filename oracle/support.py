"""What each backend's ``quantize`` accepts before it does any arithmetic (spec §5.2, §5.4, §7.6).

A profile lists check names in ``quantize_checks``; each check raises burn's panic for a scheme the backend
cannot hold. Keeping them here, one small function each, keeps the arithmetic free of backend branches.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .choices import QUANTIZE_CHECK
from .errors import panic
from .profiles import Profile
from .scheme import QuantMode, QuantScheme, ScaleDtype

Check = Callable[[QuantScheme, tuple[int, ...], Profile, int, int], None]
"""(scheme, tensor shape, profile, scale bindings given, bytes per input element) → None, or burn's panic."""


def _ndarray_matrix(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int,
        itemsize: int) -> None:
    """ndarray quantizes Symmetric + Native only, with the values of its support matrix (§5.2)."""
    allowed = profile.block_values if scheme.block is not None else profile.tensor_values
    if not (scheme.mode is QuantMode.Symmetric and scheme.store.kind == "Native" and scheme.value.name in allowed):
        raise panic("ndarray.unsupported_scheme", scheme=scheme.debug())


def _cubecl_storage(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int,
        itemsize: int) -> None:
    """``new_quantized``: packed words must tile the last dim; native storage holds whole bytes (§7.6)."""
    kind = scheme.store.kind
    if kind == "PackedU32" and shape and shape[-1] % scheme.num_quants() != 0:
        raise panic("cubecl.packed_last_dim")
    if kind == "Native" and scheme.value.name not in ("Q8F", "Q8S", "E4M3", "E5M2"):
        raise panic("cubecl.native_sub_byte")
    if kind == "PackedNative" and scheme.value.name != "E2M1":
        raise panic("cubecl.native_packing", value=scheme.value.name)
    glob = scheme.global_scale_dtype()
    if glob is not None and glob is not ScaleDtype.F32:
        raise panic("cubecl.global_not_f32", scheme=scheme.debug(), left=glob.name, right="F32")


def _cubecl_packed_dim_rank(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int,
                            itemsize: int) -> None:
    """A packed dim at or beyond the tensor's rank: ``rank - packed_dim - 1`` wraps to ``usize::MAX`` in release and
    indexes the shape (found by fuzzing the SPIR-V build: ``the len is 1 but the index is 18446744073709551615``)."""
    if scheme.store.kind != "Native" and scheme.store.dim >= len(shape):
        raise panic("scale.index_out_of_bounds", len=len(shape), index=2**64 - 1)


def _cubecl_packed_upload(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int,
                          itemsize: int) -> None:
    """``q_from_data`` of burn-std's data (one byte per value, <= 0.22.1) for a 4/2-bit PackedU32 scheme: the
    device holds the values as packed words, so the bytes past them (the rest of the values, then the scales) are
    written into the scale buffer, which wgpu's upload refuses (measured on lavapipe)."""
    if scheme.store.kind == "PackedU32" and scheme.value.size_bits < 8 and math.prod(shape) > 0:
        raise panic("cubecl.range_outside_slice")


def _cubecl_round_up_rule(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int,
        itemsize: int) -> None:
    if scheme.scale_dtype() is ScaleDtype.UE8M0 and not profile.ue8m0:
        raise panic("cubecl.no_round_up", dtype="UE8M0")


def _cubecl_mode(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int,
        itemsize: int) -> None:
    if scheme.mode is not QuantMode.Symmetric:
        raise panic("cubecl.unsupported_scheme", scheme=scheme.debug())


def _cubecl_scale_bindings(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int,
        itemsize: int) -> None:
    """``launch_ref`` first counts the scale bindings, one per level (``check_scale_bindings``), before its own
    asserts (cubek-quant-0.3.0-pre.3/src/quantize.rs:218; measured on lavapipe)."""
    if bindings != scheme.num_levels():
        raise panic("cubecl.scale_bindings", levels=scheme.num_levels(), bindings=bindings)


def _cubecl_native_store(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int,
        itemsize: int) -> None:
    """``quantize_native`` launches only a Native store: E2M1 ``PackedNative``, which ``launch_ref`` routes there,
    falls to its ``Unsupported quantization scheme`` arm (cubek-quant-0.3.0-pre.3/src/quantize.rs:317-355)."""
    if scheme.store.kind == "PackedNative":
        raise panic("cubecl.unsupported_scheme", scheme=scheme.debug())


def _cubecl_block_divisibility(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int,
        itemsize: int) -> None:
    """``check_block_size_compat``: the block's last *given* extent (``as_slice().last()``, not the extent the
    tensor's rank sees) must be a multiple of the words a packed store fills, or of the vector width a Native
    kernel reads (cubek-quant-0.3.0-pre.3/src/lib.rs:27-35, quantize.rs:304-324, :413)."""
    size = scheme.block_size()
    if size is None or scheme.store.kind == "PackedNative":
        return
    if not size.dims:  # a block of 1s is canonically empty: `as_slice().last().unwrap()` on nothing
        raise panic("ndarray.nan_code")
    div = scheme.num_quants() if scheme.store.kind == "PackedU32" else native_vector_width(shape, itemsize, profile)
    last = size.dims[-1]
    if last % div != 0:
        raise panic("cubecl.block_divisibility", div=div, block_size=last)


def native_vector_width(shape: tuple[int, ...], itemsize: int, profile: Profile) -> int:
    """The vector width a Native quantize kernel reads a contiguous tensor with (its codes are narrower than the
    input): the largest power of two up to ``min(max_vector_size, load_width / input bits)`` that divides the
    last dim (``io_optimized_vector_sizes``, cubecl-runtime-0.11.0-pre.3/src/client.rs:1339-1352, and
    ``tensor_vector_size_parallel``, cubecl-core-0.11.0-pre.3/src/lib.rs:128-160)."""
    last = shape[-1] if shape else 1
    widest = min(profile.max_vector_size, profile.load_width // (8 * itemsize))
    width = widest & -widest  # io_optimized_vector_sizes tries 2^0 .. 2^trailing_zeros(max)
    while last % width:
        width //= 2
    return width


CHECKS: dict[str, Check] = QUANTIZE_CHECK.steps({
    "ndarray.matrix": _ndarray_matrix,
    "cubecl.storage": _cubecl_storage,
    "cubecl.round_up_rule": _cubecl_round_up_rule,
    "cubecl.packed_dim_rank": _cubecl_packed_dim_rank,
    "cubecl.packed_upload": _cubecl_packed_upload,
    "cubecl.scale_bindings": _cubecl_scale_bindings,
    "cubecl.mode": _cubecl_mode,
    "cubecl.native_store": _cubecl_native_store,
    "cubecl.block_divisibility": _cubecl_block_divisibility,
})


def check_loaded(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile) -> None:
    """The profile's ``from_data_checks`` on data ``q_from_data`` loads."""
    for name in profile.from_data_checks:
        CHECKS[name](scheme, shape, profile, scheme.num_levels(), 4)


def check_quantize(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile, bindings: int | None = None,
                   itemsize: int = 4) -> None:
    """The profile's checks in its order; ``bindings``: the scale tensors given (default: as many as the scheme
    has levels); ``itemsize``: bytes per input element (default f32)."""
    given = scheme.num_levels() if bindings is None else bindings
    for name in profile.quantize_checks:
        CHECKS[name](scheme, shape, profile, given, itemsize)
