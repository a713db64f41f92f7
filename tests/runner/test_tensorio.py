import ml_dtypes
import numpy as np
import pytest
import safetensors

from conformance import tensorio


def test_roundtrip_keeps_every_bit_of_every_dtype():
    arrays = {
        "f32": np.array([0.0, -0.0, np.inf, 1e-45], np.float32),
        "nan": np.array([0x7FC00001, 0xFFC00000], np.uint32).view(np.float32),  # NaN payload and sign
        "f16": np.array([[65504, -6e-8]], np.float16),
        "bf16": np.array([1.5, -0.0, 3e38], ml_dtypes.bfloat16),
        "i8": np.array([-128, 127], np.int8), "u8": np.arange(3, dtype=np.uint8),
        "u32": np.array([0xDEADBEEF], np.uint32), "i64": np.array([-(2**63)], np.int64),
        "empty": np.zeros((0, 3), np.float32),
    }
    got, meta = tensorio.decode(tensorio.encode(arrays, {"k": "v"}))
    assert meta == {"k": "v"}
    assert set(got) == set(arrays)
    for name, a in arrays.items():
        assert got[name].dtype == a.dtype and got[name].shape == a.shape
        assert got[name].tobytes() == a.tobytes(), name


def test_bf16_blob_is_standard_safetensors():
    blob = tensorio.encode({"x": np.array([1.0, 2.0], ml_dtypes.bfloat16)})
    ((_, entry),) = safetensors.deserialize(blob)
    assert entry["dtype"] == "BF16" and bytes(entry["data"]) == bytes([0x80, 0x3F, 0x00, 0x40])


def test_non_contiguous_and_big_endian_inputs_are_written_little_endian():
    a = np.arange(6, dtype=">f4").reshape(2, 3).T
    got, _ = tensorio.decode(tensorio.encode({"a": a}))
    assert np.array_equal(got["a"], a.astype(np.float32))


@pytest.mark.parametrize("blob", [b"", b"\x05\x00", b"\xff" * 8 + b"{}", b"\x02\x00\x00\x00\x00\x00\x00\x00[]"])
def test_garbage_is_a_clear_error(blob):
    with pytest.raises(tensorio.TensorIOError):
        tensorio.decode(blob)


def test_truncated_data_is_refused():
    blob = tensorio.encode({"x": np.ones(4, np.float32)})
    with pytest.raises(tensorio.TensorIOError):
        tensorio.decode(blob[:-1])


def test_unsupported_dtypes_are_refused_both_ways():
    with pytest.raises(tensorio.TensorIOError, match="float64"):
        tensorio.encode({"x": np.ones(2)})
    a = np.ones(2, np.float64)
    blob = safetensors.serialize({"x": safetensors.TensorSpec(dtype="float64", shape=[2], data_ptr=a.ctypes.data,
                                                              data_len=a.nbytes)})
    with pytest.raises(tensorio.TensorIOError, match="F64"):
        tensorio.decode(blob)
