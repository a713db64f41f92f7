"""A test backend that answers from a suite's own expectations, with injectable faults.

It knows no quantization: it recomputes each request's vector id and replies with what the suite expects
under ``--answer`` (default: the claimed profile). That makes it a perfect backend (runner tests need no
oracle), a wrong one (answer with another profile while claiming the first), or a broken one (``--fault
KIND:ALIAS``): crash, hang, garbage, badframe, shape, dtype, wrongid, noise, raise.

    python lookup_backend.py --suite DIR --claim PROFILE [--answer PROFILE] [--fault crash:ALIAS] [--caps JSON]
"""

import argparse
import json
import os
import sys
import time

import numpy as np

from conformance import protocol
from conformance.protocol import BackendError, Error, Result
from conformance.vectors import load_suite, vector_id


class LookupBackend:
    def __init__(self, suite, claim, answer=None, faults=(), caps=None):
        self.suite = load_suite(suite)
        self.claim, self.answer = claim, answer or claim
        self.faults = dict(f.split(":", 1)[::-1] for f in faults)  # alias -> kind
        self.caps = caps or {}

    def hello(self):
        return {"name": "lookup", "version": "1", "profile": self.claim, "capabilities": self.caps}

    def fault_for(self, op, params, inputs):
        v = self.suite.get(vector_id(op, params, inputs))
        return v, self.faults.get(v.alias)

    def run(self, op, params, inputs):
        v, fault = self.fault_for(op, params, inputs)
        if fault == "raise":
            raise RuntimeError("boom")
        outcome = answer(v, self.answer, fault)
        if isinstance(outcome, Error):
            raise BackendError(outcome.code, outcome.message)
        return outcome.outputs | outcome.values


def from_env():
    """Factory for `python:lookup_backend:from_env` (settings from QC_TEST_* environment variables)."""
    faults = [f for f in os.environ.get("QC_TEST_FAULTS", "").split(",") if f]
    return LookupBackend(os.environ["QC_TEST_SUITE"], os.environ.get("QC_TEST_CLAIM", "test/a"),
                         os.environ.get("QC_TEST_ANSWER"), faults)


def answer(v, profile, fault):
    e = v.expected[profile]
    if e.error is not None:
        return Error(e.error["code"], e.error["message"])
    outputs = dict(e.outputs)
    if fault == "shape":
        outputs = {k: a.reshape(-1)[:-1] if a.size > 1 else a.reshape(1, -1) for k, a in outputs.items()}
    if fault == "dtype":
        outputs = {k: a.astype(np.float16) if a.dtype != np.float16 else a.astype(np.float32)
                   for k, a in outputs.items()}
    return Result(outputs, dict(e.values))


def serve(backend):
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    def send(meta, tensors=None):
        stdout.write(protocol.frame(protocol.encode_message(meta, tensors)))
        stdout.flush()

    while True:
        head = stdin.read(4)
        if len(head) < 4:
            return
        meta, tensors = protocol.decode_message(stdin.read(protocol.frame_length(head)))
        if meta["type"] == "hello":
            send({"type": "hello", "protocol": 1, **backend.hello()})
            continue
        if meta["type"] == "bye":
            return
        v, fault = backend.fault_for(meta["op"], meta["params"], tensors)
        print(f"request {meta['id']} {v.alias}", file=sys.stderr, flush=True)
        if fault == "crash":
            print("about to crash!", file=sys.stderr, flush=True)
            os._exit(3)
        if fault == "hang":
            time.sleep(3600)
        if fault == "garbage":
            stdout.write(protocol.frame(b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all!"))
            stdout.flush()
            continue
        if fault == "badframe":
            stdout.write(b"hello world\n")
            stdout.flush()
            continue
        if fault == "noise":
            stdout.write(b"debug print\n")
        rid = "nope" if fault == "wrongid" else meta["id"]
        reply, out = protocol.reply_message(rid, answer(v, backend.answer, fault))
        send(reply, out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", required=True)
    ap.add_argument("--claim", required=True)
    ap.add_argument("--answer")
    ap.add_argument("--fault", action="append", default=[])
    ap.add_argument("--caps", type=json.loads, default={})
    a = ap.parse_args()
    serve(LookupBackend(a.suite, a.claim, a.answer, a.fault, a.caps))


if __name__ == "__main__":
    main()
