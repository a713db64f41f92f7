#!/usr/bin/env python3
"""A complete qconform backend over the subprocess transport, in plain Python: the template for authors.

Run it under the runner:

    qconform run --backend "subprocess:python examples/subprocess_backend.py"
    qconform run --backend "subprocess:python examples/subprocess_backend.py --profile burn-0.22.0-pre.3/flex"

The wire format (docs/protocol.md) is all there is to it, and this file uses nothing qconform-specific for it:
  * a frame is a 4-byte little-endian length, then that many bytes;
  * those bytes are a safetensors blob: the tensors, plus a JSON object in __metadata__["qconform"];
  * the runner sends {"type": "hello"} first, then {"type": "request", "id", "op", "params"} + input tensors,
    and finally {"type": "bye"}; we answer each with exactly one frame;
  * stdout carries frames only: log to stderr.
A backend in another language does the same with its safetensors library. Here the answers come from the
reference oracle (``oracle.run``); replace ``compute`` with calls into your implementation.
"""

import argparse
import json
import struct
import sys

import ml_dtypes
import numpy as np
import safetensors

# safetensors dtype name -> numpy dtype (ml_dtypes provides bfloat16)
DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16, "I8": np.int8, "U8": np.uint8,
          "U32": np.uint32, "I64": np.int64}
SPEC = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "I8": "int8", "U8": "uint8", "U32": "uint32",
        "I64": "int64"}
NAMES = {np.dtype(t): n for n, t in DTYPES.items()}


def decode(blob: bytes) -> tuple[dict, dict]:
    """(message JSON, {name: array}) of one safetensors message."""
    (n,) = struct.unpack_from("<Q", blob)
    meta = json.loads(blob[8:8 + n])["__metadata__"]["qconform"]
    tensors = {name: np.frombuffer(e["data"], DTYPES[e["dtype"]]).reshape(e["shape"])
               for name, e in safetensors.deserialize(blob)}
    return json.loads(meta), tensors


def encode(message: dict, tensors: dict) -> bytes:
    arrays = {k: np.ascontiguousarray(v) for k, v in tensors.items()}  # keep alive while serializing
    specs = {k: safetensors.TensorSpec(dtype=SPEC[NAMES[a.dtype]], shape=list(a.shape),
                                       data_ptr=a.ctypes.data if a.size else 0, data_len=a.nbytes)
             for k, a in arrays.items()}
    return safetensors.serialize(specs, metadata={"qconform": json.dumps(message)})


def read_frame(stream) -> bytes | None:
    head = stream.read(4)
    if len(head) < 4:
        return None  # the runner closed our stdin
    (n,) = struct.unpack("<I", head)
    return stream.read(n)


def write_frame(stream, blob: bytes) -> None:
    stream.write(struct.pack("<I", len(blob)) + blob)
    stream.flush()


def hello(profile: str) -> dict:
    return {"type": "hello", "protocol": 1, "name": "example-python-backend", "version": "1.0",
            "profile": profile,
            # Declare what you support; vectors outside it are reported "not applicable". Omitted key = all.
            "capabilities": {}}


def compute(op: str, params: dict, inputs: dict, profile: str):
    """Your implementation goes here: return (tensors, json_values) or raise to report an error."""
    import oracle
    out = oracle.run(op, params, inputs, profile=profile)
    tensors = {k: v for k, v in out.items() if isinstance(v, np.ndarray)}
    return tensors, {k: v for k, v in out.items() if k not in tensors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # qconform's default profile (oracle.DEFAULT_PROFILE): what `explain` shows and `run` judges a claimless backend by
    ap.add_argument("--profile", default="burn-0.22.1/flex", help="oracle profile to compute with and claim")
    profile = ap.parse_args().profile
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while (blob := read_frame(stdin)) is not None:
        msg, inputs = decode(blob)
        if msg["type"] == "hello":
            write_frame(stdout, encode(hello(profile), {}))
        elif msg["type"] == "bye":
            break
        elif msg["type"] == "request":
            try:
                tensors, values = compute(msg["op"], msg["params"], inputs, profile)
                reply = {"type": "result", "id": msg["id"], "values": values}
            except Exception as e:  # noqa: BLE001 - every failure becomes an error reply, never a dead backend
                # burn's errors carry a catalogue code; a backend that only has panic text may omit "code"
                reply = {"type": "error", "id": msg["id"],
                         "error": {"code": getattr(e, "code", None), "message": getattr(e, "message", str(e))}}
                tensors = {}
            write_frame(stdout, encode(reply, tensors))


if __name__ == "__main__":
    main()
