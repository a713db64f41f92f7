"""A test backend that answers from a suite's own expectations, with injectable faults.

It knows no quantization: it recomputes each request's vector id and replies with what the suite expects
under ``--answer`` (default: the claimed profile). That makes it a perfect backend (runner tests need no
oracle), a wrong one (answer with another profile while claiming the first), or a broken one (``--fault
KIND:ALIAS``, ALIAS ``*`` for every vector): crash, hang, garbage, badframe, shape, dtype, wrongid, noise, raise,
and the hostile ones of the fault matrix (tests/runner/test_faults.py): hugeshape, deepmeta, deepheader,
hanghello, chatty, shortprint, duplicate, orphan, escapes, escapes-crash, big, setsid, tempfail, surrogate (an
error message holding a lone surrogate and escapes), and those of faults in patterns (issue 25): dribble,
hugelength, exit75, helper. ``--name`` sets the name its hello gives (a JSON string: a hostile one).

Faults in patterns: ``--fault KIND:#N`` strikes the N-th request the backend reads in the whole run, counted
across restarts in the file named by ``QC_TEST_COUNTS`` (so a fault can strike once, mid-batch, and not again
when the runner sends the request's successors to a fresh process); ``--hello ok,die,ok,hang`` answers the
k-th handshake of the run (same file) as the k-th word says, the last word repeating. ``--oracle SPEC``
(``oracle:PROFILE``, ``mutant:NAME``) answers any request from the oracle instead of a suite's expectations, so
the fuzzer can be pointed at it (faults then by ``#N`` or ``*`` only).

    python lookup_backend.py --suite DIR --claim PROFILE [--answer PROFILE] [--fault crash:ALIAS] [--caps JSON]
                             [--name NAME]
    python lookup_backend.py --oracle SPEC [--fault hang:#5] [--hello ok,die,ok]
"""

import argparse
import fcntl
import json
import os
import signal
import struct
import subprocess
import sys
import time

import numpy as np

from conformance import protocol
from conformance.protocol import BackendError, Error, Fault, Result
from conformance.vectors import load_suite, vector_id


class LookupBackend:
    def __init__(self, suite, claim, answer=None, faults=(), caps=None, name="lookup"):
        self.suite, self.name = load_suite(suite), name
        self.claim, self.answer = claim, answer or claim
        self.faults = dict(f.split(":", 1)[::-1] for f in faults)  # alias -> kind
        self.caps = caps or {}

    def hello(self):
        return {"name": self.name, "version": "1", "profile": self.claim, "capabilities": self.caps}

    def fault_for(self, op, params, inputs):
        v = self.suite.get(vector_id(op, params, inputs))
        return v, self.faults.get(v.alias, self.faults.get("*"))

    def reply(self, rid, v, fault, meta, tensors):
        return protocol.reply_message(rid, answer(v, self.answer, fault))

    def run(self, op, params, inputs):
        v, fault = self.fault_for(op, params, inputs)
        if fault == "raise":
            raise RuntimeError("boom")
        if fault == "surrogate":
            raise BackendError("x.y", SURROGATE)
        if fault == "hang":  # in process: a call that never returns (qconform serve cannot stop it)
            time.sleep(3600)
        outcome = answer(v, self.answer, fault)
        if isinstance(outcome, Error):
            raise BackendError(outcome.code, outcome.message)
        return outcome.outputs | outcome.values


class OracleAnswers:
    """Answers every request from an oracle backend (``oracle:PROFILE`` or ``mutant:NAME``), claiming what it
    claims; faults by request ordinal (``#N``) or ``*``."""

    def __init__(self, spec, faults=(), caps=None):
        from conformance.backends import open_backend
        self.oracle = open_backend(spec)
        self.faults = dict(f.split(":", 1)[::-1] for f in faults)
        self.caps = caps or {}

    def hello(self):
        return {"name": "lookup-oracle", "version": "1", "profile": self.oracle.hello.profile,
                "capabilities": self.caps}

    def fault_for(self, op, params, inputs):
        return None, self.faults.get("*")

    def reply(self, rid, v, fault, meta, tensors):
        return protocol.reply_message(rid, self.answer(self.oracle.run(meta["op"], meta["params"], tensors)))

    @staticmethod
    def answer(outcome):
        """The oracle's outcome, or, where burn's answer is undefined (the oracle has none), an error as a backend
        that computed something else might give: the fuzzer skips such a case whatever the reply."""
        if isinstance(outcome, Fault) and outcome.kind == "undefined behaviour":
            return Error("lookup.undefined", f"undefined: {outcome.detail}")
        return outcome


    def run(self, op, params, inputs):
        """In process (``python:lookup_backend:oracle_from_env``): QC_TEST_KILL_AT=N kills the calling process
        (SIGKILL, as an OOM killer would) at the N-th request of the run."""
        if tick("request") == int(os.environ.get("QC_TEST_KILL_AT", "0")):
            os.kill(os.getpid(), signal.SIGKILL)
        outcome = self.answer(self.oracle.run(op, params, inputs))
        if isinstance(outcome, Error):
            raise BackendError(outcome.code, outcome.message)
        if not isinstance(outcome, Result):
            raise RuntimeError(f"the oracle faulted: {outcome}")
        return outcome.outputs | outcome.values


def oracle_from_env():
    """Factory for ``python:lookup_backend:oracle_from_env``: QC_TEST_ORACLE (a spec), QC_TEST_HELLO (a pattern of
    ok and die, per handshake of the run), QC_TEST_KILL_AT."""
    hellos = os.environ.get("QC_TEST_HELLO", "ok").split(",")
    if hellos[min(tick("hello"), len(hellos)) - 1] == "die":
        raise RuntimeError("this start fails (QC_TEST_HELLO)")
    return OracleAnswers(os.environ.get("QC_TEST_ORACLE", "oracle"))


def tick(counter: str) -> int:
    """The run-wide ordinal (1, 2, ...) of this event, kept in the JSON file named by QC_TEST_COUNTS (locked:
    the backends of several fuzz workers count together)."""
    path = os.environ.get("QC_TEST_COUNTS")
    if not path:
        return 0
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        counts = json.loads(open(path).read()) if os.path.exists(path) else {}
        counts[counter] = counts.get(counter, 0) + 1
        with open(path + ".tmp", "w") as f:
            f.write(json.dumps(counts))
        os.replace(path + ".tmp", path)
    started = os.environ.get("QC_TEST_STARTED")
    if started and counter == "hello":
        with open(started, "a") as f:
            f.write(f"{os.getpid()}\n")
    return counts[counter]


# A lone surrogate (valid in JSON as "\ud800", not encodable as UTF-8), a line break and terminal escapes.
SURROGATE = "lone \ud800 surrogate\r\x1b[2Kforged line"


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


def raw_blob(header: bytes) -> bytes:
    """A safetensors blob with a hand-written header (and no data)."""
    return struct.pack("<Q", len(header)) + header


DEEP = 100_000  # nesting depth of the hostile JSON below


def hostile(fault, rid):
    """Reply blobs that are valid framing but hostile content (item 1 of issue 13)."""
    meta = json.dumps({"type": "result", "id": rid, "values": {}})
    if fault == "hugeshape":  # zero bytes, but 2**80 elements
        return raw_blob(json.dumps({"__metadata__": {"qconform": meta}, "codes": {
            "dtype": "I8", "shape": [0, 2 ** 40, 2 ** 40], "data_offsets": [0, 0]}}).encode())
    if fault == "deepmeta":
        return raw_blob(json.dumps({"__metadata__": {"qconform": "[" * DEEP + "]" * DEEP}}).encode())
    if fault == "deepheader":
        return raw_blob(b'{"x":' + b"[" * DEEP + b"]" * DEEP + b"}")
    return None


def serve(backend, hellos=("ok",)):
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

    def send(meta, tensors=None):
        stdout.write(protocol.frame(protocol.encode_message(meta, tensors)))
        stdout.flush()

    marker = os.environ.get("QC_TEST_MARKER")  # hang (or exit: QC_TEST_MARKER_EXIT) in every handshake after the first
    while True:
        head = stdin.read(4)
        if len(head) < 4:
            return
        meta, tensors = protocol.decode_message(stdin.read(protocol.frame_length(head)))
        if meta["type"] == "hello":
            how = hellos[min(tick("hello"), len(hellos)) - 1]
            if how == "die":
                os._exit(1)
            if how == "hang":
                time.sleep(3600)
            if marker and os.path.exists(marker):
                if os.environ.get("QC_TEST_MARKER_EXIT"):
                    os._exit(4)
                time.sleep(3600)
            if marker:
                open(marker, "w").close()
            send({"type": "hello", "protocol": 1, **backend.hello()})
            continue
        if meta["type"] == "bye":
            return
        v, fault = backend.fault_for(meta["op"], meta["params"], tensors)
        fault = backend.faults.get(f"#{tick('request')}", fault)
        print(f"request {meta['id']} {v.alias if v else meta['op']}", file=sys.stderr, flush=True)
        blob = hostile(fault, meta["id"])
        if blob is not None:
            stdout.write(protocol.frame(blob))
            stdout.flush()
            continue
        if fault == "chatty":  # 16 MiB of stderr in one line, then a normal reply
            sys.stderr.buffer.write(b"x" * (16 << 20))
            sys.stderr.flush()
        if fault == "shortprint":  # a short stray print before a normal reply: its length reads as < 1 GiB
            stdout.write(b"k\n")
        if fault == "orphan":  # a grandchild keeps stdout open after the backend exits
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdout=sys.stdout)
            os._exit(0)
        if fault == "setsid":  # a helper in its own session (escapes a process-group kill), then hang
            helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                      start_new_session=True, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(os.environ["QC_TEST_PIDS"], "w") as f:
                f.write(f"{os.getpid()} {helper.pid}\n")
            time.sleep(3600)
        if fault == "helper":  # a helper in its own session, left running; then a normal reply
            helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                                      start_new_session=True, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(os.environ["QC_TEST_PIDS"], "w") as f:
                f.write(f"{os.getpid()} {helper.pid}\n")
        if fault in ("escapes", "escapes-crash"):
            print("\x1b[2J\x1b[Hstderr wipes the screen\x1b]0;pwned\x07", file=sys.stderr, flush=True)
        if fault == "escapes-crash":
            os._exit(5)
        if fault == "surrogate":
            send({"type": "error", "id": meta["id"], "error": {"message": SURROGATE, "code": "x.y"}})
            continue
        if fault == "escapes":
            send({"type": "error", "id": meta["id"], "error": {
                "message": "\x1b[2K\rPASSED\x1b[8m hidden \u202e", "code": "x.y"}})
            continue
        if fault == "big":  # one output of QC_TEST_BIG bytes
            n = int(os.environ.get("QC_TEST_BIG", str(32 << 20)))
            send({"type": "result", "id": meta["id"], "values": {}}, {"big": np.zeros(n, np.uint8)})
            continue
        if fault == "dribble":  # a whole valid reply, one byte every 20 ms: a steady trickle past any deadline
            reply, out = backend.reply(meta["id"], v, fault, meta, tensors)
            for byte in protocol.frame(protocol.encode_message(reply, out)):
                stdout.write(bytes([byte]))
                stdout.flush()
                time.sleep(0.02)
            continue
        if fault == "hugelength":  # a frame length just under the 1 GiB cap, a plausible blob start, then nothing
            stdout.write(struct.pack("<IQ", protocol.MAX_FRAME, 100) + b"{")
            stdout.flush()
            time.sleep(3600)
        if fault == "exit75":  # the device is lost before this request is even read: exit for a fresh process
            os._exit(75)
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
        reply, out = backend.reply(rid, v, fault, meta, tensors)
        send(reply, out)
        if fault == "tempfail":  # a normal reply, then exit 75 (a lost device) a little later, once the runner
            time.sleep(0.2)      # has sent its next request: that request is to be sent again, not blamed
            os._exit(75)
        if fault == "duplicate":  # the same reply again, a little later (after the runner moved on)
            time.sleep(0.2)
            send(reply, out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite")
    ap.add_argument("--claim")
    ap.add_argument("--oracle", metavar="SPEC")
    ap.add_argument("--hello", default="ok", help="comma-separated: ok, die or hang, per handshake of the run")
    ap.add_argument("--answer")
    ap.add_argument("--fault", action="append", default=[])
    ap.add_argument("--caps", type=json.loads, default={})
    ap.add_argument("--name", type=json.loads, default='"lookup"', help="a JSON string (so it can hold anything)")
    a = ap.parse_args()
    backend = OracleAnswers(a.oracle, a.fault, a.caps) if a.oracle else \
        LookupBackend(a.suite, a.claim, a.answer, a.fault, a.caps, a.name)
    serve(backend, a.hello.split(","))


if __name__ == "__main__":
    main()
