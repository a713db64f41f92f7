"""The HTTP side of the fault matrix (issue 13, docs/reliability.md): a client deadline that holds against a
server dribbling its reply, `qconform serve`'s limits against hostile peers, and a fuzz run of malformed
requests. Loopback only; every wait is bounded."""

import contextlib
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time

import pytest
import suites
from lookup_backend import hostile

from conformance.backends.http import HttpBackend
from conformance.protocol import CONTENT_TYPE, HELLO, decode_message, encode_message, request_message
from conformance.vectors import load_suite

TIES = "quantize/q8s/ties"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(*args, env, backend="oracle"):
    """`qconform serve` on a free loopback port with extra options; yields (host, port, process)."""
    port = free_port()
    p = subprocess.Popen([sys.executable, "-m", "conformance.cli", "serve", "--backend", backend, "--port",
                          str(port), *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if b" 200 " in request(port, b"GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n", wait=5):
                    break
            assert p.poll() is None, p.stderr.read().decode()
            time.sleep(0.1)
        yield "127.0.0.1", port, p
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def request(port, data: bytes, wait: float = 3.0) -> bytes:
    """Send raw bytes on a fresh connection, half-close, and read the reply until the server closes or
    ``wait`` passes."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(data)
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_WR)
        return recv_all(s, wait)


def recv_all(s, wait: float) -> bytes:
    out, deadline = b"", time.monotonic() + wait
    with contextlib.suppress(OSError):
        while time.monotonic() < deadline:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            out += chunk
            if b"\r\n\r\n" in out and b"connection: close" not in out.lower():
                head, _, body = out.partition(b"\r\n\r\n")
                m = re.search(rb"content-length: *(\d+)", head, re.IGNORECASE)
                if m and len(body) >= int(m.group(1)):
                    break
    return out


def status(reply: bytes) -> int:
    m = re.match(rb"HTTP/1\.[01] (\d{3})", reply)
    return int(m.group(1)) if m else 0


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS")).split()[1])


# ---- 2. the client's timeout is a deadline for the whole request ------------------------------------------

class Dribbler(threading.Thread):
    """A loopback server: hello at once, each /v1/run reply one byte every ``delay`` s (headers too, or only
    the body). The dribble of one reply lasts a few seconds at most, so even a client without a deadline ends."""

    def __init__(self, mode: str, delay: float = 0.02):
        super().__init__(daemon=True)
        self.mode, self.delay, self.stop = mode, delay, threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def run(self):
        while not self.stop.is_set():
            with contextlib.suppress(socket.timeout):
                conn, _ = self.sock.accept()
                threading.Thread(target=self.handle, args=(conn,), daemon=True).start()
        self.sock.close()

    def handle(self, conn):
        with conn, contextlib.suppress(OSError), conn.makefile("rb") as f:
            while f.readline():
                length = 0
                while (h := f.readline()) not in (b"\r\n", b""):
                    if h.lower().startswith(b"content-length:"):
                        length = int(h.split(b":")[1])
                meta, _ = decode_message(f.read(length))
                reply = encode_message(HELLO | {"name": "slow", "version": "1", "profile": suites.A}
                                       if meta["type"] == "hello" else {"type": "result", "id": meta["id"]})
                head = b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n" % (
                    CONTENT_TYPE.encode(), len(reply))
                if meta["type"] == "hello":
                    conn.sendall(head + reply)
                    continue
                slow = head + reply if self.mode == "headers" else reply
                if self.mode == "body":
                    conn.sendall(head)
                for i in range(min(len(slow), int(5 / self.delay))):
                    if self.stop.is_set():
                        return
                    conn.sendall(slow[i:i + 1])
                    time.sleep(self.delay)
                conn.sendall(slow[i + 1:])


@pytest.mark.parametrize("mode", ["body", "headers"])
def test_client_timeout_is_a_deadline_for_the_whole_request(suite_dir, mode):
    server = Dribbler(mode)
    server.start()
    try:
        b = HttpBackend(server.url, timeout=1)
        v = load_suite(suite_dir).get(TIES)
        t = time.monotonic()
        out = b.run(v.op, v.params, v.inputs)
        elapsed = time.monotonic() - t
        b.close()
    finally:
        server.stop.set()
    assert getattr(out, "kind", None) == "timed out", out
    assert elapsed < 2.5, elapsed


# ---- 5. `qconform serve` cannot be exhausted -------------------------------------------------------------

LIMITS = ["--max-connections", "8", "--idle-timeout", "1", "--header-timeout", "1", "--max-body-memory",
          str(1 << 20)]


def test_idle_connections_are_limited_and_dropped(env):
    with serving(*LIMITS, env=env) as (_, port, _):
        socks = [socket.create_connection(("127.0.0.1", port), timeout=3) for _ in range(20)]
        try:
            busy = [status(recv_all(s, 0.5)) for s in socks[8:]]
            assert busy == [503] * 12  # refused at once, not queued behind idle peers
            t = time.monotonic()
            dropped = [recv_all(s, 3) for s in socks[:8]]  # the server closes idle connections
            assert dropped == [b""] * 8 and time.monotonic() - t < 3
        finally:
            for s in socks:
                s.close()
        assert status(request(port, b"GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n")) == 200


def test_dribbled_request_head_times_out(env):
    with serving(*LIMITS, env=env) as (_, port, _), socket.create_connection(("127.0.0.1", port)) as s:
        t = time.monotonic()
        s.sendall(b"POST /v1/run HTTP/1.1\r\n")
        with contextlib.suppress(OSError):
            while time.monotonic() - t < 6:
                s.sendall(b"x-slow: 1\r\n")
                s.settimeout(0.3)
                with contextlib.suppress(socket.timeout):
                    reply = s.recv(1 << 16)
                    break
        assert time.monotonic() - t < 3 and (reply == b"" or status(reply) == 408)


def test_oversized_body_is_refused_from_its_content_length(env):
    with serving(*LIMITS, env=env) as (_, port, _), socket.create_connection(("127.0.0.1", port)) as s:
        t = time.monotonic()
        s.sendall(b"POST /v1/run HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % ((1 << 30) + 1))
        assert status(recv_all(s, 3)) == 413 and time.monotonic() - t < 2  # no byte of the body was sent


def test_request_bodies_in_memory_are_capped(env):
    """The cap counts the bytes that arrived: 1.2 MB held by two bodies exceeds the 1 MiB cap."""
    head = b"POST /v1/run HTTP/1.1\r\nhost: x\r\ncontent-length: 700000\r\n\r\n"
    with serving(*LIMITS, env=env) as (_, port, _):
        a = socket.create_connection(("127.0.0.1", port), timeout=5)
        a.sendall(head + b"x" * 600000)
        time.sleep(0.3)
        assert status(request(port, head + b"x" * 600000, wait=2)) == 503
        a.sendall(b"x" * 100000)
        assert status(recv_all(a, 3)) == 400  # garbage, but read and answered
        a.close()
        assert status(request(port, head + b"x" * 700000)) == 400  # the budget was given back


def test_a_content_length_is_a_claim_not_an_allocation(env):
    """Two request heads announcing 1 GiB each, with no body: the server allocates nothing for them (it took
    2 GB), reserves nothing (every other request got 503), and answers the next client."""
    head = b"POST /v1/run HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % (1 << 30)
    with serving(env=env) as (host, port, proc):
        rss0 = rss_kib(proc.pid)
        hogs = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(2)]
        try:
            for h in hogs:
                h.sendall(head + b"x" * 10)
            time.sleep(0.5)
            b = HttpBackend(f"http://{host}:{port}", timeout=10)
            assert b.hello.name == "qconform-oracle"  # not a 503
            b.close()
            assert rss_kib(proc.pid) - rss0 < 64 << 10
        finally:
            for h in hogs:
                h.close()


def test_a_client_that_left_does_not_starve_the_requests_behind_it(suite_dir, lookup_cmd, env):
    """A request whose client timed out and closed its connection has its hung backend call killed: the next
    client is answered at once, not after the server's own 30 s timeout."""
    v = load_suite(suite_dir)
    with serving("--timeout", "30", env=env, backend="subprocess:" + lookup_cmd("--fault", f"hang:{TIES}")) \
            as (host, port, _):
        b = HttpBackend(f"http://{host}:{port}", timeout=1)
        tie = v.get(TIES)
        assert b.run(tie.op, tie.params, tie.inputs).kind == "timed out"
        b.close()
        b = HttpBackend(f"http://{host}:{port}", timeout=8)
        plain = v.get("quantize/q8s/plain")
        t = time.monotonic()
        out = b.run(plain.op, plain.params, plain.inputs)
        b.close()
    assert not hasattr(out, "kind") and time.monotonic() - t < 8, out


def test_sigterm_stops_the_server_while_an_in_process_backend_hangs(suite_dir, env):
    env = dict(env, QC_TEST_SUITE=str(suite_dir), QC_TEST_FAULTS=f"hang:{TIES}")
    v = load_suite(suite_dir).get(TIES)
    blob = encode_message(request_message("1", v.op, v.params), v.inputs)
    with serving(env=env, backend="python:lookup_backend:from_env") as (_, port, proc), \
            socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"POST /v1/run HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s" % (len(blob), blob))
        time.sleep(0.5)  # the backend call is running (and will never return)
        t = time.monotonic()
        proc.terminate()
        proc.wait(timeout=15)
        assert time.monotonic() - t < 6 and proc.returncode == 0


def test_health_says_when_the_wrapped_backend_gave_up(suite_dir, lookup_cmd, env, tmp_path):
    env = dict(env, QC_TEST_MARKER=str(tmp_path / "started-once"), QC_TEST_MARKER_EXIT="1")  # restarts fail
    with serving(env=env, backend="subprocess:" + lookup_cmd("--fault", f"crash:{TIES}")) as (host, port, _):
        b = HttpBackend(f"http://{host}:{port}", timeout=10)
        tie = load_suite(suite_dir).get(TIES)
        kinds = [b.run(tie.op, tie.params, tie.inputs).kind for _ in range(4)]
        b.close()
        reply = request(port, b"GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n")
    assert kinds == ["crashed"] * 4
    assert status(reply) == 503 and b"gave up" in reply, reply


def test_bad_gateway_keeps_the_traceback_without_paths(suite_dir, env):
    env = dict(env, QC_TEST_SUITE=str(suite_dir), QC_TEST_FAULTS=f"raise:{TIES}")
    with serving(env=env, backend="python:lookup_backend:from_env") as (host, port, _):
        b = HttpBackend(f"http://{host}:{port}", timeout=10)
        v = load_suite(suite_dir).get(TIES)
        fault = b.run(v.op, v.params, v.inputs)
        b.close()
    assert fault.kind == "crashed" and "RuntimeError: boom" in fault.detail, fault.detail
    assert 'File "lookup_backend.py"' in fault.detail and not re.search(r"/(work|tmp|home|usr|root)/", fault.detail)


# ---- the fuzz run: malformed requests never make the server fail ------------------------------------------

def malformed(rng: random.Random, valid: bytes) -> bytes:
    """One malformed (or merely odd) HTTP request."""
    flipped = bytearray(valid)
    for _ in range(rng.randint(1, 8)):
        flipped[rng.randrange(len(flipped))] = rng.randrange(256)
    body = rng.choice([b"", rng.randbytes(rng.randint(1, 300)), valid[:rng.randint(0, len(valid))], bytes(flipped)])
    line = rng.choice([b"POST /v1/run HTTP/1.1", b"POST /v1/hello HTTP/1.1", b"GET /v1/health HTTP/1.1",
                       b"PUT /v1/run HTTP/1.1", b"POST /v1/run HTTP/9.9", b"POST /v1/run", b"GARBAGE",
                       b"POST  /v1/run  HTTP/1.1", b"POST /" + b"a" * 20000 + b" HTTP/1.1", b"\x00\xff\x10",
                       b"POST /v1/run?x=%00 HTTP/1.0", b"PRI * HTTP/2.0", b"GET /v1/openapi.json HTTP/1.1"])
    headers = [b"host: x"]
    headers += rng.sample([b"content-length: %d" % len(body), b"content-length: %d" % (len(body) + 5),
                           b"content-length: -1", b"content-length: abc", b"content-length: 99999999999999999999",
                           b"transfer-encoding: chunked", b"transfer-encoding: gzip, chunked",
                           b"x-bad header: 1", b"x-nul: a\x00b", b"x-long: " + b"b" * 20000, b": empty name",
                           b"expect: 100-continue", b"connection: close", b"content-type: text/plain"],
                          k=rng.randint(0, 3))
    if rng.random() < 0.3:
        body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body) + rng.randint(-3, 3), body)  # a chunked body, often wrong
    raw = line + b"\r\n" + b"\r\n".join(headers) + b"\r\n\r\n" + body
    if rng.random() < 0.2:
        raw = raw[:rng.randrange(len(raw))]  # cut anywhere
    if rng.random() < 0.1:
        raw = raw.replace(b"\r\n", b"\n")
    return raw


def test_fuzz_thousands_of_malformed_requests(suite_dir, env):
    """>= 2,000 malformed requests, 4 at a time: never a 500, the server stays up, its memory stays bounded, and
    a correct request is answered afterwards."""
    v = load_suite(suite_dir).get(TIES)
    valid = encode_message(request_message("1", v.op, v.params), v.inputs)
    valid_http = (b"POST /v1/run HTTP/1.1\r\nhost: x\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n%s"
                  % (CONTENT_TYPE.encode(), len(valid), valid))
    limits = ["--idle-timeout", "0.5", "--header-timeout", "0.5"]
    with serving(*limits, env=env) as (host, port, proc):
        request(port, valid_http)
        rss0 = rss_kib(proc.pid)
        statuses, lock = {}, threading.Lock()

        def worker(seed):
            rng = random.Random(seed)
            for _ in range(520):
                s = status(request(port, malformed(rng, valid), wait=2))
                with lock:
                    statuses[s] = statuses.get(s, 0) + 1

        t = time.monotonic()
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=120)
        elapsed = time.monotonic() - t
        assert proc.poll() is None, proc.stderr.read().decode()
        assert sum(statuses.values()) >= 2000 and 500 not in statuses, statuses
        grew = rss_kib(proc.pid) - rss0
        for fault in ("hugeshape", "deepmeta", "deepheader"):  # issue 13 item 1: these were a 500
            blob = hostile(fault, "1")
            assert status(request(port, b"POST /v1/run HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s"
                                  % (len(blob), blob))) == 400, fault
        reply = request(port, valid_http)
        assert status(reply) == 200 and decode_message(reply.partition(b"\r\n\r\n")[2])[0]["id"] == "1"
        b = HttpBackend(f"http://{host}:{port}", timeout=10)
        assert b.hello.name == "qconform-oracle"
        b.close()
    log = proc.stderr.read().decode()
    assert "Traceback" not in log and "exception" not in log.lower(), log[-3000:]  # no handler failed silently
    print(f"fuzz: {sum(statuses.values())} requests in {elapsed:.1f} s, statuses {sorted(statuses.items())}, "
          f"server RSS grew {grew} KiB")
    assert grew < 64 << 10, grew  # bounded: no per-request leak


if os.environ.get("QC_FUZZ_SEED"):  # reproduce one fuzz stream by hand
    print(malformed(random.Random(int(os.environ["QC_FUZZ_SEED"])), b"x" * 100))
