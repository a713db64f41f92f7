"""The HTTP adapter: a keep-alive client for the HTTP transport (e.g. a `qconform serve` process).

The timeout is a deadline for the whole request (connect, send, headers, body), not per socket read: a server
that dribbles its reply, headers included, one byte at a time still times out on time. A bounded response size
turns a runaway server into a fault for one vector; connection failures are ``crashed``; a 502 from ``qconform
serve`` carries the wrapped backend's own fault kind.
"""

from __future__ import annotations

import time

from ..protocol import (
    CONTENT_TYPE,
    HELLO,
    Fault,
    ProtocolError,
    decode_message,
    encode_message,
    parse_hello,
    parse_reply,
    request_message,
    summarize,
)
from .base import BackendStartError

MAX_RESPONSE = 1 << 30
FAULT_KINDS = ("crashed", "timed out", "protocol error")


class _Failure(Exception):
    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind, self.detail = kind, detail


class _Deadline:
    """The end of the request in flight; every socket operation gets only the time left until it."""

    def __init__(self):
        self.at = float("inf")

    def left(self, timeout, timeout_error):
        left = self.at - time.monotonic()
        if left <= 0:
            raise timeout_error("the request's deadline has passed")
        return left if timeout is None else min(timeout, left)


def _deadline_transport(httpx, httpcore, deadline: _Deadline):
    """httpx's own transport over sockets whose every read, write and connect is bounded by ``deadline``."""

    class Stream(httpcore.NetworkStream):
        def __init__(self, stream):
            self.stream = stream

        def read(self, max_bytes, timeout=None):
            return self.stream.read(max_bytes, deadline.left(timeout, httpcore.ReadTimeout))

        def write(self, buffer, timeout=None):
            for i in range(0, len(buffer), 1 << 16):  # a slow reader cannot stretch one big write either
                self.stream.write(buffer[i:i + (1 << 16)], deadline.left(timeout, httpcore.WriteTimeout))

        def close(self):
            self.stream.close()

        def start_tls(self, ssl_context, server_hostname=None, timeout=None):
            return Stream(self.stream.start_tls(ssl_context, server_hostname,
                                                deadline.left(timeout, httpcore.ConnectTimeout)))

        def get_extra_info(self, info):
            return self.stream.get_extra_info(info)

    class Backend(httpcore.SyncBackend):
        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            return Stream(super().connect_tcp(host, port, deadline.left(timeout, httpcore.ConnectTimeout),
                                              local_address, socket_options))

    transport = httpx.HTTPTransport()
    # httpx 0.28 has no public way to pass a network backend; its pool is rebuilt with ours (same defaults)
    transport._pool = httpcore.ConnectionPool(network_backend=Backend(), max_connections=100,
                                              max_keepalive_connections=20, keepalive_expiry=5.0)
    return transport


class HttpBackend:
    def __init__(self, url: str, *, timeout: float = 30.0, max_response: int = MAX_RESPONSE):
        try:
            import httpcore
            import httpx
        except ImportError:
            raise BackendStartError("the http adapter needs the http extra: pip install 'qconform[http]'") from None
        self.httpx, self.url, self.max_response = httpx, url.rstrip("/"), max_response
        self.timeout, self.deadline = timeout, _Deadline()
        self.client = httpx.Client(base_url=self.url, timeout=timeout, headers={"content-type": CONTENT_TYPE},
                                   transport=_deadline_transport(httpx, httpcore, self.deadline))
        self._next_id = 0
        try:
            obj, _ = self._post("/v1/hello", encode_message(HELLO))
            self.hello = parse_hello(obj)
        except (_Failure, ProtocolError) as e:
            self.client.close()
            raise BackendStartError(f"{self.url}: handshake failed: {e}") from None

    def run(self, op, params, inputs):
        self._next_id += 1
        rid = f"{self._next_id:x}"
        try:
            obj, tensors = self._post("/v1/run", encode_message(request_message(rid, op, params), inputs))
            return parse_reply(obj, tensors, rid, self.hello.protocol)
        except _Failure as f:
            return Fault(f.kind, f.detail)
        except ProtocolError as e:
            return Fault("protocol error", str(e))

    def _post(self, path: str, blob: bytes):
        httpx = self.httpx
        self.deadline.at = time.monotonic() + self.timeout
        try:
            with self.client.stream("POST", path, content=blob) as r:
                size = int(r.headers.get("content-length") or 0)
                if size > self.max_response:
                    raise _Failure("protocol error", f"response of {size} bytes exceeds {self.max_response}")
                body = bytearray()
                for chunk in r.iter_bytes():
                    body += chunk
                    if len(body) > self.max_response:
                        raise _Failure("protocol error", f"response exceeds {self.max_response} bytes")
        except httpx.TimeoutException as e:
            raise _Failure("timed out", f"POST {self.url}{path}: no complete reply within {self.timeout:g} s "
                                        f"({type(e).__name__})") from None
        except httpx.HTTPError as e:
            raise _Failure("crashed", f"POST {self.url}{path}: {type(e).__name__}: {e}") from None
        finally:
            self.deadline.at = float("inf")
        if r.status_code != 200:
            kind = r.headers.get("x-qconform-fault")
            text = bytes(body[:2000]).decode("utf-8", "replace")
            raise _Failure(kind if kind in FAULT_KINDS else "protocol error",
                           f"HTTP {r.status_code} from {path}: {text}" if kind else
                           f"HTTP {r.status_code} from {path}: {summarize(bytes(body))}")
        return decode_message(memoryview(body))

    def close(self):
        self.client.close()
