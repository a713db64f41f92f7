"""burn's vocabulary as qconform speaks it: the one place that lists the ops, values, stores, modes, scale dtypes,
float dtypes, levels, calibrations and profile names. Everything else (the ops table, the vector reader, the
coverage lattice, the cases, the tags, the Rust harness through a test) imports or is checked against it.

The names are burn's own (``QuantValue::Q8S``, ``QuantStore::PackedU32``, ``ScaleDtype::UE4M3``), read off the
enums of ``scheme.py`` so that a new enum member is a new word here without a second list.
"""

from __future__ import annotations

from .calibration import CALIBRATIONS
from .profiles import PROFILES
from .rounding import FLOAT_DTYPES as _FLOAT_DTYPES
from .scheme import STORE_KINDS, QuantMode, QuantScheme, QuantValue, ScaleDtype

OPS = ("round_up", "encode_scales", "decode_scales", "compute_range", "compute_q_params", "quantize",
       "quantize_dynamic", "dequantize", "to_bytes", "from_bytes", "pack_u32", "unpack_u32", "ternary_matmul",
       "scheme_info", "qlayout", "quantize_view", "float_ops", "load_quantized",
       "save_checkpoint", "load_checkpoint")
"""The operations of docs/ops.md, in its order."""
LAYOUT_STEPS = ("reshape", "transpose", "swap_dims", "permute", "flip", "slice", "select", "gather", "repeat_dim",
                "cat", "expand", "mul_scalar", "matmul")
"""The ``Tensor`` calls a ``qlayout`` / ``quantize_view`` step names (docs/ops.md, "Layout steps")."""
FLOAT_STEPS = ("abs", "neg", "sqrt", "add_scalar", "clamp", "add", "sub", "mul", "div", "mask_fill", "mask_where",
               "greater_elem", "greater_equal_elem", "lower_elem", "lower_equal_elem", "equal_elem", "sum",
               "sum_dim", "mean_dim", "prod", "prod_dim", "cumsum", "cumprod", "max_dim", "min_dim", "argmax",
               "argmin", "argsort", "sort", "topk", "stack")
"""The float ops a ``float_ops`` step may name besides the layout steps (docs/ops.md, "Float-op steps")."""

SCALE_OPS = ("round_up", "encode_scales", "decode_scales")
"""The ops on a scale dtype alone (param ``dtype``), not on a tensor."""

VALUES = tuple(QuantValue.__members__)
STORES = STORE_KINDS
MODES = tuple(QuantMode.__members__)
SCALE_DTYPES = tuple(ScaleDtype.__members__)
FLOAT_DTYPES = tuple(_FLOAT_DTYPES)
"""Tensor float dtypes by their protocol names (``f32``, ``f16``, ``bf16``)."""
LEVELS = ("tensor", "block", "two-level")
"""Per-tensor scale only, one level of block scales, or block scales under a per-tensor global (§1.6)."""
PROFILE_NAMES = tuple(PROFILES)

__all__ = ["CALIBRATIONS", "FLOAT_DTYPES", "FLOAT_STEPS", "LAYOUT_STEPS", "LEVELS", "MODES", "OPS", "PROFILE_NAMES", "SCALE_DTYPES",
           "SCALE_OPS", "STORES", "VALUES", "level"]


def level(scheme: QuantScheme) -> str:
    """The scheme's level, one of :data:`LEVELS`."""
    if scheme.block_size() is None:
        return "tensor"
    return "two-level" if scheme.is_two_level() else "block"
