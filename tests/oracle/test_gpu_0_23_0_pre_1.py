"""burn-0.23.0-pre.1/wgpu and burn-0.23.0-pre.1/vulkan: burn 0.23.0-pre.1's GPU route (burn-cubecl 0.23.0-pre.1, cubek-quant
0.4.0-pre.1, cubecl 0.12.0-pre.1) on Mesa lavapipe (docs/findings.md, "burn 0.23.0-pre.1 on the GPU route"): what the
release changes against 0.22.1's GPU profiles. Expectations are worked by hand from the cited sources and from what
the real binaries printed, not taken from the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import oracle as o
from burn_panics import raises
from oracle import QuantScheme, QuantValue, ScaleDtype
from oracle.layout import run_steps
from oracle.quantize import held_scheme
from oracle.routes import reshaped_words
from oracle.profiles import get_profile

WGPU, VULKAN = "burn-0.23.0-pre.1/wgpu", "burn-0.23.0-pre.1/vulkan"
OLD_WGPU, OLD_VULKAN = "burn-0.22.1/wgpu", "burn-0.22.1/vulkan"
Q8S = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S)
PACKED = Q8S.with_store(o.QuantStore.packed_u32(0))


def test_sub_byte_packed_codes_upload_as_the_devices_words():
    # Q4S PackedU32(0) [1, 8]: burn-std 0.23 packs the 8 codes into one padded line, one u32 word, which is the
    # device's whole value buffer; x = code * 0.5. burn-std 0.22.1 wrote 8 bytes for 4 word bytes: wgpu's range assert.
    # The nibbles 8, D, F, 0, 1, 2, 5, 7 from the lowest bits: the word 0x75210FD8, then the f32 scale.
    codes = np.array([[-8, -3, -1, 0, 1, 2, 5, 7]], np.int8)
    qt = o.QTensor(codes, np.array([0.5], np.float32), None, PACKED.with_value(QuantValue.Q4S))
    for profile in (WGPU, VULKAN):
        assert o.to_bytes(qt, profile=profile).tolist() == [0xD8, 0x0F, 0x21, 0x75, 0x00, 0x00, 0x00, 0x3F]
        assert o.dequantize(qt, profile=profile).tolist() == [[-4.0, -1.5, -0.5, 0.0, 0.5, 1.0, 2.5, 3.5]]
    raises("wgpu.write_range", "provided range was outside slice", o.dequantize, qt, profile=OLD_WGPU)


def test_packed_native_e2m1_uploads_past_its_bytes():
    # E2M1 PackedNative(0) [64], block 32 UE8M0: burn-std 0.23 packs two codes a byte (32 bytes) and two scale bytes
    # follow, 34 in all; burn-cubecl's value buffer is one byte per element (size_of::<e2m1x2>() on the unpacked shape,
    # qtensor.rs:131), so it splits at 64 and `&data[64..]` panics (measured: dequantize/format-mxfp4/store-packednative,
    # 'range start index 256 out of range for slice of length 136'). 0.22.1's one byte per value fitted, and the
    # dequantize launch refused the store.
    scheme = Q8S.with_value(QuantValue.E2M1).with_store(o.QuantStore("PackedNative", 0)).per_block([32], ScaleDtype.UE8M0)
    qt = o.QTensor(np.zeros(64, np.int8), np.ones(2, np.float32), None, scheme)
    for profile in (WGPU, VULKAN):
        raises("cubecl.upload_split", "range start index 64 out of range for slice of length 34", o.dequantize, qt,
               profile=profile)
    for profile in (OLD_WGPU, OLD_VULKAN):
        raises("cubecl.native_value", "E2M1 is not supported for native quantization", o.dequantize, qt,
               profile=profile)


def test_an_f16_dequantize_returns_its_failed_launch_from_float_into_data():
    # WGSL has no scalar fp8, so a UE4M3 scale's dequantize kernel does not compile. An f32 result is read by
    # Tensor::into_data, which panics with the error; the harness reads an f16 one with B::float_into_data, which
    # returns it (measured on dequantize/format-mxfp4/f16-output: 'float_into_data: An error happened during
    # execution\nCaused by:\n  Several failures at once...').
    qt = o.QTensor(np.ones((1, 4), np.int8), np.ones(1, np.float32), None, PACKED.per_block([4], ScaleDtype.UE4M3))
    with pytest.raises(o.BurnPanic) as f32:
        o.dequantize(qt, "f32", profile=WGPU)
    assert f32.value.code == "wgsl.fp8_scalar_unwritten"
    assert f32.value.message.startswith("Error while reading data: use `try_into_data` instead")
    with pytest.raises(o.BurnPanic) as f16:
        o.dequantize(qt, "f16", profile=WGPU)
    assert f16.value.code == "harness.read_failed"
    assert f16.value.message.startswith("float_into_data: An error happened during execution\nCaused by:\n  Several "
                                        "failures at once\nCaused by:\n  The bytes were never written")


def test_the_reshape_count_is_checked_before_burn_cubecl_sees_the_target():
    # burn-tensor 0.23's `ReshapeArgs::into_shape` checks the count (base.rs:3456-3460) before `q_reshape` runs its
    # block checks: [4, 8] -> [4, 8, 0] is 0 elements for 32, not a block split (measured on both builds:
    # qlayout/q8s/block/reshape-zero-past-rank).
    qt = o.QTensor(np.ones((4, 8), np.int8), np.ones(8, np.float32), None, Q8S.per_block([4], ScaleDtype.F32))
    for profile in (WGPU, VULKAN):
        raises("tensor.reshape_count", "=== Tensor Operation Error ===\n  Operation: 'Reshape'\n  Reason:\n    1. The "
               "given shape doesn't have the same number of elements as the current shape. Current shape: [4, 8], "
               "target shape: [4, 8, 0]. \n", run_steps, qt, [{"op": "reshape", "shape": [4, 8, 0]}],
               get_profile(profile))


def test_q_into_data_checks_the_layout_it_hands_back():
    # burn-cubecl's q_into_data ends in TensorData::from_bytes (qtensor.rs:340), which burn-std 0.23 validates: a block
    # [2, 3] kept on a rank-1 tensor by swap_dims(0, 0) (the identity, burn-tensor returns the tensor) is longer than
    # the rank (measured on SPIR-V: qlayout/fuzz/swap-dims-same-dim-keeps-block); 0.22.1 reads it back.
    scheme = Q8S.per_block([2, 3], ScaleDtype.F32)
    qt = o.QTensor(np.array([1, 2], np.int8), np.array([0.5], np.float32), None, scheme)
    steps = [{"op": "swap_dims", "dims": [0, 0]}]
    raises("data.invalid_layout", f"Quantized layout for shape [2] and dtype QFloat({scheme.debug()}) is invalid",
           run_steps, qt, steps, get_profile(VULKAN))
    x, held = run_steps(qt, steps, get_profile(OLD_VULKAN))
    assert x.tolist() == [0.5, 1.0] and held.codes.tolist() == [1, 2]


def test_a_store_packed_along_an_outer_axis_cuts_a_long_block_to_the_rank_before_the_read_back():
    # new_quantized builds an outer-packed tensor as its stored twin and swaps it back (burn-cubecl-0.23.0-pre.1
    # src/ops/qtensor.rs:84-101); each swap rewrites the block at the rank, keeping its leading entries (cubecl-common
    # scheme.rs:141-147), so an [8, 5, 5, 8] block on [16, 5] is [8, 5] when q_into_data validates the layout: the
    # quantize is not refused (measured on 0.23 WGSL, fuzz seed 20261216 quantize_dynamic case 11225: codes came back,
    # as for quantize case 5160's [7, 6, 5, 8] on [4, 5]). A Native store keeps the block as given: refused.
    packed = Q8S.with_store(o.QuantStore.packed_u32(1)).per_block([8, 5, 5, 8], ScaleDtype.F32)
    assert held_scheme(packed, 2, get_profile(WGPU)).block_size().dims == (8, 5)
    assert held_scheme(packed, 4, get_profile(WGPU)) == packed
    assert held_scheme(packed, 2, get_profile(OLD_WGPU)).block_size().dims == (8, 5)
    x = np.arange(80, dtype=np.float32).reshape(16, 5)
    for profile in (WGPU, VULKAN):
        with pytest.raises(o.UndefinedBehaviour):  # the kernel's scale writes: no read-back refusal comes first
            o.run("quantize_dynamic", {"scheme": packed.to_json()}, {"x": x}, profile=profile)
    native = Q8S.per_block([2, 4], ScaleDtype.F32)
    raises("data.invalid_layout", f"Quantized layout for shape [8] and dtype QFloat({native.debug()}) is invalid",
           o.run, "quantize_dynamic", {"scheme": native.to_json()}, {"x": np.arange(8, dtype=np.float32)},
           profile=VULKAN)


def test_a_store_packed_along_an_outer_axis_reads_back_with_its_words_filled_by_values():
    # cubek-quant's packed kernel fills word n of the word grid from the row-major values n * nq .. (quantize.rs:
    # 223-283); burn-std 0.23 reads each word as the packed line of its own grid position. Q4S PackedU32(1) on [8, 8]:
    # the grid is [1, 8], word n = row n, read back as column n: the transpose. Q8S (four a word): the grid is [2, 8]
    # and word n sits at memory word 2 * (n % 8) + n // 8, so x[3, 5] (flat 29, word 7, slot 1) reads back at [1, 7]
    # (measured on WGSL, the same on SPIR-V).
    x = np.zeros((8, 8), np.float32)
    x[0, 1], x[0, 2], x[3, 5] = 0.5, 1.0, -0.5
    wanted = {QuantValue.Q4S: [[1, 0], [2, 0], [5, 3]], QuantValue.Q8S: [[1, 0], [1, 7], [2, 0]]}
    for value, at in wanted.items():
        scheme = Q8S.with_value(value).with_store(o.QuantStore.packed_u32(1))
        for profile in (WGPU, VULKAN):
            codes = o.run("quantize", {"scheme": scheme.to_json(), "api": "tensor"},
                          {"x": x, "scales": np.array([0.5], np.float32)}, profile=profile)["codes"]
            assert np.argwhere(codes != 0).tolist() == at
    # the device holds the codes where those words put them: its own dequantize reads them there too (measured on
    # 0.22.1 SPIR-V and 0.23 WGSL, float_ops/fuzz/device-quantized-outer-packed-words)
    scheme = Q8S.with_value(QuantValue.Q4S).with_store(o.QuantStore.packed_u32(1))
    qt = o.quantize(x, scheme, np.array([0.5], np.float32), profile=WGPU)
    assert np.argwhere(qt.codes != 0).tolist() == wanted[QuantValue.Q4S]


def test_a_tensor_quantized_on_the_device_along_an_outer_axis_dequantizes_where_the_words_put_it():
    # Hand-derived from the kernel's word fill: [8, 8] packed along dim 0, four a word, has the word grid [2, 8]; word
    # n holds the row-major values 4n .. 4n + 3, its value t at row 4 * (n // 8) + t of column n % 8. So element
    # [a, b] of the device's tensor is x's flat 32 * (a // 4) + 4 * b + a % 4 (measured on 0.22.1 SPIR-V, seed
    # 20261215 float_ops case 2488, and on 0.23 WGSL); a CPU backend holds the logical tensor.
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    params = {"scheme": Q8S.with_store(o.QuantStore.packed_u32(1)).to_json(),
              "steps": [{"op": "add_scalar", "value": 0.0}]}
    logical = o.run("float_ops", params, {"x": x}, profile="burn-0.22.1/flex")["x"]
    a, b = np.indices((8, 8))
    for profile in (WGPU, VULKAN, OLD_WGPU, OLD_VULKAN):
        out = o.run("float_ops", params, {"x": x}, profile=profile)["x"]
        assert out.view(np.uint32).tolist() == logical.ravel()[32 * (a // 4) + 4 * b + a % 4].view(np.uint32).tolist()


def test_an_empty_two_level_tensor_keeps_a_fresh_global():
    # No kernel runs for an empty tensor, and the kernel is what writes the global (cubek-quant quantize.rs:242-243):
    # an empty [0, 1, 1, 1, 1] two-level UE8M0 tensor given global 1.0 read back 0.0 on 0.22.1 and 4.0 on 0.23 (SPIR-V,
    # found by fuzzing, seed 20261202 case 2085): undefined, with no block to hold a scale
    scheme = Q8S.per_block([2], ScaleDtype.UE8M0).per_tensor(ScaleDtype.F32)
    for profile in (VULKAN, OLD_VULKAN):
        with pytest.raises(o.UndefinedBehaviour):
            o.quantize(np.zeros((0, 1, 1, 1, 1), np.float32), scheme, np.zeros(0, np.float32),
                       np.ones(1, np.float32), profile=profile)


def test_block_scales_of_a_tensor_packed_along_an_outer_axis_are_walked_over_the_presented_word_grid():
    """[8, 8] Q8S PackedU32(1), blocks [4] (i.e. [1, 4]): the output is the stored [8, 2]-word tensor presented as
    [2, 8] words, and the scale layout walks [2, 8 * 4] (scales.rs:218-252). Word n (values 4n..4n+3, block n) reads
    scale (4n // 32) * 2 + (4n % 32) // 4: blocks 8..15 read scales 2..9. Its write goes to (4n // 32) * 1 +
    ((4n % 32) // 4) * 8 of the stored [2, 8] grid presented with strides [1, 8]: slots 0, 8, 1, 9 for words 0, 1, 8,
    9, the other 12 words past the 16 scales (measured: 4 of 16 written, the rest whatever memory held)."""
    x = np.arange(64, dtype=np.float32).reshape(8, 8) - 30
    outer = Q8S.with_store(o.QuantStore.packed_u32(1))
    # 0.22.1 too: the same kernels and scale layout (cubek-quant 0.3.1); measured on its SPIR-V build, its dequantize
    # of this tensor is no block's scales (float_ops/fuzz/device-quantized-outer-packed-words is the per-tensor twin)
    for profile in (WGPU, VULKAN, OLD_WGPU, OLD_VULKAN):
        with pytest.raises(o.UndefinedBehaviour, match="presented word grid"):
            o.quantize_dynamic(x, outer.per_block([4], ScaleDtype.F32), profile=profile)
        o.quantize_dynamic(x, outer.per_tensor(ScaleDtype.F32), profile=profile)  # one scale: no walk
        o.quantize_dynamic(x, PACKED.per_block([4], ScaleDtype.F32), profile=profile)  # packed along the last dim


def test_q_reshape_moves_words_so_an_outer_packed_axis_can_transpose():
    # Q8S PackedU32(1) on a [4, 4] tensor: one word per column, its 4 lanes down axis 0 (word j = column j).
    # q_reshape to [4, 4, 1] reshapes the 4 words row-major into a [4, 1, 1] word grid whose lanes run down the new
    # packed axis 1: new[i, l, 0] = lane l of word i = old[l, i], the transpose (a burn bug, docs/findings.md).
    outer = Q8S.with_store(o.QuantStore.packed_u32(1))
    codes = np.arange(16, dtype=np.int8).reshape(4, 4)
    held = o.QTensor(codes, np.array([0.5], np.float32), None, outer)
    assert reshaped_words(held, [4, 4, 1])["codes"].tolist() == codes.T[..., None].tolist()
    # [8, 3] -> [2, 4, 3]: words (w, c) hold rows 4w..4w+3 of column c and land at (w, 0, c), lanes down axis 1:
    # new[w, l, c] = old[4w + l, c], the row-major reshape itself.
    tall = o.QTensor(np.arange(24, dtype=np.int8).reshape(8, 3), np.array([0.5], np.float32), None, outer)
    assert reshaped_words(tall, [2, 4, 3])["codes"].tolist() == tall.codes.reshape(2, 4, 3).tolist()
    # a packed dim of 3 is not whole words: the padded words' count is not the new shape's
    padded = o.QTensor(np.zeros((3, 4), np.int8), np.array([0.5], np.float32), None, outer)
    assert "padded words" in reshaped_words(padded, [3, 4, 1])["undefined"]
    assert reshaped_words(o.QTensor(codes, np.array([0.5], np.float32), None, PACKED), [4, 4, 1]) == {}
