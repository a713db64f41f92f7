"""The :class:`Profile` class: where burn's backends legitimately differ, each difference a named field (spec
§5.2-§5.4, §6). The named profiles are ``oracle/profiles.py``'s.

A profile is data: the oracle's arithmetic reads its fields and never asks which backend it models (the ``kernel``
field picks the CPU or the GPU algorithm, which differ in more than a constant). A choice field's values are a
closed vocabulary (``oracle/choices.py``), each keying a step function that :meth:`Profile.step` looks up; every
field is validated at construction, so a misspelt value raises instead of silently changing the reference.

Each field belongs to one concern (:data:`CONCERNS`: arithmetic, scales, acceptance, bytes, layout, device, build);
``Profile.concerns()`` reads a profile that way. The fields stay one flat record, declared in their historical
order, because ``qconform profiles --diff`` names the fields that explain a difference in that order (a regrouped
declaration would reorder docs/upgrading.md). Wrong variants (``conformance/mutants.py``) are not fields here:
a mutant's profile answers ``step`` differently for the table it replaces.
"""

from __future__ import annotations

import re
from dataclasses import MISSING, dataclass, field, fields, replace

from . import choices as c
from .choices import Choice, FixedStep, ProfileError, Steps
from .errors import CATALOGUE
from .rounding import FLOAT_DTYPES
from .scheme import QuantValue

_ALL_VALUES = frozenset(QuantValue.__members__)
_NAME = re.compile(r"burn-\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?/(?P<backend>[a-z0-9-]+)")


# --- validators: each returns the (normalized) value or raises ProfileError naming the field ----------------

def _one_of(choice: Choice, default: str = MISSING):
    return field(default=default, metadata={"check": lambda name, v: choice.check(v)})


def _flag(default: bool = False):
    def check(name, v):
        if type(v) is not bool:
            raise ProfileError(f"profile field {name!r}: {v!r} is not a bool")
        return v
    return field(default=default, metadata={"check": check})


def _subset(allowed, default):
    """A set of names out of ``allowed`` (a collection, or a Choice)."""
    allowed_names = allowed.values if isinstance(allowed, Choice) else tuple(sorted(allowed))

    def check(name, v):
        items = (v,) if isinstance(v, str) else tuple(v)
        unknown = [i for i in items if i not in allowed_names]
        if unknown:
            raise ProfileError(f"profile field {name!r}: unknown value(s) {unknown}; allowed: "
                               f"{', '.join(map(repr, allowed_names))}")
        return type(default)(items)
    return field(default=default, metadata={"check": check})


def _panic_code(default: str | None):
    def check(name, v):
        if v is None and default is None:
            return v
        if v not in CATALOGUE:
            raise ProfileError(f"profile field {name!r}: {v!r} is not a panic code of oracle.errors.CATALOGUE")
        return v
    return field(default=default, metadata={"check": check})


def _panic_codes():
    def check(name, v):
        unknown = sorted(set(v) - set(CATALOGUE))
        if isinstance(v, str) or unknown:
            raise ProfileError(f"profile field {name!r}: {unknown or v!r} are not panic codes of oracle.errors.CATALOGUE")
        return frozenset(v)
    return field(default=frozenset(), metadata={"check": check})


def _dims_limit(default: int | None = None):
    def check(name, v):
        if (v is not None or default is not None) and (type(v) is not int or v < 1):
            raise ProfileError(f"profile field {name!r}: {v!r} is not a positive int")
        return v
    return field(default=default, metadata={"check": check})


def _text():
    def check(name, v):
        if not isinstance(v, str) or not v.strip():
            raise ProfileError(f"profile field {name!r}: {v!r} is not a non-empty text")
        return v
    return field(metadata={"check": check})


@dataclass(frozen=True)
class Profile:
    """One backend's answer to every choice the spec leaves to backends. Every field is validated at
    construction (``choices.ProfileError`` names the field and the allowed values)."""

    name: str = _text()
    """``burn-<release>/<backend>``, the backend part equal to ``backend``, with ``-fused`` after it for a ``fusion``
    build (a subclass may name its own kind: ``conformance.mutants.MutantProfile``'s ``mutant:<name>``)."""
    description: str = _text()
    backend: str = _one_of(c.BACKEND)
    status: str = _one_of(c.STATUS, "modelled")
    """What has been run against the profile (``choices.STATUS``): ``suite_passing`` once its real build passes the
    whole golden suite, ``proven`` once it also survives the fuzzer; ``modelled`` until then."""
    kernel: str = _one_of(c.KERNEL, "cpu")
    """``cpu``: f32 arithmetic on the f32-converted input (ndarray, flex, §5.2-5.3); ``gpu``: the cubecl kernel,
    which divides and dequantizes in the tensor's own dtype (§5.4, §6)."""

    # --- element arithmetic (quantize) ---
    tie: str = _one_of(c.TIE, "away")
    """``away``: Rust ``f32::round`` (CPU backends); ``even``: ``rint`` (GPU kernels)."""
    division: str = _one_of(c.DIVISION, "divide")
    """``divide``: ``x / e`` (ndarray, GPU); ``reciprocal``: ``x * f32(1 / e)`` (flex)."""
    divide_in_input_dtype: bool = _flag()
    """GPU one-level kernels divide in the input float dtype, the scale cast to it first."""
    clamp: str = _one_of(c.CLAMP, "after_round")
    """``after_round``: ``clamp(round(v))``; ``before_round``: ``round(clamp(v))`` (flex >= 0.23.0-pre.1)."""
    nan_code: str = _one_of(c.NAN_CODE, "panic")
    """A NaN ``x / e`` becomes: ``panic`` (ndarray's ``NumCast`` unwrap), ``zero`` (flex ``as i8``), ``hi``
    (CUDA's ``max(min(x, hi), lo)`` returns ``hi``)."""
    saturate_codes_to_i8: bool = _flag()
    """flex <= 0.22.1 stores ``clamp(..) as i8``: fp8/fp4 ranges are clipped to [-128, 127] as integers."""
    neg: str = _one_of(c.NEG, "times_minus_one")
    """``Tensor::neg`` of a float tensor: ``times_minus_one`` (burn-backend's default, ``x * -1``: a NaN keeps its
    sign on x86) or ``flip`` (flex's ``-x``); the sign of a NaN decides where a sort puts it."""
    float_codes: str = _one_of(c.FLOAT_CODES, "integer")
    """What an E4M3/E5M2/E2M1 code is: ``integer``, the rounded integer (stored as i8, or as its fp bits on the
    GPU); ``format``, the scaled value converted by burn's own minifloat types and decoded by value (flex >=
    0.23.0-pre.1, ``burn-flex/src/quant_codes.rs``); an E2M1 code is then its nibble, never sign-extended."""

    fp8_nan: str = _one_of(c.FP8_NAN, "float8")
    """The f32 a GPU kernel reads from a Native E4M3/E5M2 NaN code: ``float8`` (0x7FFFE000, burn's host types)
    or ``quiet`` (0x7FC00000 with the code's sign, SPIR-V's conversion on lavapipe). A NaN's bits matter where a
    requantization meets it: the kernel's scale round-up wraps 0x7FFFE000 to -0.0 and keeps 0x7FC00000 a NaN."""

    # --- scales ---
    zero_scale: str = _one_of(c.ZERO_SCALE, "point_one")
    """Effective-scale guard: ``point_one`` (ndarray ``valid_scale``: exactly 0 → 0.1); ``min_positive`` (flex
    ``validated_scale``: non-positive or non-finite → ``round_up(f32::MIN_POSITIVE)``); ``none`` (GPU)."""
    ue8m0: bool = _flag()
    """UE8M0 scales have a round-up rule and a codec (burn >= 0.22.0, §11)."""
    clamp_min_ignores_nan: bool = _flag()
    """``float_clamp_min`` of a NaN: flex 0.22.0-pre.3 computes ``x.max(min)`` (Rust's ``f32::max`` returns the
    non-NaN operand), so a NaN two-level global becomes ``f32::MIN_POSITIVE``; ndarray, and flex from 0.22.1 (which
    tests ``is_nan`` first), keep the NaN."""

    # --- what the backend can hold ---
    input_dtypes: frozenset[str] = _subset(FLOAT_DTYPES, frozenset({"f32"}))
    """Float dtypes the backend's tensors can have (ndarray: f32 only, §8 #35)."""
    output_dtypes: frozenset[str] = _subset(FLOAT_DTYPES, frozenset({"f32"}))
    """Float dtypes ``dequantize`` can produce."""
    quantize_checks: tuple[str, ...] = _subset(c.QUANTIZE_CHECK, ())
    """Named support checks run by ``B::quantize`` before any arithmetic (see ``oracle/support.py``)."""
    tensor_values: frozenset[str] = _subset(_ALL_VALUES, _ALL_VALUES)
    """Values ``ndarray.matrix`` accepts for a per-tensor scheme (store Native, mode Symmetric)."""
    block_values: frozenset[str] = _subset(_ALL_VALUES, _ALL_VALUES)
    """Values ``ndarray.matrix`` accepts for a block scheme (one- or two-level)."""
    from_data_values: frozenset[str] = _subset(_ALL_VALUES, _ALL_VALUES)
    """Values ``q_from_data`` accepts (ndarray: Q8F/Q8S only)."""
    value_layout: str = _one_of(c.VALUE_LAYOUT, "bytes")
    """How ``TensorData`` bytes hold the values: ``bytes``, one i8 per value whatever the store (burn-std <=
    0.22.1); ``packed_lines``, packed along the packed dim, each line padded to whole words (burn-std >=
    0.23.0-pre.1, ``oracle/packing.py``)."""
    checkpoint_reader: str = _one_of(c.CHECKPOINT_READER, "metadata_end")
    """The order and texts of burn-pack's reader checks (§13.6)."""
    declared_length: str = _one_of(c.DECLARED_LENGTH, "storage_lines")
    """The length burn-store declares for a quantized tensor before its bytes exist (§13.5)."""
    moves_packing_dim: bool = _flag()
    """A loaded tensor keeps its store, whose packed dim follows transposes, permutations and reshapes (flex >=
    0.23.0-pre.1); before, ``q_from_data`` rewrote the store to Native."""
    rewrites_to_dequantize: bool = _flag()
    """``dequantize`` writes the held codes, scales and global through ``QuantizedBytes::new`` again before
    reading them back (burn-ndarray's ``dequantize``, ``ops/qtensor.rs:551``), so the writer's checks (a two-level
    global must be f32) meet a tensor loaded from bytes too."""
    validates_data_length: bool = _flag()
    """``TensorData::from_bytes`` checks the byte count of quantized data against its scheme (burn-std >=
    0.23.0-pre.1); before, only the reader's own checks applied."""
    stores_as_native: bool = _flag()
    """flex rewrites the scheme's store to Native after quantizing."""
    keeps_extra_scales: bool = _flag()
    """flex keeps every scale it is given (ndarray keeps the first for a per-tensor scheme and asserts the count
    for a block scheme)."""
    asserts_block_count: bool = _flag()
    """ndarray's ``block_layout`` asserts one scale per block (§8 #29)."""
    requires_two_level_global: bool = _flag()
    """ndarray ``expect``s the global of a two-level scheme (§8 #25); flex catches it later, in its QTensor."""
    empty_global_panic: str = _panic_code("scale.index_out_of_bounds")
    """An empty global tensor: flex indexes it (out of bounds), ndarray unwraps its first element (the text of
    an ``Option::unwrap`` on None, which its NaN-code panic shares)."""
    writes_bytes_at_quantize: bool = _flag()
    """ndarray's quantize builds ``TensorData::quantized``, so its byte-level asserts fire at quantize time."""
    checks_qtensor: bool = _flag()
    """flex's ``FlexQTensor::new`` asserts a scale and a global exactly when the scheme is two-level."""
    from_data_checks: tuple[str, ...] = _subset(c.QUANTIZE_CHECK, ())
    """Named support checks (``oracle/support.py``) run by ``q_from_data`` (burn-cubecl's ``new_quantized``)."""
    dequantize_checks: tuple[str, ...] = _subset(c.QUANTIZE_CHECK, ())
    """Named support checks run by the backend's dequantize launch (cubek-quant ``dequantize.rs``)."""
    oversized_upload_panic: str | None = _panic_code(None)
    """The panic when ``q_from_data`` uploads more value bytes than the device buffer holds (4/2-bit PackedU32 codes
    written one byte per value): wgpu's bounds assert; None: not observed (the CUDA profile assumes the codes load)."""
    outer_packed_presented: bool = _flag()
    """burn-cubecl 0.22.1 and 0.23 store a tensor packed along an outer axis with that axis swapped innermost and
    present it swapped back (``ops/qtensor.rs:70-101``); the quantize kernel's scale layout walks the presented word
    grid with its last dim times ``nq`` (cubek-quant-0.4.0-pre.1 src/layout/scales.rs:218-252, 0.3.1's the same file), so a block scheme's
    scales are read and written through that walk (``quantize._presented_word_grid``)."""
    upload_flushed_by_launches: bool = _flag()
    """wgpu copies a queued oversized upload (``oversized_upload_panic``) when cubecl-wgpu's stream flushes: at the
    read, or inside the launch that fills the queue (``tasks_max``, 32), whose write scope cubecl-runtime then
    records as ``TornDown`` (cubecl-runtime-0.11.3 src/server/base.rs:454-468) and the read reports instead of the
    assert. Measured on 0.22.1 SPIR-V: one requantizing step never filled it, two did for a [5, 2, 1, 8] block and
    not for a [8] one, three did for [8]; the oracle does not count launches, so two or more are undefined."""
    scales_read_as_input_dtype: bool = _flag()
    """The kernel views the given scales buffer as the input's float dtype (``ScalesView<F>``): f32 scales under
    an f16 input are reinterpreted, not converted (issue 9's prediction 2, measured on burn-wgpu; the CUDA model
    leaves it out, where a short view would read past the buffer)."""
    empty_keeps_given_bytes: bool = _flag()
    """No kernel runs for an empty tensor: burn-wgpu keeps the given scales' bytes as its scale storage, unrounded
    and reinterpreted; where they do not fill it, the rest is reused memory (measured: an f16 scale 1.0 under F32
    storage read back as 0x00003C00 in a fresh process, 0x81813C00 after other requests), so that is undefined."""
    scales_by_strides: bool = _flag()
    """Measured on burn-wgpu (WGSL, lavapipe), PackedU32: the kernel indexes the given block scales by the scales
    tensor's own strides (``scales_layout``, ``cubek-quant-0.3.0-pre.3/src/layout/scales.rs:218-242``), so a flat
    list for a rank >= 2 tensor (what ``Tensor::quantize`` is handed here) reads, and stores, its first scale for
    every block; a ``[4, 1]`` grid for ``[2, 2]`` blocks reads scales 0, 1, 1, 2. Scales shaped ``params_shape``
    (``compute_q_params``'s) and rank-1 tensors are read as meant."""
    packed_words_row_major: bool = _flag()
    """burn-cubecl holds a PackedU32 tensor's codes row-major, packed along the last dim of the shape it was loaded
    or quantized with, whatever the packed dim, and its dequantize reads the words through the strides of a view
    that divides the packed dim (``oracle.dequantize._packed_words``): a packed dim other than the innermost moves
    values and scales (measured on lavapipe; the same host code on CUDA)."""
    packed_outer_reads_memory_order: bool = _flag()
    """burn-cubecl 0.22.1 dequantizes a PackedU32 tensor whose packed axis a permute took away from memory's
    innermost axis as if its memory were contiguous in the permuted shape: the values in memory order, laid out row-major, each with the scale of
    the block it lands in (measured on both lavapipe builds, ``qlayout/fuzz/packed-outer-dim-transposed``: a
    transposed ``[8, 4]`` reads back as the original rows two by two; a fit to what was measured, not yet located
    in the source)."""
    contiguity_ignores_unit_dims: bool = _flag()
    """burn-std's ``is_contiguous``, which ``reshape_analysis`` (and so ``q_reshape``'s checks) starts from, skips
    dims of size one from 0.22.1 (``burn-std-0.22.1/src/tensor/mod.rs:36-56``: a size-1 dim's stride is never
    applied); 0.22.0-pre.3 compares every stride (``tensor/mod.rs:30-42``), so a transposed tensor with a unit dim
    reads as strided there and as contiguous here."""
    strided_views: bool = _flag()
    """burn-cubecl keeps a view as strides over its buffer: a float reshape follows burn-std's ``reshape_action``
    (burn-cubecl-0.22.1 src/ops/base.rs:308-336, ``oracle.strides``), so ``reduce_blocks``' split of a view meets the
    analysis' panic and, past cubecl's 8 dims, the copy kernel's binding limit; and a reduction reads the view
    through its strides, as cubek-reduce's vectors do (``oracle.gpu_reduce``). The CPU backends read a copy."""
    writes_packed_words: bool = _flag()
    """``q_into_data`` hands over the device's packed u32 words (burn-cubecl), which burn-std's reader unpacks;
    the CPU backends write one i8 per value."""
    from_data_panic: str | None = _panic_code(None)
    """What ``q_from_data`` raises for a value outside ``from_data_values`` or a Lookup scheme, if anything."""
    observes_through_bytes: bool = _flag(True)
    """A user reads a CPU tensor back through its ``TensorData`` bytes; the GPU profile answers with its
    logical parts (its packed words are not modelled)."""
    asserts_whole_blocks: bool = _flag()
    """flex from 0.22.1 ``assert!``s (earlier: ``debug_assert!``s) that quantize's blocks tile the tensor."""
    empty_range_panic: str = _panic_code("range.empty_flex")
    """The panic of ``min`` over an empty tensor (each backend words it its own way). The GPU profile assumes
    flex's wording: a GPU's empty reduction was not observed."""
    empty_max_panic: str = _panic_code("qparams.empty_max_flex")
    """The panic of ``max`` over an empty tensor: the two-level split's ``float_max`` of no block scales (same
    assumption for the GPU)."""
    float_clamp: str = _one_of(c.FLOAT_CLAMP, "ordered")
    """How ``Tensor::clamp`` treats a reversed range and a zero on a zero bound. On the GPU kernels a zero meeting
    a zero bound of the other sign is the device's pick between the two (lavapipe's code generation gave either,
    one kernel to the next): undefined there."""
    float_topk: str = _one_of(c.FLOAT_TOPK, "sort")
    """How ``Tensor::topk`` picks the k largest. The GPU kernels insert each element into k slots, so where a NaN
    ends up depends on their insertion order, and along an axis of stride > 1 they repeat the top value in lower
    slots for some shapes (measured, not located): both undefined there."""
    tensor_extremum: str = _one_of(c.TENSOR_EXTREMUM, "first")
    """Which of equal values (``+0``/``-0``) a per-tensor MinMax returns (per block, every backend keeps the
    first). The GPU profile assumes flex's rule: a GPU reduction's choice was not observed."""
    mean_summation: str = _one_of(c.MEAN_SUMMATION, "any_order")
    """How ``mean`` sums. ``unrolled8`` (ndarray, exact): the ``ndarray`` crate's eight-way ``unrolled_fold`` on
    contiguous lanes, in-order sub-array additions along other axes. ``any_order`` (flex): burn-flex's default
    build sums with SIMD accumulators as wide as the CPU's vectors, and with rayon above 4M elements, so the last
    bits depend on the machine; the oracle sums in order (what flex does without its ``simd`` feature) and the
    vectors compare within the summation error bound."""
    half_mean_in_f32: bool = _flag()
    """flex accumulates and divides an f16/bf16 mean in f32, rounding once to the tensor dtype at the end."""
    max_reshape_dims: int | None = _dims_limit()
    """ndarray tensors have at most 6 dims, so ``reduce_blocks``' ``[n0, b0, n1, b1, ...]`` reshape panics for a
    block scheme on a rank >= 4 tensor (``crates/burn-ndarray/src/tensor.rs:582``)."""
    layout: str = _one_of(c.LAYOUT, "ndarray")
    """How a layout op on a quantized tensor is carried out, per step and level (codes moved, scale grid
    permuted, requantized, float result or a panic): a row of ``oracle.layout.ROUTES``, spec §9."""
    ternary_fast_path: bool = _flag()
    """ndarray's multiply-free Q2S matmul (exact); elsewhere a float GEMM (compared with a tolerance)."""
    max_vector_size: int = _dims_limit(255)
    """GPU device property: the widest vector (``HardwareProperties::max_vector_size``: 4 on wgpu's Vulkan device
    without long vectors, cubecl-wgpu-0.11.0-pre.3/src/runtime.rs:341; unbounded on CUDA, where the 128-bit load
    width binds first). It sets a Native kernel's vector width (``oracle.support.native_vector_width``), which the
    block's last extent must be a multiple of and whose elements share one scale read."""
    read_failure: str = _one_of(c.READ_FAILURE, "panics_in_bytes")
    """How a launch that failed to compile surfaces when its output is read (``support.deferred_panic``)."""
    stores_packed_axis_innermost: bool = _flag()
    """burn-cubecl 0.22.1 stores a tensor packed along an outer axis with that axis swapped innermost
    (``ops/qtensor.rs:70-121``): its packed-words check reads that axis, and a packed dim beyond the rank fails the
    swap (``cubecl.packed_axis_swap``); before, the check read the last dim whatever the packed dim."""
    reshape_refuses_spread_block: bool = _flag()
    """burn-cubecl 0.22.1's ``q_reshape`` also refuses to spread a lone 1-D block over several rows
    (``ops/base.rs:419-423``); 0.22.0-pre.3 kept its one scale at the old rank."""
    empty_scales_uninitialized: bool = _flag()
    """No kernel runs for an empty tensor, and burn 0.22.1's scale storage is then fresh memory, not the given
    scales' bytes (measured on SPIR-V: a per-tensor F32 scale 1.0 read back as 0.0 in a fresh process, 0.1875 after
    other requests; found by fuzzing): undefined wherever the tensor has a block to hold a scale."""
    reshape_dims_panic: str = _panic_code("ndarray.reshape_dims")
    """The panic of a tensor of more than ``max_reshape_dims`` dims (ndarray: its own limit; burn-cubecl 0.22.1:
    cubecl's tiling metadata holds at most 8)."""
    dims_limit_on_reduce: bool = _flag()
    """Where that limit is met: ndarray's reshape itself panics; burn-cubecl 0.22.1 reshapes to any rank and panics
    in the first reduction (``reduce_blocks`` skips an axis whose block extent is 1, burn-backend-0.22.1
    ``src/quantization/scheme.rs:34-40``), so a block of 1s calibrates (found by fuzzing)."""
    gemm_crashes: bool = _flag()
    """The device crashes (SIGSEGV) in burn's float matmul kernel, so a GEMM has no outcome to expect (Mesa 22.3.6
    lavapipe through SPIR-V, measured: ``q.matmul(f)``)."""
    sum_crashes: bool = _flag()
    """The device crashes (SIGSEGV) in burn's full ``sum`` reduction, so ``Tensor::sum`` has no outcome to expect
    (Mesa lavapipe through SPIR-V, burn 0.22.0-pre.3 and 0.22.1, measured: ``float_ops`` ``sum`` of a dequantized
    tensor; its ``sum_dim`` runs)."""

    reshape_zero_keeps_dim: bool = _flag(True)
    """A 0 in a ``reshape`` target given as a ``Shape``: until 0.22.1 burn-tensor reads it through
    ``Shape::reshape``, where 0 keeps the source dim at that index (cubecl-zspace-0.11.3 src/shape.rs:417-422,
    burn-tensor-0.22.1 src/tensor/api/base.rs:3411-3414); 0.23.0-pre.1 takes the ``Shape`` as it is and only checks
    its element count (burn-tensor-0.23.0-pre.1 src/tensor/api/base.rs:3456-3460), so a 0 is an empty dim."""

    empty_matmul_panic: str | None = _panic_code(None)
    """The panic of a float matmul whose matrices have no element (m, k or n of 0), if any: burn-ndarray divides
    the batch counts by the matrix sizes (``ops/matmul.rs:25-27``); flex returns the empty (or zero) product."""

    # --- how burn was built ---
    fusion: bool = _flag()
    """Built with burn's ``fusion`` feature (burn-wgpu's default): every op goes through burn-fusion's stream and
    burn-cubecl-fusion's kernels, not straight to burn-cubecl. The lean builds (``default-features = false``) leave it
    off."""
    stream_panics: frozenset[str] = _panic_codes()
    """With ``fusion``: the panics of the ops burn-fusion queues on its stream (``B::quantize``'s launch checks, the
    reductions), which surface at the read that needs the op's output (``fusion.deferred``) instead of at the call;
    ``q_from_data``'s checks still run at the call."""
    autotune: bool = _flag()
    """Built with burn's ``autotune`` feature (burn-wgpu's default): alternative kernels are timed on first use and the
    fastest kept, so a result that depends on which one ran is timing-dependent (declared undefined, never fitted)."""

    fused_read: str = _one_of(c.FUSED_READ, "none")
    """With ``fusion``: which quantized tensors burn-cubecl-fusion's kernels read themselves instead of the backend's
    dequantize launch (``oracle.support.fused_read``)."""
    fused_i8_panic: str | None = _panic_code(None)
    """The panic of a fused kernel that declares Native i8 codes, if the device cannot: WGSL has no i8, so the
    elementwise kernel fails to compile and the read reports it (``fusion.i8_unwritten``); None where it compiles."""

    errored_handles: bool = _flag()
    """With ``fusion``: a stream op's failure is held by its output tensor (burn-ir-0.22.1 ``Handle::Errored``,
    ``src/handle.rs:60-160``), every op run on it is skipped one deeper, and the read that needs it reports how deep
    (``fusion.skipped``); a result burn-tensor makes without the backend leaves the error behind
    (``oracle.layout.Errored``)."""
    errored_float_ops: bool = _flag()
    """With ``errored_handles``: the float-op steps of a chain (``float_ops``) are stream ops too, so a failed
    dequantize or requantize is held by its output and a later read reports how deep (``oracle.float_ops``'s
    ``stream_chain``); a fused i8 kernel's compile failure is met only by a read of bytes nothing errored. Measured on
    burn-wgpu's default builds, 0.22.1 and 0.23.0-pre.1."""
    keeps_same_shape_reshape: bool = _flag()
    """With ``fusion``: ``q_reshape`` to the shape a tensor has returns it before the backend sees the call
    (burn-fusion-0.22.1 ``src/ops/qtensor.rs:156-159``), so burn-cubecl's reshape checks never run."""

    k0_matmul_unwritten: bool = _flag()
    """With ``fusion``: a float matmul with k = 0 leaves its m x n output unwritten (the fused matmul launches no
    kernel that zeroes it): the values are whatever the allocation held, zeros in a fresh process and earlier
    results later (measured), so undefined."""

    fused_cat_layout: bool = _flag()
    """With ``fusion``: a fused ``cat`` may write its output in its operands' memory order (burn-cubecl-fusion
    ``src/engine/launch/output.rs`` ``preferred_dim_order``, 0.22.1 and 0.23.0-pre.1: the concatenated operands vote,
    weighted by bytes), so the requantize of a ``cat`` of a tensor packed along an outer dim, whose dequantized
    operands hold that axis innermost, may read them that way. Which of the two layouts the planner picks depends on
    how burn-fusion splits the stream into blocks, not modelled: undefined where the two give other codes."""

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, f.metadata["check"](f.name, getattr(self, f.name)))
        self._check_name()

    def _check_name(self) -> None:
        named = _NAME.fullmatch(self.name)
        # A fused build's name says so; a lean name may carry fusion only in `profiles --diff`'s one-field variants.
        fused = self.backend + "-fused"
        if named is None or named["backend"] not in (self.backend, fused) or (named["backend"] == fused
                                                                              and not self.fusion):
            raise ProfileError(f"profile field 'name': {self.name!r} is not 'burn-<release>/{self.backend}' "
                               f"(or '/{fused}' with fusion)")

    def with_(self, **changes) -> Profile:
        return replace(self, **changes)

    @classmethod
    def concerns(cls) -> dict[str, tuple[str, ...]]:
        """Each concern's fields, in declaration order."""
        return {concern: tuple(f.name for f in fields(cls) if _CONCERN_OF.get(f.name) == concern)
                for concern in CONCERNS}

    def by_concern(self) -> dict[str, dict[str, object]]:
        """This profile's values, concern by concern: what the profile *is*, read in six parts."""
        return {concern: {name: getattr(self, name) for name in names}
                for concern, names in self.concerns().items()}

    def step(self, table: Steps | FixedStep) -> object:
        """The step this profile takes for ``table``: the one lookup of every step table, so that a profile
        modelling a wrong backend (``conformance/mutants.py``) can answer for one table without touching it."""
        return table.reference(self)


# Each field's concern. Identity (name, description, backend, status) and the kernel family stand apart.
CONCERNS: dict[str, tuple[str, ...]] = {
    "identity": ("name", "description", "backend", "status", "kernel"),
    "arithmetic": ("tie", "division", "divide_in_input_dtype", "clamp", "nan_code", "saturate_codes_to_i8",
                   "neg", "float_clamp", "float_topk", "float_codes", "fp8_nan", "tensor_extremum", "mean_summation", "half_mean_in_f32", "ternary_fast_path"),
    "scales": ("zero_scale", "ue8m0", "clamp_min_ignores_nan", "scales_read_as_input_dtype", "scales_by_strides",
               "empty_keeps_given_bytes", "empty_scales_uninitialized"),
    "acceptance": ("input_dtypes", "output_dtypes", "quantize_checks", "tensor_values", "block_values",
                   "from_data_values", "from_data_checks", "dequantize_checks", "asserts_block_count",
                   "requires_two_level_global", "checks_qtensor", "asserts_whole_blocks", "empty_global_panic",
                   "from_data_panic", "oversized_upload_panic", "upload_flushed_by_launches", "outer_packed_presented", "empty_range_panic", "empty_max_panic",
                   "max_reshape_dims", "reshape_dims_panic", "dims_limit_on_reduce", "empty_matmul_panic"),
    "bytes": ("value_layout", "validates_data_length", "rewrites_to_dequantize", "stores_as_native", "keeps_extra_scales",
              "writes_bytes_at_quantize", "writes_packed_words", "observes_through_bytes", "packed_words_row_major",
              "packed_outer_reads_memory_order", "stores_packed_axis_innermost", "checkpoint_reader",
              "declared_length"),
    "layout": ("layout", "moves_packing_dim", "contiguity_ignores_unit_dims", "strided_views",
               "reshape_refuses_spread_block", "reshape_zero_keeps_dim"),
    "device": ("max_vector_size", "read_failure", "gemm_crashes", "sum_crashes"),
    "build": ("fusion", "stream_panics", "autotune", "fused_read", "fused_i8_panic", "errored_handles",
              "errored_float_ops", "keeps_same_shape_reshape", "k0_matmul_unwritten", "fused_cat_layout"),
}
_CONCERN_OF = {name: concern for concern, names in CONCERNS.items() for name in names}
