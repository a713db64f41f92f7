"""Profiles: where burn's backends legitimately differ, each difference is a named field (spec §5.2-§5.4, §6).

A :class:`Profile` is data: the oracle's arithmetic reads its fields and never asks which backend it models (the
``kernel`` field picks the CPU or the GPU algorithm, which differ in more than a constant). The mutation registry (``conformance/mutants.py``) derives plausible wrong implementations by replacing one field.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

_INT_VALUES = frozenset({"Q8F", "Q8S", "Q4F", "Q4S", "Q2F", "Q2S"})
_ALL_VALUES = _INT_VALUES | {"E4M3", "E5M2", "E2M1"}


@dataclass(frozen=True)
class Profile:
    """One backend's answer to every choice the spec leaves to backends."""

    name: str
    description: str
    release: str
    backend: str
    kernel: str = "cpu"
    """``cpu``: f32 arithmetic on the f32-converted input (ndarray, flex, §5.2-5.3); ``gpu``: the cubecl kernel,
    which divides and dequantizes in the tensor's own dtype (§5.4, §6)."""

    # --- element arithmetic (quantize) ---
    tie: str = "away"
    """``away``: Rust ``f32::round`` (CPU backends); ``even``: ``rint`` (GPU kernels)."""
    division: str = "divide"
    """``divide``: ``x / e`` (ndarray, GPU); ``reciprocal``: ``x * f32(1 / e)`` (flex)."""
    divide_in_input_dtype: bool = False
    """GPU one-level kernels divide in the input float dtype, the scale cast to it first."""
    two_level_division: str = "product"
    """``product``: ``x / f32(global * s)``; ``sequential``: ``(x / s) / global`` (a mutant)."""
    clamp: str = "after_round"
    """``after_round``: ``clamp(round(v))``; ``before_round`` and ``none`` exist only as mutants."""
    nan_code: str = "panic"
    """A NaN ``x / e`` becomes: ``panic`` (ndarray's ``NumCast`` unwrap), ``zero`` (flex ``as i8``), ``hi``
    (CUDA's ``max(min(x, hi), lo)`` returns ``hi``)."""
    saturate_codes_to_i8: bool = False
    """flex stores ``clamp(..) as i8``: fp8/fp4 ranges are clipped to [-128, 127] as integers."""

    # --- scales ---
    scale_rounding: str = "up"
    """``up``: ``ScaleDtype::round_up``; ``nearest`` only as a mutant."""
    zero_scale: str = "point_one"
    """Effective-scale guard: ``point_one`` (ndarray ``valid_scale``: exactly 0 → 0.1); ``min_positive`` (flex
    ``validated_scale``: non-positive or non-finite → ``round_up(f32::MIN_POSITIVE)``); ``none`` (GPU)."""
    ue8m0: bool = False
    """UE8M0 scales have a round-up rule and a codec (burn >= 0.22.0, §11)."""
    bf16_grid_from_f16: bool = False
    """Mutant only: BF16 scales rounded on the F16 grid."""
    clamp_min_ignores_nan: bool = False
    """``float_clamp_min`` of a NaN: flex computes ``x.max(min)`` (Rust's ``f32::max`` returns the non-NaN
    operand), so a NaN two-level global becomes ``f32::MIN_POSITIVE``; ndarray keeps the NaN."""
    normalized_cast_back: bool = True
    """Two-level: normalized block scales are cast back to the tensor dtype (§3.1 step 6)."""
    block_layout: str = "nd"
    """``nd``: N-D rectangles; ``flat`` (mutant): flat chunks of ``block.num_elements()`` elements."""

    # --- what the backend can hold ---
    input_dtypes: frozenset[str] = frozenset({"f32"})
    output_dtypes: frozenset[str] = frozenset({"f32"})
    quantize_checks: tuple[str, ...] = ()
    """Named support checks run by ``B::quantize`` before any arithmetic (see ``oracle/support.py``)."""
    tensor_values: frozenset[str] = _ALL_VALUES
    """Values ``ndarray.matrix`` accepts for a per-tensor scheme (store Native, mode Symmetric)."""
    block_values: frozenset[str] = _ALL_VALUES
    """Values ``ndarray.matrix`` accepts for a block scheme (one- or two-level)."""
    from_data_values: frozenset[str] = _ALL_VALUES
    """Values ``q_from_data`` accepts (ndarray: Q8F/Q8S only)."""
    packing: str = "lsb_first"
    """u32 packing order of sub-byte values; ``msb_first`` is a mutant (reversed nibbles)."""
    stores_as_native: bool = False
    """flex rewrites the scheme's store to Native after quantizing."""
    keeps_extra_scales: bool = False
    """flex keeps every scale it is given (ndarray keeps the first for a per-tensor scheme and asserts the count
    for a block scheme)."""
    asserts_block_count: bool = False
    """ndarray's ``block_layout`` asserts one scale per block (§8 #29)."""
    requires_two_level_global: bool = False
    """ndarray ``expect``s the global of a two-level scheme (§8 #25); flex catches it later, in its QTensor."""
    empty_global_panic: str = "scale.index_out_of_bounds"
    """An empty global tensor: flex indexes it (out of bounds), ndarray unwraps its first element (the text of
    an ``Option::unwrap`` on None, which its NaN-code panic shares)."""
    writes_bytes_at_quantize: bool = False
    """ndarray's quantize builds ``TensorData::quantized``, so its byte-level asserts fire at quantize time."""
    checks_qtensor: bool = False
    """flex's ``FlexQTensor::new`` asserts a scale and a global exactly when the scheme is two-level."""
    from_data_panic: str | None = None
    """What ``q_from_data`` raises for a value outside ``from_data_values`` or a Lookup scheme, if anything."""
    observes_through_bytes: bool = True
    """A user reads a CPU tensor back through its ``TensorData`` bytes; the GPU profile answers with its
    logical parts (its packed words are not modelled)."""
    asserts_whole_blocks: bool = False
    """flex from 0.22.1 ``assert!``s (earlier: ``debug_assert!``s) that quantize's blocks tile the tensor."""
    empty_range_panic: str = "range.empty_flex"
    """The panic of ``min`` over an empty tensor (each backend words it its own way). The GPU profile assumes
    flex's wording: a GPU's empty reduction was not observed."""
    mean_summation: str = "any_order"
    """How ``mean`` sums. ``unrolled8`` (ndarray, exact): the ``ndarray`` crate's eight-way ``unrolled_fold`` on
    contiguous lanes, in-order sub-array additions along other axes. ``any_order`` (flex): burn-flex's default
    build sums with SIMD accumulators as wide as the CPU's vectors, and with rayon above 4M elements, so the last
    bits depend on the machine; the oracle sums in order (what flex does without its ``simd`` feature) and the
    vectors compare within the summation error bound."""
    half_mean_in_f32: bool = False
    """flex accumulates and divides an f16/bf16 mean in f32, rounding once to the tensor dtype at the end."""
    max_reshape_dims: int | None = None
    """ndarray tensors have at most 6 dims, so ``reduce_blocks``' ``[n0, b0, n1, b1, ...]`` reshape panics for a
    block scheme on a rank >= 4 tensor (``crates/burn-ndarray/src/tensor.rs:582``)."""
    layout: str = "ndarray"
    """Which row of ``oracle.layout.ROUTES`` says how a layout op on a quantized tensor is carried out (codes
    moved, scale grid permuted, requantized, float result or a panic), spec §9."""
    ternary_fast_path: bool = False
    """ndarray's multiply-free Q2S matmul (exact); elsewhere a float GEMM (compared with a tolerance)."""

    def with_(self, **changes) -> Profile:
        return replace(self, **changes)


_NDARRAY = Profile(
    name="burn-0.22.0-pre.3/ndarray",
    description="burn-ndarray 0.22.0-pre.3 (default build): x / s in f32, ties away from zero, 0 scale -> 0.1, "
                "NaN panics; Native Q8F/Q8S (+ per-tensor Q2S) only",
    release="0.22.0-pre.3",
    backend="ndarray",
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
    mean_summation="unrolled8",
    ternary_fast_path=True,
)

_FLEX = Profile(
    name="burn-0.22.0-pre.3/flex",
    description="burn-flex 0.22.0-pre.3: x * (1/s) in f32, ties away from zero, non-positive/non-finite scale -> "
                "round_up(MIN_POSITIVE), NaN -> 0, saturating i8 cast; any scheme, stored Native",
    release="0.22.0-pre.3",
    backend="flex",
    division="reciprocal",
    nan_code="zero",
    saturate_codes_to_i8=True,
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
    description="burn-cubecl GPU kernels (very likely, not run here): ties to even, one-level division in the "
                "input dtype, no zero-scale guard (0/0 -> NaN -> hi); PackedU32 / Native Q8 & fp8 / "
                "PackedNative E2M1",
    release="0.22.0-pre.3",
    backend="cubecl",
    kernel="gpu",
    tie="even",
    divide_in_input_dtype=True,
    nan_code="hi",
    zero_scale="none",
    input_dtypes=frozenset({"f32", "f16", "bf16"}),
    output_dtypes=frozenset({"f32", "f16", "bf16"}),
    quantize_checks=("cubecl.storage", "cubecl.round_up_rule", "cubecl.mode", "cubecl.block_divisibility"),
    from_data_panic="cubecl.lookup_from_data",
    observes_through_bytes=False,
    layout="cubecl",
)

_NDARRAY_0_22_1 = _NDARRAY.with_(
    name="burn-0.22.1/ndarray",
    description="burn-ndarray as of burn 0.22.1: the 0.22.0-pre.3 arithmetic plus UE8M0 scales (power-of-two "
                "round-up, byte = exponent)",
    release="0.22.1",
    ue8m0=True,
)

_FLEX_0_22_1 = _FLEX.with_(
    name="burn-0.22.1/flex",
    description="burn-flex as of burn 0.22.1: the 0.22.0-pre.3 arithmetic plus UE8M0 scales; quantize asserts "
                "whole blocks",
    release="0.22.1",
    ue8m0=True,
    asserts_whole_blocks=True,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (_NDARRAY, _FLEX, _CUBECL, _NDARRAY_0_22_1, _FLEX_0_22_1)}
DEFAULT_PROFILE = _NDARRAY.name


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

