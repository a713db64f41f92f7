"""The in-process adapter: a Python object with hello() and run(op, params, inputs).

Arrays pass both ways without copies (inputs are the read-only views the vector loader made). What the object
returns is still validated like a wire reply, and anything it raises other than a burn error becomes a
``crashed`` fault for that vector, so one bad vector never stops the run. An object may also have
``run_many(requests)`` (answers of several requests at once, e.g. in one vectorised pass); the fuzzer then hands it
its batches, and each reply is judged as ``run``'s would be.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback

from oracle import BurnPanic

from ..protocol import (
    PROTOCOL_VERSION,
    BackendError,
    Declined,
    Error,
    Fault,
    ProtocolError,
    Unsupported,
    parse_hello,
    split_outputs,
)
from .base import BackendStartError


class PythonBackend:
    def __init__(self, obj, label: str = "python"):
        self.obj, self.label = obj, label
        try:
            reply = dict(obj.hello())
            reply.setdefault("protocol", PROTOCOL_VERSION)
            self.hello = parse_hello(reply)
        except ProtocolError as e:
            raise BackendStartError(f"{label}: bad handshake: {e}") from None
        except Exception as e:  # noqa: BLE001 - any failure of foreign code is a start error
            raise BackendStartError(f"{label}: hello() raised {type(e).__name__}: {e}") from None
        if callable(getattr(obj, "run_many", None)):  # only then: the fuzzer batches requests to who has it
            self.run_many = self._run_many

    def run(self, op, params, inputs):
        return self._outcome(lambda: self.obj.run(op, params, inputs))

    def _run_many(self, requests):
        """Outcomes of ``(op, params, inputs)`` requests, from the object's optional ``run_many``: a list with
        one reply per request, each what ``run`` would return or the exception it would raise (returned, not
        raised). Judged exactly as ``run``'s, one by one; if ``run_many`` itself raises or answers the wrong
        number of replies, each request is run alone, so that a fault is the fault of the request that makes it."""
        requests = list(requests)
        try:
            replies = list(self.obj.run_many(requests))
        except Exception:  # noqa: BLE001 - isolation boundary: which request failed is found one by one
            replies = None
        if replies is None or len(replies) != len(requests):
            return [self.run(*r) for r in requests]
        return [self._outcome(lambda reply=reply: _raised(reply)) for reply in replies]

    def _outcome(self, answer):
        """The outcome of calling ``answer()``: its reply validated, or what it raised as an error or fault."""
        try:
            out = answer()
        except BackendError as e:
            return Error(e.code, e.message, e.panic)
        except Unsupported as e:
            return Declined(e.reason)
        except BurnPanic as e:  # a python backend built on the oracle may let burn's panic through
            return Error(e.code, e.message)
        except Exception as e:  # noqa: BLE001 - isolation boundary: a backend bug costs one vector
            # the exception on the first line: a summary (qconform fuzz's fault lines) shows only that line
            return Fault("crashed", f"run() raised {_summary(e)}\n{traceback.format_exc(limit=-4)}")
        try:
            return split_outputs(out)
        except ProtocolError as e:
            return Fault("protocol error", str(e))

    def close(self):
        close = getattr(self.obj, "close", None)
        if callable(close):
            close()


def _summary(e: BaseException) -> str:
    """``IndexError: index 0 is out of bounds ...``: the exception's type and the first line of its message."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def _raised(reply):
    """A ``run_many`` reply as ``run`` gives it: an exception instance stands for the exception raised."""
    if isinstance(reply, BaseException):
        raise reply
    return reply


def python_backend(target: str) -> PythonBackend:
    """``module:attribute`` -> PythonBackend; a class, or a callable without hello/run, is called first.

    ``module`` is also looked for in the current directory, as ``python -m`` would: the ``qconform`` script's
    own sys.path starts at its bin folder, so ``mybackend.py`` next to the user would not be found. It goes
    last, so a local file never shadows an installed package."""
    module, _, attr = target.partition(":")
    if not module or not attr:
        raise BackendStartError(f"python backend spec {target!r} must be 'module:attribute'")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise BackendStartError(f"python backend {target!r}: {e}") from None
    if isinstance(obj, type) or (not (hasattr(obj, "hello") and hasattr(obj, "run")) and callable(obj)):
        obj = obj()  # a class or a factory
    return PythonBackend(obj, f"python:{target}")
