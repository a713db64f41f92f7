"""Every panic of spec §8 the oracle models: code and exact message, written out by hand from burn's source."""

import re
from pathlib import Path

import numpy as np
import pytest

import oracle as o
from oracle import QuantScheme, QuantValue, ScaleDtype

NDARRAY = "burn-0.22.0-pre.3/ndarray"
FLEX = "burn-0.22.0-pre.3/flex"
CUBECL = "burn-0.22.0-pre.3/cubecl"
Q8S = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S)
Q8S_TEXT = "QuantScheme { value: Q8S, store: Native, mode: Symmetric, tensor: None, block: None }"
TWO_LEVEL = Q8S.per_block([4], ScaleDtype.UE4M3).per_tensor(ScaleDtype.F32)
TWO_LEVEL_TEXT = ("QuantScheme { value: Q8S, store: Native, mode: Symmetric, tensor: Some(F32), block: "
                  "Some(BlockScale { size: BlockSize([4]), dtype: UE4M3 }) }")
X4 = np.array([-1.8, -1.0, 0.0, 0.5], np.float32)
X8 = np.arange(8, dtype=np.float32)
ONE = np.array([1.0], np.float32)


def raises(code: str, message: str, fn, *args, **kwargs) -> None:
    with pytest.raises(o.BurnPanic) as err:
        fn(*args, **kwargs)
    assert (err.value.code, err.value.message) == (code, message)
    assert o.classify_panic(message) == code or o.CATALOGUE[code].template == o.CATALOGUE[
        o.classify_panic(message)].template


@pytest.mark.parametrize("profile", [NDARRAY, FLEX])
def test_seed_case_per_tensor_scale_without_two_level(profile):
    raises("quantize.global_without_two_level", "a per-tensor scale should come with a two-level scheme",
           o.quantize, X4, Q8S, np.array([0.1], np.float32), ONE, profile=profile)


def test_two_level_without_global_on_ndarray():
    raises("quantize.two_level_without_global", "a two-level scheme should have a per-tensor scale",
           o.quantize, X8, TWO_LEVEL, np.array([1.0, 1.0], np.float32), profile=NDARRAY)


def test_two_level_without_global_on_flex_is_caught_by_the_qtensor():
    flex_text = TWO_LEVEL_TEXT  # already Native
    raises("quantize.global_mismatch",
           f"assertion `left == right` failed: {flex_text} does not match a per-tensor scale of None\n"
           "  left: true\n right: false",
           o.quantize, X8, TWO_LEVEL, np.array([1.0, 1.0], np.float32), profile=FLEX)


def test_tensor_quantize_asserts_first():
    raises("quantize.global_mismatch",
           f"assertion `left == right` failed: {TWO_LEVEL_TEXT} does not match a per-tensor scale of None\n"
           "  left: true\n right: false",
           o.quantize, X8, TWO_LEVEL, np.array([1.0, 1.0], np.float32), checked=True, profile=NDARRAY)
    raises("tensor.global_not_one",
           "assertion `left == right` failed: the per-tensor scale must have exactly one element, got [2]\n"
           "  left: 2\n right: 1",
           o.quantize, X8, TWO_LEVEL, np.array([1.0, 1.0], np.float32), np.ones(2, np.float32), checked=True, profile=NDARRAY)
    raises("ndarray.unsupported_dtype", "not implemented: Unsupported dtype F16",
           o.quantize, X8, TWO_LEVEL, np.array([1.0, 1.0], np.float32), np.ones(1, np.float16), checked=True, profile=NDARRAY)
    raises("tensor.global_not_f32",
           "assertion `left == right` failed: the per-tensor scale must be an f32 tensor, got F16\n"
           "  left: F16\n right: F32",
           o.quantize, X8, TWO_LEVEL, np.array([1.0, 1.0], np.float32), np.ones(1, np.float16), checked=True,
           profile=FLEX)


def test_tensor_quantize_global_for_one_level_scheme_prints_the_tensor_wrapper():
    raises("quantize.global_mismatch",
           f"assertion `left == right` failed: {Q8S_TEXT} does not match a per-tensor scale of Some(Tensor "
           "{ primitive: BridgeTensor { kind: Float }, _kind: PhantomData<burn_tensor::bridge::kind::Float> })\n"
           "  left: false\n right: true",
           o.quantize, X4, Q8S, np.array([0.1], np.float32), ONE, checked=True, profile=NDARRAY)


def test_ndarray_unsupported_scheme():
    for scheme in (QuantScheme.default(), Q8S.with_value(QuantValue.Q4S), Q8S.with_value(QuantValue.E4M3),
                   Q8S.with_value(QuantValue.Q2S).per_block([4], ScaleDtype.F32)):
        raises("ndarray.unsupported_scheme", f"not implemented: Quantization not supported for scheme {scheme.debug()}",
               o.quantize_dynamic, X8, scheme, profile=NDARRAY)


def test_q2s_per_tensor_is_supported_on_ndarray():
    assert o.quantize_dynamic(X4, Q8S.with_value(QuantValue.Q2S), profile=NDARRAY).codes.tolist() == [-1, -1, 0, 0]


def test_ue8m0_scales_before_0_22():
    raises("scale.ue8m0", "UE8M0 scales are not yet supported",
           o.quantize_dynamic, X8, Q8S.per_tensor(ScaleDtype.UE8M0), profile=NDARRAY)
    raises("bytes.ue8m0", "not implemented: UE8M0 scales are not yet supported",
           o.encode_scales, ONE, ScaleDtype.UE8M0, profile=NDARRAY)


def test_block_count_mismatch_on_ndarray_and_flex():
    scheme = Q8S.per_block([4], ScaleDtype.F32)
    raises("ndarray.block_count",
           "assertion `left == right` failed: Invalid per-block quantization: 3 blocks for a Shape { dims: [8] } "
           "tensor with BlockSize([4]) blocks\n  left: 2\n right: 3",
           o.quantize, X8, scheme, np.ones(3, np.float32), profile=NDARRAY)
    raises("scale.index_out_of_bounds", "index out of bounds: the len is 1 but the index is 1",
           o.quantize, X8, scheme, np.ones(1, np.float32), profile=FLEX)
    assert o.quantize(X8, scheme, np.ones(3, np.float32), profile=FLEX).scales.size == 3  # extra scales kept


def test_calibration_panics():
    raises("range.block_not_divisible", "Tensor Shape { dims: [2, 6] } must be evenly divisible by block size [1, 4]",
           o.quantize_dynamic, np.zeros((2, 6), np.float32), Q8S.per_block([4], ScaleDtype.F32), profile=NDARRAY)
    raises("range.absmean_two_level",
           "AbsMean calibration has no two-level form: BitNet's gamma is a mean over the whole tensor or block, "
           "which a per-tensor scale cannot decompose",
           o.compute_range, X8, TWO_LEVEL, "absmean", profile=NDARRAY)
    raises("range.empty_ndarray", "Cannot compute min of empty tensor",
           o.quantize_dynamic, np.zeros(0, np.float32), Q8S, profile=NDARRAY)
    raises("range.empty_flex", "min: cannot reduce an empty tensor",
           o.quantize_dynamic, np.zeros(0, np.float32), Q8S, profile=FLEX)


@pytest.mark.parametrize("dtype", [ScaleDtype.F32, ScaleDtype.BF16])
def test_two_level_block_dtype_too_wide(dtype):
    raises("qparams.block_dtype_too_wide",
           f"block scales in {dtype.name} reach f32's range, which a per-tensor scale cannot absorb",
           o.quantize_dynamic, X8, Q8S.per_block([4], dtype).per_tensor(ScaleDtype.F32), profile=NDARRAY)


def test_two_level_f16_global_fails_when_bytes_are_written():
    scheme = Q8S.per_block([4], ScaleDtype.F16).per_tensor(ScaleDtype.F16)
    raises("bytes.global_not_f32",
           f"assertion `left == right` failed: a two-level scheme stores its per-tensor scale as f32, got "
           f"{scheme.debug()}\n  left: F16\n right: F32",
           o.quantize, X8, scheme, np.ones(2, np.float32), ONE, profile=NDARRAY)


def test_byte_layout_panics():
    raises("bytes.global_missing", f"{TWO_LEVEL_TEXT} requires a per-tensor scale",
           o.to_bytes, o.QTensor(np.zeros(8, np.int8), np.ones(2, np.float32), None, TWO_LEVEL), profile=NDARRAY)
    raises("bytes.global_unexpected", f"{Q8S_TEXT} does not take a per-tensor scale",
           o.to_bytes, o.QTensor(np.zeros(4, np.int8), ONE, ONE, Q8S), profile=NDARRAY)
    raises("bytes.too_short", "quantized tensor data is shorter than its scheme's parameters",
           o.from_bytes, np.zeros(3, np.uint8), (4,), Q8S, profile=NDARRAY)
    raises("bytes.packed_dim",
           "assertion `left == right` failed: Packing must be on innermost dimension for splitting off values\n"
           "  left: 1\n right: 0",
           o.from_bytes, np.zeros(8, np.uint8), (4,), Q8S.with_store(o.QuantStore.packed_u32(1)), profile=NDARRAY)
    raises("bytes.unsupported_store", "not implemented: Not yet supported",
           o.from_bytes, np.zeros(8, np.uint8), (4,), Q8S.with_value(QuantValue.E2M1).with_store(
               o.QuantStore.packed_native(0)), profile=NDARRAY)
    # Extra block scales are written, then read back as values: 8 codes + 4 bytes of the third scale.
    raises("data.shape_mismatch",
           "assertion `left == right` failed: Shape Shape { dims: [8] } is invalid for input of size 12\n"
           "  left: 8\n right: 12",
           o.dequantize, o.QTensor(np.zeros(8, np.int8), np.ones(3, np.float32), None,
                                   Q8S.per_block([4], ScaleDtype.F32)), profile=NDARRAY)


def test_ndarray_from_data_rejects_sub_byte_values():
    scheme = Q8S.with_value(QuantValue.Q2S)
    raises("ndarray.from_data_scheme", f"not implemented: from_data not supported for scheme {scheme.debug()}",
           o.dequantize, o.QTensor(np.zeros(4, np.int8), ONE, None, scheme), profile=NDARRAY)


def test_ndarray_has_no_f16_tensors():
    raises("ndarray.unsupported_dtype", "not implemented: Unsupported dtype F16",
           o.quantize_dynamic, X8.astype(np.float16), Q8S, profile=NDARRAY)
    qt = o.quantize_dynamic(X4, Q8S, profile=NDARRAY)
    raises("ndarray.unsupported_dtype", "not implemented: Unsupported dtype F16", o.dequantize, qt, "f16", profile=NDARRAY)


def test_gpu_storage_panics():
    packed = QuantScheme.default()
    raises("cubecl.packed_last_dim", "Can't store in u32",
           o.quantize_dynamic, np.zeros((3, 2), np.float32), packed, profile=CUBECL)
    raises("cubecl.native_sub_byte", "Can't store native sub-byte values",
           o.quantize_dynamic, X8, Q8S.with_value(QuantValue.Q4S), profile=CUBECL)
    raises("cubecl.native_packing", "Q8S doesn't support native packing",
           o.quantize_dynamic, X8, Q8S.with_store(o.QuantStore.packed_native(0)), profile=CUBECL)
    raises("cubecl.block_divisibility", "Block size must be divisible by 16, got block_size=8",
           o.quantize_dynamic, np.zeros(16, np.float32),
           packed.with_value(QuantValue.Q2S).per_block([8], ScaleDtype.F32), profile=CUBECL)
    raises("cubecl.scale_bindings", "a scheme with 1 scale level(s) takes as many scale bindings, but 2 were provided",
           o.quantize, X4, Q8S, np.array([0.1], np.float32), ONE, profile=CUBECL)


def test_classify_panic_unknown_text():
    assert o.classify_panic("something else entirely") is None


def test_ndarray_cannot_hold_the_reshape_of_a_rank_4_block_calibration():
    raises("ndarray.reshape_dims", "NdArray supports arrays up to 6 dimensions, received: 8",
           o.quantize_dynamic, np.ones((2, 2, 2, 4), np.float32), Q8S.per_block([2, 1, 4], ScaleDtype.F32), profile=NDARRAY)
    assert o.quantize_dynamic(np.ones((2, 2, 2, 4), np.float32), Q8S.per_block([2, 1, 4], ScaleDtype.F32),
                              profile=FLEX).codes.shape == (2, 2, 2, 4)


def test_nan_code_panics_on_ndarray():
    raises("ndarray.nan_code", "called `Option::unwrap()` on a `None` value",
           o.quantize, np.float32([1.0, np.nan]), Q8S, np.float32([0.1]), profile=NDARRAY)


def test_per_tensor_bytes_need_a_scale():
    raises("scale.slice_out_of_bounds", "range end index 1 out of range for slice of length 0",
           o.to_bytes, o.QTensor(np.zeros(4, np.int8), np.zeros(0, np.float32), None, Q8S), profile=NDARRAY)


def test_packed_words_must_be_whole():
    q4 = Q8S.with_value(QuantValue.Q4S).with_store(o.QuantStore.packed_u32(0))
    raises("bytes.not_u32_multiple", "cast_slice>OutputSliceWouldHaveSlop",
           o.from_bytes, np.zeros(3 + 4, np.uint8), (8,), q4, profile=NDARRAY)


def test_empty_packed_buffer_is_unaligned():
    """Real burn (found by qconform fuzz): an empty buffer's dangling pointer is 1-aligned; bytemuck refuses it."""
    q4 = Q8S.with_value(QuantValue.Q4S).with_store(o.QuantStore.packed_u32(0)).per_block([2], ScaleDtype.F32)
    empty = o.QTensor(np.zeros(0, np.int8), np.zeros(0, np.float32), None, q4)
    raises("bytes.empty_unaligned", "cast_slice>TargetAlignmentGreaterAndInputNotAligned", o.dequantize, empty,
           profile=FLEX)
    assert o.from_bytes(np.zeros(0, np.uint8), (0,), q4, profile=FLEX).codes.size == 0


def test_two_level_split_of_no_scales_panics_in_max():
    """Real burn (found by qconform fuzz): normalize_scales' float_max of an empty tensor, worded per backend."""
    two = Q8S.per_block([2], ScaleDtype.F16).per_tensor(ScaleDtype.F32)
    empty = np.zeros(0, np.float32)
    raises("qparams.empty_max_ndarray", "Cannot compute max of empty tensor", o.compute_q_params, empty, empty, two,
           profile="burn-0.22.0-pre.3/ndarray")
    raises("qparams.empty_max_flex", "max: cannot reduce an empty tensor", o.compute_q_params, empty, empty, two,
           profile=FLEX)


def test_flex_0_22_1_asserts_whole_blocks():
    scheme = Q8S.per_block([4], ScaleDtype.F32)
    args = (np.ones((2, 6), np.float32), scheme, np.ones(4, np.float32))
    assert o.quantize(*args, profile=FLEX).codes.shape == (2, 6)  # 0.22.0-pre.3: a debug_assert only
    raises("flex.block_not_whole", "tensor Shape { dims: [2, 6] } is not a whole number of BlockSize([4]) blocks",
           o.quantize, *args, profile="burn-0.22.1/flex")


def test_flex_qtensor_needs_a_scale():
    raises("flex.qtensor_no_scale", "quantized tensor must have at least one scale factor",
           o.quantize, np.zeros((0, 4), np.float32), Q8S.per_block([4], ScaleDtype.F32), np.zeros(0, np.float32),
           profile=FLEX)


def test_gpu_scale_panics():
    f16_global = Q8S.per_block([4], ScaleDtype.F16).per_tensor(ScaleDtype.F16)
    raises("cubecl.global_not_f32",
           f"assertion `left == right` failed: a two-level scheme binds its per-tensor scale as f32, got "
           f"{f16_global.debug()}\n  left: F16\n right: F32",
           o.quantize, X8, f16_global, np.ones(2, np.float32), ONE, profile=CUBECL)
    raises("cubecl.global_tensor_not_f32",
           "assertion `left == right` failed: a two-level scheme's per-tensor scale must be an f32 tensor, got F16\n"
           "  left: F16\n right: F32",
           o.quantize, X8, TWO_LEVEL, np.ones(2, np.float32), np.ones(1, np.float16), profile=CUBECL)
    raises("cubecl.no_round_up", "UE8M0 scales have no round-up rule, which quantization requires",
           o.quantize_dynamic, X8, Q8S.per_tensor(ScaleDtype.UE8M0), profile=CUBECL)
    lookup = Q8S.with_mode(o.QuantMode.Lookup)
    raises("cubecl.unsupported_scheme", f"Unsupported quantization scheme {lookup.debug()}",
           o.quantize_dynamic, X8, lookup, profile=CUBECL)
    raises("cubecl.lookup_from_data", "not implemented: lookup quantization does not travel as a QFloat tensor",
           o.dequantize, o.QTensor(np.zeros(4, np.int8), ONE, None, lookup), profile=CUBECL)


FLEX_0_23 = "burn-0.23.0-pre.1/flex"


def test_packed_layout_panics_of_burn_0_23():
    """burn-std 0.23.0-pre.1: the length checks of TensorData::from_bytes and split_values_off, and PackedOrder's
    dim check (messages written out from data/tensor/base.rs:55-86 and quantization/{base,packing}.rs)."""
    q8s = Q8S_TEXT
    raises("data.invalid_length",
           f"Shape [4] with dtype QFloat({q8s}) is invalid for input of size 9 bytes",
           o.from_bytes, np.zeros(9, np.uint8), (4,), Q8S, profile=FLEX_0_23, validated=True)
    packed_d1 = Q8S.with_value(QuantValue.Q4S).with_store(o.QuantStore.packed_u32(1))
    packed_text = "QuantScheme { value: Q4S, store: PackedU32(1), mode: Symmetric, tensor: None, block: None }"
    raises("data.invalid_layout", f"Quantized layout for shape [8] and dtype QFloat({packed_text}) is invalid",
           o.from_bytes, np.zeros(12, np.uint8), (8,), packed_d1, profile=FLEX_0_23, validated=True)
    raises("bytes.packed_dim_rank", "a store packed along dim 1 from the innermost needs more than 1 dims",
           o.to_bytes, o.QTensor(np.zeros(8, np.int8), ONE, None, packed_d1), profile=FLEX_0_23)
    packed_text = packed_text.replace("PackedU32(1)", "PackedU32(0)")
    raises("bytes.values_length",
           "assertion `left == right` failed: the values of a Shape { dims: [9] } tensor under "
           f"{packed_text} take 8 bytes, not 4\n  left: 4\n right: 8",
           o.unpack_u32, np.array([0x76543210], np.uint32), QuantValue.Q4S, 9, profile=FLEX_0_23)


def test_gpu_flip_of_a_quantized_tensor_panics():
    """cubecl's q_flip is `unimplemented!()` (spec §9.3): the message is the bare macro text."""
    params = {"scheme": Q8S.to_json(), "steps": [{"op": "flip", "axes": [0]}]}
    raises("cubecl.q_flip", "not implemented",
           o.run, "qlayout", params, {"codes": np.zeros(4, np.int8), "scales": ONE}, profile=CUBECL)


@pytest.mark.parametrize("steps, kind, description", [
    # [2, 4] per_block([2]): 4 scales; a slice to [1, 4] keeps all 4 for a [1, 2] grid (too many)
    ([{"op": "slice", "ranges": [[0, 1, 1], [0, 4, 1]]}, {"op": "transpose"}], "IncompatibleShape",
     "incompatible shapes"),
    # a reshape to [8, 1] keeps 4 for an [8, 1] grid (blocks [1, 2]: too few)
    ([{"op": "reshape", "shape": [8, 1]}, {"op": "transpose"}], "OutOfBounds", "out of bounds indexing"),
])
def test_ndarray_permute_of_a_kept_scale_list(steps, kind, description):
    """ndarray's q_permute rebuilds the scale grid with ArrayD::from_shape_vec(..).unwrap(); the texts are
    ndarray's ShapeError Display (``ShapeError/{kind:?}: {description}``), as real burn-ndarray printed them."""
    params = {"scheme": Q8S.per_block([2], ScaleDtype.F32).to_json(), "steps": steps}
    inputs = {"codes": np.arange(1, 9, dtype=np.int8).reshape(2, 4), "scales": np.arange(1, 5, dtype=np.float32)}
    raises("ndarray.permute_scales", f"called `Result::unwrap()` on an `Err` value: ShapeError/{kind}: {description}",
           o.run, "qlayout", params, inputs, profile=NDARRAY)


@pytest.mark.parametrize("profile", ["burn-0.22.0-pre.3/flex", "burn-0.22.1/flex", "burn-0.23.0-pre.1/flex"])
def test_flex_clamp_of_a_reversed_range_is_rusts_f32_clamp_assert(profile):
    """burn-flex's float_clamp is `x.clamp(min, max)`, whose assert prints both bounds with `{:?}`."""
    params = {"scheme": Q8S.to_json(), "steps": [{"op": "clamp", "min": 0.25, "max": -1e39}]}
    inputs = {"codes": np.arange(1, 9, dtype=np.int8), "scales": np.array([0.5], np.float32)}
    raises("flex.clamp_reversed", "min > max, or either was NaN. min = 0.25, max = -inf",
           o.run, "float_ops", params, inputs, profile=profile)


def test_every_reachable_catalogue_code_has_a_test():
    """The two codes left out are unreachable through the modelled ops (docs/coverage.md, out of scope)."""
    files = (Path(__file__), *sorted(Path(__file__).parent.glob("test_gpu_*.py")))
    tested = {code for f in files for code in re.findall(r'raises\(\s*"([a-z0-9_.]+)"', f.read_text())}
    assert set(o.CATALOGUE) - tested == {"bytes.values_fill_shape"}


def test_burn_packs_errors_on_hostile_checkpoints():
    """burn-pack's refusals (spec §13.5-§13.6), the texts worked from its Display impl (base.rs:331-345)."""
    from oracle import checkpoint as ck
    scheme = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S).per_block([4], ScaleDtype.F16)
    qt = o.QTensor(np.arange(-4, 4, dtype=np.int8), np.array([0.5, 0.25], dtype=np.float32), None, scheme)
    good = ck.save_checkpoint(qt, profile=FLEX)
    load = ck.load_checkpoint
    raises("checkpoint.invalid_header", "Invalid header: insufficient bytes", load, good[:9], profile=FLEX)
    raises("checkpoint.invalid_magic", "Invalid magic number", load, b"BURN" + good[4:], profile=FLEX)
    raises("checkpoint.invalid_version", "Unsupported version", load, good[:4] + b"\x07\x00" + good[6:], profile=FLEX)
    raises("checkpoint.validation", "Validation error: File truncated: expected at least 268 bytes, got 267 bytes",
           load, good[:-1], profile="burn-0.22.1/flex")
    meta = ck.cbor_encode({"tensors": {"bias": {"dtype": {"QFloat": ck.scheme_to_serde(scheme)}, "shape": [8],
                                                "data_offsets": [0, 12]}}})
    other = ck.MAGIC.to_bytes(4, "little") + b"\x01\x00" + len(meta).to_bytes(4, "little") + meta
    other += bytes(256 - len(other)) + good[256:]
    raises("checkpoint.tensor_not_found", "Tensor not found: weight", load, other, profile=FLEX)
    missing = ck.cbor_encode({"tensors": {"weight": {"shape": [8], "data_offsets": [0, 12]}}})
    bad = ck.MAGIC.to_bytes(4, "little") + b"\x01\x00" + len(missing).to_bytes(4, "little") + missing
    raises("checkpoint.metadata_deserialization",
           'Metadata deserialization error: Semantic(None, "missing field `dtype`")', load, bad, profile=FLEX)
    q4 = o.QTensor(np.zeros((3, 3), dtype=np.int8), np.array([1.0], dtype=np.float32), None,
                   QuantScheme.default().with_value(QuantValue.Q4S))
    raises("checkpoint.bytes_size_mismatch", "Tensor bytes size mismatch: tensor 'weight': deferred source has "
           "inconsistent length (expected 16, got 13)", ck.save_checkpoint, q4, profile="burn-0.22.1/flex")


# The texts below are what the real harness builds printed for these chains (2026-12-01, issue 22).
_Q8S_4X8 = {"codes": (np.arange(32) % 100).astype(np.int8).reshape(4, 8), "scales": np.array([0.5], np.float32)}


def test_a_reshape_zero_is_an_empty_dim_from_0_23_and_its_count_check_panics():
    params = {"scheme": Q8S.to_json(), "steps": [{"op": "reshape", "shape": [0, 2, 4]}]}
    raises("tensor.reshape_count", "=== Tensor Operation Error ===\n  Operation: 'Reshape'\n  Reason:\n    1. The given "
           "shape doesn't have the same number of elements as the current shape. Current shape: [4, 8], target "
           "shape: [0, 2, 4]. \n", o.run, "qlayout", params, _Q8S_4X8, profile="burn-0.23.0-pre.1/flex")
    kept = o.run("qlayout", params, _Q8S_4X8, profile="burn-0.22.1/flex")  # until 0.22.1: the source's dim 0
    assert kept["x"].shape == (4, 2, 4) and np.array_equal(kept["x"].ravel(), _Q8S_4X8["codes"].ravel() * 0.5)


def test_a_kept_zero_past_the_source_rank_indexes_out_of_bounds():
    params = {"scheme": Q8S.to_json(), "steps": [{"op": "reshape", "shape": [1, 1, 0]}]}
    inputs = {"codes": np.zeros((2, 0), np.int8), "scales": ONE}
    raises("tensor.reshape_zero_index", "index out of bounds: the len is 2 but the index is 2",
           o.run, "qlayout", params, inputs, profile=FLEX)


def test_ndarray_divides_by_zero_in_an_empty_float_matmul():
    steps = [{"op": "slice", "ranges": [[0, 4, 1], [3, 3, 1]]}, {"op": "matmul", "rhs": [], "shape": [0, 3]}]
    params = {"scheme": Q8S.to_json(), "steps": steps}
    raises("ndarray.matmul_empty", "attempt to divide by zero", o.run, "qlayout", params, _Q8S_4X8,
           profile="burn-0.22.1/ndarray")
    out = o.run("qlayout", params, _Q8S_4X8, profile=FLEX)  # flex: the empty sum, zeros
    assert out["quantized"] is False and out["x"].shape == (4, 3) and not out["x"].any()
