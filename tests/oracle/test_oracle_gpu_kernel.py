"""burn-cubecl's quantize kernel as the GPU profiles model it (cubek-quant 0.3.0-pre.3, cubecl-std 0.11.0-pre.3):
which scale each element reads, what the kernel makes of a scale, and the vector width of a Native kernel.

Every expected number is worked out by hand in the comment next to it (bit patterns, index arithmetic), not
read off the oracle. The behaviours were measured on Mesa lavapipe through the SPIR-V build
(docs/findings.md, "SPIR-V on lavapipe").
"""

import numpy as np
import pytest

import oracle as o
from oracle import QuantScheme
from oracle.blocks import kernel_block_start, kernel_scale_index
from oracle.errors import UndefinedBehaviour
from oracle.scheme import BlockSize
from oracle.support import native_vector_width

VULKAN = "burn-0.22.0-pre.3/vulkan"


def f32_bits(x) -> list[int]:
    return np.asarray(x, dtype=np.float32).view(np.uint32).ravel().tolist()


# --- which scale an element reads (cubek-quant src/layout/scales.rs:144-194) ---------------------------------

def test_scales_of_the_tensors_rank_read_each_elements_block():
    # [2, 8] in blocks [1, 4]: scale grid [2, 2]; element 13 = row 1, column 5 -> block (1, 1) = 3
    idx = kernel_scale_index(np.arange(16), (2, 8), BlockSize([4]), (2, 2))
    assert idx.tolist() == [0] * 4 + [1] * 4 + [2] * 4 + [3] * 4


def test_flat_scales_walk_only_dim_0():
    # Tensor::quantize's Tensor<1> scales: p reads (p mod shape[0]) // block[0] = p mod 2 for [2, 8], block [1, 8]
    idx = kernel_scale_index(np.arange(16), (2, 8), BlockSize([8]), (2,))
    assert idx.tolist() == [0, 1] * 8
    # and every position counts as a block start (p mod 2 is always a multiple of the extent 1)
    assert kernel_block_start(np.arange(16), (2, 8), BlockSize([8]), (2,)).all()


def test_flat_scales_of_a_rank_1_tensor_are_right():
    # rank 1: dim 0 is the only dim, so the walk is the true one: [8] in blocks [4] -> 0,0,0,0,1,1,1,1
    assert kernel_scale_index(np.arange(8), (8,), BlockSize([4]), (2,)).tolist() == [0] * 4 + [1] * 4


def test_a_packed_q4s_tensor_quantized_through_the_tensor_api_reuses_row_0s_scale():
    # [2, 8] Q4S PackedU32, per_block([8]), scales [0.25, 0.5]: one word per row; word 1 starts at element 8,
    # which reads scale 8 mod 2 = 0 (0.25): row 1 = [1.0, -1.0, ...] / 0.25 = [4, -4], not / 0.5 = [2, -2]
    scheme = QuantScheme.from_json({"value": "Q4S", "store": {"PackedU32": 0}, "mode": "Symmetric",
                                    "tensor": None, "block": {"size": [8], "dtype": "F32"}})
    x = np.array([[0.25, -0.25] * 4, [1.0, -1.0] * 4], dtype=np.float32)
    qt = o.quantize(x, scheme, np.array([0.25, 0.5], dtype=np.float32), profile=VULKAN, checked=True)
    assert qt.codes.tolist() == [[1, -1] * 4, [4, -4] * 4]
    assert f32_bits(qt.scales) == [0x3E800000, 0x3E800000]  # both blocks hold 0.25


def test_racing_scale_writes_are_undefined():
    # [3, 6] in blocks [2, 4] with flat scales; f32 rows of 6 -> vectors of 2 (6 % 4 != 0). Units at 0 and 2 both
    # write block (0, 0): unit 0 reads scale (0 mod 3) // 2 = 0, unit 2 reads (2 mod 3) // 2 = 1
    scheme = QuantScheme.from_json({"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None,
                                    "block": {"size": [2, 4], "dtype": "F32"}})
    with pytest.raises(UndefinedBehaviour, match="race"):
        o.quantize(np.ones((3, 6), np.float32), scheme, np.array([1, 2, 3, 4], np.float32), profile=VULKAN,
                   checked=True)









# --- the Native kernel's vector width (cubecl-runtime client.rs:1339-1352, cubecl-core lib.rs:128-160) --------

@pytest.mark.parametrize("shape,itemsize,width", [
    ((2, 8), 4, 4),   # 128-bit loads of f32: 4 lanes, and 8 % 4 == 0
    ((3, 6), 4, 2),   # 6 % 4 != 0, 6 % 2 == 0
    ((5,), 4, 1),     # odd
    ((2, 8), 2, 4),   # f16: 128 / 16 = 8, capped by wgpu's max_vector_size 4
])
def test_native_vector_width_on_vulkan(shape, itemsize, width):
    assert native_vector_width(shape, itemsize, o.get_profile(VULKAN)) == width




def test_a_native_block_narrower_than_the_vector_is_refused():
    # per_block([2]) on [2, 4] f32: vectors of 4, and 2 % 4 != 0
    scheme = QuantScheme.from_json({"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None,
                                    "block": {"size": [2], "dtype": "F32"}})
    with pytest.raises(o.BurnPanic, match="Block size must be divisible by 4, got block_size=2"):
        o.quantize(np.ones((2, 4), np.float32), scheme, np.ones(4, np.float32), profile=VULKAN, checked=True)


def test_e2m1_packed_native_is_refused_by_the_native_launcher():
    scheme = QuantScheme.from_json({"value": "E2M1", "store": {"PackedNative": 0}, "mode": "Symmetric",
                                    "tensor": None, "block": None})
    with pytest.raises(o.BurnPanic, match="Unsupported quantization scheme"):
        o.quantize(np.ones(4, np.float32), scheme, np.ones(1, np.float32), profile=VULKAN, checked=True)


# --- a view's strides (found by fuzzing the SPIR-V build, seed 20261130) -----------------------------------------

def test_view_strides_follow_burn_cubecl_metadata_ops():
    from oracle.layout import view_strides
    # [1, 4] transposed: [4, 1] with strides [1, 4]; a flip writes a fresh [4, 1] (strides [1, 1]); transposed
    # again: [1, 4] with strides [1, 1]
    assert view_strides((1, 4), [{"op": "transpose"}]) == (1, 4)
    assert view_strides((1, 4), [{"op": "transpose"}, {"op": "flip", "axes": [0]}, {"op": "transpose"}]) == (1, 1)
    # expand [1, 4] -> [3, 4]: the broadcast dim reads stride 0; a leading new dim too
    assert view_strides((1, 4), [{"op": "expand", "shape": [2, 3, 4]}]) == (0, 0, 1)


@pytest.mark.parametrize("shape, strides, width", [
    ((1, 4), (4, 1), 4),  # contiguous: next stride 4
    ((1, 4), (1, 1), 1),  # a unit dim's stride 1 is not a multiple of 2 or 4
    ((4, 2), (1, 4), 1),  # the innermost stride is not 1
    ((3, 4), (0, 1), 4),  # a broadcast stride (0) does not count
    ((2, 4), (6, 1), 2),  # next stride 6: only 2 divides it
])
def test_strided_vector_width(shape, strides, width):
    from oracle.support import strided_vector_width
    assert strided_vector_width(shape, strides, 4, o.get_profile(VULKAN)) == width


def test_a_view_with_one_element_units_passes_the_width_check():
    # per_block([2]) on a contiguous [1, 4] f32 tensor: vectors of 4 straddle blocks, refused; the same values as a
    # [1, 4] view with strides [1, 1] quantize one element per unit: blocks [0, 1] and [2, 3], scales max/127
    params = {"scheme": QuantScheme.default().with_store(o.NATIVE).with_value(o.QuantValue.Q8S)
              .per_block([2], o.ScaleDtype.F32).to_json(), "view": []}
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    with pytest.raises(o.BurnPanic):
        o.run("quantize_view", params, {"x": x}, profile=VULKAN)
    params["view"] = [{"op": "transpose"}, {"op": "flip", "axes": [0]}, {"op": "transpose"}]
    out = o.run("quantize_view", params, {"x": x[:, ::-1].copy()}, profile=VULKAN)
    assert f32_bits(out["scales"]) == f32_bits([np.float32(1) / np.float32(127), np.float32(3) / np.float32(127)])
    assert out["codes"].tolist() == [[0, 127, 85, 127]]  # 2 / (3/127) = 84.67 -> 85


def test_an_empty_tensor_keeps_the_given_scale_bytes_whatever_the_input_dtype():
    # no kernel runs: the f32 scale 0.5 is the F32 storage; the kernel's f16 view (low half 0x0000) never happens
    scheme = QuantScheme.default().with_store(o.NATIVE).with_value(o.QuantValue.Q8S)
    qt = o.quantize(np.zeros(0, np.float16), scheme, np.array([0.5], np.float32), profile=VULKAN)
    assert f32_bits(qt.scales) == [0x3F000000]


def test_two_transposes_give_the_native_vectors_back():
    # vulkan seed 2 case 657: [2, 4] Q8S Native per_block([2]), scales [1, 2, 3, 4] (row 0: blocks 0, 1; row 1: 2,
    # 3). Transposed twice, the strides are contiguous again: the dequantize reads vectors of 4 (f32, 4 divides 4),
    # one scale per vector, its first element's: row 0 all times 1, row 1 all times 3 (not 1, 1, 2, 2 / 3, 3, 4, 4)
    params = {"scheme": QuantScheme.default().with_store(o.NATIVE).with_value(o.QuantValue.Q8S)
              .per_block([2], o.ScaleDtype.F32).to_json(), "steps": [{"op": "transpose"}, {"op": "transpose"}]}
    codes = np.array([[-127, -126, 1, 2], [3, 4, 5, 6]], np.int8)
    out = o.run("qlayout", params, {"codes": codes, "scales": np.array([1, 2, 3, 4], np.float32)}, profile=VULKAN)
    assert out["x"].tolist() == [[-127.0, -126.0, 1.0, 2.0], [9.0, 12.0, 15.0, 18.0]]
