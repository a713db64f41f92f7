"""The closed vocabularies of a profile's choice fields, and the step tables keyed by them.

A :class:`Choice` names the values one profile field may take (each a behaviour some real burn backend has) and
binds the step table(s) that implement them: ``TIE.steps({"away": round_half_away, "even": round_half_even})``
returns a read-only :class:`Steps` and fails at import if the table misses or invents a value. A
:class:`FixedStep` is a step every real backend takes alike, so no field chooses it. A
:class:`~oracle.profile.Profile` refuses any value outside a field's vocabulary at construction, naming the field
and the allowed values, and :meth:`~oracle.profile.Profile.step` is the one lookup of a profile's step.

Both are closed once their module is imported: nothing adds a value or a step later, so the oracle answers the
same whatever else was imported. A wrong variant (``conformance/mutants.py``) is a profile whose ``step`` answers
differently for one table, not an entry in these tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType


class ProfileError(ValueError):
    """A profile field holds a value outside its vocabulary (or of the wrong type)."""


class Steps(Mapping):
    """A read-only table: each value of the profile field ``field`` -> the step that implements it."""

    def __init__(self, field: str, table: Mapping):
        self.field = field
        self._table = MappingProxyType(dict(table))

    def __getitem__(self, value: str):
        return self._table[value]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def reference(self, profile) -> object:
        """The step burn takes under ``profile``: the one its field's value names."""
        return self._table[getattr(profile, self.field)]

    def __repr__(self) -> str:
        return f"Steps({self.field!r}, {sorted(self._table)})"


class FixedStep:
    """A step every real backend takes the same way, so no profile field chooses it; named so that a wrong variant
    (a mutant) can say which step it replaces."""

    def __init__(self, name: str, step: object, meaning: str):
        self.name, self.step, self.meaning = name, step, meaning

    def reference(self, profile) -> object:
        return self.step

    def __repr__(self) -> str:
        return f"FixedStep({self.name!r})"


class Choice:
    """The values of one profile field, each with what it means, and the step tables keyed by them."""

    def __init__(self, field: str, **meanings: str):
        self.field = field
        self.meanings = MappingProxyType(dict(meanings))

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(self.meanings)

    def check(self, value: object) -> str:
        if not isinstance(value, str) or value not in self.meanings:
            raise ProfileError(f"profile field {self.field!r}: unknown value {value!r}; allowed: "
                               f"{', '.join(map(repr, self.values))}")
        return value

    def steps(self, table: dict) -> Steps:
        """Bind ``table`` (value -> step): it must implement exactly the vocabulary."""
        if set(table) != set(self.meanings):
            raise AssertionError(f"step table of {self.field!r} has {sorted(table)}, the vocabulary "
                                 f"{sorted(self.meanings)}")
        return Steps(self.field, table)


# --- the kernel family ---------------------------------------------------------------------------------------
KERNEL = Choice(
    "kernel",
    cpu="f32 arithmetic on the f32-converted input (burn-ndarray, burn-flex, §5.2-5.3)",
    gpu="burn-cubecl's kernel: divides and dequantizes in the tensor's own dtype (§5.4, §6)",
)
BACKEND = Choice("backend", ndarray="burn-ndarray", flex="burn-flex", cubecl="burn-cubecl (GPU kernels)",
                 wgpu="burn-wgpu: burn-cubecl's kernels compiled to WGSL (run on Mesa lavapipe)",
                 vulkan="burn-wgpu's Vulkan backend: burn-cubecl's kernels compiled to SPIR-V (run on Mesa lavapipe)")

# --- how much a profile is worth: what has been run against it -----------------------------------------------
STATUS = Choice(
    "status",
    proven="its real build passes the whole golden suite (exact messages) and a recorded fuzz campaign in which "
           "every op of the default set, layout ops included, drew at least 20,000 cases with no divergence",
    suite_passing="its real build passes the whole golden suite with exact messages; no proving campaign is "
                  "recorded (none run, too few cases per op, or divergences found)",
    diverging="its real build has been judged against it and still gives other outcomes on some vectors (the record "
              "says how many and which classes): a draft of that build, not yet a model of it",
    modelled="read from burn's source, not run: no build of this backend has been judged against it",
)

# --- element arithmetic ----------------------------------------------------------------------------------
TIE = Choice("tie", away="Rust f32::round: ties away from zero (CPU backends up to 0.22.1)",
             even="rint: ties to even (GPU kernels; flex >= 0.23.0-pre.1)")
DIVISION = Choice("division", divide="x / e (ndarray, GPU, flex >= 0.23.0-pre.1)",
                  reciprocal="x * f32(1 / e) (flex <= 0.22.1)")
NEG = Choice("neg", times_minus_one="burn-backend's float_neg default, float_mul_scalar(x, -1) (ndarray, the GPU "
                                     "backends): an IEEE multiply, whose NaN result is the input NaN on x86, sign kept",
             flip="burn-flex's float_neg, -x: the sign bit flipped, a NaN's too")
FLOAT_CLAMP = Choice(
    "float_clamp",
    ordered="burn-ndarray's `x < min` then min, else `x > max` then max, else x: strict comparisons, so a reversed "
            "range gives min below it and max above, and a zero equal to a zero bound keeps its own sign",
    rust_clamp="burn-flex's f32::clamp, which panics unless min <= max; otherwise as ordered",
    max_then_min="cubecl 0.11.0-pre.3's clamp, GLSL.std.450 FClamp: min(max(x, min), max) with the number winning "
                 "over a NaN (IEEE maxNum, as lavapipe and CUDA's fmaxf do), so a NaN gives min and a reversed range "
                 "max everywhere",
    min_then_max="cubecl 0.11.3's clamp_nan: max(min(x, max), min), each keeping a NaN operand, so a NaN stays and a "
                 "reversed range gives min everywhere",
)
FLOAT_TOPK = Choice(
    "float_topk",
    sort="burn-backend's float_topk default (ndarray, flex): the descending total-order sort, then the first k",
    min_slots="cubek-reduce 0.3's TopK kernel (burn-cubecl 0.22.0-pre.3 and 0.22.1): k descending slots that start "
              "at f32::MIN, and a -inf never displaces one, so a kept -inf reads back as f32::MIN",
    inf_slots="cubek-reduce 0.4.0-pre.1's TopK kernel (burn-cubecl 0.23.0-pre.1): the slots start at -inf "
              "(max_identity), so a -inf is kept as itself",
)
CLAMP = Choice("clamp", after_round="clamp(round(v), a, b) (burn <= 0.22.1, GPU)",
               before_round="round(clamp(v, a, b)): flex >= 0.23.0-pre.1's QuantCodes::encode_all (the same integer "
                            "codes as rounding first; minifloats saturate either way)")
FLOAT_CODES = Choice(
    "float_codes",
    integer="E4M3/E5M2/E2M1 scaled values are rounded to integers like the integer values (burn <= 0.22.1; the "
            "GPU then stores each integer's fp bits, flex clips it to i8)",
    format="E4M3/E5M2/E2M1 codes are the value's own format: burn's e4m3/e5m2/e2m1 conversions (nearest, ties "
           "to even, saturating; CUDA's NaN codes), decoded by value (flex >= 0.23.0-pre.1)",
    kernel_codecs="E4M3/E5M2/E2M1 scaled values are not rounded to integers: the kernel clamps them to the value "
                  "range (a NaN as nan_code says), then cubecl's software codecs encode them (nearest, ties to "
                  "even), in Native bytes and PackedU32 fields alike, and decode them by value (burn 0.22.1's GPU "
                  "route: cubek-quant-0.3.1 quantize.rs:34-49, :144-155, dequantize.rs:123-131)",
)
FP8_NAN = Choice(
    "fp8_nan",
    float8="every E4M3/E5M2 NaN code decodes to 0x7FFFE000: the float8 crate widens it to f16's canonical 0x7FFF, "
           "sign dropped (burn's host types)",
    quiet="a Native E4M3/E5M2 NaN code decodes to the quiet NaN 0x7FC00000 with the code's sign: SPIR-V's "
          "OpFConvert from an fp8 type on Mesa lavapipe (measured)",
)
NAN_CODE = Choice(
    "nan_code",
    panic="ndarray's NumCast unwrap panics",
    zero="flex's `as i8` turns NaN into 0",
    hi="CUDA's max(min(x, hi), lo) returns hi",
    lo="WGSL's clamp(x, lo, hi) on Mesa lavapipe returns lo (measured)",
)

# --- scales ------------------------------------------------------------------------------------------------
ZERO_SCALE = Choice(
    "zero_scale",
    point_one="ndarray's valid_scale: an effective scale of exactly 0 divides as 0.1",
    min_positive="flex's validated_scale: a non-positive or non-finite stored scale becomes "
                 "round_up(f32::MIN_POSITIVE)",
    none="no guard (GPU kernels)",
)

# --- bytes -------------------------------------------------------------------------------------------------
VALUE_LAYOUT = Choice(
    "value_layout",
    bytes="TensorData holds one i8 per value whatever the store (burn-std <= 0.22.1)",
    packed_lines="a packed store is packed line by line along its packed dim, each line padded to whole words, "
                 "block scales in the same order, and the reader checks the values' byte count "
                 "(burn-std >= 0.23.0-pre.1)",
)

# --- checkpoints (docs/spec/checkpoint.md) ---------------------------------------------------------------------
CHECKPOINT_READER = Choice(
    "checkpoint_reader",
    metadata_end="burn-pack 0.22.0-pre.3: the file is measured against the unaligned end of the metadata before "
                 "any range is checked; a tensor's range and size are checked only when it is viewed (§13.6)",
    ranges_first="burn-pack 0.22.1: every tensor's range and size are checked, then the file against the aligned "
                 "data section (§13.6)",
    limits="burn-pack 0.23.0-pre.1: the ranges, then the file; a tensor's size is checked against ReaderLimits "
           "when it is viewed, the error naming `Reader::with_limits` (§13.6)",
)
DECLARED_LENGTH = Choice(
    "declared_length",
    storage_lines="burn-std <= 0.22.1's quantized_data_len: packed storage counted line by line whatever the bytes "
                  "hold, so a packed tensor's declared length is not its payload's (burn #5349, §13.5)",
    layout="burn-std >= 0.23.0-pre.1's quantized_data_len: the length the value layout writes (§13.5)",
)

# --- the device's failures ---------------------------------------------------------------------------------
READ_FAILURE = Choice(
    "read_failure",
    panics_in_bytes="a launch that failed to compile is reported when its output is read: cubecl-environment's "
                    "`expect(\"bytes: host access failed\")` panics with the server's Debug text (cubecl 0.11.0-pre.3)",
    returns_unwritten="the read returns an ExecutionError naming the unwritten buffer and its root failure "
                      "(cubecl-runtime 0.11.3 `ServerError::Unwritten`): burn-tensor's into_data panics with it, "
                      "`B::q_into_data` returns it (burn 0.22.1)",
)

# --- calibration -------------------------------------------------------------------------------------------
TENSOR_EXTREMUM = Choice(
    "tensor_extremum",
    last="ndarray's float_min/float_max fold `if a < b {a} else {b}`: of equal values (+0, -0) the later stays",
    first="flex's select_float_extremum keeps the current value unless the candidate is strictly better: of "
          "equal values the first stays",
    unpinned="a GPU reduction tree or SIMD lanes: which of +0/-0 wins depends on the tree (on lavapipe neither the "
             "first nor the last, per tensor and per block) or on the lanes (burn-flex 0.23's default build); the "
             "oracle picks the first and the vectors compare min/max as numbers (zero tolerance)",
)
MEAN_SUMMATION = Choice(
    "mean_summation",
    unrolled8="the ndarray crate's eight-way unrolled_fold on contiguous lanes, in-order sub-array sums elsewhere",
    any_order="a machine-dependent order (flex's SIMD build); the oracle sums in order and the vectors compare "
              "within the summation error bound",
)

# --- what the backend accepts (the checks live in support.py) ----------------------------------------------
QUANTIZE_CHECK = Choice(
    "quantize_checks",
    **{"ndarray.matrix": "ndarray quantizes Symmetric + Native with its value matrix only",
       "cubecl.storage": "packed words tile the last dim; native storage holds whole bytes; F32 global",
       "cubecl.scale_bindings": "as many scale bindings as the scheme has levels (cubek-quant launch_ref's first "
                                "check)",
       "cubecl.packed_dim_rank": "a packed dim within the tensor's rank (beyond it, a wrapped shape index panics)",
       "wgsl.fp8_scales": "fp8 scales (UE4M3, and UE8M0 where it has a round-up rule) do not compile to WGSL "
                          "(reported when the result is read back)",
       "cubecl.native_i8": "the device converts i8: without it (WGSL) every Native and PackedNative scheme is "
                           "refused",
       "cubecl.round_up_rule": "the scale dtype has a round-up rule in this release",
       "cubecl.native_store": "the native kernel launches a Native store only (E2M1 PackedNative is refused)",
       "cubecl.packed_native": "the launcher refuses a PackedNative store on every device, `E2M1 is not supported "
                               "for native quantization` (cubek-quant 0.3.1)",
       "cubecl.mode": "Symmetric only",
       "cubecl.block_divisibility": "a packed store's last block extent holds whole words"},
)

# --- how burn was built (the fused reads live in support.py) ------------------------------------------------
FUSED_READ = Choice(
    "fused_read",
    none="no fused kernel reads a quantized tensor: the backend's own dequantize launch does, its checks first "
         "(the lean builds)",
    cubecl_fusion="burn-cubecl-fusion 0.22.1's elementwise and matmul kernels read a one-level tensor's codes "
                  "themselves where they can type them (Native Q8F/Q8S as i8, PackedU32 as u32; F32/F16/BF16 scales), "
                  "so the backend's dequantize launch and its checks never run; they decline the rest (the backend "
                  "dequantizes), and panic on the device runner thread for a sub-byte Native store",
)

# --- quantized tensors in motion (the routes live in layout.py) --------------------------------------------
LAYOUT = Choice(
    "layout",
    ndarray="codes move; q_permute also permutes the scale grid and block dims; reshape/flip/slice/select keep "
            "the scale list (burn-ndarray ops/qtensor.rs)",
    flex="per-tensor codes move; per-block tensors are dequantized, moved and requantized with flex's own "
         "quantize_dynamic (burn-flex block_safe_layout_op)",
    cubecl="metadata moves for reshape/permute; q_flip unimplemented; the rest are trait defaults (spec §9.3, "
           "not run here)",
    wgpu="the cubecl routes with burn-cubecl's reshape limits (an N-D block only unsqueezes, a 1-D block may not "
         "span rows); a Native tensor's matmul does not compile to WGSL (measured on lavapipe)",
    vulkan="the wgpu routes, the matmul compiled to SPIR-V (measured on lavapipe, where it crashes: gemm_crashes)",
)
