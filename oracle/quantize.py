"""Quantize: ``Tensor::quantize``'s checks, the backend's ``B::quantize`` and ``Tensor::quantize_dynamic`` (spec §5).

The backend operation, as every profile performs it:

1. the given scales are converted to f32 and stored on the scale dtype's grid (``round_up``, §4.1); flex also
   replaces a non-positive or non-finite one;
2. a global (per-tensor) scale is accepted only by a two-level scheme (``a per-tensor scale should come with a
   two-level scheme``);
3. each element is divided by its block's *effective* scale (``global * s`` for a two-level scheme, with
   ndarray's 0 → 0.1 guard), rounded (ties away from zero on the CPU, to even on the GPU) and clamped to the
   value range ``[a, b]``.

A ``trace`` dict, when given, receives the stages (``min``/``max``, ``raw_scales``, ``normalized_scales``,
``global``, ``rounded_scales``, ``effective_scales``, ``scaled`` = the divided values before rounding): the golden
vectors carry them so a divergence can be located at its first wrong stage.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .blocks import BlockLayout
from .calibration import compute_range
from .choices import BLOCK_LAYOUT, CLAMP, DIVISION, FLOAT_CODES, KERNEL, NAN_CODE, TWO_LEVEL_DIVISION
from .errors import UndefinedBehaviour, panic
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .qparams import compute_q_params
from .qtensor import QTensor
from .rounding import FP8_DTYPES, ROUNDERS, ROUNDERS_BEFORE_TRUNCATION, dtype_name, minifloat_codes
from .scales import effective_guard, stored_scales
from .scheme import NATIVE, QuantScheme, QuantValue, ScaleDtype, list_debug, shape_debug
from .support import check_quantize


def quantize(x: np.ndarray, scheme: QuantScheme, scales: np.ndarray, global_scale: np.ndarray | None = None, *,
             profile: str | Profile = DEFAULT_PROFILE, checked: bool = False, trace: dict | None = None) -> QTensor:
    """``B::quantize(x, scheme, qparams)``; with ``checked=True``, ``Tensor::quantize`` (its asserts first)."""
    prof = get_profile(profile)
    x = np.asarray(x)
    require_dtypes(prof, x, scales, global_scale)
    if checked:
        tensor_checks(scheme, global_scale)
    return KERNELS[prof.kernel](x, scheme, np.asarray(scales), global_scale, prof, trace)


def quantize_dynamic(x: np.ndarray, scheme: QuantScheme, *,
                     profile: str | Profile = DEFAULT_PROFILE, trace: dict | None = None) -> QTensor:
    """``Tensor::quantize_dynamic``: MinMax ``compute_range`` → ``compute_q_params`` → ``B::quantize`` (§5.1)."""
    prof = get_profile(profile)
    x = np.asarray(x)
    require_dtypes(prof, x)
    lo, hi = compute_range(x, scheme, "minmax", profile=prof)
    if trace is not None:
        trace["min"], trace["max"] = lo, hi
    scales, glob = compute_q_params(lo, hi, scheme, profile=prof, trace=trace)
    return KERNELS[prof.kernel](x, scheme, scales, glob, prof, trace)


def require_dtypes(profile: Profile, *tensors: np.ndarray | None) -> None:
    """A backend without f16/bf16 tensors (ndarray) fails when such a tensor is created (§8 #35)."""
    for t in tensors:
        if t is None:
            continue
        name = dtype_name(np.asarray(t).dtype)
        if name not in profile.input_dtypes:
            raise panic("ndarray.unsupported_dtype", dtype=name.upper())


# `{:?}` of `Option<Tensor<1>>` in Tensor::quantize's assert: a tensor prints its dispatch wrapper, not its data
# (read off real burn 0.22.0-pre.3 and 0.22.1 through the harness).
_GLOBAL_TENSOR_DEBUG = ("Some(Tensor { primitive: BridgeTensor { kind: Float }, "
                        "_kind: PhantomData<burn_tensor::bridge::kind::Float> })")


def tensor_checks(scheme: QuantScheme, global_scale: np.ndarray | None) -> None:
    """``Tensor::quantize``'s asserts, in order (§5.1, §8 #21-23)."""
    two_level = scheme.global_scale_dtype() is not None
    given = global_scale is not None
    if two_level != given:
        raise panic("quantize.global_mismatch", scheme=scheme.debug(),
                    global_scale=_GLOBAL_TENSOR_DEBUG if given else "None",
                    left=str(two_level).lower(), right=str(given).lower())
    if given:
        g = np.asarray(global_scale)
        dims = list(g.shape)
        if dims[0] != 1:
            raise panic("tensor.global_not_one", dims=list_debug(dims), left=dims[0], right=1)
        if g.dtype != np.float32:
            dt = dtype_name(g.dtype).upper()
            raise panic("tensor.global_not_f32", dtype=dt, left=dt, right="F32")


# --- element encoding -------------------------------------------------------------------------------------


def encode(v: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """Round and clamp ``v = x / e`` to the value range, then the stored code, with the profile's NaN rule
    (§5.2-5.4). ``v`` is a temporary the caller hands over: the integer path works in place."""
    return ENCODERS[profile.clamp](v, scheme, profile)


def _round_then_clamp(v: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """``clamp(round(v), a, b)``."""
    a, b = scheme.value.range()
    if not scheme.value.is_float:
        return _encode_int(v, a, b, profile)
    return FLOAT_ENCODERS[profile.float_codes](v, scheme, profile)


def _clamp_then_round(v: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """``round(clamp(v, a, b))`` (flex >= 0.23.0-pre.1, ``burn-flex/src/quant_codes.rs:20-43``). The bounds are
    integers and burn's minifloat conversions saturate, so this differs from rounding first only where the
    rounding is undefined: burn's half-even shift ``v + 1.5*2^23 - 1.5*2^23`` turns an infinite ``v`` into NaN,
    and so into code 0, unless it is clamped first (to ``±b``)."""
    a, b = scheme.value.range()
    np.clip(v, np.float32(a), np.float32(b), out=v)
    return _round_then_clamp(v, scheme, profile)


def _integer_float_codes(v: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """A minifloat value's scaled values rounded to integers like any value's, then stored (``store_codes``)."""
    a, b = scheme.value.range()
    r = np.clip(ROUNDERS[profile.tie](v), np.float32(a), np.float32(b))
    return store_codes(nan_codes(r, b, profile), scheme, profile)


def _format_codes(v: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """burn's own minifloat conversion of each scaled value; its NaN codes are the conversion's, not ``nan_code``'s."""
    return minifloat_codes(v, scheme.value)


FLOAT_ENCODERS = FLOAT_CODES.steps({"integer": _integer_float_codes, "format": _format_codes})


def _encode_int(v: np.ndarray, a: float, b: float, profile: Profile) -> np.ndarray:
    """Integer codes in place, the rounding's final ``trunc`` folded into the int8 cast (which truncates toward
    zero): exact because the clamp bounds are integers, so truncating and clamping commute (and, as they lie
    within i8, flex's saturating cast has nothing left to saturate)."""
    v = ROUNDERS_BEFORE_TRUNCATION[profile.tie](v)
    np.clip(v, np.float32(a), np.float32(b), out=v)
    return nan_codes(v, b, profile).astype(np.int8)


ENCODERS = CLAMP.steps({"after_round": _round_then_clamp, "before_round": _clamp_then_round})


def nan_codes(r: np.ndarray, b: float, profile: Profile) -> np.ndarray:
    """The profile's NaN rule applied to rounded, clamped values ``r`` (upper bound ``b``)."""
    if r.size and np.isnan(r.max()):
        return NAN_CODES[profile.nan_code](r, b)
    return r


def _nan_panics(r: np.ndarray, b: float) -> np.ndarray:
    raise panic("ndarray.nan_code")


def _nan_to(code):
    return lambda r, b: np.where(np.isnan(r), np.float32(code(b)), r)


NAN_CODES = NAN_CODE.steps({"panic": _nan_panics, "zero": _nan_to(lambda b: 0.0), "hi": _nan_to(lambda b: b)})


def store_codes(r: np.ndarray, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """The integer kept per element; on the GPU, a float value's Native/PackedNative code is the fp8/fp4 bit
    pattern of that integer, while PackedU32 keeps the integer's two's-complement bit field (§5.4)."""
    value = scheme.value
    if profile.saturate_codes_to_i8:  # flex: `as i8`
        return np.clip(r, -128.0, 127.0).astype(np.int8)
    if not value.is_float:
        with np.errstate(invalid="ignore"):
            return r.astype(np.int8)
    if scheme.store.kind == "PackedU32":
        field = r.astype(np.int32) & ((1 << value.size_bits) - 1)
        return field.astype(np.uint8).view(np.int8)
    if value is QuantValue.E2M1:
        return r.astype(ml_dtypes.float4_e2m1fn).view(np.uint8).astype(np.int8)
    return r.astype(FP8_DTYPES[value]).view(np.int8)


# --- the backends ------------------------------------------------------------------------------------------


def _prepare(scheme: QuantScheme, scales: np.ndarray, global_scale: np.ndarray | None,
             profile: Profile) -> tuple[np.ndarray, np.ndarray | None]:
    """Steps 1-2 shared by the CPU backends: stored scales, then the global (§5.2 steps 1-2, §5.3)."""
    stored = stored_scales(scales.astype(np.float32).ravel(), scheme.scale_dtype(), profile)
    glob = None
    if global_scale is not None:
        dtype = scheme.global_scale_dtype()
        if dtype is None:
            raise panic("quantize.global_without_two_level")
        g = np.asarray(global_scale).astype(np.float32).ravel()
        if g.size == 0:
            raise panic(profile.empty_global_panic, len=0, index=0)
        glob = stored_scales(g[:1], dtype, profile)
    return stored, glob


def _quantize_cpu(x: np.ndarray, scheme: QuantScheme, scales: np.ndarray, global_scale: np.ndarray | None,
                  profile: Profile, trace: dict | None) -> QTensor:
    """burn-ndarray (§5.2) and burn-flex (§5.3): f32 arithmetic on the f32-converted input."""
    stored, glob = _prepare(scheme, scales, global_scale, profile)
    check_quantize(scheme, x.shape, profile)
    x32 = x.astype(np.float32, copy=False)
    if scheme.block_size() is None:
        if stored.size == 0:
            raise panic("scale.index_out_of_bounds", len=0, index=0)
        if not profile.keeps_extra_scales:
            stored = stored[:1]
        e = effective_guard(stored[0], profile)
        _record(trace, stored, None, e)
        codes = _divide_and_encode(lambda xc, ec: divide(xc, ec, profile), x32, e, scheme, profile, trace,
                                   x.shape)
        return _finish(codes, scheme, stored, None, profile)
    if scheme.global_scale_dtype() is not None and glob is None and profile.requires_two_level_global:
        raise panic("quantize.two_level_without_global")
    layout = BlockLayout(x.shape, scheme.block_size())
    if profile.asserts_whole_blocks and not layout.divides():
        raise panic("flex.block_not_whole", shape=shape_debug(x.shape), block=scheme.block_size().debug())
    _check_block_count(layout, stored, x.shape, scheme, profile)
    multiplier = np.float32(1.0) if glob is None else glob[0]
    per = _per_element(stored, layout, scheme, profile)
    _record(trace, stored, glob, effective_guard(multiplier * stored[: layout.num_blocks()], profile))
    divide_chunk, aux = TWO_LEVEL_DIVISIONS[profile.two_level_division](per, glob, profile)
    codes = _divide_and_encode(divide_chunk, layout.element_view(x32), aux, scheme, profile, trace, x.shape)
    return _finish(codes.reshape(x.shape), scheme, stored, glob, profile)


def _record(trace: dict | None, stored: np.ndarray, glob: np.ndarray | None, effective) -> None:
    if trace is not None:
        trace["rounded_scales"] = stored
        trace["effective_scales"] = np.atleast_1d(np.asarray(effective, dtype=np.float32))
        if glob is not None:
            trace["global"] = glob


def _divide_and_encode(divide_chunk, xv: np.ndarray, aux, scheme: QuantScheme, profile: Profile,
                       trace: dict | None, shape: tuple[int, ...]) -> np.ndarray:
    """``encode(divide_chunk(xv, aux))`` for the tensor of ``shape`` viewed as ``xv``: in cache-sized chunks, or,
    when tracing, whole, keeping the divided values (in ``shape``)."""
    if trace is None:
        return _chunked(lambda xc, ac: encode(divide_chunk(xc, ac), scheme, profile), xv, aux)
    v = divide_chunk(xv, aux)
    trace["scaled"] = np.array(v, dtype=np.float32).reshape(shape)
    return encode(v, scheme, profile)


_CHUNK = 1 << 16  # elements per step: every temporary of the pipeline stays in the L2 cache


def _chunked(fn, xv: np.ndarray, aux: np.ndarray) -> np.ndarray:
    """``fn(xv, aux)`` computed over slices of axis 0, ``aux`` sliced alongside where it is not broadcast.
    Elementwise work gives the same bits in any slicing; the slicing only keeps temporaries cache-sized."""
    n0 = xv.shape[0] if xv.ndim else 1
    if xv.size <= _CHUNK or n0 == 1:
        return fn(xv, aux)
    aux = np.asarray(aux)
    sliced = aux.ndim == xv.ndim and aux.shape[0] == n0
    out = np.empty(xv.shape, np.int8)
    rows = max(1, _CHUNK * n0 // xv.size)
    for start in range(0, n0, rows):
        part = slice(start, start + rows)
        out[part] = fn(xv[part], aux[part] if sliced else aux)
    return out


def divide(x: np.ndarray, e: np.ndarray, profile: Profile) -> np.ndarray:
    """``x / e`` as the profile divides."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return DIVISIONS[profile.division](x, e)


def _reciprocal(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    return x * (np.float32(1.0) / e)


DIVISIONS = DIVISION.steps({"divide": np.divide, "reciprocal": _reciprocal})


def _by_product(per: np.ndarray, glob: np.ndarray | None, profile: Profile):
    """Divide by the effective scale ``valid(f32(global * s))`` (``global`` = 1 for a one-level scheme)."""
    multiplier = np.float32(1.0) if glob is None else glob[0]
    return (lambda xc, ec: divide(xc, ec, profile)), effective_guard(multiplier * per, profile)


# How a block's elements are divided, given the block scales spread per element and the global: a
# ``(divide(x_chunk, aux_chunk), aux)`` pair.
TWO_LEVEL_DIVISIONS = TWO_LEVEL_DIVISION.steps({"product": _by_product})


def _per_element(stored: np.ndarray, layout: BlockLayout, scheme: QuantScheme, profile: Profile) -> np.ndarray:
    """The block scales, broadcastable against ``layout.element_view(x)``."""
    return PER_ELEMENT[profile.block_layout](stored[: layout.num_blocks()], layout, scheme)


def _nd_blocks(grid: np.ndarray, layout: BlockLayout, scheme: QuantScheme) -> np.ndarray:
    return layout.per_element(grid)


PER_ELEMENT = BLOCK_LAYOUT.steps({"nd": _nd_blocks})


def _check_block_count(layout: BlockLayout, stored: np.ndarray, shape, scheme: QuantScheme,
                       profile: Profile) -> None:
    """ndarray asserts the scale count; flex indexes (too few → out of bounds, extra kept)."""
    count = stored.size
    if profile.asserts_block_count and layout.num_blocks() != count:
        raise panic("ndarray.block_count", count=count, shape=shape_debug(shape),
                    block=scheme.block_size().debug(), left=layout.num_blocks(), right=count)
    if count < layout.num_blocks() and math.prod(shape) > 0:
        raise panic("scale.index_out_of_bounds", len=count, index=_first_missing_block(layout, count))


def _first_missing_block(layout: BlockLayout, count: int) -> int:
    """The block index of the first element (row-major) whose block has no scale."""
    for index in range(math.prod(layout.shape)):
        block = layout.block_of(index)
        if block >= count:
            return block
    raise AssertionError("unreachable: fewer scales than blocks")


def _finish(codes: np.ndarray, scheme: QuantScheme, stored: np.ndarray, glob: np.ndarray | None,
            profile: Profile) -> QTensor:
    """What the backend keeps, after the byte-level checks of ``TensorData::quantized`` (ndarray) or
    ``FlexQTensor::new`` (flex)."""
    result_scheme = scheme.with_store(NATIVE) if profile.stores_as_native else scheme
    if profile.writes_bytes_at_quantize:
        two_level = scheme.global_scale_dtype()
        if two_level is not None and glob is not None and two_level is not ScaleDtype.F32:
            raise panic("bytes.global_not_f32", scheme=scheme.debug(), left=two_level.name, right="F32")
    if profile.checks_qtensor:
        if stored.size == 0:
            raise panic("flex.qtensor_no_scale")
        expects = result_scheme.global_scale_dtype() is not None
        if expects != (glob is not None):
            # Only a two-level scheme without a global gets here: a global for any other scheme panics earlier.
            raise panic("quantize.global_mismatch", scheme=result_scheme.debug(), global_scale="None",
                        left="true", right="false")
    return QTensor(codes, stored, glob, result_scheme)


def _quantize_gpu(x: np.ndarray, scheme: QuantScheme, scales: np.ndarray, global_scale: np.ndarray | None,
                  profile: Profile, trace: dict | None) -> QTensor:
    """burn-cubecl's kernel (§5.4, very likely): scale rounded in the kernel, one-level division in the input
    dtype, two-level division in f32 by ``f32(global * inner)``, ties to even, no zero-scale guard."""
    if global_scale is not None and np.asarray(global_scale).dtype != np.float32:
        dt = dtype_name(np.asarray(global_scale).dtype).upper()
        raise panic("cubecl.global_tensor_not_f32", dtype=dt, left=dt, right="F32")
    check_quantize(scheme, x.shape, profile)
    bindings = 1 + (global_scale is not None)
    if bindings != scheme.num_levels():
        raise panic("cubecl.scale_bindings", levels=scheme.num_levels(), bindings=bindings)
    stored = stored_scales(scales.astype(np.float32).ravel(), scheme.scale_dtype(), profile)
    glob = None if global_scale is None else np.asarray(global_scale, dtype=np.float32).ravel()[:1]
    size = scheme.block_size()
    layout = BlockLayout(x.shape, size) if size is not None else None
    needed = 1 if layout is None else layout.num_blocks()
    if stored.size < needed or (glob is not None and glob.size == 0):
        raise UndefinedBehaviour(f"the kernel reads {needed} scale(s) and a global from buffers holding "
                                 f"{stored.size} and {0 if glob is None else glob.size}: out of bounds")
    kept = stored if layout else stored[:1]
    per = kept if layout is None else _per_element(stored, layout, scheme, profile)
    xv = x if layout is None else layout.element_view(x)
    grid = kept[:needed]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if glob is None:
            e = effective_guard(per, profile)
            v = (xv / e.astype(x.dtype)) if profile.divide_in_input_dtype else (xv.astype(np.float32) / e)
            effective = effective_guard(grid, profile).astype(x.dtype) if profile.divide_in_input_dtype else grid
        else:
            v = xv.astype(np.float32) / effective_guard(glob[0] * per, profile)
            effective = effective_guard(glob[0] * grid, profile)
    v = v.astype(x.dtype).astype(np.float32)
    _record(trace, kept, glob, effective)
    if trace is not None:
        trace["scaled"] = v.reshape(x.shape).copy()
    codes = encode(v, scheme, profile).reshape(x.shape)
    return QTensor(codes, kept, glob, scheme)


KERNELS = KERNEL.steps({"cpu": _quantize_cpu, "gpu": _quantize_gpu})
