"""docs/schema/protocol.schema.json against the messages that really travel: the runner's, and the replies of
the example backend, of `qconform serve` and of the burn harness (when it is built), recorded on the wire by
recording_proxy.py."""

from __future__ import annotations

import glob
import json
import os
import shlex
import struct
import sys
from pathlib import Path

import jsonschema
import pytest

from conformance import protocol
from conformance.formats import FORMATS
from conformance.patterns import PATTERN_KEYS
from conformance.runner import Runner
from conformance.vectors import load_suite
from oracle.vocabulary import LEVELS, OPS

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schema" / "protocol.schema.json").read_text(encoding="utf-8"))
HERE = Path(__file__).parent


def validator(definition: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}", "$defs": SCHEMA["$defs"]})


def test_schema_is_valid_2020_12():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_schema_agrees_with_the_runner_on_names():
    """The schema's closed lists are the runner's: a capability key or an op added to one must reach the
    other."""
    caps = SCHEMA["$defs"]["capabilities"]["properties"]
    assert set(caps) == {*protocol.CAPABILITY_KEYS, "per_op", protocol.FORMATS_KEY, protocol.VALIDATES_KEY,
                         protocol.PRESET_KEY}
    assert caps[protocol.PRESET_KEY]["enum"] == sorted(protocol.PRESETS)
    assert set(SCHEMA["$defs"]["opCapabilities"]["properties"]) == \
        set(protocol.CAPABILITY_KEYS) - {"ops"} | {protocol.FORMATS_KEY}
    assert SCHEMA["$defs"]["formats"]["items"]["oneOf"][0]["enum"] == list(FORMATS)
    assert tuple(SCHEMA["$defs"]["pattern"]["properties"]) == PATTERN_KEYS
    assert SCHEMA["$defs"]["request"]["properties"]["op"]["enum"] == list(OPS)
    assert SCHEMA["$defs"]["levels"]["items"]["enum"] == list(LEVELS)


@pytest.mark.parametrize("definition, message", [
    ("runnerMessage", {"type": "hello", "protocol": 2}),
    ("runnerMessage", {"type": "request", "id": "1", "op": "quantise", "params": {}}),
    ("runnerMessage", {"type": "request", "id": 1, "op": "quantize", "params": {}}),
    ("backendMessage", {"type": "hello", "protocol": 1, "name": "b"}),
    ("backendMessage", {"type": "hello", "protocol": 1, "name": "b", "version": "1",
                        "capabilities": {"colours": []}}),
    ("backendMessage", {"type": "result", "id": "1", "values": [1]}),
    ("backendMessage", {"type": "error", "id": "1", "error": {"code": "c"}}),
    ("backendMessage", {"type": "error", "id": "1", "error": "boom"}),
    ("backendMessage", {"type": "hello", "protocol": 1, "name": "b", "version": "1",
                        "capabilities": {"levels": ["per-tensor"]}}),
    ("backendMessage", {"type": "hello", "protocol": 1, "name": "b", "version": "1",
                        "capabilities": {"formats": ["q8_0"]}}),  # formats need protocol 2
    ("backendMessage", {"type": "hello", "protocol": 2, "name": "b", "version": "1",
                        "capabilities": {"formats": [{"block": [0]}]}}),
    ("backendMessage", {"type": "unsupported", "id": "1"}),
])
def test_schema_refuses_what_the_runner_refuses(definition, message):
    assert not validator(definition).is_valid(message)


def recorded(log: Path) -> list[tuple[str, dict, dict]]:
    """(direction, metadata, tensors) of each frame of a recording_proxy log, read by the runner's decoder."""
    data, out, pos = log.read_bytes(), [], 0
    while pos < len(data):
        direction, (n,) = data[pos:pos + 1].decode(), struct.unpack_from("<I", data, pos + 1)
        meta, tensors = protocol.decode_message(data[pos + 5:pos + 5 + n])
        out.append((direction, meta, tensors))
        pos += 5 + n
    return out


def record_a_run(tmp_path, backend_command: list[str], vectors) -> list[tuple[str, dict, dict]]:
    log = tmp_path / "frames.bin"
    proxy = [sys.executable, str(HERE / "recording_proxy.py"), str(log), "--", *backend_command]
    runner = Runner(load_suite(ROOT / "vectors" / "core"), "subprocess:" + shlex.join(proxy), diagnose=False)
    try:
        verdicts = list(runner.run_all(vectors))
    finally:
        runner.close()
    assert verdicts
    return recorded(log)


def sample(suite):
    """Every op, both outcomes: the first vector of each (op, expects-an-error) pair."""
    picked = {}
    for v in suite.vectors:
        key = (v.op, any(e.error for e in v.expected.values()))
        picked.setdefault(key, v)
    return list(picked.values())


def check(frames):
    runner_msgs, backend_msgs = validator("runnerMessage"), validator("backendMessage")
    seen = set()
    for direction, meta, tensors in frames:
        v = runner_msgs if direction == "R" else backend_msgs
        errors = [f"{e.json_path}: {e.message}" for e in v.iter_errors(meta)]
        assert not errors, f"{direction} message {json.dumps(meta)[:300]} breaks the schema: {errors}"
        seen.add((direction, meta["type"]))
    return seen


def test_the_runner_and_the_example_backend_speak_the_schema(tmp_path):
    suite = load_suite(ROOT / "vectors" / "core")
    example = [sys.executable, str(ROOT / "examples" / "subprocess_backend.py")]
    frames = record_a_run(tmp_path, example, sample(suite))
    seen = check(frames)
    assert {("R", "hello"), ("R", "request"), ("R", "bye")} <= seen
    assert {("B", "hello"), ("B", "result"), ("B", "error")} <= seen


# Built Rust backends, when `make burn` / `make rust-example` have run: the burn harness and the Rust example,
# both on the qconform-protocol crate. Binaries only, not cargo's .d files.
HARNESS = sorted(p for pattern in ("cargo-target/release/qconform-burn-*",
                                   "cargo-target-protocol/release/qconform-example-rust-backend")
                 for p in glob.glob(os.path.expanduser("~/.cache/qconform/" + pattern))
                 if "." not in os.path.basename(p) and os.access(p, os.X_OK))


@pytest.mark.skipif(not HARNESS, reason="no Rust backend is built (make burn, make rust-example)")
@pytest.mark.parametrize("binary", HARNESS or [None], ids=lambda p: os.path.basename(p or "none"))
def test_the_rust_backends_speak_the_schema(tmp_path, binary):
    suite = load_suite(ROOT / "vectors" / "core")
    seen = check(record_a_run(tmp_path, [binary], sample(suite)))
    assert ("B", "hello") in seen and ("B", "result") in seen
    if "burn" in os.path.basename(binary):  # the Rust example declares too little to meet an expected error
        assert ("B", "error") in seen


def test_qconform_serve_answers_in_the_schema():
    """`qconform serve` builds its replies itself; each one, read off the HTTP transport, is a backend message."""
    import socket
    import subprocess
    import time

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "conformance.cli", "serve", "--backend", "oracle",
                               "--port", str(port)], stderr=subprocess.DEVNULL)
    url, suite = f"http://127.0.0.1:{port}", load_suite(ROOT / "vectors" / "core")
    try:
        for _ in range(200):  # bounded wait for the server to listen
            try:
                httpx.get(url + "/v1/health")
                break
            except httpx.TransportError:
                time.sleep(0.05)
        with httpx.Client(timeout=30) as client:
            post = lambda path, blob: protocol.decode_message(
                client.post(url + path, content=blob, headers={"content-type": "application/vnd.qconform+safetensors"}
                            ).raise_for_status().content)
            frames = [("B", *post("/v1/hello", protocol.encode_message(protocol.HELLO)))]
            for i, v in enumerate(sample(suite)):
                request = protocol.encode_message(protocol.request_message(str(i), v.op, v.params), v.inputs)
                frames.append(("B", *post("/v1/run", request)))
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert {("B", "hello"), ("B", "result"), ("B", "error")} <= check(frames)
