"""Backends: everything the runner can send vectors to, behind one small interface.

A backend has ``hello`` (a validated ``protocol.Hello``), ``run(op, params, inputs) -> Outcome`` (never
raises for anything the backend does: failures come back as ``protocol.Fault``) and ``close()``.
``open_backend`` turns a ``--backend`` SPEC into one:

    oracle                      the reference, default profile
    oracle:PROFILE              the reference under another profile
    mutant:NAME                 a registered wrong variant of the oracle (conformance.mutants), for demos/tests
    python:module:attribute     an in-process object or zero-argument factory with hello() and run()
    subprocess:COMMAND LINE     a persistent child process speaking length-prefixed frames on stdin/stdout
    http://HOST:PORT  (or http:URL)   a server speaking the HTTP transport (e.g. `qconform serve`)
"""

from __future__ import annotations

from .base import Backend, BackendStartError

__all__ = ["Backend", "BackendStartError", "open_backend"]


def open_backend(spec: str, *, timeout: float = 30.0, hello_timeout: float = 60.0) -> Backend:
    kind, _, rest = spec.partition(":")
    if spec.startswith(("http://", "https://")):
        kind, rest = "http", spec
    if kind == "oracle":
        from .oracle import oracle_backend
        return oracle_backend(rest or None)
    if kind == "mutant":
        from .oracle import mutant_backend
        return mutant_backend(rest)
    if kind == "python":
        from .python import python_backend
        return python_backend(rest)
    if kind == "subprocess":
        from .subprocess import SubprocessBackend
        return SubprocessBackend(rest, timeout=timeout, hello_timeout=hello_timeout)
    if kind == "http":
        from .http import HttpBackend
        return HttpBackend(rest, timeout=timeout)
    raise BackendStartError(f"unknown backend spec {spec!r}: expected oracle[:PROFILE], mutant:NAME, "
                            "python:module:attr, subprocess:COMMAND or http://HOST:PORT")
