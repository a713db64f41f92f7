"""The subprocess adapter: one persistent child process, length-prefixed frames on stdin/stdout.

One request is in flight at a time. Reads and writes are non-blocking and bounded by a per-request deadline,
so a child that hangs, stops reading, dies, or writes garbage costs one vector (recorded as ``timed out``,
``crashed`` or ``protocol error``): the process is killed and restarted lazily (with a new handshake) for the
next vector. stderr is drained by a thread into a bounded tail that is attached to every fault.
"""

from __future__ import annotations

import collections
import os
import selectors
import shlex
import signal
import subprocess
import threading
import time

from ..protocol import (
    HELLO,
    Fault,
    ProtocolError,
    decode_message,
    encode_message,
    frame,
    frame_length,
    parse_hello,
    parse_reply,
    request_message,
)
from .base import BackendStartError

STDERR_LINES = 200


class _Failure(Exception):
    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind, self.detail = kind, detail


class _StderrTail:
    """Drains a pipe in a daemon thread, keeping the last lines (a chatty backend must not block on it)."""

    def __init__(self, pipe):
        self.lines = collections.deque(maxlen=STDERR_LINES)
        self.thread = threading.Thread(target=self._drain, args=(pipe,), daemon=True)
        self.thread.start()

    def _drain(self, pipe):
        for line in iter(pipe.readline, b""):
            self.lines.append(line.decode("utf-8", "replace").rstrip("\n")[:2000])
        pipe.close()

    def text(self) -> str:
        return "\n".join(self.lines)


class SubprocessBackend:
    def __init__(self, command: str, *, timeout: float = 30.0, hello_timeout: float = 60.0):
        self.argv = shlex.split(command)
        if not self.argv:
            raise BackendStartError("subprocess backend needs a command line")
        self.timeout, self.hello_timeout = timeout, hello_timeout
        self.proc = None
        self.restarts, self._next_id = 0, 0
        try:
            self.hello = self._start()
        except (_Failure, ProtocolError) as e:
            raise BackendStartError(f"subprocess {command!r} failed its handshake: {e}"
                                    f"{self._stderr_suffix()}") from None

    # -- process lifecycle --

    def _start(self):
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, bufsize=0, start_new_session=True)
        except OSError as e:
            raise BackendStartError(f"cannot start {self.argv[0]!r}: {e}") from None
        self.stderr = _StderrTail(self.proc.stderr)
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._out, selectors.EVENT_READ)
        obj, _ = self._exchange(encode_message(HELLO), self.hello_timeout)
        return parse_hello(obj)

    def _kill(self):
        """Kill the child (its own process group: we started it with a new session) and reap it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        self._sel.close()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        self.stderr.thread.join(timeout=1)

    def close(self):
        if self.proc is not None:
            try:
                os.write(self._in, frame(encode_message({"type": "bye"})))
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self._kill()

    def _stderr_suffix(self) -> str:
        text = self.stderr.text() if getattr(self, "stderr", None) else ""
        return f"\nbackend stderr:\n{text}" if text else ""

    # -- requests --

    def run(self, op, params, inputs):
        if self.proc is None:
            try:
                self.restarts += 1
                self._start()
            except (BackendStartError, _Failure, ProtocolError) as e:
                self._kill()
                return Fault("crashed", f"backend could not be restarted: {e}", self._stderr_text())
        self._next_id += 1
        rid = f"{self._next_id:x}"
        blob = encode_message(request_message(rid, op, params), inputs)
        try:
            obj, tensors = self._exchange(blob, self.timeout)
            return parse_reply(obj, tensors, rid)
        except _Failure as f:
            fault = Fault(f.kind, f.detail)
        except ProtocolError as e:
            fault = Fault("protocol error", str(e))
        # the stream can no longer be trusted: start afresh for the next vector
        self._kill()
        fault.stderr = self._stderr_text()
        return fault

    def _stderr_text(self) -> str:
        return self.stderr.text() if getattr(self, "stderr", None) else ""

    def _exchange(self, blob: bytes, timeout: float):
        """Write one frame, read one frame; _Failure on timeout/EOF, ProtocolError on garbage."""
        deadline = time.monotonic() + timeout
        pending = memoryview(frame(blob))
        pending = pending[self._write(pending):]
        if pending:
            self._sel.register(self._in, selectors.EVENT_WRITE)
        buf, need = bytearray(), None
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _Failure("timed out", f"no complete reply within {timeout:g} s "
                                                f"({len(buf)} bytes received)")
                for key, _ in self._sel.select(left):
                    if key.fd == self._in:
                        pending = pending[self._write(pending):]
                        if not pending:
                            self._sel.unregister(self._in)
                        continue
                    chunk = self._read()
                    buf += chunk
                    if need is None and len(buf) >= 4:
                        need = frame_length(bytes(buf[:4]))
                    if need is not None and len(buf) >= 4 + need:
                        if len(buf) > 4 + need:
                            raise ProtocolError(f"backend wrote {len(buf) - 4 - need} bytes after its reply")
                        return decode_message(bytes(buf[4:]))
        finally:
            if pending and self.proc is not None:
                try:
                    self._sel.unregister(self._in)
                except (KeyError, ValueError):
                    pass

    def _write(self, data: memoryview) -> int:
        try:
            return os.write(self._in, data[:1 << 20])
        except BlockingIOError:
            return 0
        except (BrokenPipeError, ConnectionResetError):
            raise _Failure("crashed", f"backend closed its stdin{self._exit_text()}") from None

    def _read(self) -> bytes:
        try:
            chunk = os.read(self._out, 1 << 20)
        except BlockingIOError:
            return b""
        if not chunk:
            raise _Failure("crashed", f"backend closed its stdout{self._exit_text()}")
        return chunk

    def _exit_text(self) -> str:
        try:
            code = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return ""
        return f" (exit status {code}{_signal_name(code)})"


def _signal_name(code: int) -> str:
    if code < 0:
        try:
            return f", killed by {signal.Signals(-code).name}"
        except ValueError:
            pass
    return ""
