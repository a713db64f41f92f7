"""The named profiles: one per backend behaviour burn has (``oracle/profile.py`` is the class), the default, and
what has been run against each (:data:`EVIDENCE`, from docs/fuzzing.md and docs/findings.md).

A profile derived with ``with_`` inherits every field of its parent but its evidence: each real build's record
names its own binary (``tests/oracle/test_profile_evidence.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import choices as c
from .profile import Profile

_NDARRAY = Profile(
    name="burn-0.22.0-pre.3/ndarray",
    description="burn-ndarray 0.22.0-pre.3 (default build): x / s in f32, ties away from zero, 0 scale -> 0.1, "
                "NaN panics; Native Q8F/Q8S (+ per-tensor Q2S) only",
    backend="ndarray",
    rewrites_to_dequantize=True,
    quantize_checks=("ndarray.matrix",),
    tensor_values=frozenset({"Q8F", "Q8S", "Q2S"}),
    block_values=frozenset({"Q8F", "Q8S"}),
    from_data_values=frozenset({"Q8F", "Q8S"}),
    from_data_panic="ndarray.from_data_scheme",
    asserts_block_count=True,
    requires_two_level_global=True,
    empty_global_panic="ndarray.nan_code",
    writes_bytes_at_quantize=True,
    max_reshape_dims=6,
    empty_range_panic="range.empty_ndarray",
    empty_max_panic="qparams.empty_max_ndarray",
    tensor_extremum="last",
    mean_summation="unrolled8",
    ternary_fast_path=True,
    empty_matmul_panic="ndarray.matmul_empty",  # burn-ndarray-0.22.0-pre.3 src/ops/matmul.rs:25-27
)

_FLEX = Profile(
    name="burn-0.22.0-pre.3/flex",
    float_clamp="rust_clamp",  # burn-flex-0.22.0-pre.3 src/ops/float.rs:526-536 (0.22.1 :662-680 tests NaN first)
    description="burn-flex 0.22.0-pre.3: x * (1/s) in f32, ties away from zero, non-positive/non-finite scale -> "
                "round_up(MIN_POSITIVE), NaN -> 0, saturating i8 cast; any scheme, stored Native",
    backend="flex",
    division="reciprocal",
    nan_code="zero",
    saturate_codes_to_i8=True,
    neg="flip",  # burn-flex-0.22.0-pre.3 src/ops/float.rs:522-524 (0.22.1 :658, 0.23.0-pre.1 :686)
    zero_scale="min_positive",
    clamp_min_ignores_nan=True,
    half_mean_in_f32=True,
    input_dtypes=frozenset({"f32", "f16", "bf16"}),
    output_dtypes=frozenset({"f32", "f16", "bf16"}),
    stores_as_native=True,
    keeps_extra_scales=True,
    checks_qtensor=True,
    layout="flex",
)

_CUBECL = Profile(
    name="burn-0.22.0-pre.3/cubecl",
    float_clamp="max_then_min",  # burn-cubecl-0.22.0-pre.3 src/kernel/clamp.rs:15-40, cubecl's `clamp`
    float_topk="min_slots",  # burn-cubecl-0.22.0-pre.3 src/ops/tensor.rs:690-699, cubek-reduce-0.3.0-pre.3 topk.rs
    description="burn-cubecl's GPU kernels as CUDA runs them (modelled, not run: scripts/gpu-check.sh needs an "
                "NVIDIA GPU): ties to even, one-level division in the input dtype, no zero-scale guard (0/0 -> NaN "
                "-> hi); PackedU32 / Native Q8 & fp8 / PackedNative E2M1",
    backend="cubecl",
    kernel="gpu",
    tie="even",
    divide_in_input_dtype=True,
    nan_code="hi",
    zero_scale="none",
    input_dtypes=frozenset({"f32", "f16", "bf16"}),
    output_dtypes=frozenset({"f32", "f16", "bf16"}),
    quantize_checks=("cubecl.storage", "cubecl.scale_bindings", "cubecl.round_up_rule", "cubecl.mode",
                     "cubecl.block_divisibility"),
    from_data_panic="cubecl.lookup_from_data",
    from_data_checks=("cubecl.storage",),
    packed_words_row_major=True,
    observes_through_bytes=False,
    layout="cubecl",
    strided_views=True,  # burn-cubecl-0.22.1 src/ops/base.rs:308-336; cubek-reduce-0.3.1 src/launch/base.rs:95-98
)

# burn-wgpu with WGSL shaders, measured on Mesa lavapipe (docs/findings.md "GPU kernels, measured on lavapipe"):
# burn-cubecl's kernels as modelled above, with what WGSL and lavapipe change.
_WGPU = _CUBECL.with_(
    name="burn-0.22.0-pre.3/wgpu",
    description="burn-wgpu 0.22.0-pre.3, WGSL on Mesa lavapipe (measured): burn-cubecl's PackedU32 kernels, ties to "
                "even; NaN codes -> lo; no Native store (WGSL has no i8); UE4M3 scales fail to compile; read back "
                "through QuantizedBytes; bf16 not declared (supports_dtype false)",
    backend="wgpu",
    nan_code="lo",
    quantize_checks=("cubecl.storage", "cubecl.packed_dim_rank", "cubecl.scale_bindings", "cubecl.round_up_rule",
                     "cubecl.native_i8",
                     "cubecl.mode", "cubecl.block_divisibility", "wgsl.fp8_scales"),
    from_data_checks=("cubecl.storage", "cubecl.packed_dim_rank"),
    dequantize_checks=("cubecl.native_i8", "wgsl.fp8_scales"),
    oversized_upload_panic="wgpu.write_range",
    observes_through_bytes=True,
    writes_packed_words=True,
    scales_by_strides=True,
    scales_read_as_input_dtype=True,
    empty_keeps_given_bytes=True,
    empty_range_panic="cubecl.reduce_empty",
    empty_max_panic="cubecl.reduce_empty",
    tensor_extremum="unpinned",
    moves_packing_dim=True,
    layout="wgpu",
    max_vector_size=4,  # cubecl-wgpu-0.11.0-pre.3 src/runtime.rs:341 (WGSL's vec4; measured through the reductions)
)

# burn-wgpu's Vulkan backend (burn's `vulkan` feature): the same kernels compiled to SPIR-V, measured on Mesa lavapipe
# (docs/findings.md "SPIR-V on lavapipe"). SPIR-V's `GLSL.std.450 Round` leaves the direction of a .5 tie to the
# driver: Mesa rounds half to even, a real GPU's driver may not, so this profile describes SPIR-V *on Mesa*.
_VULKAN = _WGPU.with_(
    name="burn-0.22.0-pre.3/vulkan",
    description="burn-wgpu 0.22.0-pre.3 `vulkan`, SPIR-V on Mesa lavapipe (measured): ties to even as Mesa rounds "
                "them (GLSL.std.450 Round leaves ties to the driver; real GPUs may differ), NaN codes -> lo; Native "
                "Q8 & fp8 (fp8 converted in software); bf16 not declared (supports_dtype false)",
    backend="vulkan",
    fp8_nan="quiet",  # SPIR-V's OpFConvert from an fp8 type on lavapipe (measured on every release's binary)
    quantize_checks=("cubecl.storage", "cubecl.packed_dim_rank", "cubecl.scale_bindings", "cubecl.round_up_rule",
                     "cubecl.mode", "cubecl.native_store", "cubecl.block_divisibility"),
    dequantize_checks=("cubecl.native_store",),
    max_vector_size=4,
    layout="vulkan",
    gemm_crashes=True,
    sum_crashes=True,  # measured on lavapipe with 0.22.0-pre.3 and 0.22.1 (float_ops/*/sum: SIGSEGV)
)

_NDARRAY_0_22_1 = _NDARRAY.with_(
    name="burn-0.22.1/ndarray",
    description="burn-ndarray as of burn 0.22.1: the 0.22.0-pre.3 arithmetic plus UE8M0 scales (power-of-two "
                "round-up, byte = exponent)",
    ue8m0=True,
    checkpoint_reader="ranges_first",  # burn-pack-0.22.1 src/reader.rs:112-133, :286-312
)

_FLEX_0_22_1 = _FLEX.with_(
    name="burn-0.22.1/flex",
    description="burn-flex as of burn 0.22.1: the 0.22.0-pre.3 arithmetic plus UE8M0 scales; quantize asserts "
                "whole blocks; clamp_min lets NaN through (a NaN two-level global stays NaN)",
    ue8m0=True,
    asserts_whole_blocks=True,
    clamp_min_ignores_nan=False,  # burn-flex 0.22.1 ops/float.rs:689-699 tests is_nan first
    checkpoint_reader="ranges_first",  # burn-pack-0.22.1 src/reader.rs:112-133, :286-312
    # burn's default features (simd): the whole tensor's min/max of +0.0 and -0.0 is its SIMD lanes' pick, as on
    # 0.23.0-pre.1 (20 of 20,000 compute_range cases on the 0.22.1 default build, seed 20261206; docs/findings.md)
    tensor_extremum="unpinned",
)

_FLEX_0_23_0_PRE_1 = _FLEX_0_22_1.with_(
    name="burn-0.23.0-pre.1/flex",
    description="burn-flex 0.23.0-pre.1: x / s in f32, clamped, then rounded half to even; E4M3/E5M2/E2M1 "
                "through burn's fp8/fp4 types; packed stores packed in padded lines; quantize asserts whole blocks",
    tie="even",
    division="divide",
    clamp="before_round",
    saturate_codes_to_i8=False,
    float_codes="format",
    stores_as_native=False,
    value_layout="packed_lines",
    validates_data_length=True,
    moves_packing_dim=True,
    checkpoint_reader="limits",  # burn-pack-0.23.0-pre.1 src/reader.rs:193-225, :313-327
    declared_length="layout",  # burn-std-0.23.0-pre.1 src/tensor/quantization/base.rs:399-437
    reshape_zero_keeps_dim=False,  # burn-tensor-0.23.0-pre.1 src/tensor/api/base.rs:3456-3460
)

# burn 0.22.1's GPU route (burn-cubecl 0.22.1 -> cubek-quant 0.3.1 -> cubecl 0.11.3), each runtime derived from its
# 0.22.0-pre.3 profile: what the release changed (kernels, burn-cubecl, cubecl's runtime), nothing lavapipe decides.
_GPU_0_22_1 = dict(
    float_clamp="min_then_max",  # burn-cubecl-0.22.1 src/kernel/clamp.rs:18-42, cubecl-core-0.11.3 polyfills.rs:52-58
    ue8m0=True,  # cubecl-std-0.11.3 src/quant/round.rs:25, :35-47: the kernel rounds UE8M0 scales up to a power of 2
    float_codes="kernel_codecs",  # cubek-quant-0.3.1 quantize.rs:34-49, :144-155; dequantize.rs:123-131
    read_failure="returns_unwritten",  # cubecl-runtime-0.11.3 src/server/base.rs:466-513
    stores_packed_axis_innermost=True,  # burn-cubecl-0.22.1 src/ops/qtensor.rs:70-121
    outer_packed_presented=True,  # the same kernels and scale layout as 0.23's (cubek-quant 0.3.1 = 0.4.0-pre.1 there)
    checkpoint_reader="ranges_first",  # burn-pack-0.22.1 src/reader.rs:112-133, :286-312
    packed_words_row_major=False,  # stored with the packed axis innermost, the words are read as meant (measured)
    contiguity_ignores_unit_dims=True,  # burn-std-0.22.1 src/tensor/mod.rs:36-56
    packed_outer_reads_memory_order=True,  # measured (fitted), not located
    from_data_checks=("cubecl.packed_dim_rank", "cubecl.storage"),  # the outer-axis swap comes first
    reshape_refuses_spread_block=True,  # burn-cubecl-0.22.1 src/ops/base.rs:419-423
    max_reshape_dims=8,  # cubecl-zspace-0.11.3 src/tiling.rs:28 MAX_LOGICAL_DIMS
    reshape_dims_panic="cubecl.tiling_rank",
    dims_limit_on_reduce=True,
    empty_keeps_given_bytes=False,
    empty_scales_uninitialized=True,  # measured through SPIR-V; WGSL shares the allocation path (not seen there)
)

_WGPU_0_22_1 = _WGPU.with_(
    name="burn-0.22.1/wgpu",
    upload_flushed_by_launches=True,  # the same cubecl-wgpu stream as SPIR-V's (measured: seed 20261216, qlayout case 14326)
    description="burn-wgpu 0.22.1, WGSL on Mesa lavapipe: the 0.22.0-pre.3 kernels, but E4M3/E5M2/E2M1 encoded as "
                "minifloats (not integers) and PackedU32 fields decoded by value; UE8M0 scales have a round-up "
                "rule (and, like UE4M3, no scalar fp8 in WGSL)",
    quantize_checks=("cubecl.packed_dim_rank", "cubecl.storage", "cubecl.scale_bindings", "cubecl.native_i8",
                     "cubecl.mode", "cubecl.block_divisibility", "wgsl.fp8_scales"),
    **_GPU_0_22_1,
)

# What fusion and autotune change on WGSL (the `build` concern, and below it each behaviour they change), the same in
# burn-wgpu 0.22.1's and 0.23.0-pre.1's default builds (measured on both: docs/findings.md, "burn-wgpu's default
# build"). Each difference from the lean twin is one field, or declared undefined where it is timing's or memory's.
_FUSED_WGSL = dict(
    fusion=True,
    autotune=True,
    # B::quantize's launch checks (its f16-global assert too) and the reductions run on the stream (measured), and so
    # do burn-cubecl's q_flip and q_reshape refusals: burn-fusion registers the layout op and runs B::q_flip /
    # B::q_reshape there (src/ops/qtensor.rs:156-307)
    stream_panics=frozenset({
        "cubecl.native_value", "cubecl.block_divisibility", "cubecl.global_not_f32", "cubecl.native_packing",
        "cubecl.native_sub_byte", "cubecl.packed_last_dim", "cubecl.tiling_rank", "cubecl.binding_tiling_rank",
        "cubecl.reshape_analysis_index", "cubecl.reduce_empty", "cubecl.scale_swap_index", "cubecl.scale_permute_rank",
        "cubecl.reshape_packed_dim_index",
        "cubecl.scale_bindings", "cubecl.global_tensor_not_f32", "cubecl.packed_axis_swap", "cubecl.q_flip",
        "cubecl.reshape_nd_block", "cubecl.reshape_split_nd_block", "cubecl.reshape_split_block",
        "cubecl.reshape_spread_block", "cubecl.reshape_packed_dim", "cubecl.reshape_recompute_sub_byte",
        "cubecl.reshape_recompute_block",
        # the same launch's mode check and the empty block's unwrap in check_block_size_compat (found by fuzzing the
        # fused 0.23 build, seed 20261216: quantize cases 1271, 998, quantize_dynamic cases 2534, 942)
        "cubecl.unsupported_scheme", "ndarray.nan_code"}),
    # burn-cubecl-fusion src/engine/codegen/ir.rs from_quant_scheme (0.22.1 :921-957, 0.23.0-pre.1 :941-965)
    fused_read="cubecl_fusion",
    fused_i8_panic="fusion.i8_unwritten",  # measured: `array<vec4<i8>>` fails WGSL validation
    errored_handles=True,  # burn-ir src/handle.rs Handle::Errored (0.22.1 :60-160, 0.23.0-pre.1 :161)
    # float-op steps are stream ops whose failures burn-ir holds (burn-fusion-0.23.0-pre.1
    # src/stream/execution/scope/base.rs:80-115, a fused block one unit of work); measured on both fused binaries
    errored_float_ops=True,
    keeps_same_shape_reshape=True,  # burn-fusion src/ops/qtensor.rs q_reshape (0.22.1 :156-159, 0.23.0-pre.1 :148-151)
    # measured: [4, 0] @ [0, 3] gives zeros in a fresh process, earlier results' values (2.0, 53.77, ...) in a suite run
    k0_matmul_unwritten=True,
    # burn-cubecl-fusion src/engine/launch/output.rs:421-500 (0.22.1 and 0.23.0-pre.1); measured on the fused 0.23
    # binary: a [1, 4, 4] PackedU32(1) cat of 2 or 3 copies, a [1, 2, 4, 4] one of 3, take the operands' order, a
    # [1, 2, 4, 4] one of 2 copies, a [2, 4, 4] or [4, 4] one do not (float_ops seed 20261216 case 12536's class)
    fused_cat_layout=True,
    # the fused kernels' vector width (burn-cubecl-fusion src/engine/launch/vectorization/planner.rs:387-411 asks
    # io_optimized_vector_sizes): cubecl-wgpu src/runtime.rs (0.11.3 :689, 0.12.0-pre.1 :767; measured: vec4, vec2
    # for a last dim of 6)
    max_vector_size=4,
)

# burn-wgpu 0.22.1 as its users build it (burn-wgpu's default features: fusion + autotune), WGSL on Mesa lavapipe: the
# lean twin above with what fusion and autotune change.
_WGPU_0_22_1_FUSED = _WGPU_0_22_1.with_(
    name="burn-0.22.1/wgpu-fused",
    description="burn-wgpu 0.22.1 with its default features (fusion, autotune), WGSL on Mesa lavapipe: the lean "
                "0.22.1 WGSL kernels, every op through burn-fusion's stream, and burn-cubecl-fusion's kernels reading "
                "one-level Native i8 and PackedU32 codes themselves (no i8 in WGSL)",
    **_FUSED_WGSL,
)

_VULKAN_0_22_1 = _VULKAN.with_(
    name="burn-0.22.1/vulkan",
    upload_flushed_by_launches=True,  # measured: qlayout/fuzz/upload-flushed-by-launches
    description="burn-wgpu 0.22.1 `vulkan`, SPIR-V on Mesa lavapipe: the 0.22.0-pre.3 kernels, but E4M3/E5M2/E2M1 "
                "encoded as minifloats (not integers) and PackedU32 fields decoded by value; UE8M0 scales; E2M1 "
                "PackedNative refused by the launcher on every device (ties to even as Mesa rounds them)",
    quantize_checks=("cubecl.packed_dim_rank", "cubecl.storage", "cubecl.scale_bindings", "cubecl.packed_native",
                     "cubecl.mode", "cubecl.block_divisibility"),
    dequantize_checks=("cubecl.packed_native",),
    **_GPU_0_22_1,
)

# burn 0.23.0-pre.1's GPU route (burn-cubecl 0.23.0-pre.1 -> cubek-quant 0.4.0-pre.1 -> cubecl 0.12.0-pre.1), each runtime
# derived from its 0.22.1 profile: what the release changes on the GPU, nothing lavapipe decides (docs/upgrading.md).
# The kernels did not change (cubek-quant's quantize.rs and dequantize.rs are 0.3.1's); what changed is the host side:
# burn-std 0.23 writes a packed store in padded lines, laid out as cubecl stores it (packed axis innermost, whole
# words per line), so the bytes q_from_data uploads and q_into_data hands back are the device's own words. Fitted
# 2026-12-02 against both lean binaries (docs/findings.md, "burn 0.23.0-pre.1 on the GPU route").
_GPU_0_23_0_PRE_1 = dict(
    float_topk="inf_slots",  # cubek-reduce-0.4.0-pre.1 src/components/instructions/topk.rs:208-216, extrema.rs:20-28
    # host side, shared with every backend of the release (as in burn-0.23.0-pre.1/flex)
    validates_data_length=True,
    checkpoint_reader="limits",  # burn-pack-0.23.0-pre.1 src/reader.rs:193-225, :313-327
    declared_length="layout",  # burn-std-0.23.0-pre.1 src/tensor/quantization/base.rs:399-437
    reshape_zero_keeps_dim=False,  # burn-tensor-0.23.0-pre.1 src/tensor/api/base.rs:3456-3460
    # the padded lines fill the device's PackedU32 words exactly (burn-cubecl-0.23.0-pre.1 src/ops/qtensor.rs:110-117,
    # :164), so wgpu's range assert (oversized_upload_panic) is never met; PackedNative E2M1's one byte per element
    # now exceeds them instead (cubecl.upload_split)
    value_layout="packed_lines",  # burn-std-0.23.0-pre.1 src/tensor/quantization/packing.rs:83-177
    # measured: a permuted outer packed axis dequantizes to the logical tensor on both builds
    # (qlayout/fuzz/packed-outer-dim-transposed); 0.22.1's reading was never located in its source, and 0.23 stores an
    # outer packed axis through QuantScheme::swap_dims (qtensor.rs:97-99) where 0.22.1 rewrote the scheme
    # (packed_innermost, burn-cubecl-0.22.1 src/ops/qtensor.rs:84-97)
    packed_outer_reads_memory_order=False,
    outer_packed_presented=True,  # burn-cubecl-0.23.0-pre.1 src/ops/qtensor.rs:70-101
)

_WGPU_0_23_0_PRE_1 = _WGPU_0_22_1.with_(
    name="burn-0.23.0-pre.1/wgpu",
    description="burn-wgpu 0.23.0-pre.1, WGSL on Mesa lavapipe: the 0.22.1 WGSL kernels (cubecl 0.12)",
    **_GPU_0_23_0_PRE_1,
)

_VULKAN_0_23_0_PRE_1 = _VULKAN_0_22_1.with_(
    name="burn-0.23.0-pre.1/vulkan",
    description="burn-wgpu 0.23.0-pre.1 `vulkan`, SPIR-V on Mesa lavapipe: the 0.22.1 SPIR-V kernels (cubecl 0.12)",
    **_GPU_0_23_0_PRE_1,
)

_WGPU_0_23_0_PRE_1_FUSED = _WGPU_0_23_0_PRE_1.with_(
    name="burn-0.23.0-pre.1/wgpu-fused",
    description="burn-wgpu 0.23.0-pre.1 with its default features (fusion, autotune), WGSL on Mesa lavapipe: the "
                "lean 0.23.0-pre.1 WGSL kernels, every op through burn-fusion's stream, and burn-cubecl-fusion's "
                "kernels reading one-level Native i8 and PackedU32 codes themselves (no i8 in WGSL)",
    **_FUSED_WGSL,
)

# The CUDA model of 0.22.1: the 0.22.0-pre.3 CUDA model with the release's kernel changes above (nothing lavapipe
# decides). Not run anywhere: scripts/gpu-check.sh judges the 0.22.1 burn-cuda binary against it on an NVIDIA GPU.
_CUBECL_0_22_1 = _CUBECL.with_(
    name="burn-0.22.1/cubecl",
    description="burn-cubecl 0.22.1's GPU kernels as CUDA runs them (modelled, not run: scripts/gpu-check.sh needs an "
                "NVIDIA GPU): the 0.22.0-pre.3 CUDA model with the release's kernel changes measured on lavapipe "
                "(minifloat codecs, PackedU32 fields decoded by value, UE8M0 scales, the packed axis stored innermost)",
    **_GPU_0_22_1,
)

# --- what has been run against each profile (docs/fuzzing.md, docs/findings.md) --------------------------------


PROVING_CASES = 20_000
"""The cases each op of the default fuzz set (``conformance.fuzz.strategies.DEFAULT_OPS``, layout ops included)
must draw, with no divergence, in the campaign that makes a profile ``proven``."""


@dataclass(frozen=True)
class Campaign:
    """A recorded fuzz campaign against a real build: ``qconform fuzz --backend subprocess:<binary> --exact-burn
    --ops <op> --cases <cases_per_op> --seed <seed> --no-shrink`` for each op of ``ops``, judged by the oracle of
    ``commit`` (``scripts/fuzz-campaign.sh`` runs one; before the fuzzer marked burn's accidents, 2026-12-07, every
    run was exact without the flag). ``cases_per_op`` is ``None`` for an older run of the mixed default
    stream, whose per-op counts were not recorded (``note`` says what was run): such a run proves nothing."""

    seed: int
    cases_per_op: int | None
    ops: tuple[str, ...]
    date: str
    binary: str
    commit: str
    diverging: int
    """Cases that diverged, all ops together (undefined and not-applicable cases are not divergences)."""
    note: str = ""
    then: tuple[Campaign, ...] = ()
    """Later runs on the same binary, each with its own seed, date and oracle commit: ops that joined the default set
    afterwards, an op again after its strategies changed, or every op again with a newer fuzzer."""

    def __post_init__(self):
        if any(run.binary != self.binary for run in self.then):
            raise ValueError(f"{self.binary}: a campaign's later runs are of the same binary")

    def proven_ops(self) -> frozenset[str]:
        """The ops some run drew PROVING_CASES cases of with no divergence (a run's divergences are counted over all
        its ops, so a run with one proves none of them)."""
        runs = (self, *self.then)
        return frozenset(op for r in runs if r.diverging == 0 and (r.cases_per_op or 0) >= PROVING_CASES
                         for op in r.ops)

    def proves(self, default_ops) -> bool:
        """Whether this campaign makes its profile ``proven``: every op of ``default_ops`` drew at least
        PROVING_CASES cases and none diverged."""
        return set(default_ops) <= self.proven_ops()

    def describe(self) -> str:
        drawn = (f"{self.cases_per_op:,} cases per op" if self.cases_per_op is not None
                 else "cases per op not recorded")
        ops = self.ops[0] if len(self.ops) == 1 else f"{len(self.ops)} ops"
        text = (f"seed {self.seed}, {drawn}, {ops}, {self.date}, {self.binary} (oracle at "
                f"{self.commit}): {self.diverging:,} diverging")
        text = f"{text}; {self.note}" if self.note else text
        return "; then ".join([text, *(run.describe() for run in self.then)])


@dataclass(frozen=True)
class Evidence:
    """What has been run against a profile: ``status`` (``choices.STATUS``), the harness binary judged, the
    golden-suite result and the fuzz campaign behind the status (``None``: none has been run)."""

    status: str
    binary: str
    suite: str
    campaign: Campaign | None
    source: str
    unclaimed: tuple[str, ...] = ()
    """Default ops the build does not claim in its hello (``UNCLAIMED`` of its ``adapters/burn/src/bin/`` source): a
    campaign draws them and none applies, so they hold no status back."""

    def __post_init__(self):
        c.STATUS.check(self.status)


# The ops of the 2026-12-04 SPIR-V campaign that drew 20,000 cases each without a divergence (quantize again below).
_CLEAN_0_22_1_VULKAN_2026_12_04 = ("round_up", "encode_scales", "decode_scales", "compute_range", "compute_q_params",
                                   "quantize_dynamic", "dequantize", "to_bytes", "from_bytes", "pack_u32",
                                   "unpack_u32", "ternary_matmul", "scheme_info")
_SUITE = "the whole golden suite, exact messages (scripts/burn-conformance.sh, every make test)"
# The default fuzz set (conformance.fuzz.strategies.DEFAULT_OPS; the evidence test keeps it equal), named here because
# oracle/ never imports conformance/: the 16 ops of 2026-11-30/12-01, and float_ops since 2026-12-02.
_DEFAULT_OPS_2026_12_01 = ("round_up", "encode_scales", "decode_scales", "compute_range", "compute_q_params",
                           "quantize", "quantize_dynamic", "dequantize", "to_bytes", "from_bytes", "pack_u32",
                           "unpack_u32", "ternary_matmul", "scheme_info", "qlayout", "quantize_view")
_DEFAULT_OPS = _DEFAULT_OPS_2026_12_01 + ("float_ops",)
# The ops the fused 0.23 WGSL binary's first per-op campaign (seed 20261216, oracle at 2921629) found nothing in.
_CLEAN_0_23_FUSED_2026_12_07 = tuple(op for op in _DEFAULT_OPS
                                     if op not in ("quantize", "quantize_dynamic", "qlayout", "float_ops"))
_DIGEST = ("a 200,000-case digest of the mixed default stream (seed 1130, about 8,000 cases per weight-1 op), "
           "digests equal: not 20,000 cases per op")

# The campaigns of 2026-12-01 (docs/fuzzing.md, "Proving campaigns"): seed 20261201, 20,000 cases of each default op,
# one `qconform fuzz --ops OP` run per op (scripts/fuzz-campaign.sh), the loaded 2-core machine (load 12-21).
_CAMPAIGN_NOTE = ("14 ops judged by the oracle at 0de8aa6, qlayout and quantize_view again at 176770b after the GEMM "
                  "order fix; {judged}; undefined (skipped): 25-42 overflowing GEMMs per 20,000 qlayout cases")
_CPU_JUDGED = ("pack_u32 8,933 and unpack_u32 15,439 of their 20,000 judged, the rest outside the harness's declared "
               "capabilities (not applicable)")


# float_ops joined the default set after its own campaign (docs/fuzzing.md, "float_ops, 2026-12-02"): `qconform fuzz
# --ops float_ops --cases 20000 --seed 20261203 --jobs 2` per CPU build, judged by the oracle with the total-order sort.
_FLOAT_OPS_JUDGED = {
    "qconform-burn-pre3-ndarray": "19,206 judged, 794 undefined (skipped)",
    "qconform-burn-pre3-flex": "19,074 judged, 926 undefined (skipped)",
    "qconform-burn-0_22_1-ndarray": "19,255 judged, 745 undefined (skipped)",
    "qconform-burn-0_22_1-flex": "19,283 judged, 717 undefined (skipped)",
    "qconform-burn-0_23_0_pre_1-flex": "18,893 judged, 1,107 undefined (skipped); the one class of the first run (a "
                                       "sort's NaN bits, 3 cases) modelled",
}


# float_ops again after its steps gained prod, prod_dim, cumsum, cumprod, argsort, mask_where and the comparisons
# (docs/fuzzing.md, "float_ops products, scans, argsort, masks and comparisons, 2026-12-02"): `qconform fuzz --ops
# float_ops --cases 20000 --seed 20261207` per CPU build.
_PRODUCTS_JUDGED = {
    "qconform-burn-pre3-ndarray": "18,231 judged, 1,769 undefined (skipped); the one class of the first run (a NaN's "
                                  "sign after neg, 1 case) modelled",
    "qconform-burn-pre3-flex": "17,985 judged, 2,015 undefined (skipped)",
    "qconform-burn-0_22_1-ndarray": "18,303 judged, 1,697 undefined (skipped)",
    "qconform-burn-0_22_1-flex": "18,332 judged, 1,668 undefined (skipped)",
    "qconform-burn-0_23_0_pre_1-flex": "18,033 judged, 1,967 undefined (skipped)",
}


# float_ops again after a float other side could be a second quantized tensor (rhs_scheme) and a sum past f32's range
# became undefined (docs/fuzzing.md, "float_ops with a second quantized tensor, 2026-12-02"): seed 20261208 per CPU
# build. The first run found the overflowing sum on the three flex builds; these are the runs after the fix.
_OPERANDS_JUDGED = {
    "qconform-burn-pre3-ndarray": "18,278 judged, 1,722 undefined (skipped)",
    "qconform-burn-pre3-flex": "18,082 judged, 1,918 undefined (skipped)",
    "qconform-burn-0_22_1-ndarray": "18,319 judged, 1,681 undefined (skipped)",
    "qconform-burn-0_22_1-flex": "18,377 judged, 1,623 undefined (skipped); the one class of the first run (a sum "
                                 "past f32's range, 1 case) modelled",
    "qconform-burn-0_23_0_pre_1-flex": "18,096 judged, 1,904 undefined (skipped), the default-feature build (simd, "
                                       "multi-threads) alike; the one class of the first run (a sum past f32's "
                                       "range, 1 case) modelled",
}


# float_ops again after its strategies stopped filtering non-finite values (fp8 NaN and inf codes kept, sqrt of
# negative values; docs/fuzzing.md, "float_ops meets NaN and inf, 2026-12-03"): seed 20261209 per CPU build, about
# 925 sqrt cases and 1,234 with a non-finite fp8 code in 20,000.
_NON_FINITE_JUDGED = {
    "qconform-burn-pre3-ndarray": "18,282 judged, 1,718 undefined (skipped)",
    "qconform-burn-pre3-flex": "18,017 judged, 1,983 undefined (skipped)",
    "qconform-burn-0_22_1-ndarray": "18,334 judged, 1,666 undefined (skipped)",
    "qconform-burn-0_22_1-flex": "18,378 judged, 1,622 undefined (skipped)",
    "qconform-burn-0_23_0_pre_1-flex": "18,044 judged, 1,956 undefined (skipped), the default-feature build (simd, "
                                       "multi-threads) alike",
}


# The float_ops runs each CPU build's campaign records after the 2026-12-01 one, in order: seed, date, the oracle's
# commit, and what each build judged (the dicts above). 20,000 cases each, none diverging.
_FLOAT_OPS_RUNS = ((20261203, "2026-12-02", "bcd7313", _FLOAT_OPS_JUDGED),
                   (20261207, "2026-12-02", "284d786", _PRODUCTS_JUDGED),
                   (20261208, "2026-12-02", "428928d", _OPERANDS_JUDGED),
                   (20261209, "2026-12-03", "32ed27f", _NON_FINITE_JUDGED))


def _float_ops_runs(binary: str) -> tuple[Campaign, ...]:
    return tuple(Campaign(seed, 20_000, ("float_ops",), date, binary, commit, 0, judged[binary])
                 for seed, date, commit, judged in _FLOAT_OPS_RUNS)


# Every default op again on each CPU build, 2026-12-07 (docs/fuzzing.md, "Proving campaigns"): seed 20261214, 20,000
# cases of each op (scripts/fuzz-campaign.sh, --exact-burn), after the fuzzer learned every clamp bound form, the GPU
# topk and burn's accidents; judged by the oracle at e274ff4. Per build: the undefined cases skipped.
_SWEEP_2026_12_07 = {
    "qconform-burn-pre3-ndarray": "qlayout 49 and float_ops 1,782 undefined (skipped)",
    "qconform-burn-pre3-flex": "qlayout 42 and float_ops 2,011 undefined (skipped)",
    "qconform-burn-0_22_1-ndarray": "qlayout 41 and float_ops 1,766 undefined (skipped)",
    "qconform-burn-0_22_1-flex": "qlayout 33 and float_ops 1,689 undefined (skipped)",
    "qconform-burn-0_23_0_pre_1-flex": "qlayout 33 and float_ops 2,046 undefined (skipped)",
}
_SWEEP_NOTE = "every default op again with the fuzzer of 2026-12-07; {judged}; {packing}"
_NDARRAY_RERUN = ("again after the fuzzer stopped stacking a rank past ndarray's limit as rows: the first run's 45 "
                  "(pre3) and 48 (0.22.1) diverging cases were the fuzzer's, which expected data where burn-ndarray "
                  "panics (ndarray.reshape_dims) and so does the oracle case by case")


# Every default op again after the strategies drew outer packed axes (f6375a4), seed 20261216: per build the oracle's
# commit and the undefined cases skipped (pack_u32 8,749 and unpack_u32 15,718 judged on the 0.22 builds).
_OUTER_PACKED_SWEEP = {
    "qconform-burn-pre3-ndarray": ("279e955", "qlayout 45 and float_ops 1,758 undefined (skipped)"),
    "qconform-burn-pre3-flex": ("279e955", "qlayout 25 and float_ops 1,963 undefined (skipped)"),
    "qconform-burn-0_22_1-ndarray": ("279e955", "qlayout 42 and float_ops 1,701 undefined (skipped)"),
    "qconform-burn-0_22_1-flex": ("f6375a4", "qlayout 20 and float_ops 1,600 undefined (skipped)"),
    "qconform-burn-0_23_0_pre_1-flex": ("279e955", "qlayout 20 and float_ops 1,962 undefined (skipped)"),
}


def _sweep_2026_12_07(binary: str) -> tuple[Campaign, ...]:
    commit, judged = _OUTER_PACKED_SWEEP[binary]
    outer = Campaign(20261216, 20_000, _DEFAULT_OPS, "2026-12-07", binary, commit, 0,
                     f"every default op again, the strategies drawing outer packed axes; {judged}")
    return _first_sweep_2026_12_07(binary) + (outer,)


def _first_sweep_2026_12_07(binary: str) -> tuple[Campaign, ...]:
    packing = ("pack_u32 8,808 and unpack_u32 15,540 judged, the rest not applicable" if "0_23" not in binary
               else "every case of every op judged but the undefined")
    note = _SWEEP_NOTE.format(judged=_SWEEP_2026_12_07[binary], packing=packing)
    if "ndarray" not in binary:
        return (Campaign(20261214, 20_000, _DEFAULT_OPS, "2026-12-07", binary, "e274ff4", 0, note),)
    ops = tuple(op for op in _DEFAULT_OPS if op != "quantize_dynamic")
    return (Campaign(20261214, 20_000, ops, "2026-12-07", binary, "e274ff4", 0, note),
            Campaign(20261214, 20_000, ("quantize_dynamic",), "2026-12-07", binary, "831141a", 0, _NDARRAY_RERUN))


def _campaign_2026_12_01(binary: str, judged: str = _CPU_JUDGED) -> Campaign:
    return Campaign(20261201, 20_000, _DEFAULT_OPS_2026_12_01, "2026-12-01", binary, "176770b", 0,
                    _CAMPAIGN_NOTE.format(judged=judged),
                    then=_float_ops_runs(binary) + _sweep_2026_12_07(binary))



def _quantize_view_2026_12_06(binary: str, commit: str, diverging: int = 0, note: str = "") -> Campaign:
    """20,000 ``quantize_view`` cases of seed 20261212 on a GPU binary, after the view classes of the 0.22.1 SPIR-V
    campaign were modelled (docs/findings.md, "burn 0.22.1 on the GPU route", items 7-12)."""
    return Campaign(20261212, 20_000, ("quantize_view",), "2026-12-06", binary, commit, diverging, note)


_OUTER_PACKED_0_23 = ("2 diverging, both a per-block tensor quantized into PackedU32 along an outer axis (cubek-quant "
                      "0.4.0-pre.1's scale layout; modelled since, 2026-12-07: outer_packed_presented, undefined where "
                      "the kernel's scale writes miss their blocks' slots; docs/findings.md, \"Still open on "
                      "0.23.0-pre.1's GPU route\")")

EVIDENCE: dict[str, Evidence] = {
    "burn-0.22.0-pre.3/ndarray": Evidence(
        "proven", "qconform-burn-pre3-ndarray", _SUITE, _campaign_2026_12_01("qconform-burn-pre3-ndarray"),
        "docs/fuzzing.md, Proving campaigns (the 2026-12-01 campaign); earlier: the 200,000-case digests"),
    "burn-0.22.0-pre.3/flex": Evidence(
        "proven", "qconform-burn-pre3-flex", _SUITE, _campaign_2026_12_01("qconform-burn-pre3-flex"),
        "docs/fuzzing.md, Proving campaigns (the 2026-12-01 campaign); earlier: the 200,000-case digests"),
    "burn-0.22.0-pre.3/wgpu": Evidence(
        "suite_passing", "qconform-burn-pre3-wgpu",
        "1775 vectors: 1532 passed, 243 not applicable, 0 diverging (2026-12-06, --strict-messages --exact-burn, "
        "float_ops claimed); built in `make burn-all`, not in CI",
        Campaign(7, None, _DEFAULT_OPS_2026_12_01, "2026-11-30", "qconform-burn-pre3-wgpu", "3a57688", 0,
                 "seeds 7, 1, 2, 3 of the mixed default stream, 25,000 cases each (about 4,000 per weight-1 op), "
                 "0 diverging of 100,000: not 20,000 cases per op",
                 then=(Campaign(20261211, 2_000, ("float_ops",), "2026-12-03", "qconform-burn-pre3-wgpu", "b6d2b66", 0,
                                "1,807 judged, 9 undefined (skipped), 184 not applicable; float_ops claimed since"),
                       _quantize_view_2026_12_06("qconform-burn-pre3-wgpu", "5be7e02", 0,
                                                 "19,944 judged, 50 not applicable, 6 undefined (skipped)"))),
        "docs/fuzzing.md, burn-wgpu: the proving campaign"),
    "burn-0.22.0-pre.3/vulkan": Evidence(
        "suite_passing", "qconform-burn-pre3-vulkan",
        "1775 vectors: 1474 passed, 301 not applicable, 0 diverging (2026-12-06, --strict-messages --exact-burn; 3 "
        "two-quantized vectors failed before an E2M1 field was read sign-extended); built in `make burn-all`, not in CI",
        Campaign(2, None, _DEFAULT_OPS_2026_12_01, "2026-11-30", "qconform-burn-pre3-vulkan", "a249924", 1,
                 "10,000 cases of the mixed default stream: still finds qlayout divergences",
                 then=(_quantize_view_2026_12_06("qconform-burn-pre3-vulkan", "517c9b8", 0,
                                                 "17,622 judged, 2,221 not applicable, 157 undefined (skipped)"),)),
        "docs/fuzzing.md, burn-wgpu (qconform-burn-pre3-vulkan); docs/findings.md"),
    "burn-0.22.1/ndarray": Evidence(
        "proven", "qconform-burn-0_22_1-ndarray", _SUITE, _campaign_2026_12_01("qconform-burn-0_22_1-ndarray"),
        "docs/fuzzing.md, Proving campaigns (the 2026-12-01 campaign); earlier: the 200,000-case digests"),
    "burn-0.22.1/flex": Evidence(
        "proven", "qconform-burn-0_22_1-flex", _SUITE, _campaign_2026_12_01("qconform-burn-0_22_1-flex"),
        "docs/fuzzing.md, Proving campaigns (the 2026-12-01 campaign); earlier: the 200,000-case digests; burn's "
        "default-feature build (simd, multi-threads) too: the suite (1749 passed, 7 not applicable of 1756) and 20,000 "
        "cases of every default op, seed 20261206, oracle at 4b74cf8, 0 diverging (2026-12-04; docs/findings.md, "
        "\"burn-flex 0.22.1's default build\")"),
    "burn-0.23.0-pre.1/flex": Evidence(
        "proven", "qconform-burn-0_23_0_pre_1-flex", _SUITE, _campaign_2026_12_01("qconform-burn-0_23_0_pre_1-flex", "every case of every op judged (the earlier qlayout run at 0de8aa6 found 1 divergence, an inf input's GEMM, since modelled)"),
        "docs/fuzzing.md, Proving campaigns (the 2026-12-01 campaign); earlier: the 200,000-case digests; burn's "
        "default-feature build (simd, multi-threads) too: the suite and 20,000 cases of every default op, seed 20261206 "
        "(docs/findings.md, \"burn-flex 0.23.0-pre.1's default build\")"),
    "burn-0.22.1/wgpu": Evidence(
        "proven", "qconform-burn-0_22_1-wgpu",
        "1791 vectors: 1547 passed, 244 not applicable, 0 diverging (2026-12-07, --strict-messages --exact-burn, "
        "float_ops claimed; the 44 MXFP4/NVFP4 known divergences of 2026-12-01 modelled); in CI",
        Campaign(7, None, _DEFAULT_OPS_2026_12_01, "2026-11-30", "qconform-burn-0_22_1-wgpu", "unrecorded", 12,
                 "25,000 cases of the mixed default stream: 12 diverging in six classes, not modelled yet (the "
                 "outer-packed dequantize and the order of a compile failure and an upload's panic modelled since)",
                 then=(Campaign(20261211, 5_000, ("float_ops",), "2026-12-03", "qconform-burn-0_22_1-wgpu", "b6d2b66", 0,
                                "4,537 judged, 20 undefined (skipped), 443 not applicable; float_ops claimed since"),
                       _quantize_view_2026_12_06("qconform-burn-0_22_1-wgpu", "5be7e02", 0,
                                                 "19,966 judged, 30 not applicable, 4 undefined (skipped); the run "
                                                 "at 517c9b8, before WGSL's vector width 4, was clean too"),
                       Campaign(20261216, 20_000, tuple(op for op in _DEFAULT_OPS if op not in ("qlayout", "float_ops")),
                                "2026-12-07", "qconform-burn-0_22_1-wgpu", "f6375a4", 0,
                                "scripts/fuzz-campaign.sh with FUZZ_TIMEOUT=120, one fuzz per op, beside other runs: "
                                "every case of round_up, encode_scales, decode_scales, ternary_matmul, scheme_info, "
                                "to_bytes and from_bytes judged; 11,165 of compute_range, compute_q_params and "
                                "quantize_dynamic, quantize 7,370, quantize_view 19,947, pack_u32 8,749, unpack_u32 "
                                "15,718 (the rest not applicable, 46 undefined)"),
                       Campaign(20261216, 20_000, ("qlayout", "float_ops"), "2026-12-07", "qconform-burn-0_22_1-wgpu",
                                "f6375a4", 87,
                                "the same campaign's qlayout (480 s) and float_ops (125 s): qlayout 86 diverging in "
                                "six classes, all modelled since (a matmul WGSL cannot compile is met only by a read "
                                "of its bytes; the upload flushed by launches), float_ops 1 open (case 6305: "
                                "docs/findings.md, \"A matmul WGSL cannot compile\")"),
                       Campaign(20261216, 20_000, ("qlayout",), "2026-12-07", "qconform-burn-0_22_1-wgpu", "279e955",
                                0, "again after the six classes were modelled: 19,951 judged, 46 not applicable, 3 "
                                   "undefined (skipped), 534 s beside other runs"),
                       Campaign(20261216, 20_000, ("float_ops",), "2026-12-07", "qconform-burn-0_22_1-wgpu", "f5837f2",
                                0, "again after case 6305 was modelled (a float tensor dequantized from an outer-packed "
                                   "store keeps the packed axis innermost): 18,145 judged, 94 undefined (skipped), "
                                   "1,761 not applicable, 101 s, no fault. With it every default op has a clean "
                                   "20,000-case run of seed 20261216: proven"))),
        "docs/findings.md, burn 0.22.1 on the GPU route"),
    "burn-0.22.1/vulkan": Evidence(
        "proven", "qconform-burn-0_22_1-vulkan",
        "1791 vectors: 1478 passed, 313 not applicable, 0 diverging (2026-12-07, --strict-messages --exact-burn); "
        "in CI since 2026-11-30",
        Campaign(20261130, None, _DEFAULT_OPS_2026_12_01, "2026-11-30", "qconform-burn-0_22_1-vulkan", "unrecorded", 0,
                 "the CI's 3,000 cases of the mixed default stream; no larger run",
                 then=(Campaign(20261205, 3_000, ("float_ops",), "2026-12-02", "qconform-burn-0_22_1-vulkan", "ffe7e67",
                                2, "2,043 judged, 554 undefined (skipped), 401 not applicable; 2 classes in the layout "
                                   "steps before the float ops, both modelled since (docs/findings.md, \"Products, "
                                   "scans and argsort on 0.22.1 SPIR-V\")"),
                       Campaign(20261209, 800, ("float_ops",), "2026-12-03", "qconform-burn-0_22_1-vulkan", "32ed27f",
                                0, "545 judged, 129 undefined (skipped), 126 not applicable, with fp8 NaN and inf "
                                   "codes and sqrt of negative values; the one class of the first run (an fp8 NaN "
                                   "code's bits in a requantized block, 1 case) modelled (fp8_nan)"),
                       Campaign(20261212, 20_000, _CLEAN_0_22_1_VULKAN_2026_12_04, "2026-12-04",
                                "qconform-burn-0_22_1-vulkan", "b87e12d", 0,
                                "scripts/fuzz-campaign.sh with FUZZ_TIMEOUT=120: every case of round_up, "
                                "encode_scales, decode_scales, to_bytes, from_bytes, ternary_matmul and scheme_info "
                                "judged; 11,329-11,400 of compute_range, compute_q_params, quantize_dynamic and "
                                "dequantize (the rest not applicable), pack_u32 8,814, unpack_u32 15,615"),
                       Campaign(20261212, 20_000, ("quantize",), "2026-12-04", "qconform-burn-0_22_1-vulkan",
                                "6e92083", 0,
                                "6,337 judged, 2,872 undefined (skipped), 10,791 not applicable; the same seed's "
                                "first run (oracle at b87e12d) found 7 in two classes, both modelled since (the "
                                "kernel divides by the scale in its storage type; an empty block tensor holds no "
                                "scales: docs/findings.md)"),
                       Campaign(20261212, 20_000, ("qlayout", "quantize_view"), "2026-12-04",
                                "qconform-burn-0_22_1-vulkan", "b87e12d", 68,
                                "qlayout 11 diverging in 7 classes (mostly a reshape after a transpose of a block "
                                "tensor: which scales the new grid takes from a permuted scale tensor) and 1 crash; "
                                "quantize_view 57 in 8 classes (empty permuted views panic in burn's scale index, "
                                "an expand to rank 4 meets no tiling panic, ...): not modelled then "
                                "(docs/findings.md, \"burn 0.22.1 on the GPU route\")"),
                       Campaign(20261212, 20_000, ("quantize_view",), "2026-12-06", "qconform-burn-0_22_1-vulkan",
                                "517c9b8", 0,
                                "18,012 judged, 1,832 not applicable, 156 undefined (skipped), 157 s; the 57 of the "
                                "first run modelled (burn-std's reshape analysis on a view, cubek-reduce's "
                                "perpendicular vectors, an empty slice's fresh tensor: docs/findings.md, items 7-9)"),
                       Campaign(20261212, 20_000, ("qlayout",), "2026-12-06", "qconform-burn-0_22_1-vulkan",
                                "5be7e02", 1,
                                "16,774 judged, 1,509 undefined (skipped), 1,716 not applicable, 2,136 s; the 11 "
                                "of 2026-12-04 modelled; open: case 10461 (a Q4F PackedU32 UE8M0 block tensor "
                                "selected, concatenated and permuted: burn answers a deferred failure where the "
                                "oracle expects write_range), and one crash (SIGSEGV, case 1873) that does not "
                                "recur when the case runs alone"),
                       Campaign(20261212, 20_000, ("float_ops",), "2026-12-06", "qconform-burn-0_22_1-vulkan",
                                "5be7e02", 40,
                                "13,956 judged, 3,144 undefined (skipped), 2,900 not applicable, 2,545 s; 40 "
                                "diverging in 11 classes: topk along a non-innermost dim (x stage, 11), x clamping "
                                "(9) and signed zero (3), both a clamp's zero bound meeting a zero of the other sign "
                                "(undefined since), scales (6), a BF16 rhs (5, not applicable since), the packed "
                                "dim past a reshape's rank (1, modelled since), F16 scales, codes, a deferred "
                                "failure, a global scale of inf where the oracle gives NaN (1 each), and one that "
                                "matches the CUDA profile: the rest open (docs/findings.md, \"Open on 0.22.1 "
                                "SPIR-V\")"),
                       Campaign(20261213, 5_000, ("float_ops",), "2026-12-07", "qconform-burn-0_22_1-vulkan",
                                "831141a", 1,
                                "3,369 judged, 893 undefined (skipped), 737 not applicable, 3,437 s beside other runs; "
                                "the one diverging case (816, a repeated unit dim) modelled since (5fdc571)"),
                       Campaign(20261212, 6_016, ("qlayout",), "2026-12-07", "qconform-burn-0_22_1-vulkan",
                                "831141a", 0,
                                "stopped after 6,016 of 20,000 cases (3,553 s beside other runs): 5,013 judged, 460 "
                                "undefined (skipped), 542 not applicable, 1 fault (the SIGSEGV of case 1873 again); "
                                "case 10461 undefined since the upload-flush model"),
                       Campaign(20261212, 17_408, ("float_ops",), "2026-12-07", "qconform-burn-0_22_1-vulkan",
                                "5fdc571", 0,
                                "stopped after 17,408 of 20,000 (2,966 s): 11,986 judged, 2,893 undefined "
                                "(skipped), 2,529 not applicable; the stream moved since 5be7e02 (clamp bounds), so "
                                "the open classes of that run were not drawn again"),
                       Campaign(20261215, 20_000, ("qlayout",), "2026-12-07", "qconform-burn-0_22_1-vulkan",
                                "5411241", 0,
                                "16,826 judged, 1,456 undefined (skipped), 1,717 not applicable, 3,147 s beside "
                                "another run; 1 fault: a SIGSEGV at case 19637, which passes when run alone (as "
                                "case 1873 of seed 20261212 did)"),
                       Campaign(20261215, 16_384, ("float_ops",), "2026-12-07", "qconform-burn-0_22_1-vulkan",
                                "5411241", 1,
                                "stopped after 16,384 of 20,000 (2,881 s beside other runs): 11,297 judged, 2,704 "
                                "undefined (skipped), 2,382 not applicable; the one diverging case (2488, a tensor "
                                "quantized on the device along an outer axis) modelled since (3236c4d)"),
                       Campaign(20261215, 20_000, ("float_ops",), "2026-12-07", "qconform-burn-0_22_1-vulkan",
                                "3236c4d", 0,
                                "again after case 2488's model, the stream before f6375a4 (outer packed axes drawn "
                                "about once in 1,000 cases): 13,815 judged, 3,322 undefined (skipped), 2,863 not "
                                "applicable, no fault, 4,157 s beside other runs. With it every default op has a "
                                "clean 20,000-case run: proven, with two caveats: this run drew the stream before "
                                "f6375a4 (the new stream's float_ops case 6305, open on WGSL, passes here, and so did a "
                                "1,500-case spot check of that stream, seed 20261216, 1,029 judged), and each "
                                "long qlayout run faulted once (a SIGSEGV whose case passes alone: cases 1873 and "
                                "19637)"),
                       Campaign(20261216, 1_500, ("float_ops",), "2026-12-07", "qconform-burn-0_22_1-vulkan",
                                "f5837f2", 0,
                                "a spot check after the device's memory order was modelled (a topk along an "
                                "outer-packed store's own axis now defined): 1,029 judged, 240 undefined (skipped), "
                                "231 not applicable, 256 s"))),
        "docs/findings.md, burn 0.22.1 on the GPU route"),
    "burn-0.22.1/wgpu-fused": Evidence(
        "suite_passing", "qconform-burn-0_22_1-wgpu-fused",
        "1801 vectors: 1547 passed, 254 not applicable, 0 diverging (2026-12-08 at 7145539, --strict-messages "
        "--exact-burn --timeout 120; the fused 0.23 build's rules of 2026-12-07 and -08 measured on it this way; "
        "1775 vectors passed alike on 2026-12-06, float_ops claimed since 2026-12-04; the 44 MXFP4/NVFP4 known "
        "divergences of 2026-12-02 modelled): every fusion difference modelled or declared undefined; built in "
        "`make burn-all`, not in CI",
        Campaign(20261202, 150, _DEFAULT_OPS_2026_12_01, "2026-12-02", "qconform-burn-0_22_1-wgpu-fused", "219d70d", 5,
                 "scripts/fuzz-campaign.sh BINARY 20261202 150 (qlayout and quantize_view again with --timeout 120: "
                 "at the 30 s default autotune's first matmuls faulted 5 qlayout cases): 1,930 judged, 468 not "
                 "applicable, 2 undefined; 5 diverging in three classes: B::quantize's packed-axis swap on the stream "
                 "(quantize 1, quantize_dynamic 1) and compute_q_params' host-side assert past a failed range (quantize_dynamic 2), "
                 "both modelled since (vectors quantize/fuzz/packed-dim-beyond-rank-on-the-stream, "
                 "quantize_dynamic/fuzz/q-params-checks-past-a-failed-range), and the fp8 scale's compile error "
                 "before write_range (dequantize 1; the lean binary answers it alike, issue 22): far from 20,000 "
                 "cases per op",
                 then=(_quantize_view_2026_12_06("qconform-burn-0_22_1-wgpu-fused", "5be7e02", 0,
                                                 "19,966 judged, 30 not applicable, 4 undefined (skipped)"),)),
        "docs/findings.md, burn-wgpu's default build"),
    "burn-0.23.0-pre.1/wgpu": Evidence(
        "proven", "qconform-burn-0_23_0_pre_1-wgpu",
        "1798 vectors: 1558 passed, 240 not applicable, 0 diverging (2026-12-07, --strict-messages --exact-burn, "
        "float_ops claimed; on 1663 vectors first judged 1193 passed, 106 failed before the fit); built in `make "
        "burn-all`, not in CI",
        Campaign(20261202, None, _DEFAULT_OPS_2026_12_01, "2026-12-02", "qconform-burn-0_23_0_pre_1-wgpu", "4cd0b3e", 2,
                 "20,000 cases of the mixed default stream (14,460 passed, 5,522 not applicable, 16 undefined; about "
                 "800 judged per weight-1 op, qlayout 797): 2 diverging in 2 classes not modelled (a failed matmul "
                 "launch surfaces after a later reshape's count panic; an E2M1 two-level F16-block PackedU32(1) "
                 "quantize_dynamic that did not diverge again): not 20,000 cases per op",
                 then=(Campaign(20261211, 5_000, ("float_ops",), "2026-12-03", "qconform-burn-0_23_0_pre_1-wgpu",
                                "b6d2b66", 0, "4,537 judged, 20 undefined (skipped), 443 not applicable; float_ops "
                                              "claimed since"),
                       _quantize_view_2026_12_06("qconform-burn-0_23_0_pre_1-wgpu", "5be7e02", 2,
                                                 _OUTER_PACKED_0_23 + "; at 517c9b8 a third, WGSL's vector width "
                                                 "(modelled since)"),
                       Campaign(20261212, 20_000, ("quantize_view",), "2026-12-07", "qconform-burn-0_23_0_pre_1-wgpu",
                                "e0f9f4d", 0, "again after the outer-packed class was modelled: 19,964 judged, 7 "
                                              "undefined (skipped), 29 not applicable, 305 s"),
                       Campaign(20261216, 20_000, _DEFAULT_OPS, "2026-12-07", "qconform-burn-0_23_0_pre_1-wgpu",
                                "fec9f60", 8,
                                "the first per-op campaign (scripts/fuzz-campaign.sh, FUZZ_TIMEOUT=120, 14 min); the "
                                "oracle's working tree moved under its later ops. 13 ops clean; quantize 1 and "
                                "quantize_dynamic 3 (an outer-packed block cut to the rank before the read-back), "
                                "quantize_view 3 (the packed quantize's vector reads of a strided view), all modelled "
                                "since; float_ops 1 (case 12536), open"),
                       Campaign(20261216, 20_000, ("quantize", "quantize_dynamic", "quantize_view"), "2026-12-07",
                                "qconform-burn-0_23_0_pre_1-wgpu", "f5837f2", 0,
                                "again after the two classes were modelled: 7,348, 11,160 and 19,946 judged"),
                       Campaign(20261216, 20_000, ("float_ops",), "2026-12-07", "qconform-burn-0_23_0_pre_1-wgpu",
                                "f5837f2", 1,
                                "18,145 judged, 93 undefined (skipped), 1,761 not applicable; open: case 12536 (a "
                                "loaded Q8S PackedU32(1) [6, 4, 4] tensor stacked along dim 3 with one copy comes "
                                "back with each [4, 4] slice transposed)"),
                       Campaign(20261216, 20_000, ("float_ops",), "2026-12-07", "qconform-burn-0_23_0_pre_1-wgpu",
                                "0825cca", 0,
                                "again after case 12536 was modelled (q_reshape reshapes the values' words, so a "
                                "reshape that moves an outer packed axis transposes): 18,146 judged, 93 undefined "
                                "(skipped), 1,761 not applicable, 128 s, no fault"),
                       Campaign(20261216, 20_000, tuple(op for op in _DEFAULT_OPS if op != "float_ops"), "2026-12-07",
                                "qconform-burn-0_23_0_pre_1-wgpu", "41afb33", 0,
                                "every other default op again at the oracle of that model, one fuzz per op beside "
                                "other runs, no fault: every case of round_up, encode_scales, decode_scales, to_bytes, "
                                "from_bytes, pack_u32, unpack_u32, ternary_matmul and scheme_info judged; 11,160-11,165 "
                                "of compute_range, compute_q_params, quantize_dynamic and dequantize, quantize 7,348, "
                                "qlayout 19,953, quantize_view 19,946. With it every default op has a clean 20,000-case "
                                "run of seed 20261216: proven"))),
        "docs/findings.md, burn 0.23.0-pre.1 on the GPU route"),
    "burn-0.23.0-pre.1/wgpu-fused": Evidence(
        "suite_passing", "qconform-burn-0_23_0_pre_1-wgpu-fused",
        "1791 vectors: 1544 passed, 247 not applicable, 0 diverging (2026-12-07, float_ops claimed since 2026-12-04, "
        "--strict-messages --exact-burn --timeout 120; on 1663 vectors first judged 1054 passed, 248 failed before "
        "it took 0.22.1's fused WGSL fields); in CI",
        Campaign(20261202, 300, _DEFAULT_OPS, "2026-12-02", "qconform-burn-0_23_0_pre_1-wgpu-fused", "6776422", 7,
                 "scripts/fuzz-campaign.sh BINARY 20261202 300 with FUZZ_TIMEOUT=120: every op but qlayout without "
                 "divergence (float_ops unclaimed); qlayout 7 of 300 in four classes, not modelled: a float op's "
                 "dequantize after a reshape fails at B::dequantize's launch check, not in a fused kernel; an empty "
                 "result reads back with no failure from the ops above it (twice); a permuted E4M3 PackedU32 lhs of "
                 "a matmul meets the lean build's scalar-fp8 compile error: not 20,000 cases per op",
                 then=(_quantize_view_2026_12_06("qconform-burn-0_23_0_pre_1-wgpu-fused", "5be7e02", 2,
                                                 _OUTER_PACKED_0_23),
                       Campaign(20261216, 20_000, _CLEAN_0_23_FUSED_2026_12_07, "2026-12-07",
                                "qconform-burn-0_23_0_pre_1-wgpu-fused", "2921629", 0,
                                "scripts/fuzz-campaign.sh with FUZZ_TIMEOUT=120, one fuzz per op, beside other runs "
                                "(2 h 10 min in all): every case of round_up, encode_scales, decode_scales, to_bytes, "
                                "from_bytes, pack_u32, unpack_u32, ternary_matmul and scheme_info judged; 11,161-11,165 "
                                "of compute_range, compute_q_params and dequantize, quantize_view 19,946"),
                       Campaign(20261216, 20_000, ("quantize", "quantize_dynamic", "qlayout", "float_ops"),
                                "2026-12-07", "qconform-burn-0_23_0_pre_1-wgpu-fused", "2921629", 255,
                                "the same campaign's other four ops: quantize 9 and quantize_dynamic 9 (the quantize "
                                "launch's mode check and an empty block's unwrap, on the stream), qlayout 233 in ten "
                                "classes (182 a fused read's compile failure or a held failure left behind by an "
                                "empty result burn-tensor answers alone; 30 a later reshape's count panic first; "
                                "5 a select's requantize assert on the stream: modelled since; open: 14 where the "
                                "read reports B::dequantize's launch check, not the fused i8 read, depending on the "
                                "process's history, 2 an fp8 scalar compile error), float_ops 4 (3 the select "
                                "assert, modelled; case 12536, the two-copy stack, open): docs/findings.md"),
                       Campaign(20261216, 20_000, ("quantize", "quantize_dynamic", "float_ops"), "2026-12-07",
                                "qconform-burn-0_23_0_pre_1-wgpu-fused", "41afb33", 0,
                                "again after those classes were modelled, beside other runs: 7,348, 11,160 and 17,258 "
                                "judged (float_ops 996 undefined, 1,746 not applicable; case 12536 did not diverge "
                                "again), no fault"),
                       Campaign(20261216, 20_000, ("qlayout",), "2026-12-07", "qconform-burn-0_23_0_pre_1-wgpu-fused",
                                "41afb33", 16,
                                "the same run's qlayout (3,861 s): 19,901 judged, 38 undefined, 45 not applicable; 16 "
                                "diverging in 3 classes, none run again since: 14 where the read reports B::dequantize's "
                                "launch check or the fused i8 compile failure by the process's history (declared "
                                "undefined at 5e839b7), 2 a per-tensor E4M3 PackedU32 matmul's scalar-fp8 compile "
                                "failure (modelled since)"),
                       Campaign(20261216, 5_632, ("qlayout",), "2026-12-07", "qconform-burn-0_23_0_pre_1-wgpu-fused",
                                "243a284", 3,
                                "again, beside two cargo builds, stopped after 5,632 cases (2,408 s): 18 undefined, 11 "
                                "not applicable; 3 diverging, cases 2848, 3118 and 3422: an expand of a tensor with a "
                                "dim of size 1 read B::dequantize's launch check, where alone each reads the fused i8 "
                                "compile failure (declared undefined at a2d7344)"),
                       Campaign(20261216, 15_616, ("qlayout",), "2026-12-08", "qconform-burn-0_23_0_pre_1-wgpu-fused",
                                "a2d7344", 2,
                                "again with --jobs 2, stopped after 15,616 cases (3,565 s): 376 undefined, 33 not "
                                "applicable; 2 diverging, cases 14239 and 15209: a mul_scalar of a [1, 6, 1] and a "
                                "[1, 3, 1, 1] tensor read B::dequantize's launch check, not the fused i8 compile "
                                "failure (declared undefined at 7145539: any fused i8 read of a tensor with a dim of "
                                "size 1)"),
                       Campaign(20261216, 4_384, ("qlayout",), "2026-12-08", "qconform-burn-0_23_0_pre_1-wgpu-fused",
                                "7145539", 1,
                                "the stream's last cases, 15616-19999 (--at, --jobs 2, 1,586 s, beside a CI check): "
                                "202 undefined, 12 not applicable; 1 diverging, case 19342, open: an expand of an "
                                "empty [0, 1] Native Q8S tensor read B::dequantize's launch check, where alone it "
                                "returns the empty tensor (the oracle's answer: no fused kernel for no element)"))),
        "docs/findings.md, burn-wgpu 0.23.0-pre.1's default build"),
    "burn-0.23.0-pre.1/vulkan": Evidence(
        "suite_passing", "qconform-burn-0_23_0_pre_1-vulkan",
        "1791 vectors: 1479 passed, 312 not applicable, 0 diverging (2026-12-07, --strict-messages --exact-burn; on "
        "1663 vectors first judged 1161 passed, 198 failed before the fit); built in `make burn-all`, not in CI",
        Campaign(20261202, None, _DEFAULT_OPS_2026_12_01, "2026-12-02", "qconform-burn-0_23_0_pre_1-vulkan", "4cd0b3e", 3,
                 "5,000 cases of the mixed default stream (3,545 passed, 1,324 not applicable, 128 undefined; about "
                 "200 judged per weight-1 op): 3 diverging in 3 classes, each also on the 0.22.1 SPIR-V binary (an "
                 "empty two-level tensor's fresh global, declared undefined since; a -inf f16 scale's code; a NaN "
                 "UE4M3 scale after select, modelled since (fp8_nan)): not 20,000 cases per op",
                 then=(Campaign(20261209, 800, ("float_ops",), "2026-12-03", "qconform-burn-0_23_0_pre_1-vulkan",
                                "32ed27f", 0, "543 judged, 131 undefined (skipped), 126 not applicable, with fp8 NaN "
                                              "and inf codes and sqrt of negative values"),
                       _quantize_view_2026_12_06("qconform-burn-0_23_0_pre_1-vulkan", "517c9b8", 2,
                                                 _OUTER_PACKED_0_23),
                       Campaign(20261212, 17_664, ("quantize_view",), "2026-12-07",
                                "qconform-burn-0_23_0_pre_1-vulkan", "5fdc571", 0,
                                "stopped after 17,664 of 20,000 (1,171 s beside other runs): 15,887 judged, 136 "
                                "undefined (skipped), 1,641 not applicable; after the outer-packed model"))),
        "docs/findings.md, burn 0.23.0-pre.1 on the GPU route"),
}


def status_of(evidence: Evidence) -> str:
    """The status a record supports: ``proven`` only on a proving campaign (:meth:`Campaign.proves`)."""
    if evidence.status == "proven" and (evidence.campaign is None or not evidence.campaign.proves(_DEFAULT_OPS)):
        raise ValueError(f"{evidence.binary}: 'proven' needs a campaign of {PROVING_CASES:,} cases per default op "
                         "with no divergence")
    return evidence.status


def _judged(p: Profile) -> Profile:
    """``p`` with the status its evidence gives (``modelled`` where nothing has been run)."""
    return p.with_(status=status_of(EVIDENCE[p.name])) if p.name in EVIDENCE else p


PROFILES: dict[str, Profile] = {p.name: _judged(p) for p in (_NDARRAY, _FLEX, _CUBECL, _VULKAN, _WGPU, _NDARRAY_0_22_1,
                                                     _FLEX_0_22_1, _FLEX_0_23_0_PRE_1, _WGPU_0_22_1,
                                                     _VULKAN_0_22_1, _CUBECL_0_22_1, _WGPU_0_22_1_FUSED,
                                                     _WGPU_0_23_0_PRE_1, _VULKAN_0_23_0_PRE_1,
                                                     _WGPU_0_23_0_PRE_1_FUSED)}
DEFAULT_PROFILE = _FLEX_0_22_1.name


def get_profile(profile: str | Profile) -> Profile:
    """The profile named ``profile`` (a :class:`Profile` is returned as is)."""
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}") from None


def profiles() -> dict[str, str]:
    """Every named profile with its one-line description."""
    return {name: p.description for name, p in PROFILES.items()}


def short_of_proven(profile: str | Profile) -> tuple[str, ...]:
    """The default ops that keep a judged profile below ``proven``: those no run of its campaign drew PROVING_CASES
    cases of with no divergence (every one where no campaign is recorded); empty for a proven profile."""
    e = EVIDENCE[get_profile(profile).name]
    proven = e.campaign.proven_ops() if e.campaign is not None else frozenset()
    return tuple(op for op in _DEFAULT_OPS if op not in proven)


def status_line(profile: str | Profile) -> str:
    """``status: meaning`` of a profile, for listings (``qconform profiles``, docs); below ``proven``, the default
    ops that keep it there."""
    prof = get_profile(profile)
    line = f"{prof.status.replace('_', '-')}: {c.STATUS.meanings[prof.status]}"
    if prof.status in ("suite_passing", "diverging"):
        short = short_of_proven(prof)
        named = ("every default op: " if len(short) == len(_DEFAULT_OPS) else "") + ", ".join(short)
        line += f"; short of proven: {named} (no {PROVING_CASES:,}-case run without divergence)"
        unclaimed = EVIDENCE[prof.name].unclaimed
        if unclaimed:
            line += f"; {', '.join(unclaimed)} not claimed by its build (drawn, not applicable)"
    if prof.status == "diverging":  # how far from its build it is ends the line
        line += f"; judged: {EVIDENCE[prof.name].suite}"
    return line


def campaign_line(profile: str | Profile) -> str:
    """The fuzz campaign a profile's status rests on, for ``qconform profiles``."""
    e = EVIDENCE.get(get_profile(profile).name)
    if e is None or e.campaign is None:
        return "campaign: none run"
    return f"campaign: {e.campaign.describe()}"



def build_line(profile: str | Profile) -> str:
    """The build configuration of burn a profile describes (and its evidence was run on), for ``qconform profiles``:
    the harness's lean builds (``default-features = false``) or burn-wgpu's default features."""
    prof = get_profile(profile)
    if prof.fusion or prof.autotune:
        on = ", ".join(f for f, set_ in (("fusion", prof.fusion), ("autotune", prof.autotune)) if set_)
        return f"build: burn's default features ({on})"
    if prof.kernel == "gpu":
        return "build: lean, default-features = false (no fusion, no autotune)"
    return "build: lean, default-features = false (scalar code, one thread; docs/burn-harness.md \"Build choices\")"
