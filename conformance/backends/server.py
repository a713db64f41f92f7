"""``qconform serve``: any backend exposed over the HTTP transport, as a plain ASGI application.

Routes (docs/protocol.md, "HTTP"): ``POST /v1/hello``, ``POST /v1/run`` (bodies are protocol messages),
``GET /v1/health`` and ``GET /v1/openapi.json``. A backend error is a normal 200 reply carrying an error message;
a fault of the wrapped backend (a crashed or hung subprocess) is a 502 whose ``x-qconform-fault`` header names
the fault kind, so the client records the same verdict it would have recorded talking to the backend directly.
"""

from __future__ import annotations

import json

from ..protocol import (
    CONTENT_TYPE,
    PROTOCOL_VERSION,
    Fault,
    ProtocolError,
    decode_message,
    encode_message,
    reply_message,
)

MAX_BODY = 1 << 30

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
                "413": {"description": "request body too large"},
                "502": {"description": "the wrapped backend crashed, timed out or broke the protocol; header "
                                       "x-qconform-fault names which (text/plain detail)"}}}},
        "/v1/health": {"get": {"summary": "Liveness", "responses": {"200": {"description": "the text 'ok'"}}}},
    },
}


def make_app(backend):
    """An ASGI app serving ``backend`` (anything ``open_backend`` returns). Requests are handled one at a time,
    like the other transports: the backend is called directly on the event loop."""

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        route = (scope["method"], scope["path"])
        if route == ("GET", "/v1/health"):
            return await _reply(send, 200, b"ok", "text/plain")
        if route == ("GET", "/v1/openapi.json"):
            return await _reply(send, 200, json.dumps(OPENAPI).encode(), "application/json")
        if route not in (("POST", "/v1/hello"), ("POST", "/v1/run")):
            return await _reply(send, 404, b"not found; see /v1/openapi.json", "text/plain")
        body = await _body(receive)
        if body is None:
            return await _reply(send, 413, b"request body too large", "text/plain")
        status, payload, headers = handle(backend, scope["path"], body)
        await _reply(send, status, payload, CONTENT_TYPE if status == 200 else "text/plain", headers)

    return app


def handle(backend, path: str, body: bytes) -> tuple[int, bytes, list]:
    try:
        meta, tensors = decode_message(body)
    except ProtocolError as e:
        return 400, str(e).encode(), []
    if path == "/v1/hello":
        return 200, encode_message(backend.hello.to_json()), []
    if meta.get("type") != "request" or not isinstance(meta.get("op"), str):
        return 400, b"expected a request message with an 'op'", []
    outcome = backend.run(meta["op"], meta.get("params", {}), tensors)
    if isinstance(outcome, Fault):
        detail = f"{outcome.detail}\n{outcome.stderr}".encode()
        return 502, detail, [(b"x-qconform-fault", outcome.kind.encode())]
    reply, out = reply_message(meta.get("id"), outcome)
    return 200, encode_message(reply, out), []


async def _body(receive) -> bytes | None:
    chunks, size = [], 0
    while True:
        msg = await receive()
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not msg.get("more_body"):
            return b"".join(chunks)


async def _reply(send, status: int, body: bytes, ctype: str, headers: list | None = None):
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", ctype.encode()), (b"content-length", str(len(body)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def serve(backend, host: str = "127.0.0.1", port: int = 8765, log_level: str = "warning"):
    try:
        import uvicorn
    except ImportError:
        raise SystemExit("qconform serve needs the http extra: pip install 'qconform[http]'") from None
    uvicorn.run(make_app(backend), host=host, port=port, log_level=log_level, lifespan="on")
