"""What each backend's ``quantize`` accepts before it does any arithmetic (spec §5.2, §5.4, §7.6).

A profile lists check names in ``quantize_checks``; each check raises burn's panic for a scheme the backend
cannot hold. Keeping them here, one small function each, keeps the arithmetic free of backend branches.
"""

from __future__ import annotations

from collections.abc import Callable

from .choices import QUANTIZE_CHECK
from .errors import panic
from .profiles import Profile
from .scheme import QuantMode, QuantScheme, ScaleDtype

Check = Callable[[QuantScheme, tuple[int, ...], Profile], None]


def _ndarray_matrix(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile) -> None:
    """ndarray quantizes Symmetric + Native only, with the values of its support matrix (§5.2)."""
    allowed = profile.block_values if scheme.block is not None else profile.tensor_values
    if not (scheme.mode is QuantMode.Symmetric and scheme.store.kind == "Native" and scheme.value.name in allowed):
        raise panic("ndarray.unsupported_scheme", scheme=scheme.debug())


def _cubecl_storage(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile) -> None:
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


def _cubecl_round_up_rule(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile) -> None:
    if scheme.scale_dtype() is ScaleDtype.UE8M0 and not profile.ue8m0:
        raise panic("cubecl.no_round_up", dtype="UE8M0")


def _cubecl_mode(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile) -> None:
    if scheme.mode is not QuantMode.Symmetric:
        raise panic("cubecl.unsupported_scheme", scheme=scheme.debug())


def _cubecl_block_divisibility(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile) -> None:
    """Packed stores need the last block extent to hold whole words (the native vector width is a device
    property; the oracle assumes 1)."""
    size = scheme.block_size()
    if size is None or scheme.store.kind != "PackedU32":
        return
    last = size.to_dim_vec(max(len(shape), 1))[-1]
    if last % scheme.num_quants() != 0:
        raise panic("cubecl.block_divisibility", div=scheme.num_quants(), block_size=last)


CHECKS: dict[str, Check] = QUANTIZE_CHECK.steps({
    "ndarray.matrix": _ndarray_matrix,
    "cubecl.storage": _cubecl_storage,
    "cubecl.round_up_rule": _cubecl_round_up_rule,
    "cubecl.mode": _cubecl_mode,
    "cubecl.block_divisibility": _cubecl_block_divisibility,
})


def check_quantize(scheme: QuantScheme, shape: tuple[int, ...], profile: Profile) -> None:
    for name in profile.quantize_checks:
        CHECKS[name](scheme, shape, profile)
