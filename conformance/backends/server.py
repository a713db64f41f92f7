"""``qconform serve``: any backend exposed over the HTTP transport, on a small asyncio HTTP/1.1 server (h11).

Routes (docs/protocol.md, "HTTP"): ``POST /v1/hello``, ``POST /v1/run`` (bodies are protocol messages),
``GET /v1/health`` and ``GET /v1/openapi.json``. A backend error is a normal 200 reply carrying an error message;
a fault of the wrapped backend (a crashed or hung subprocess) is a 502 whose ``x-qconform-fault`` header names
the fault kind, so the client records the same verdict it would have recorded talking to the backend directly.

The server owns its limits (``Limits``, docs/reliability.md) because a peer must not be able to exhaust it: an
idle timeout (no request started) and a header timeout (a request head trickling in), a body timeout, a cap on
connections (refused with 503 at once), a body refused from its Content-Length before any byte of it is read
(413; 411 without one), and a cap on the request bodies held in memory at once (503), counted in bytes as
they arrive: a Content-Length is a claim, so nothing is allocated or reserved from it. The backend is called in
a worker thread, one request at a time, so a slow backend never stops the server from answering health checks
or enforcing its timeouts. A request whose client has closed its connection is not run (still queued) or has
its backend call killed (a subprocess backend; an in-process call cannot be stopped and is left to finish), so
the requests behind it are not starved; the worker threads are daemons, so SIGTERM ends the server even while
an in-process backend hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import re
import signal
import socket
import threading
import traceback
from dataclasses import dataclass

try:
    import h11
except ImportError:  # the http extra is not installed: `qconform serve` says so
    h11 = None

from ..protocol import (
    CONTENT_TYPE,
    PROTOCOL_VERSION,
    Fault,
    ProtocolError,
    decode_message,
    encode_message,
    hello_for,
    reply_message,
)


@dataclass(frozen=True)
class Limits:
    max_body: int = 1 << 30            # one request body (protocol.md: frames above 1 GiB are refused)
    max_body_memory: int = 2 << 30     # all request bodies held at once
    max_connections: int = 128
    max_header_bytes: int = 16 << 10   # request line + headers
    idle_timeout: float = 15.0         # a connection with no request started (new, or kept alive)
    header_timeout: float = 10.0       # from a request's first byte to the end of its head
    body_timeout: float = 120.0        # the whole body, once the head is in
    send_timeout: float = 120.0        # a reply the client does not read



OPENAPI = {
    "openapi": "3.1.0",
    "info": {"title": "qconform backend protocol", "version": str(PROTOCOL_VERSION),
             "description": "Messages are safetensors blobs with a JSON object under __metadata__['qconform'] "
                            "(docs/protocol.md)."},
    "paths": {
        "/v1/hello": {"post": {
            "summary": "Handshake: body {type: hello, protocol: 1}; reply: name, version, profile, capabilities",
            "requestBody": {"required": True, "content": {CONTENT_TYPE: {"schema": {"type": "string",
                                                                                    "format": "binary"}}}},
            "responses": {"200": {"description": "hello reply message",
                                  "content": {CONTENT_TYPE: {"schema": {"type": "string", "format": "binary"}}}}}}},
        "/v1/run": {"post": {
            "summary": "Run one request message (op, params, input tensors); reply: result or error message",
            "requestBody": {"required": True, "content": {CONTENT_TYPE: {"schema": {"type": "string",
                                                                                    "format": "binary"}}}},
            "responses": {
                "200": {"description": "result or error message",
                        "content": {CONTENT_TYPE: {"schema": {"type": "string", "format": "binary"}}}},
                "400": {"description": "the request was not a valid message (text/plain)"},
                "411": {"description": "no Content-Length (chunked bodies are not accepted)"},
                "413": {"description": "request body too large (refused from its Content-Length)"},
                "503": {"description": "busy: too many connections, or request bodies in memory at their cap"},
                "502": {"description": "the wrapped backend crashed, timed out or broke the protocol; header "
                                       "x-qconform-fault names which (text/plain detail)"}}}},
        "/v1/health": {"get": {"summary": "Liveness", "responses": {
            "200": {"description": "the text 'ok'"},
            "503": {"description": "the wrapped backend gave up (it failed its restarts); the text says why"}}}},
    },
}



_ABS_PATH = re.compile(r"(?<![\w.~/-])/(?:[\w.+@~-]+/)+(?=[\w.+@~-])")


def strip_paths(text: str) -> str:
    """A fault's detail without the server's absolute paths (kept: the file names, lines and messages)."""
    return _ABS_PATH.sub("", text)


class _Close(Exception):
    """End the connection (after the reply, if one is given)."""

    def __init__(self, status: int = 0, text: str = ""):
        self.status, self.text = status, text


class Server:
    def __init__(self, backend, limits: Limits = Limits()):
        self.backend, self.limits = backend, limits
        self.connections, self.body_budget = 0, limits.max_body_memory
        self._backend_lock = asyncio.Lock()

    async def connection(self, reader, writer):
        if self.connections >= self.limits.max_connections:
            await self._raw_reply(writer, 503, b"busy: too many connections")
            return
        self.connections += 1
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=self.limits.max_header_bytes)
        try:
            while await self._cycle(conn, reader, writer):
                conn.start_next_cycle()
        except _Close as c:
            if c.status and conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                try:
                    await self._send(conn, writer, c.status, c.text.encode(), "text/plain", close=True)
                except (TimeoutError, h11.ProtocolError, ConnectionError, OSError):
                    pass
        except (TimeoutError, h11.ProtocolError, ConnectionError, OSError):
            pass
        except Exception as e:  # noqa: BLE001 - a bug of ours: say so (500, traceback on stderr), keep serving
            traceback.print_exc()
            if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                with contextlib.suppress(TimeoutError, h11.ProtocolError, ConnectionError, OSError):
                    await self._send(conn, writer, 500, f"internal error: {type(e).__name__}".encode(),
                                     "text/plain", close=True)
        finally:
            self.connections -= 1
            writer.close()

    async def _cycle(self, conn, reader, writer) -> bool:
        """One request and its reply; whether the connection may carry another."""
        request = await self._event(conn, reader, self.limits.idle_timeout, head=True)
        if isinstance(request, h11.ConnectionClosed):
            return False
        route = (request.method.decode("latin-1"), request.target.decode("latin-1").partition("?")[0])
        status, body, ctype, headers = await self._route(conn, reader, writer, route, request)
        await self._send(conn, writer, status, body, ctype, headers)
        return conn.our_state is h11.DONE and conn.their_state is h11.DONE

    async def _event(self, conn, reader, timeout: float, head: bool = False):
        """The next h11 event, reading as needed: ``timeout`` for the first byte, then (for a request head)
        ``header_timeout`` for the rest of it. A malformed head is a 400 (431 when too large)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as e:
                raise _Close(e.error_status_hint, f"malformed request: {e}") from None
            if event is not h11.NEED_DATA:
                return event
            left = deadline - loop.time()
            if left <= 0:
                raise _Close(408 if conn.their_state is h11.SEND_BODY or conn.trailing_data[0] else 0,
                             "request timeout")
            try:
                data = await asyncio.wait_for(reader.read(1 << 16), left)
            except TimeoutError:
                data = None
            if data is None:
                continue
            if head and data and not conn.trailing_data[0] and deadline - loop.time() > self.limits.header_timeout:
                deadline = loop.time() + self.limits.header_timeout  # the request started: its head must follow
            conn.receive_data(data)

    async def _route(self, conn, reader, writer, route, request):
        if route == ("GET", "/v1/health"):
            return self._health()
        if route == ("GET", "/v1/openapi.json"):
            return 200, json.dumps(OPENAPI).encode(), "application/json", []
        if route not in (("POST", "/v1/hello"), ("POST", "/v1/run")):
            return 404, b"not found; see /v1/openapi.json", "text/plain", []
        self._content_length(request)
        held = [0]  # bytes of this body counted against max_body_memory, given back when the request ends
        try:
            if conn.they_are_waiting_for_100_continue:
                writer.write(conn.send(h11.InformationalResponse(status_code=100, headers=[])))
            body = await self._body(conn, reader, held)
            return await self._handle(route[1], body, conn, reader)
        finally:
            self.body_budget += held[0]

    def _health(self):
        """200 'ok' while the wrapped backend can still answer; 503 with the reason once it has given up (a
        subprocess backend that failed its restarts answers every request with a fault from then on)."""
        gave_up = getattr(self.backend, "gave_up", "")
        if gave_up:
            return 503, f"backend unusable: {gave_up}".encode(errors="backslashreplace"), "text/plain", []
        return 200, b"ok", "text/plain", []

    def _content_length(self, request) -> int:
        values = [v for k, v in request.headers if k == b"content-length"]
        if not values:
            raise _Close(411, "a Content-Length is required (chunked bodies are not accepted)")
        size = int(values[0])  # h11 checked it is one well-formed number
        if size > self.limits.max_body:
            raise _Close(413, f"request body of {size} bytes exceeds {self.limits.max_body}")
        return size

    async def _body(self, conn, reader, held: list[int]) -> bytearray:
        """The body, grown as its bytes arrive (never allocated from the Content-Length: two request heads of 80
        bytes must not cost 2 GiB), each chunk counted against max_body_memory (503 above it)."""
        body = bytearray()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.body_timeout
        while True:
            event = await self._event(conn, reader, deadline - loop.time())
            if isinstance(event, h11.Data):
                if len(event.data) > self.body_budget:
                    raise _Close(503, "busy: request bodies in memory at their cap; retry later")
                self.body_budget -= len(event.data)
                held[0] += len(event.data)
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return body
            else:
                raise _Close()

    async def _handle(self, path: str, body: bytearray, conn, reader):
        try:
            meta, tensors = decode_message(memoryview(body))
        except ProtocolError as e:
            return 400, str(e).encode(), "text/plain", []
        if path == "/v1/hello":
            return 200, encode_message(hello_for(self.backend.hello, meta)), CONTENT_TYPE, []
        if meta.get("type") != "request" or not isinstance(meta.get("op"), str):
            return 400, b"expected a request message with an 'op'", "text/plain", []
        params = meta.get("params", {})
        if not isinstance(params, dict):
            return 400, b"'params' must be an object", "text/plain", []
        gone = asyncio.ensure_future(_client_gone(conn, reader))
        try:
            outcome = await self._call(gone, meta["op"], params, tensors)
        finally:
            gone.cancel()
        if outcome is None:
            raise _Close()  # its client left: nobody to answer
        if isinstance(outcome, Fault):
            detail = strip_paths(f"{outcome.detail}\n{outcome.stderr}").encode()
            return 502, detail, "text/plain", [(b"x-qconform-fault", outcome.kind.encode())]
        reply, out = reply_message(meta.get("id"), outcome)
        return 200, encode_message(reply, out), CONTENT_TYPE, []

    async def _call(self, gone: asyncio.Future, op: str, params: dict, tensors: dict):
        """The backend's outcome, or None when the client left first. Backends are not thread-safe: one request
        at a time, like the other transports. A request still queued when its client leaves is not run; one
        running has its subprocess killed (the backend records a crash and restarts for the next request)."""
        acquire = asyncio.ensure_future(self._backend_lock.acquire())
        await asyncio.wait({acquire, gone}, return_when=asyncio.FIRST_COMPLETED)
        if not acquire.done():
            acquire.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await acquire
            if not acquire.cancelled():  # acquired just as it was cancelled
                self._backend_lock.release()
            return None
        try:
            call = _in_thread(self.backend.run, op, params, tensors)
            await asyncio.wait({call, gone}, return_when=asyncio.FIRST_COMPLETED)
            aborted = not call.done() and _abort(self.backend)
            outcome = await asyncio.shield(call)  # the lock is held until the backend is free again
            # a call left to finish is still answered: a client that only half-closed may be reading
            return None if aborted else outcome
        finally:
            self._backend_lock.release()

    async def _send(self, conn, writer, status, body, ctype, headers=(), close=False):
        head = [(b"content-type", ctype.encode()), (b"content-length", str(len(body)).encode()), *headers]
        if close:
            head.append((b"connection", b"close"))
        writer.writelines([conn.send(h11.Response(status_code=status, headers=head)), conn.send(h11.Data(data=body)),
                           conn.send(h11.EndOfMessage())])
        await asyncio.wait_for(writer.drain(), self.limits.send_timeout)

    async def _raw_reply(self, writer, status: int, text: bytes):
        reason = {503: b"Service Unavailable"}[status]
        writer.write(b"HTTP/1.1 %d %s\r\ncontent-type: text/plain\r\ncontent-length: %d\r\nconnection: close"
                     b"\r\n\r\n%s" % (status, reason, len(text), text))
        try:
            await asyncio.wait_for(writer.drain(), 1)
        except (TimeoutError, ConnectionError):
            pass
        writer.close()


async def _client_gone(conn, reader) -> None:
    """Returns when the client closes its side of the connection while its request is queued or running. Bytes
    it sends meanwhile (a pipelined request) are kept for the next cycle, and watching stops: it is there."""
    try:
        data = await reader.read(1 << 16)
    except (ConnectionError, OSError):
        return
    if not data:
        return
    conn.receive_data(data)
    await asyncio.Event().wait()  # until cancelled


def _in_thread(fn, *args) -> asyncio.Future:
    """``fn(*args)`` in a daemon thread (asyncio.to_thread's are joined at exit, so a hung in-process backend
    would keep a SIGTERMed server alive forever)."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def settle(result, error):
        if not future.done():
            future.set_exception(error) if error is not None else future.set_result(result)

    def work():
        try:
            result, error = fn(*args), None
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting coroutine
            result, error = None, e
        with contextlib.suppress(RuntimeError):  # the loop is gone: the server stopped meanwhile
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, name="qconform-serve-backend", daemon=True).start()
    return future


def _abort(backend) -> bool:
    """Stop the backend call of a client that left, where it can be stopped: a subprocess backend's process is
    killed, and its own ``run`` then records the crash, reaps the process tree and restarts for the next
    request. An in-process call cannot be stopped; it is left to finish, holding the backend."""
    from .reap import kill_tree
    proc = getattr(backend, "proc", None)
    if proc is None:
        return False
    kill_tree(proc.pid)  # not reaped yet (its run() is still waiting on it), so the pid is still its own
    return True


STOP_GRACE = 2.0
"""Seconds a stopping server gives its connections to finish before they are cancelled."""


async def _serve(backend, host: str, port: int, limits: Limits, ready):
    server = Server(backend, limits)
    # a deep accept queue: connections above the limit get a 503 from us rather than a reset from the kernel
    listener = await asyncio.start_server(server.connection, host, port, backlog=1024)
    ready()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):  # stop: the caller then closes the backend
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    listener.close()
    # a connection still waiting on a hung backend is cancelled, not waited for: the server ends in bounded time
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    if others:
        await asyncio.wait(others, timeout=STOP_GRACE)
    for t in others:
        t.cancel()


def loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback one (``--host`` other than that needs --allow-remote:
    the server has no authentication). A name that does not resolve is not loopback."""
    try:
        infos = socket.getaddrinfo(host or None, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos)


class ServeError(Exception):
    """``qconform serve`` cannot serve (the message says why and what to do)."""


def require_http() -> None:
    """Fail unless the http extra is installed: checked before any backend starts."""
    if h11 is None:
        raise ServeError("needs the http extra (h11 is not installed): pip install 'qconform[http]', or from a "
                         "clone pip install -e '.[http]'")


def serve(backend, host: str = "127.0.0.1", port: int = 8765, limits: Limits = Limits(), ready=lambda: None):
    """Serve ``backend`` until SIGTERM or SIGINT. ``ready`` is called once the port is bound, so nothing
    announces a server that is not there; a port that cannot be bound raises ``ServeError``."""
    require_http()
    try:
        asyncio.run(_serve(backend, host, port, limits, ready))
    except OSError as e:  # bind: address in use, no permission, no such address
        raise ServeError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
