"""The HTTP adapter: a keep-alive client for the HTTP transport (e.g. a `qconform serve` process).

Timeouts and a bounded response size turn a hung or runaway server into a fault for one vector; connection
failures are ``crashed``; a 502 from ``qconform serve`` carries the wrapped backend's own fault kind.
"""

from __future__ import annotations

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


class HttpBackend:
    def __init__(self, url: str, *, timeout: float = 30.0, max_response: int = MAX_RESPONSE):
        try:
            import httpx
        except ImportError:
            raise BackendStartError("the http adapter needs the http extra: pip install 'qconform[http]'") from None
        self.httpx, self.url, self.max_response = httpx, url.rstrip("/"), max_response
        self.client = httpx.Client(base_url=self.url, timeout=timeout, headers={"content-type": CONTENT_TYPE})
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
            return parse_reply(obj, tensors, rid)
        except _Failure as f:
            return Fault(f.kind, f.detail)
        except ProtocolError as e:
            return Fault("protocol error", str(e))

    def _post(self, path: str, blob: bytes):
        httpx = self.httpx
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
            raise _Failure("timed out", f"POST {self.url}{path}: {type(e).__name__}") from None
        except httpx.HTTPError as e:
            raise _Failure("crashed", f"POST {self.url}{path}: {type(e).__name__}: {e}") from None
        if r.status_code != 200:
            kind = r.headers.get("x-qconform-fault")
            text = bytes(body[:2000]).decode("utf-8", "replace")
            raise _Failure(kind if kind in FAULT_KINDS else "protocol error",
                           f"HTTP {r.status_code} from {path}: {text}" if kind else
                           f"HTTP {r.status_code} from {path}: {summarize(bytes(body))}")
        return decode_message(bytes(body))

    def close(self):
        self.client.close()
