"""The worked examples of spec §10 (and the reference tables of §4.1, §7.4), numbers written out by hand.

Each expected value is a literal from the spec (burn's own tests or the spec's derivations), never the oracle's
output pasted back. Floats are compared as f32 bit patterns.
"""

import numpy as np
import pytest

import oracle as o
from oracle import QuantScheme, QuantValue, ScaleDtype

NDARRAY = "burn-0.22.0-pre.3/ndarray"
FLEX = "burn-0.22.0-pre.3/flex"
CUBECL = "burn-0.22.0-pre.3/cubecl"
Q8S = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S)


def f32(values) -> np.ndarray:
    """f32 from decimal literals: the shortest repr identifies exactly one f32."""
    return np.array([np.float32(str(v)) for v in np.atleast_1d(values)], dtype=np.float32)


def bits(x) -> list[int]:
    return np.asarray(x, dtype=np.float32).view(np.uint32).ravel().tolist()


def assert_f32(actual, expected) -> None:
    assert bits(actual) == bits(f32(expected)), (np.asarray(actual).tolist(), expected)


# --- burn-ndarray ops/quantization.rs -----------------------------------------------------------------------

def test_int8_symmetric_quantization():
    x = f32([-1.8, -1.0, 0.0, 0.5])
    qt = o.quantize_dynamic(x, Q8S, profile=NDARRAY)
    assert qt.codes.tolist() == [-127, -71, 0, 35]
    assert bits(qt.scales) == [0x3C6836D4]  # (1.8 + 1.8) / 254
    assert_f32(o.dequantize(qt, profile=NDARRAY), [-1.8, -1.0062993, 0.0, 0.496063])


def test_int8_symmetric_quantization_per_block():
    x = f32([-1.8, -1.0, 0.0, 0.5] * 2)
    qt = o.quantize(x, Q8S.per_block([4], ScaleDtype.F32), f32([0.014173228, 0.014173228]), profile=NDARRAY)
    assert qt.codes.tolist() == [-127, -71, 0, 35] * 2
    assert_f32(o.dequantize(qt, profile=NDARRAY), [-1.8, -1.0062993, 0.0, 0.496063] * 2)


def test_should_support_dequantize():
    codes = np.array([-127, -77, -26, 25, 76, 127], dtype=np.int8)
    x = o.dequantize(o.QTensor(codes, f32([0.1]), None, Q8S), profile=NDARRAY)
    # f32(0.1f * q): the f64 product of an f32 and a small integer is exact, so one rounding gives f32's.
    expected = (np.float64(np.float32(0.1)) * codes.astype(np.float64)).astype(np.float32)
    assert bits(x) == bits(expected)


def test_strategy_scale_f32_round_up_is_identity():
    assert_f32(o.round_up(f32([0.009019608]), ScaleDtype.F32), [0.009019608])


# --- two-level example (burn-ndarray backend.rs) -------------------------------------------------------------

TWO_LEVEL_X = [0.1, -0.4, 0.2, 0.9, -1.5, 0.3, 0.05, -0.02]
TWO_LEVEL = Q8S.per_block([4], ScaleDtype.UE4M3).per_tensor(ScaleDtype.F32)


def test_two_level_example_stages():
    x = f32(TWO_LEVEL_X)
    lo, hi = o.compute_range(x, TWO_LEVEL, profile=NDARRAY)
    raw, glob = o.compute_q_params(lo, hi, Q8S.per_block([4], ScaleDtype.F32), profile=NDARRAY)
    assert_f32(raw, [0.007086614, 0.011811024])
    normalized, glob = o.compute_q_params(lo, hi, TWO_LEVEL, profile=NDARRAY)
    assert bits(glob) == [0x37DD2807]
    assert_f32(normalized, [268.8, 448.0])
    assert_f32(o.round_up(normalized, ScaleDtype.UE4M3), [288, 448])
    qt = o.quantize_dynamic(x, TWO_LEVEL, profile=NDARRAY)
    assert_f32(qt.scales, [288, 448])
    assert_f32(glob[0] * qt.scales, [0.007592801, 0.011811024])
    assert qt.codes.tolist() == [13, -53, 26, 119, -127, 25, 4, -2]


def test_two_level_example_stage_record():
    st = o.Stages()
    o.quantize_dynamic(f32(TWO_LEVEL_X), TWO_LEVEL, stages=st, profile=NDARRAY)
    assert_f32(st.raw_scales, [0.007086614, 0.011811024])
    assert_f32(st.normalized_scales, [268.8, 448.0])
    assert bits(st.global_scale) == [0x37DD2807]
    assert_f32(st.rounded_scales, [288, 448])
    assert_f32(st.effective_scales, [0.007592801, 0.011811024])
    # x / e in f32, element by element: the divided values the codes round
    e = np.repeat(f32([0.007592801, 0.011811024]), 4)
    assert bits(st.scaled) == bits(f32(TWO_LEVEL_X) / e)


def test_two_level_example_on_every_cpu_profile():
    for profile in (NDARRAY, FLEX, "burn-0.22.1/ndarray"):
        qt = o.quantize_dynamic(f32(TWO_LEVEL_X), TWO_LEVEL, profile=profile)
        assert qt.codes.tolist() == [13, -53, 26, 119, -127, 25, 4, -2], profile


# --- burn-std quantization.rs ---------------------------------------------------------------------------------

def test_pack_i8s_to_u32():
    assert o.pack_u32(np.array([-128, 2, -3, 127], np.int8), QuantValue.Q8S, profile=NDARRAY).tolist() == [2147287680]
    assert o.pack_u32(np.array([-128, 2, -3, 127, 55], np.int8), QuantValue.Q8S, profile=NDARRAY).tolist() == [2147287680, 55]


def test_unpack_q4_word():
    words = np.array([286331136], dtype=np.uint32)  # 0x11111100
    assert o.unpack_u32(words, QuantValue.Q4S, 8, profile=NDARRAY).tolist() == [0, 0, 1, 1, 1, 1, 1, 1]


def test_unpack_sign_extension():
    assert o.unpack_u32(np.array([0xF8], np.uint32), QuantValue.Q4S, 2, profile=NDARRAY).tolist() == [-8, -1]
    assert o.unpack_u32(np.array([0b1011], np.uint32), QuantValue.Q2S, 2, profile=NDARRAY).tolist() == [-1, -2]


def test_pack_q4_gpu_layout():
    assert o.pack_u32(np.arange(8, dtype=np.int8), QuantValue.Q4S, profile=NDARRAY).tolist() == [0x76543210]
    assert o.pack_u32(np.full(8, -1, np.int8), QuantValue.Q4S, profile=NDARRAY).tolist() == [0xFFFFFFFF]


def test_per_tensor_bytes_example():
    data = o.to_bytes(o.QTensor(np.array([-127, -71, 0, 35], np.int8), f32([0.014173228]), None, Q8S), profile=NDARRAY)
    assert data.tobytes().hex(" ") == "81 b9 00 23 d4 36 68 3c"


def test_two_level_bytes_example():
    codes = np.array([0, 25, 51, 76, 102, 127, -128, -1], np.int8)
    data = o.to_bytes(o.QTensor(codes, f32([0.5, 0.125]), f32([3.0]), TWO_LEVEL), profile=NDARRAY)
    assert data.tobytes().hex(" ") == "00 19 33 4c 66 7f 80 ff 30 20 00 00 40 40"
    back = o.from_bytes(data, (8,), TWO_LEVEL, profile=NDARRAY)
    assert back.codes.tolist() == codes.tolist()
    assert_f32(back.scales, [0.5, 0.125])
    assert_f32(back.global_scale, [3.0])


def test_per_tensor_round_trip_through_bytes():
    codes = np.array([0, 25, 51, 76, 102, 127], np.int8)
    back = o.from_bytes(o.to_bytes(o.QTensor(codes, f32([0.03937008]), None, Q8S), profile=NDARRAY), (6,), Q8S, profile=NDARRAY)
    assert back.codes.tolist() == codes.tolist() and back.global_scale is None
    assert_f32(back.scales, [0.03937008])


@pytest.mark.parametrize("profile", [NDARRAY, "burn-0.23.0-pre.1/flex"])  # both value layouts
def test_from_bytes_codes_do_not_alias_the_callers_bytes(profile):
    """The codes ``from_bytes`` returns are its own: writing to the caller's buffer afterwards changes none of them
    (only dequantize's own round trip, whose bytes nobody else holds, reads them in place, ``owned=False``)."""
    data = o.to_bytes(o.QTensor(np.array([1, -2, 3, 4], np.int8), f32([0.5]), None, Q8S), profile=profile)
    back = o.from_bytes(data, (4,), Q8S, profile=profile)
    data[:4] = 0
    assert back.codes.tolist() == [1, -2, 3, 4]
    assert np.shares_memory(o.from_bytes(data, (4,), Q8S, profile=profile, owned=False).codes, data)


def test_f16_block_scale_bytes():
    assert o.encode_scales(f32([0.014175415]), ScaleDtype.F16, profile=NDARRAY).tobytes().hex(" ") == "42 23"


@pytest.mark.parametrize(("value", "byte"), [(0.5, 0x30), (0.125, 0x20), (448.0, 0x7E), (10.0, 0x52),
                                             (2.0**-9, 0x01), (1000.0, 0x7E)])
def test_ue4m3_codec(value, byte):
    assert o.encode_scales(f32([value]), ScaleDtype.UE4M3, profile=NDARRAY).tolist() == [byte]
    if value <= 448:
        assert_f32(o.decode_scales(np.array([byte], np.uint8), ScaleDtype.UE4M3, profile=NDARRAY), [value])


def test_quantizable_declines_what_no_backend_can_store():
    base = QuantScheme.default()
    assert o.quantizable(base)
    assert o.quantizable(base.per_block([32], ScaleDtype.F16))
    assert o.quantizable(base.per_block([16], ScaleDtype.UE4M3).per_tensor(ScaleDtype.F32))
    assert not o.quantizable(base.per_block([32], ScaleDtype.UE8M0))
    assert not o.quantizable(base.per_tensor(ScaleDtype.UE8M0))
    assert not o.quantizable(base.per_block([16], ScaleDtype.F32).per_tensor(ScaleDtype.F32))
    assert not o.quantizable(base.per_block([16], ScaleDtype.UE4M3).per_tensor(ScaleDtype.BF16))


# --- §4.1 reference table ------------------------------------------------------------------------------------

ROUND_UP_TABLE = [
    # input, F16, BF16, UE4M3
    ("0.3", "0.30004883", "0.30078125", "0.3125"),
    (str(np.float32(1) / np.float32(3)), "0.3334961", "0.33398438", "0.34375"),
    ("500", "500", "500", "448"),
    ("1e-3", "0.0010004044", "0.0010070801", "0.001953125"),
    ("7.7e-4", "0.000770092", "0.00077056885", "0.001953125"),
    ("0.014173228", "0.014175415", "0.014221191", "0.015625"),
    ("0.035433073", "0.035461426", "0.03564453", "0.0390625"),
    ("1.1754944e-38", "5.9604645e-08", "1.1754944e-38", "0.001953125"),
    ("0", "0", "0", "0"),
]


@pytest.mark.parametrize("row", ROUND_UP_TABLE, ids=[r[0] for r in ROUND_UP_TABLE])
def test_round_up_reference_table(row):
    x = f32([row[0]])
    for dtype, expected in zip((ScaleDtype.F16, ScaleDtype.BF16, ScaleDtype.UE4M3), row[1:]):
        assert_f32(o.round_up(x, dtype), [expected])


def test_round_up_negative_scales_release_build():
    assert_f32(o.round_up(f32([-0.3]), ScaleDtype.UE4M3), ["-0.29882812"])
    assert bits(o.round_up(f32([-1e-3]), ScaleDtype.UE4M3)) == [0x80000000]  # -0.0
    assert_f32(o.round_up(f32([-1e-3]), ScaleDtype.F16), ["-0.0009999871"])
    assert_f32(o.round_up(f32([-0.3]), ScaleDtype.F16), ["-0.3"])
    assert_f32(o.round_up(f32([-0.3]), ScaleDtype.BF16), ["-0.30078125"])


def test_round_up_saturates_and_keeps_nan():
    out = o.round_up(np.array([np.inf, 70000, np.nan], np.float32), ScaleDtype.F16)
    assert out[:2].tolist() == [65504.0, 65504.0] and np.isnan(out[2])


def test_ue8m0_round_up_only_from_0_22():
    with pytest.raises(o.BurnPanic) as err:
        o.scale_to_dtype(f32([1.0]), ScaleDtype.UE8M0, profile=NDARRAY)
    assert err.value.message == "UE8M0 scales are not yet supported"
    out = o.scale_to_dtype(f32([0.0, 0.3, 1.0, 3.0, 2.0**127 * 1.5]), ScaleDtype.UE8M0, profile="burn-0.22.1/ndarray")
    assert out.tolist() == [2.0**-127, 0.5, 1.0, 4.0, 2.0**127]


# --- cubecl-common scheme.rs --------------------------------------------------------------------------------

def test_block_size_examples():
    assert o.BlockSize([32]).to_dim_vec(2) == [1, 32]
    assert o.BlockSize([1, 32]) == o.BlockSize([32])
    assert o.BlockSize([1, 1, 8, 4, 2, 3]).dims == (8, 4, 2, 3)
    assert o.BlockSize([1, 1]).dims == ()
    assert o.BlockSize([32]).num_blocks([8, 64]) == [8, 2]
    assert o.BlockSize([4, 32]).num_blocks([8, 64]) == [2, 2]
    assert o.BlockSize([32]).num_blocks([4, 8, 64]) == [4, 8, 2]
    assert o.BlockSize([32]).num_blocks([8, 70]) == [8, 3]
    assert o.BlockSize([2, 4]).to_dim_vec(1) == [2]  # leading entries win when the block outranks the tensor
    assert o.BlockSize([2, 3, 4, 5, 6, 7]).dims == (2, 3, 4, 5, 6)  # release builds keep the first five


def test_block_of_is_a_rectangle():
    layout = o.BlockLayout((2, 4), o.BlockSize([2, 2]))
    assert [layout.block_of(i) for i in range(8)] == [0, 0, 1, 1, 0, 0, 1, 1]


def test_scheme_debug_text():
    assert TWO_LEVEL.debug() == ("QuantScheme { value: Q8S, store: Native, mode: Symmetric, tensor: Some(F32), "
                                 "block: Some(BlockScale { size: BlockSize([4]), dtype: UE4M3 }) }")
    assert QuantScheme.default().debug() == ("QuantScheme { value: Q8F, store: PackedU32(0), mode: Symmetric, "
                                             "tensor: None, block: None }")


def test_scheme_json_round_trip_and_canonical_form():
    scheme = QuantScheme.from_json({"value": "Q4S", "store": {"PackedU32": 1}, "mode": "Symmetric",
                                    "tensor": "F32", "block": {"size": [1, 1, 2, 16], "dtype": "F16"}})
    assert scheme.to_json() == {"value": "Q4S", "store": {"PackedU32": 1}, "mode": "Symmetric", "tensor": "F32",
                                "block": {"size": [2, 16], "dtype": "F16"}}
    assert QuantScheme.from_json(scheme.to_json()) == scheme
    with pytest.raises(ValueError, match="unknown QuantScheme field"):
        QuantScheme.from_json({**scheme.to_json(), "zero_point": 3})


def test_levels():
    default = QuantScheme.default()
    assert default.tensor_scale() is ScaleDtype.F32 and default.num_levels() == 1
    assert default != default.per_tensor(ScaleDtype.F32)  # same meaning, different struct (§1.1)
    assert TWO_LEVEL.num_levels() == 2 and TWO_LEVEL.scale_dtype() is ScaleDtype.UE4M3
    assert Q8S.per_block([4], ScaleDtype.F16).tensor_scale() is None


# --- burn-backend-tests quantization ---------------------------------------------------------------------------

def test_min_max_calibration_per_tensor_and_block():
    lo, hi = o.compute_range(f32([-1.8, -1, 0, 0.5]), Q8S, profile=NDARRAY)
    assert_f32(lo, [-1.8]) and assert_f32(hi, [0.5])
    x = f32([-1.8, -1, 0, 0.5, 1.8, 1, 0, -0.5, 0.01, 0.02, 0.03, 0.04, -0.01, -0.02, -0.03, -0.04]).reshape(4, 4)
    lo, hi = o.compute_range(x, Q8S.per_block([4], ScaleDtype.F32), profile=NDARRAY)
    assert lo.shape == (4, 1)
    assert_f32(lo, [-1.8, -0.5, 0.01, -0.04])
    assert_f32(hi, [0.5, 1.8, 0.04, -0.01])


def test_scheme_per_tensor_and_per_block_scales():
    scales, glob = o.compute_q_params(f32([0.5]), f32([1.8]), Q8S, profile=NDARRAY)
    assert glob is None and bits(scales) == [0x3C6836D4]
    mins, maxs = f32([-1.8, -0.5, 0.01, -0.04]), f32([0.5, 1.8, 0.04, -0.01])
    scales, _ = o.compute_q_params(mins, maxs, Q8S.per_block([4], ScaleDtype.F32), profile=NDARRAY)
    assert_f32(scales, [0.014173228, 0.014173228, 0.00031496063, 0.00031496063])


def test_block_tensor_symmetric_int8():
    mins, maxs = f32([-1.8, -0.5, 0.01, -0.04]), f32([0.5, 1.8, 0.04, -0.01])
    scheme = Q8S.per_block([4], ScaleDtype.UE4M3).per_tensor(ScaleDtype.F32)
    normalized, glob = o.compute_q_params(mins, maxs, scheme, profile=NDARRAY)
    assert bits(glob) == [0x3804B19E]
    assert_f32(normalized, [448.0, 448.0, 9.955555, 9.955555])
    rounded = o.round_up(normalized, ScaleDtype.UE4M3)
    assert_f32(rounded, [448, 448, 10, 10])
    assert_f32(glob[0] * rounded, [0.014173228, 0.014173228, 0.00031636673, 0.00031636673])


def test_block_tensor_symmetric_int8_all_zero():
    scheme = Q8S.per_block([4], ScaleDtype.UE4M3).per_tensor(ScaleDtype.F32)
    scales, glob = o.compute_q_params(f32([0, 0]), f32([0, 0]), scheme, profile=NDARRAY)
    assert bits(glob) == [0x00800000] and bits(scales) == [0, 0]


def test_quantize_dynamic_int8():
    qt = o.quantize_dynamic(f32([5, 0, 4, -12.7]), Q8S, profile=NDARRAY)
    assert bits(qt.scales) == [0x3DCCCCCD] and qt.codes.tolist() == [50, 0, 40, -127]


def test_quantize_dequantize_single_with_transform():
    qt = o.quantize_dynamic(np.arange(32, dtype=np.float32), Q8S, profile=NDARRAY)
    assert_f32(qt.scales, [0.24409449])
    assert qt.codes.tolist() == [0, 4, 8, 12, 16, 20, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61, 66, 70, 74, 78, 82,
                                 86, 90, 94, 98, 102, 107, 111, 115, 119, 123, 127]
    times_ten = o.dequantize(qt, profile=NDARRAY) * np.float32(10)
    assert_f32(times_ten[:7], [0.0, 9.76378, 19.52756, 29.29134, 39.05512, 48.818897, 61.02362])
    assert_f32(times_ten[-1:], [310.0])


def test_blocks_that_do_not_span_the_trailing_dim():
    x = np.zeros((4, 8), np.float32)
    for (r, c), v in zip([(0, 0), (0, 4), (2, 0), (2, 4)], [1, 10, 100, 1000]):
        x[r:r + 2, c:c + 4] = v
    qt = o.quantize_dynamic(x, Q8S.per_block([2, 4], ScaleDtype.F32), profile=NDARRAY)
    assert_f32(qt.scales, [0.007874016, 0.07874016, 0.78740156, 7.874016])
    assert (qt.codes == 127).all()
    assert bits(o.dequantize(qt, profile=NDARRAY)) == bits(x)


@pytest.mark.parametrize("dtype", [ScaleDtype.UE4M3, ScaleDtype.F16])
def test_two_level_round_trip_through_bytes_is_bit_identical(dtype):
    x = (np.arange(256, dtype=np.float32) / np.float32(256)).reshape(16, 16)
    scheme = Q8S.per_block([2, 16], dtype).per_tensor(ScaleDtype.F32)
    qt = o.quantize_dynamic(x, scheme, profile=NDARRAY)
    reloaded = o.from_bytes(o.to_bytes(qt, profile=NDARRAY), (16, 16), scheme, profile=NDARRAY)
    assert bits(o.dequantize(reloaded, profile=NDARRAY)) == bits(o.dequantize(qt, profile=NDARRAY))


def test_ternary_matmul_fast_path():
    w = f32([0.9, -0.2, 0.5, -0.8, 0.1, 0.7, 0, 0.6, -0.4, 0.3, -0.9, 0.2]).reshape(4, 3)
    qt = o.quantize_dynamic(w, Q8S.with_value(QuantValue.Q2S), profile=NDARRAY)
    assert_f32(qt.scales, [0.9])
    assert qt.codes.tolist() == [[1, 0, 1], [-1, 0, 1], [0, 1, 0], [0, -1, 0]]
    a = f32([0.5, -1.2, 0.3, 2.0, 1, 0, -0.7, 0.4, -2, 1.5, 0.1, -0.3]).reshape(3, 4)
    out = o.ternary_matmul(a, qt, profile=NDARRAY)
    assert_f32(out.ravel(), [1.53, -1.53, -0.63000005, 0.9, -0.99, 0.9, -3.1499999, 0.35999998, -0.45])
    zero = o.ternary_matmul(f32([1, -2, 3]).reshape(1, 3), o.QTensor(np.zeros((3, 1), np.int8), f32([0.0]), None, qt.scheme), profile=NDARRAY)
    assert bits(zero) == [0]


# --- burn-flex ------------------------------------------------------------------------------------------------

def test_flex_scale_dtype_precision_and_q8f():
    x = f32([-3, -1.5, 0, 1.5, 3, 4.5])
    assert_f32(o.quantize_dynamic(x, Q8S, profile=FLEX).scales, [0.035433073])
    ue4m3 = Q8S.per_tensor(ScaleDtype.UE4M3)
    assert_f32(o.quantize_dynamic(x, ue4m3, profile=FLEX).scales, [0.0390625])
    q8f = Q8S.with_value(QuantValue.Q8F)
    assert_f32(o.quantize_dynamic(np.arange(16, dtype=np.float32) - np.float32(7.5), q8f, profile=FLEX).scales, [0.05882353])


def test_flex_zero_scale_gives_zero_codes():
    qt = o.quantize(f32([0.0, 0.0]), Q8S, f32([0.0]), profile=FLEX)
    assert qt.codes.tolist() == [0, 0]
    assert bits(qt.scales) == [0x00800000]  # validated: round_up(f32::MIN_POSITIVE) on F32


def test_flex_reciprocal_flips_a_tie():
    x, s = f32([13.049684]), f32([0.13522989])
    assert bits(x / s) == bits(f32([96.5]))  # the tie itself
    assert o.quantize(x, Q8S, s, profile=NDARRAY).codes.tolist() == [97]
    assert o.quantize(x, Q8S, s, profile=FLEX).codes.tolist() == [96]


# --- profiles that differ -------------------------------------------------------------------------------------

def test_ties_away_on_cpu_even_on_gpu():
    s = f32([0.5])  # power of two: x / s is exact
    x = f32([0.25, 0.75, 1.25, -0.25, -0.75, -1.25])  # x / s = ±0.5, ±1.5, ±2.5
    assert o.quantize(x, Q8S, s, profile=NDARRAY).codes.tolist() == [1, 2, 3, -1, -2, -3]
    assert o.quantize(x, Q8S, s, profile=CUBECL).codes.tolist() == [0, 2, 2, 0, -2, -2]


def test_zero_scale_policies():
    x = f32([0.0, 0.05])
    assert o.quantize(x, Q8S, f32([0.0]), profile=NDARRAY).codes.tolist() == [0, 1]  # ndarray: divides by 0.1
    assert o.quantize(x, Q8S, f32([0.0]), profile=NDARRAY).scales.tolist() == [0.0]  # ...but stores the 0
    assert o.quantize(x, Q8S, f32([0.0]), profile=CUBECL).codes.tolist() == [127, 127]  # 0/0 -> NaN -> hi


def test_nan_policies():
    x = f32([1.0, "nan"])
    with pytest.raises(o.BurnPanic) as err:
        o.quantize_dynamic(x, Q8S, profile=NDARRAY)
    assert err.value.message == "called `Option::unwrap()` on a `None` value"
    assert o.quantize(x, Q8S, f32([0.1]), profile=FLEX).codes.tolist() == [10, 0]
    assert o.quantize(x, Q8S, f32([0.1]), profile=CUBECL).codes.tolist() == [10, 127]


def test_stages_travel_as_the_vector_formats_intermediates():
    st = o.Stages()
    o.quantize_dynamic(f32(TWO_LEVEL_X), TWO_LEVEL, stages=st)
    named = st.intermediates()
    assert list(named) == ["min", "max", "raw_scales", "normalized_scales", "rounded_scales", "effective_scales",
                           "global", "scaled"]  # pipeline order; the codes are an output, not an intermediate
    back = o.Stages.from_intermediates(named)
    assert bits(back.global_scale) == [0x37DD2807] and back.codes is None
    with pytest.raises(ValueError, match="unknown intermediate"):
        o.Stages.from_intermediates({"trace": f32([1.0])})
