"""Small synthetic suites the runner tests write themselves (through conformance.vectors.write_suite).

The numbers are arbitrary: the runner never interprets them, it only moves and compares them. Two profiles
disagree on some vectors so that 'answering with the other profile' is a detectable, diagnosable bug.
"""

import ml_dtypes
import numpy as np

from conformance.runner import Runner
from conformance.vectors import load_suite, write_suite
from oracle import Stages

A, B = "test/a", "test/b"
Q8S_BLOCK = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None,
             "block": {"size": [4], "dtype": "F32"}}
Q4S_PACKED = {"value": "Q4S", "store": {"PackedU32": 0}, "mode": "Symmetric", "tensor": None, "block": None}


def f32(*v):
    return np.array(v, dtype=np.float32)


def vectors():
    x = f32(0.5, 1.5, 2.5, -2.5, 3.0, -1.0, 0.25, 7.0).reshape(2, 4)
    scales = f32(1.0, 1.0)
    codes_even = np.array([[0, 2, 2, -2], [3, -1, 0, 7]], np.int8)
    codes_away = np.array([[1, 2, 3, -3], [3, -1, 0, 7]], np.int8)
    same = lambda e: {A: e, B: e}
    return [
        {"alias": "round_up/f16/basic", "op": "round_up", "params": {"dtype": "F16"},
         "inputs": {"scales": f32(0.1, 1.0, 3.3)}, "tags": ["op:round_up", "scale:F16"],
         "expected": same({"outputs": {"rounded": f32(0.10003662, 1.0, 3.3007812)}})},
        {"alias": "quantize/q8s/ties", "op": "quantize", "params": {"scheme": Q8S_BLOCK, "api": "tensor"},
         "inputs": {"x": x, "scales": scales}, "tags": ["op:quantize", "value:Q8S", "class:tie-odd"],
         "reason": "exact .5 ties: away from zero under test/a, to even under test/b",
         "expected": {A: {"outputs": {"codes": codes_away, "scales": scales},
                          "stages": Stages(scaled=x / 1.0)},
                      B: {"outputs": {"codes": codes_even, "scales": scales},
                          "stages": Stages(scaled=x / 1.0)}}},
        {"alias": "quantize/q8s/plain", "op": "quantize", "params": {"scheme": Q8S_BLOCK, "api": "backend"},
         "inputs": {"x": f32(1, 2, 3, 4), "scales": f32(1.0)}, "tags": ["op:quantize", "value:Q8S"],
         "expected": same({"outputs": {"codes": np.array([1, 2, 3, 4], np.int8), "scales": f32(1.0)}})},
        {"alias": "quantize/q8s/global-error", "op": "quantize",
         "params": {"scheme": Q8S_BLOCK, "api": "backend"},
         "inputs": {"x": f32(1, 2, 3, 4), "scales": f32(1.0), "global": f32(2.0)},
         "tags": ["op:quantize", "value:Q8S", "class:error"],
         "expected": {A: {"error": {"code": "quantize.global_without_two_level",
                                    "message": "a per-tensor scale should come with a two-level scheme"}},
                      B: {"outputs": {"codes": np.array([0, 1, 1, 2], np.int8), "scales": f32(1.0)}}}},
        {"alias": "scheme_info/q8s", "op": "scheme_info", "params": {"scheme": Q8S_BLOCK, "shape": [2, 4]},
         "inputs": {}, "tags": ["op:scheme_info"],
         "expected": same({"values": {"num_levels": 255, "block_size": [4], "quantizable": True}})},
        {"alias": "dequantize/q4s/packed-bf16", "op": "dequantize", "params": {"scheme": Q4S_PACKED, "dtype": "bf16"},
         "inputs": {"codes": np.array([1, -2], np.int8), "scales": f32(0.5)}, "tags": ["op:dequantize", "value:Q4S"],
         "expected": same({"outputs": {"x": np.array([0.5, -1.0], ml_dtypes.bfloat16)}})},
    ]


def write(folder, vecs=None):
    write_suite(folder, vecs if vecs is not None else vectors(), suite="test", profiles=[A, B])
    return folder


def run(suite_dir, spec=None, backend=None, **kw):
    """Every verdict of the suite at ``suite_dir`` through a Runner, by alias (the runner closed after)."""
    r = Runner(load_suite(suite_dir), spec or "given", backend=backend, **kw).start()
    try:
        return {v.alias: v for v in r.run_all()}
    finally:
        r.close()
