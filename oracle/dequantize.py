"""Dequantize: ``Tensor::dequantize`` of a tensor rebuilt from its parts (spec §6, §7.5).

The parts travel as burn's ``TensorData`` would (``to_bytes`` then the backend's ``q_from_data``), so the
reload checks and the scale codec apply exactly as they do for a tensor loaded from a file. Then
``x = f32(e * f32(q))`` per element with the effective scale ``e`` (``global * s`` for two-level schemes), and a
final cast to the requested dtype. For f32 output every backend computes the same product (§6).
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from .blocks import layout_of, params_shape
from .choices import FLOAT_CODES, FP8_NAN, KERNEL
from .codec import LAYOUTS, check_data_length, from_bytes, read_params, scale_bytes, to_bytes
from .errors import BurnPanic, UndefinedBehaviour, panic, returned_by_backend_read
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .qtensor import QTensor
from .rounding import float_dtype, minifloat_values
from .scales import effective_scales
from .scheme import NATIVE, QuantMode, QuantScheme, QuantValue, ScaleDtype, shape_debug
from .stages import Stages
from .support import check_dequantize, check_from_data, fused_read, native_vector_width


def dequantize(qtensor: QTensor, dtype: str = "f32", *, profile: str | Profile = DEFAULT_PROFILE,
               stages: Stages | None = None, held: bool = False, in_backend: bool = False) -> np.ndarray:
    """The dequantized tensor in ``dtype`` (``f32``, ``f16`` or ``bf16``); ``stages`` receives the per-block
    ``effective_scales`` the codes are multiplied by. ``held``: a tensor already on the device (loaded, then moved)
    meets none of the GPU's ``q_from_data`` checks again (the CPU backends read its bytes the same either way).
    ``in_backend``: run inside a backend op, where no fused kernel reads the codes (``support.check_dequantize``)."""
    prof = get_profile(profile)
    with read_for(dtype):
        if held and prof.kernel == "cpu" and not prof.rewrites_to_dequantize:
            # burn-flex dequantizes the codes and scales it holds; no bytes are written (a tensor quantized on the
            # device may hold what bytes cannot: an F16 global, a store packed along a dim it lacks)
            codes, scales, glob = qtensor.codes, qtensor.scales, qtensor.global_scale
        else:
            try:
                codes, scales, glob = _reload(qtensor, prof, checks=not held)
            except BurnPanic as upload:
                if upload.code != prof.oversized_upload_panic or prof.read_failure != "returns_unwritten":
                    raise
                _compile_failure_first(qtensor, dtype, prof, stages, fusible=not in_backend)
                raise
        return _dequantize_held(qtensor, codes, scales, glob, dtype, prof, stages, fusible=not in_backend)


# Kernel compile failures that only a read reports (the launch returned; its bytes were never written), as opposed to
# a panic at the call: WGSL's refusal of a scalar fp8 and of i8, as burn 0.22.0-pre.3 (``bytes: host access failed``)
# and burn >= 0.22.1 (cubecl-runtime's ``Unwritten``) read them.
FP8_SCALAR_FAILURES = frozenset({"wgsl.fp8_scalar", "wgsl.fp8_scalar_unwritten"})
MATMUL_I8_FAILURES = frozenset({"wgsl.matmul_i8", "wgsl.matmul_i8_unwritten"})
COMPILE_FAILURES = FP8_SCALAR_FAILURES | MATMUL_I8_FAILURES


def _compile_failure_first(qtensor: QTensor, dtype: str, profile: Profile, stages, fusible: bool) -> None:
    """wgpu copies an oversized upload (``oversized_upload_panic``) only when the read flushes the queued work; a
    kernel that failed to compile on the way is what that read reports first where the read returns the failure
    (``read_failure = "returns_unwritten"``; measured on 0.22.1 WGSL: E2M1 PackedU32 with UE8M0 or UE4M3 block
    scales, MXFP4 and NVFP4, reports the fp8 scale's compile failure; on 0.22.0-pre.3, whose read panics in the
    bytes, the upload's panic comes first). Raises that failure, if the dequantize meets one."""
    past = profile.with_(oversized_upload_panic=None)
    try:
        codes, scales, glob = _reload(qtensor, past)
        _dequantize_held(qtensor, codes, scales, glob, dtype, past, stages, fusible=fusible)
    except BurnPanic as p:
        if p.code in COMPILE_FAILURES:
            raise p from None
    except UndefinedBehaviour:  # what the upload's panic leaves unread
        pass


@contextmanager
def read_for(dtype: str):
    """How the result is read: an f32 one by ``Tensor::into_data`` (a failed launch panics there), an f16/bf16 one by
    the backend's ``float_into_data`` (the harness's route to another float dtype, docs/burn-harness.md), which
    returns that failure as its error (``harness.read_failed``)."""
    try:
        yield
    except BurnPanic as p:
        if dtype == "f32":
            raise
        raise returned_by_backend_read(p, "float_into_data") from None


def load_quantized(data: np.ndarray, shape: tuple[int, ...], scheme: QuantScheme, dtype: str = "f32", *,
                   profile: str | Profile = DEFAULT_PROFILE, stages: Stages | None = None) -> np.ndarray:
    """``Tensor::from_data(TensorData::from_bytes_vec(data, shape, QFloat(scheme))).dequantize()``: the floats burn
    reconstructs from a quantized tensor's *stored* bytes, as a loader of saved weights meets them. Unlike
    :func:`dequantize` nothing is written first: the bytes (values in their store, scales in their stored dtype,
    the global last) are read exactly as given, so a layout burn reads differently from how it writes shows."""
    prof = get_profile(profile)
    raw, shape = np.asarray(data, dtype=np.uint8).ravel(), tuple(shape)
    if prof.validates_data_length:  # TensorData::from_bytes_vec checks the length first (burn-std >= 0.23)
        check_data_length(raw.size, shape, scheme, prof)
    _refuse_scheme(scheme, prof)
    with read_for(dtype):
        codes, scales, glob = prof.step(LOADS)(raw, shape, scheme, prof)
        if prof.rewrites_to_dequantize:  # the held parts are written again (a loaded tensor met no writer yet)
            to_bytes(QTensor(codes, scales, glob, scheme.with_store(NATIVE)), profile=prof)
        return _dequantize_held(QTensor(codes, scales, glob, scheme), codes, scales, glob, dtype, prof, stages)


def _dequantize_held(qtensor: QTensor, codes: np.ndarray, scales: np.ndarray, glob: np.ndarray | None, dtype: str,
                     prof: Profile, stages: Stages | None, fusible: bool = True) -> np.ndarray:
    """The dequantize kernel on what the backend holds after ``q_from_data`` (``codes``, ``scales``, ``glob``)."""
    out = float_dtype(dtype)
    check_dequantize(qtensor.scheme, codes.shape, prof, strided=qtensor.last_axis_moved,
                     f16=dtype == "f16" or qtensor.scheme.scale_dtype() is ScaleDtype.F16, fusible=fusible)
    layout = layout_of(codes.shape, qtensor.scheme)
    effective = effective_scales(scales[: layout.block_count()], glob, prof)
    if stages is not None:
        stages.effective_scales = effective
    values = prof.step(VALUES)(codes, qtensor.scheme.value, qtensor.scheme.store.kind == "PackedU32", prof)
    words = prof.packed_words_row_major and qtensor.scheme.store.kind == "PackedU32" and codes.size
    if _reads_memory_order(qtensor, prof):
        values = _memory_order(values, qtensor)
    if words and _whole_words(qtensor):
        values, per_element = _packed_words(values, layout.spread(effective), qtensor)
    elif fusible and _fused_outer_words(qtensor.scheme, codes.shape, prof):
        per_element = layout.spread(effective)
    else:
        unit = 1 if qtensor.last_axis_moved else native_vector_width(codes.shape, np.dtype(out).itemsize, prof)
        per_element = prof.step(SPREADS)(layout.spread(effective), codes.shape, qtensor.scheme, unit)
    x = prof.step(PRODUCTS)(values, per_element, glob is None, out)
    if dtype not in prof.output_dtypes:
        raise panic("ndarray.unsupported_dtype", dtype=dtype.upper())
    with np.errstate(over="ignore"):
        return x.astype(out, copy=False).reshape(codes.shape)


def _reload(qt: QTensor, profile: Profile, checks: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``TensorData::quantized`` → ``q_from_data``: the codes, scales and global the backend ends up holding."""
    data = to_bytes(qt, profile=profile)
    if checks:  # q_from_data's refusal: a tensor held on the device (quantized there, or loaded) is past it
        _refuse_scheme(qt.scheme, profile)
    return profile.step(RELOADS)(qt, data, profile, checks)


def _refuse_scheme(scheme, profile: Profile) -> None:
    """``q_from_data`` of a scheme the backend cannot hold (burn-ndarray: only Symmetric Q8F/Q8S)."""
    refused = scheme.mode is QuantMode.Lookup or scheme.value.name not in profile.from_data_values
    if refused and profile.from_data_panic is not None:
        raise panic(profile.from_data_panic, scheme=scheme.debug())


def _reload_cpu(qt: QTensor, data: np.ndarray, profile: Profile, checks: bool):
    """The CPU backends read the bytes back with ``QuantizedBytes::into_vec_i8``."""
    scheme, shape = qt.scheme, qt.codes.shape
    sub_byte_ints = scheme.value.size_bits < 8 and not scheme.value.is_float  # the branch that casts to u32 words
    unaligned = profile.step(LAYOUTS).empty_words_refused
    if unaligned and data.size == 0 and scheme.store.kind == "PackedU32" and scheme.store.dim == 0 and sub_byte_ints:
        # TensorData::quantized of nothing holds a dangling, 1-aligned buffer, which into_vec_i8's
        # bytemuck::cast_slice to u32 words refuses after its packed-dim assert (observed on burn-flex; bytes read in through
        # TensorData::from_bytes_vec are not refused, so from_bytes has no such panic)
        raise panic("bytes.empty_unaligned")
    return _load_cpu(data, shape, scheme, profile, owned=False)  # ``data`` was written for this read alone


def _load_cpu(data: np.ndarray, shape: tuple[int, ...], scheme, profile: Profile, owned: bool = True):
    """``into_vec_i8`` of the bytes, then ``TensorData::new(values, shape)`` (a count that does not fill the shape
    panics) and, on flex, the check that a scale came with them. ``owned=False``: the codes may view ``data``."""
    held = from_bytes(data, shape, scheme, profile=profile, owned=owned)
    values, scales, glob = held.codes, held.scales, held.global_scale
    if values.size != math.prod(shape):
        raise panic("data.shape_mismatch", shape=shape_debug(shape), size=values.size,
                    left=math.prod(shape), right=values.size)
    if profile.checks_qtensor and scales.size == 0:
        raise panic("flex.qtensor_no_scale")
    return values.reshape(shape), scales, glob


def _upload_checks(scheme, shape: tuple[int, ...], length: int, profile: Profile) -> None:
    """burn-cubecl's ``q_from_data`` of ``length`` bytes: it allocates the scheme's device buffers
    (``new_quantized``: its storage checks) and splits the bytes at its value buffer's size, whatever the bytes
    hold. Up to 0.22.1 they hold one byte per value, so 4/2-bit PackedU32 codes (``numel`` bytes) overflow their
    packed words' buffer (``numel / num_quants`` words); from 0.23.0-pre.1 burn-std packs them, while the
    PackedNative E2M1 buffer is still one byte per value: the split lands past the packed values."""
    check_from_data(scheme, shape, profile)
    given, device = profile.step(LAYOUTS).value_bytes(shape, scheme), device_value_bytes(shape, scheme)
    if given > device and profile.oversized_upload_panic is not None:
        raise panic(profile.oversized_upload_panic)
    if device > length:  # `Bytes::split` refuses the offset; the fallback slices `&data[num_bytes..]`
        raise panic("cubecl.upload_split", start=device, len=length)
    if device > given:
        raise UndefinedBehaviour("the device's value buffer takes scale bytes as values (not observed)")


def device_value_bytes(shape: tuple[int, ...], scheme) -> int:
    """The size of burn-cubecl's value buffer (``new_quantized``, burn-cubecl-0.23.0-pre.1 src/ops/qtensor.rs:
    108-133, the same in 0.22.1): PackedU32 words along the packed axis, one byte per element for a Native store
    and, as ``size_of::<e2m1x2>()`` per element of the unpacked shape, for PackedNative."""
    numel = math.prod(shape)
    if scheme.store.kind == "PackedU32":
        return numel // scheme.num_quants() * 4
    return numel


def _reload_gpu(qt: QTensor, data: np.ndarray, profile: Profile, checks: bool):
    """The GPU's ``q_from_data`` (``_upload_checks``) of ``TensorData::quantized`` bytes: the scales are split
    off by size; the codes held are the logical ones given. Without ``checks``: a tensor already held (moved on
    the device since its load) meets neither check again."""
    scheme, shape = qt.scheme, qt.codes.shape
    numel = math.prod(shape)
    if checks:
        _upload_checks(scheme, shape, data.size, profile)
    params = scale_bytes(shape, scheme)  # the scales are split off the end by size
    if data.size < params:
        raise panic("bytes.too_short")
    scales, glob = read_params(data[data.size - params:], shape, scheme, profile)
    if profile.max_vector_size <= 16 and np.asarray(qt.scales).size < layout_of(shape, scheme).block_count() \
            and numel:  # measured through SPIR-V: the scale buffer is allocated whole, the rest stays unwritten
        check_dequantize(scheme, shape, profile)  # unless the read fails before any kernel reads a scale
        raise UndefinedBehaviour("fewer scales loaded than blocks: the rest of the scale buffer is uninitialized")
    codes = np.asarray(qt.codes, dtype=np.int8)
    if checks and stored_swapped(scheme, shape, profile):  # at the load: a held tensor is past it
        codes, scales = _read_as_stored(codes, scales, shape, scheme)
    return codes, scales, glob


def stored_swapped(scheme, shape: tuple[int, ...], profile: Profile) -> bool:
    """burn-cubecl 0.22.1 holds a tensor packed along an outer axis as the tensor with that axis swapped innermost,
    whose bytes it takes row-major ("its bytes are the stored tensor's", ``new_quantized``, ``ops/qtensor.rs:70-121``),
    while burn-std up to 0.22.1 writes ``TensorData::quantized`` in the logical tensor's row-major order
    (``value_layout = "bytes"``): the device reads the values, and the block scales, transposed (measured on both
    lavapipe builds: a Q8S ``PackedU32(1)`` ``[8, 4]`` holding 0..31 dequantizes to ``[[0, 8, 16, 24], ...]``).
    burn-std 0.23.0-pre.1 writes the stored order itself (``packed_lines``)."""
    return (profile.stores_packed_axis_innermost and profile.value_layout == "bytes"
            and outer_packed_axis(scheme, len(shape)) is not None)


def outer_packed_axis(scheme, rank: int) -> int | None:
    """The axis a PackedU32 store packs along on a tensor of ``rank``, when it is not the innermost (burn-cubecl's
    ``outer_packed_axis``); None for any other store or packed dim."""
    axis = rank - 1 - scheme.store.dim
    return axis if scheme.store.kind == "PackedU32" and 0 <= axis < rank - 1 else None


def stored_axes(scheme, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``QTensor.memory_axes`` of a tensor held as its stored twin: the packed axis and the innermost swapped (a
    permutation that is its own inverse)."""
    axes = list(range(len(shape)))
    axis = outer_packed_axis(scheme, len(shape))
    axes[axis], axes[-1] = axes[-1], axes[axis]
    return tuple(axes)


def _read_as_stored(codes: np.ndarray, scales: np.ndarray, shape: tuple[int, ...], scheme) -> tuple:
    """The logical codes and scales the device holds when it reads the logical row-major bytes as the stored
    tensor's (the packed axis swapped innermost, its block dims swapped with it)."""
    axes = stored_axes(scheme, shape)
    held = np.ascontiguousarray(codes.reshape([shape[a] for a in axes]).transpose(axes))
    grid = params_shape(shape, scheme)
    if scheme.block_size() is None or np.asarray(scales).size != math.prod(grid):
        return held, scales
    scales = np.asarray(scales).reshape([grid[a] for a in axes]).transpose(axes)
    return held, np.ascontiguousarray(scales).reshape(-1)


def _load_gpu(data: np.ndarray, shape: tuple[int, ...], scheme, profile: Profile):
    """The GPU's ``q_from_data`` of stored bytes: the values are whatever precedes the scales (split off by size)."""
    _upload_checks(scheme, shape, data.size, profile)
    held = from_bytes(data, shape, profile.step(LAYOUTS).uploaded(scheme), profile=profile)
    if held.codes.size != math.prod(shape):
        raise UndefinedBehaviour("the value bytes do not fill the tensor's code buffer (not observed)")
    return held.codes.reshape(shape), held.scales, held.global_scale


RELOADS = KERNEL.steps({"cpu": _reload_cpu, "gpu": _reload_gpu})
# The same, from bytes a caller stored (``load_quantized``): no parts to fall back on.
LOADS = KERNEL.steps({"cpu": _load_cpu, "gpu": _load_gpu})



def _cpu_product(q: np.ndarray, e: np.ndarray, one_level: bool, out: np.dtype) -> np.ndarray:
    """CPU (§6): ``f32(e * f32(q))`` in f32, whatever the output dtype (it is cast once at the end). Integer codes
    arrive as int8: the multiply widens them to f32 (exactly) slice by slice in cache, with no f32 copy of the
    codes; one scale for every element (per-tensor) is multiplied as a scalar, not through a broadcast array."""
    if e.size and not any(e.strides):
        e = e[(0,) * e.ndim]
    return np.multiply(e, q, dtype=np.float32)


def _gpu_product(q: np.ndarray, e: np.ndarray, one_level: bool, out: np.dtype) -> np.ndarray:
    """GPU (§6): one-level ``F(q) * F(e)`` in the output dtype; two-level ``F(f32(q) * e)``."""
    with np.errstate(over="ignore", invalid="ignore"):
        if one_level:
            return (q.astype(out) * np.asarray(e).astype(out)).astype(out)
        return (q * e).astype(np.float32)


def _cpu_values(codes: np.ndarray, value: QuantValue, packed_u32: bool, profile: Profile) -> np.ndarray:
    """The CPU backends read an integer code as itself, and a minifloat code as the profile's ``float_codes``
    says: as an integer (burn <= 0.22.1 quantized E4M3/E5M2/E2M1 schemes as integers) or by value."""
    if value.is_float:
        return profile.step(FLOAT_DECODERS)(codes, value)
    return codes  # exact in f32: _cpu_product widens them as it multiplies


def _gpu_values(codes: np.ndarray, value: QuantValue, packed_u32: bool, profile: Profile) -> np.ndarray:
    """The GPU decodes a Native/PackedNative float value's fp8/fp4 bit pattern. A PackedU32 field is read as the
    profile's ``float_codes`` says: up to burn 0.22.0-pre.3 the packed dequantize sign-extends every field into an
    integer (measured on lavapipe: E4M3 code -128 dequantizes to -128, not -0); from 0.22.1 it decodes a minifloat
    field by value (cubek-quant-0.3.1 ``dequantize.rs:123-131``)."""
    if value.is_float and not packed_u32:
        return profile.step(NATIVE_FLOAT_DECODERS)(codes, value)
    if value.is_float:
        return profile.step(PACKED_FLOAT_DECODERS)(codes, value)
    return codes.astype(np.float32)


def _sign_extended_fields(codes: np.ndarray, value: QuantValue) -> np.ndarray:
    """Each code's PackedU32 field sign-extended into an integer: the low ``size_bits`` bits of the code, so a 4-bit
    E2M1 field 0xC (a code held as 12) is -4 (measured on lavapipe, 0.22.0-pre.3 SPIR-V: a two-level E2M1 operand
    quantized on the device dequantizes its -4 fields to -4, not 12)."""
    bits = value.size_bits
    field = np.asarray(codes, dtype=np.int8).astype(np.int32) & ((1 << bits) - 1)
    return (field - ((field >> (bits - 1)) << bits)).astype(np.float32)


# What a GPU kernel reads from a minifloat PackedU32 field: up to 0.22.0-pre.3 the field as an integer, from 0.22.1 by
# value (cubek-quant-0.3.1 dequantize.rs:123-131).
PACKED_FLOAT_DECODERS = FLOAT_CODES.steps({"integer": _sign_extended_fields, "format": minifloat_values,
                                           "kernel_codecs": minifloat_values})


def _quiet_nan_values(codes: np.ndarray, value: QuantValue) -> np.ndarray:
    """:func:`minifloat_values`, each NaN the quiet 0x7FC00000 with its code's sign bit."""
    out = minifloat_values(codes, value)
    nan = np.isnan(out)
    if nan.any():
        sign = (np.asarray(codes, dtype=np.int8).view(np.uint8).astype(np.uint32) & 0x80) << 24
        out[nan] = (np.uint32(0x7FC00000) | sign[nan]).view(np.float32)
    return out


# The f32 a GPU kernel reads from a Native fp8 code (profile field fp8_nan: only a NaN code's bits differ).
NATIVE_FLOAT_DECODERS = FP8_NAN.steps({"float8": minifloat_values, "quiet": _quiet_nan_values})

# What a minifloat code stands for on the CPU: the integer itself, or (burn's own types) the format's value.
FLOAT_DECODERS = FLOAT_CODES.steps({"integer": lambda codes, value: codes.astype(np.float32),
                                    "format": minifloat_values, "kernel_codecs": minifloat_values})

def _per_word(spread: np.ndarray, shape: tuple[int, ...], scheme, vector: int) -> np.ndarray:
    """The GPU's packed dequantize reads one scale per u32 word, the one of the word's first value (measured on
    lavapipe: per_block([2]) Q8S codes in one word all take the first block's scale); the words run along the
    packed dim. A Native kernel likewise reads one scale per vector of ``vector`` elements along the last dim, with
    no block check (cubek-quant-0.3.0-pre.3/src/dequantize.rs:316-350; measured through SPIR-V)."""
    if scheme.block_size() is None or not math.prod(shape) or scheme.store.kind == "PackedNative":
        return spread
    if scheme.store.kind == "Native":
        n, axis = vector, len(shape) - 1
    else:
        n, axis = scheme.num_quants(), len(shape) - 1 - scheme.store.dim  # words run along the packed dim
    if not 0 <= axis < len(shape):
        return spread
    full = np.broadcast_to(spread, shape)
    return np.take(full, (np.arange(shape[axis]) // n) * n, axis=axis)


def _fused_outer_words(scheme, shape: tuple[int, ...], profile: Profile) -> bool:
    """A fused build reads the words of a PackedU32 tensor packed along an outer axis itself, each value with its own
    block's scale, where the backend's dequantize takes one scale per word (measured on both fused WGSL builds:
    ``dequantize/fuzz/packed-outer-dim-read-as-stored-blocks``)."""
    return (outer_packed_axis(scheme, len(shape)) is not None and scheme.block_size() is not None
            and fused_read(scheme, profile) == "u32")


def _whole_words(qt: QTensor) -> bool:
    """Whether the memory's row-major shape is known in whole words (a reshape can leave a last dim that is not,
    whose strides the oracle does not follow: those tensors keep the one-scale-per-word model)."""
    axes = qt.memory_axes if qt.memory_axes is not None else range(qt.codes.ndim)
    last = qt.codes.shape[list(axes).index(qt.codes.ndim - 1)] if qt.codes.ndim else 0
    return qt.codes.ndim > 0 and 0 <= qt.codes.ndim - 1 - qt.scheme.store.dim and last % qt.scheme.num_quants() == 0


def _reads_memory_order(qt: QTensor, profile: Profile) -> bool:
    """``packed_outer_reads_memory_order``: a PackedU32 tensor whose packed axis is no longer innermost in memory."""
    store, rank = qt.scheme.store, qt.codes.ndim
    if not (profile.packed_outer_reads_memory_order and store.kind == "PackedU32" and qt.memory_axes is not None):
        return False
    return 0 <= rank - 1 - store.dim < rank and qt.memory_axes[rank - 1 - store.dim] != rank - 1


def _memory_order(values: np.ndarray, qt: QTensor) -> np.ndarray:
    """The values in the order the device's memory holds them, laid out row-major in the tensor's (permuted) shape."""
    return values.transpose(np.argsort(qt.memory_axes)).reshape(values.shape)


def _packed_words(values: np.ndarray, spread: np.ndarray, qt: QTensor) -> tuple[np.ndarray, np.ndarray]:
    """burn-cubecl's packed dequantize, word by word, as the device holds the tensor: its codes row-major in memory,
    four (eight, sixteen) to a u32 along the *last* dim of the shape they were loaded or quantized with, whatever the
    packed dim (``new_quantized`` divides the last dim, ``burn-cubecl-0.22.0-pre.3/src/ops/qtensor.rs:85-92``), the
    strides following every permute since. ``dequantize`` first swaps the packed axis innermost
    (``kernel/quantization/dequantize.rs:16-37``), views the words with the packed axis divided
    (``tensor/quantization.rs:71-83``) and reads them in row-major order of that view through their strides; word
    ``w``'s values go to the output's elements ``w * n .. w * n + n`` (row-major in the swapped shape) and all take
    the scale of the element ``w * n`` names in the swapped shape with the packed extent rounded up to whole words
    (``cubek-quant-0.3.0-pre.3/src/dequantize.rs:152-173``, ``layout/scales.rs:276-284``). With the packed dim
    innermost and the memory in order this is the logical tensor, one scale per word; otherwise values move (and
    some are never read). Returns the values and the effective scale per element, both of the tensor's shape."""
    shape, scheme = values.shape, qt.scheme
    rank, n = len(shape), scheme.num_quants()
    axes = list(qt.memory_axes) if qt.memory_axes is not None else list(range(rank))
    memory = values.transpose(np.argsort(axes))  # row-major in memory
    words = list(memory.shape[:-1]) + [memory.shape[-1] // n]
    word_strides = np.cumprod([1] + words[::-1])[:-1][::-1]
    strides = [int(word_strides[a]) for a in axes]  # per logical axis, in words
    packed = rank - 1 - scheme.store.dim
    perm = [i for i in range(rank) if i != packed] + [packed]
    swapped = [shape[i] for i in perm]
    view = swapped[:-1] + [-(-swapped[-1] // n)]
    count = values.size // n  # the output holds this many words' values; the rest are dropped
    coords = np.unravel_index(np.arange(count), view)
    offset = sum(c * strides[i] for c, i in zip(coords, perm))
    if (offset >= memory.size // n).any():
        raise UndefinedBehaviour("the packed dequantize reads words past the codes' buffer")
    source = (offset[:, None] * n + np.arange(n)).ravel()
    first = list(coords[:-1]) + [coords[-1] * n]
    logical = [None] * rank
    for c, i in zip(first, perm):
        logical[i] = c
    scale_at = np.repeat(np.ravel_multi_index(logical, shape), n)
    back = np.argsort(perm)
    moved = memory.ravel()[source].reshape(swapped).transpose(back)
    scales = np.broadcast_to(spread, shape).ravel()[scale_at].reshape(swapped).transpose(back)
    return moved, scales


# Which effective scale each element meets: the block's (CPU), the block of its word's first value (GPU, packed).
SPREADS = KERNEL.steps({"cpu": lambda spread, shape, scheme, vector: spread, "gpu": _per_word})

# The dequantize arithmetic per kernel family (the GPU works in the output dtype, §6).
VALUES = KERNEL.steps({"cpu": _cpu_values, "gpu": _gpu_values})
PRODUCTS = KERNEL.steps({"cpu": _cpu_product, "gpu": _gpu_product})
