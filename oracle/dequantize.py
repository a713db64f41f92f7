"""Dequantize: ``Tensor::dequantize`` of a tensor rebuilt from its parts (spec §6, §7.5).

The parts travel as burn's ``TensorData`` would (``to_bytes`` then the backend's ``q_from_data``), so the
reload checks and the scale codec apply exactly as they do for a tensor loaded from a file. Then
``x = f32(e * f32(q))`` per element with the effective scale ``e`` (``global * s`` for two-level schemes), and a
final cast to the requested dtype. For f32 output every backend computes the same product (§6).
"""

from __future__ import annotations

import math

import numpy as np

from .blocks import BlockLayout
from .choices import FLOAT_CODES, KERNEL
from .codec import from_bytes, to_bytes
from .errors import panic
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .qtensor import QTensor
from .rounding import float_dtype, minifloat_values
from .scales import effective_guard
from .scheme import NATIVE, QuantMode, QuantScheme, QuantValue, shape_debug


def dequantize(qtensor: QTensor, dtype: str = "f32", *, profile: str | Profile = DEFAULT_PROFILE,
               trace: dict | None = None) -> np.ndarray:
    """The dequantized tensor in ``dtype`` (``f32``, ``f16`` or ``bf16``); ``trace`` receives the per-block
    ``effective_scales`` the codes are multiplied by."""
    prof = get_profile(profile)
    out = float_dtype(dtype)
    codes, scales, glob = _reload(qtensor, prof)
    if trace is not None:
        grid = scales[:1] if qtensor.scheme.block_size() is None else scales
        trace["effective_scales"] = effective_guard((np.float32(1) if glob is None else glob[0]) * grid, prof)
    x = KERNELS[prof.kernel](codes, scales, glob, qtensor.scheme, out, prof)
    if dtype not in prof.output_dtypes:
        raise panic("ndarray.unsupported_dtype", dtype=dtype.upper())
    with np.errstate(over="ignore"):
        return x.astype(out).reshape(codes.shape)


def _reload(qt: QTensor, profile: Profile) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``TensorData::quantized`` → ``q_from_data``: the codes, scales and global the backend ends up holding."""
    scheme, shape = qt.scheme, qt.codes.shape
    data = to_bytes(qt, profile=profile)
    refused = scheme.mode is QuantMode.Lookup or scheme.value.name not in profile.from_data_values
    if refused and profile.from_data_panic is not None:
        raise panic(profile.from_data_panic, scheme=scheme.debug())
    if not profile.observes_through_bytes:
        # The GPU splits the same bytes by size; its codes are the logical ones given.
        held = from_bytes(data, shape, scheme.with_store(NATIVE), profile=profile)
        return np.asarray(qt.codes, dtype=np.int8), held.scales, held.global_scale
    held = from_bytes(data, shape, scheme, profile=profile)
    values, scales, glob = held.codes, held.scales, held.global_scale
    if values.size != math.prod(shape):
        raise panic("data.shape_mismatch", shape=shape_debug(shape), size=values.size,
                    left=math.prod(shape), right=values.size)
    if profile.checks_qtensor and scales.size == 0:
        raise panic("flex.qtensor_no_scale")
    return values.reshape(shape), scales, glob


def _cpu(codes: np.ndarray, scales: np.ndarray, glob: np.ndarray | None, scheme: QuantScheme, out: np.dtype,
         profile: Profile) -> np.ndarray:
    """CPU (§6): ``f32(e * f32(q))`` in f32, whatever the output dtype (it is cast once at the end)."""
    e = _effective(scales, glob, scheme, codes.shape, profile)
    q = FLOAT_DECODERS[profile.float_codes](codes, scheme.value) if scheme.value.is_float else codes.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        return (e * q).astype(np.float32)


# What a minifloat value's code stands for: the integer itself, or (burn's own types) the format's value.
FLOAT_DECODERS = FLOAT_CODES.steps({"integer": lambda codes, value: codes.astype(np.float32),
                                    "format": minifloat_values})


def _effective(scales: np.ndarray, glob: np.ndarray | None, scheme: QuantScheme, shape, profile: Profile):
    """Per element: ndarray ``valid_scale(f32(global * s))``; flex ``f32(global * s)`` unguarded."""
    if scheme.block_size() is None:
        return effective_guard(scales[0], profile)
    layout = BlockLayout(shape, scheme.block_size())
    multiplier = np.float32(1.0) if glob is None else glob[0]
    return layout.spread(effective_guard(multiplier * scales[: layout.num_blocks()], profile))



def _gpu(codes: np.ndarray, scales: np.ndarray, glob: np.ndarray | None, scheme: QuantScheme, out: np.dtype,
         profile: Profile) -> np.ndarray:
    """GPU (§6): one-level ``F(q) * F(inner)`` in the output dtype; two-level ``F(f32(q) * f32(global*inner))``;
    float values decode their fp8/fp4 bit patterns."""
    scales = effective_guard(scales, profile)
    q = _gpu_values(codes, scheme.value)
    size = scheme.block_size()
    layout = None if size is None else BlockLayout(codes.shape, size)
    per = scales[:1] if layout is None else layout.spread(scales[: layout.num_blocks()])
    with np.errstate(over="ignore", invalid="ignore"):
        if glob is None:
            return (q.astype(out) * np.asarray(per).astype(out)).astype(out)
        return (q * (glob[0] * per).astype(np.float32)).astype(np.float32)


def _gpu_values(codes: np.ndarray, value: QuantValue) -> np.ndarray:
    return minifloat_values(codes, value) if value.is_float else codes.astype(np.float32)


# The dequantize arithmetic per kernel family (the GPU works in the output dtype, §6).
KERNELS = KERNEL.steps({"cpu": _cpu, "gpu": _gpu})
