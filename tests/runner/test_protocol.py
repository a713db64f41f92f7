from types import SimpleNamespace

import numpy as np
import pytest

from conformance import protocol
from conformance.protocol import Capabilities, ProtocolError, parse_hello, parse_reply


def hello(**kw):
    return {"type": "hello", "protocol": 1, "name": "b", "version": "1", "profile": "p"} | kw


def test_valid_hello():
    h = parse_hello(hello(capabilities={"values": ["Q8S"]}))
    assert h.name == "b" and h.capabilities.values == {"Q8S"} and h.capabilities.ops is None


@pytest.mark.parametrize("bad, fragment", [
    (hello(protocol=3), "protocol 3"),
    (hello(name=None), "'name'"),
    (hello(capabilities={"values": "Q8S"}), "list of strings"),
    (hello(capabilities={"colours": []}), "unknown capability"),
    ({"type": "error", "error": {"code": "protocol.version", "message": "v2 only"}}, "v2 only"),
])
def test_bad_hello(bad, fragment):
    with pytest.raises(ProtocolError, match=fragment):
        parse_hello(bad)


def test_replies_are_validated():
    x = {"x": np.zeros(1, np.float32)}
    assert parse_reply({"type": "result", "id": "1"}, x, "1").outputs == x
    err = parse_reply({"type": "error", "id": "1", "error": {"message": "m"}}, {}, "1")
    assert err.code is None and err.message == "m"
    for obj, tensors, fragment in [({"type": "result", "id": "2"}, {}, "does not echo"),
                                   ({"type": "error", "id": "1", "error": {"message": "m"}}, x, "carries tensors"),
                                   ({"type": "error", "id": "1", "error": "boom"}, {}, "'error' must be"),
                                   ({"type": "resul", "id": "1"}, {}, "expected a 'result'"),
                                   ({"type": "result", "id": "1", "values": [1]}, {}, "'values'")]:
        with pytest.raises(ProtocolError, match=fragment):
            parse_reply(obj, tensors, "1")


def test_garbage_message_is_summarized():
    with pytest.raises(ProtocolError) as e:
        protocol.decode_message(b"\x01\x02garbage" * 20)
    assert "180 bytes: b'\\x01\\x02garbage" in str(e.value) and "more" in str(e.value)
    no_key = protocol.tensorio.encode({}, {"other": "{}"})
    with pytest.raises(ProtocolError, match="no 'qconform' key"):
        protocol.decode_message(no_key)
    with pytest.raises(ProtocolError, match="not JSON"):
        protocol.decode_message(protocol.tensorio.encode({}, {"qconform": "{nope"}))


def test_message_roundtrip():
    blob = protocol.encode_message({"type": "request", "id": "1", "op": "quantize", "params": {"a": 1}},
                                   {"x": np.arange(3, dtype=np.float32)})
    meta, tensors = protocol.decode_message(blob)
    assert meta["params"] == {"a": 1} and tensors["x"].tolist() == [0, 1, 2]


def test_oversized_frame_is_refused():
    with pytest.raises(ProtocolError, match="1 GiB"):
        protocol.frame_length(b"\xff\xff\xff\xff")


def test_python_outputs_are_split_and_validated():
    r = protocol.split_outputs({"x": np.zeros(2, np.float32), "n": np.int64(3), "t": (1, 2)})
    assert set(r.outputs) == {"x"} and r.values == {"n": 3, "t": [1, 2]}
    with pytest.raises(ProtocolError, match="float64"):
        protocol.split_outputs({"x": np.zeros(2)})
    with pytest.raises(ProtocolError, match="neither an array nor a JSON value"):
        protocol.split_outputs({"x": object()})


def vector(op="quantize", value="Q4S", store=None, block=None, x=np.float32, tensor=None):
    scheme = {"value": value, "store": store or "Native", "mode": "Symmetric", "tensor": tensor, "block": block}
    return SimpleNamespace(op=op, params={"scheme": scheme}, inputs={"x": np.zeros(2, x)})


def test_capabilities_decide_applicability():
    caps = Capabilities.from_json({"ops": ["quantize"], "values": ["Q8S", "Q4S"], "stores": ["Native"],
                                   "scale_dtypes": ["F32"], "input_dtypes": ["f32"]})
    assert caps.not_applicable(vector()) is None
    assert "ops dequantize" in caps.not_applicable(vector(op="dequantize"))
    assert "values E2M1" in caps.not_applicable(vector(value="E2M1"))
    assert "stores PackedU32" in caps.not_applicable(vector(store={"PackedU32": 0}))
    assert "scale_dtypes UE8M0" in caps.not_applicable(vector(block={"size": [32], "dtype": "UE8M0"}))
    assert "input_dtypes bf16" in caps.not_applicable(vector(x=np.float16).__class__(
        op="quantize", params=vector().params, inputs={"x": np.zeros(1, protocol.tensorio.DTYPES["BF16"])}))
    assert Capabilities().not_applicable(vector(value="E2M1")) is None  # nothing declared: everything


def test_levels_capability_tells_tensor_block_and_two_level_apart():
    caps = Capabilities.from_json({"levels": ["tensor", "block"]})
    block = {"size": [32], "dtype": "F32"}
    assert caps.not_applicable(vector()) is None
    assert caps.not_applicable(vector(block=block)) is None
    assert caps.not_applicable(vector(block=block, tensor="F32")) == "backend does not declare levels two-level"
    only_tensor = Capabilities.from_json({"levels": ["tensor"]})
    assert only_tensor.not_applicable(vector(block=block)) == "backend does not declare levels block"
    # per_op narrows levels like any other key; a backend without the key claims every level (older backends)
    narrowed = Capabilities.from_json({"per_op": {"quantize": {"levels": ["block"]}}})
    assert "levels tensor for quantize" in narrowed.not_applicable(vector())
    assert Capabilities().not_applicable(vector(block=block, tensor="F32")) is None
    assert Capabilities.from_json(caps.to_json()) == caps
    with pytest.raises(ProtocolError, match="unknown levels"):
        Capabilities.from_json({"levels": ["tensor", "per-block"]})
