#!/usr/bin/env python3
"""Smoke test of a burn harness binary over the qconform subprocess protocol.

    python3 adapters/burn/smoke.py PATH/TO/qconform-burn-...-ndarray [more binaries ...]

Needs only numpy and safetensors. Checks the handshake and a few results worked by hand from the
spec (burn-quant-semantics.md §3, §10), plus one error path, then says "bye". Exits non-zero on
the first binary that fails.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys

import numpy as np
from safetensors.numpy import load, save


class Harness:
    def __init__(self, binary: str) -> None:
        self.proc = subprocess.Popen(
            [binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.n = 0

    def send(self, message: dict, tensors: dict[str, np.ndarray] | None = None) -> tuple[dict, dict]:
        table = {name: np.ascontiguousarray(arr) for name, arr in (tensors or {}).items()}
        blob = save(table, metadata={"qconform": json.dumps(message)})
        self.proc.stdin.write(struct.pack("<I", len(blob)) + blob)
        self.proc.stdin.flush()
        header = self.proc.stdout.read(4)
        if len(header) != 4:
            raise RuntimeError(f"no reply (stderr: {self.proc.stderr.read().decode()!r})")
        blob = self.proc.stdout.read(struct.unpack("<I", header)[0])
        reply = load(blob)
        meta = json.loads(blob[8 : 8 + struct.unpack("<Q", blob[:8])[0]])["__metadata__"]
        return json.loads(meta["qconform"]), reply

    def request(self, op: str, params: dict, tensors: dict[str, np.ndarray]) -> tuple[dict, dict]:
        self.n += 1
        msg, out = self.send({"type": "request", "id": f"smoke-{self.n}", "op": op, "params": params}, tensors)
        if msg.get("id") != f"smoke-{self.n}":
            raise AssertionError(f"reply id {msg.get('id')!r} does not echo the request's")
        return msg, out

    def close(self) -> int:
        blob = save({}, metadata={"qconform": json.dumps({"type": "bye"})})
        self.proc.stdin.write(struct.pack("<I", len(blob)) + blob)
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


def scheme(value="Q8S", store="Native", tensor=None, block=None) -> dict:
    return {"value": value, "store": store, "mode": "Symmetric", "tensor": tensor, "block": block}


def f32(*xs: float) -> np.ndarray:
    return np.array(xs, dtype=np.float32)


def check(binary: str) -> None:
    h = Harness(binary)
    try:
        hello, _ = h.send({"type": "hello", "protocol": 1})
        assert hello["type"] == "hello" and hello["protocol"] == 1, hello
        backend = hello["profile"].rsplit("/", 1)[1]
        assert hello["profile"] == f"burn-{hello['version']}/{backend}", hello
        assert {"quantize", "quantize_dynamic", "dequantize"} <= set(hello["capabilities"]["ops"]), hello
        print(f"  hello: {hello['name']} {hello['version']} profile {hello['profile']}")

        # §10: Q8S per-tensor of [-1.8, -1.0, 0.0, 0.5] -> scale 3.6/254 (0x3C6836D4), codes below.
        msg, out = h.request("quantize_dynamic", {"scheme": scheme()}, {"x": f32(-1.8, -1.0, 0.0, 0.5)})
        assert msg["type"] == "result", msg
        assert out["codes"].tolist() == [-127, -71, 0, 35], out["codes"]
        assert out["scales"].view(np.uint32).tolist() == [0x3C6836D4], [hex(v) for v in out["scales"].view(np.uint32)]
        assert "global" not in out
        print("  quantize_dynamic Q8S per-tensor: ok")

        # §10 two-level: per_block([4], UE4M3).per_tensor(F32); block scales [288, 448] stored,
        # global 2.6363892e-05 (0x37DD2807).
        two_level = scheme(tensor="F32", block={"size": [4], "dtype": "UE4M3"})
        x = f32(0.1, -0.4, 0.2, 0.9, -1.5, 0.3, 0.05, -0.02)
        msg, out = h.request("quantize_dynamic", {"scheme": two_level}, {"x": x})
        assert msg["type"] == "result", msg
        assert out["codes"].tolist() == [13, -53, 26, 119, -127, 25, 4, -2], out["codes"]
        assert out["scales"].tolist() == [288.0, 448.0], out["scales"]
        assert out["global"].view(np.uint32).tolist() == [0x37DD2807], out["global"]
        print("  quantize_dynamic two-level UE4M3/F32: ok")

        # Dequantize of the per-tensor example: e * q in f32 (§6, §10: [-1.8, -1.0062993, 0, 0.496063]).
        codes = np.array([-127, -71, 0, 35], dtype=np.int8)
        scale = np.array([0x3C6836D4], dtype=np.uint32).view(np.float32)
        msg, out = h.request("dequantize", {"scheme": scheme(), "dtype": "f32"}, {"codes": codes, "scales": scale})
        assert msg["type"] == "result", msg
        expect = (scale[0] * codes.astype(np.float32)).astype(np.float32)
        assert out["x"].tobytes() == expect.tobytes(), (out["x"], expect)
        print("  dequantize Q8S per-tensor: ok")

        # qlayout: transpose of a per-tensor Q8S tensor moves the codes (scale 0.5 kept); of a per_block([2])
        # tensor with scales [1, 2, 3, 4] on [[1, 2, 3, 4], [5, 6, 7, 8]] (values [[1, 2, 6, 8], [15, 18, 28, 32]]):
        # ndarray permutes the 2x2 scale grid and the block dims, flex requantizes under BlockSize([2, 1]).
        q = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int8)
        msg, out = h.request("qlayout", {"scheme": scheme(), "steps": [{"op": "transpose"}]},
                             {"codes": q, "scales": f32(0.5)})
        assert msg["type"] == "result" and out["codes"].tolist() == [[1, 4], [2, 5], [3, 6]], (msg, out)
        assert out["x"].tolist() == [[0.5, 2.0], [1.0, 2.5], [1.5, 3.0]] and out["scales"].tolist() == [0.5], out
        blocks = scheme(block={"size": [2], "dtype": "F32"})
        q = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.int8)
        msg, out = h.request("qlayout", {"scheme": blocks, "steps": [{"op": "transpose"}]},
                             {"codes": q, "scales": f32(1, 2, 3, 4)})
        assert msg["type"] == "result" and "BlockSize([2, 1])" in msg["values"]["scheme"], msg
        if backend == "ndarray":
            assert out["scales"].tolist() == [1, 3, 2, 4] and out["x"].tolist() == [[1, 15], [2, 18], [6, 28], [8, 32]], out
        print("  qlayout transpose (per-tensor codes moved, per-block grid permuted): ok")

        # §7.4 example 1: the bytes of that tensor.
        msg, out = h.request("to_bytes", {"scheme": scheme()}, {"codes": codes, "scales": scale})
        assert out["bytes"].tobytes().hex() == "81b90023d436683c", out["bytes"].tobytes().hex()
        print("  to_bytes: ok")

        # §8 #24: a per-tensor scale handed to B::quantize with a one-level scheme.
        msg, _ = h.request(
            "quantize",
            {"scheme": scheme(), "api": "backend"},
            {"x": f32(-1.8, -1.0, 0.0, 0.5), "scales": f32(0.014173228), "global": f32(1.0)},
        )
        assert msg["type"] == "error", msg
        assert msg["error"]["message"] == "a per-tensor scale should come with a two-level scheme", msg
        assert msg["error"]["panic"] == msg["error"]["message"] and "code" not in msg["error"], msg
        print("  quantize api=backend, global without two-level -> burn's panic: ok")

        # The process survives the panic and keeps serving.
        msg, out = h.request("round_up", {"dtype": "UE4M3"}, {"scales": f32(0.3, 500.0, 0.0)})
        assert msg["type"] == "result" and out["rounded"].tolist() == [0.3125, 448.0, 0.0], (msg, out)
        print("  round_up after a panic: ok")
    finally:
        code = h.close()
        stderr = h.proc.stderr.read().decode()
    assert code == 0, f"exit code {code} after bye"
    assert stderr == "", f"stderr not clean: {stderr!r}"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for binary in argv:
        print(f"{binary}:")
        try:
            check(binary)
        except Exception as e:  # noqa: BLE001 - report any failure and exit non-zero
            print(f"FAILED: {type(e).__name__}: {e}")
            return 1
    print(f"{len(argv)} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
