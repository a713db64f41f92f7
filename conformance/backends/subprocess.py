"""The subprocess adapter: one persistent child process, length-prefixed frames on stdin/stdout.

One request is in flight at a time. Reads and writes are non-blocking and bounded by a per-request deadline,
so a child that hangs, stops reading, dies, or writes garbage costs one vector (recorded as ``timed out``,
``crashed`` or ``protocol error``): the process is killed and restarted lazily (with a new handshake) for the
next vector (``run_many`` sends several requests at once and reads their replies in order, for the fuzzer; each
reply has its own deadline, and a fault costs only the request whose reply was due).
After ``max_restarts`` consecutive failed restarts the backend gives up: every later vector is
``crashed`` at once, with the reason, instead of costing a handshake timeout each.

Faults are attributed to the vector that caused them: the child's exit is watched (a pidfd), so a child that
died while a grandchild still holds its stdout is ``crashed``, not ``timed out``; a late reply to an earlier
request is discarded (and noted), not blamed on the next vector; a frame that cannot start a safetensors blob
is refused at its first bytes. A reply of N bytes is read into one buffer of N bytes (above 1 MiB, anonymous
memory committed as bytes arrive) and decoded without copies. At close, the child's descendants are recorded
before the ``bye``, so that helpers it started with ``setsid`` are killed although its exit re-parents them.
stderr is drained by a thread, in chunks, into a bounded tail (bounded line length too) attached to every fault.
"""

from __future__ import annotations

import collections
import mmap
import os
import selectors
import shlex
import signal
import struct
import subprocess
import threading
import time

from ..protocol import (
    BLOB_START,
    HELLO,
    Fault,
    ProtocolError,
    check_blob_start,
    decode_message,
    encode_message,
    frame_length,
    parse_hello,
    parse_reply,
    request_message,
    summarize,
    text_hint,
)
from .base import BackendStartError
from .reap import kill_tree, snapshot

STDERR_LINES = 200
STDERR_LINE_BYTES = 2000  # longer lines are cut (a line without newline must not grow without bound)
MAX_FAILED_RESTARTS = 3


class _Failure(Exception):
    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind, self.detail = kind, detail


class _StderrTail:
    """Drains a pipe in a daemon thread, in chunks, keeping the last lines, each cut to a bounded length (a
    chatty backend must neither block on a full pipe nor make the runner's memory grow)."""

    def __init__(self, pipe):
        self.lines = collections.deque(maxlen=STDERR_LINES)
        self.partial, self.cut = bytearray(), 0
        self.thread = threading.Thread(target=self._drain, args=(pipe,), daemon=True)
        self.thread.start()

    def _drain(self, pipe):
        fd = pipe.fileno()
        try:
            while chunk := os.read(fd, 1 << 16):
                self._add(chunk)
        except OSError:
            pass
        if self.partial or self.cut:
            self._end_line()
        pipe.close()

    def _add(self, chunk: bytes):
        *complete, rest = chunk.split(b"\n")
        for piece in complete:
            self._keep(piece)
            self._end_line()
        self._keep(rest)

    def _keep(self, piece: bytes):
        room = STDERR_LINE_BYTES - len(self.partial)
        self.partial += piece[:room]
        self.cut += max(0, len(piece) - room)

    def _end_line(self):
        line = self.partial.decode("utf-8", "replace")
        self.lines.append(f"{line} [... {self.cut} more bytes]" if self.cut else line)
        self.partial, self.cut = bytearray(), 0

    def text(self) -> str:
        tail = list(self.lines)
        if self.partial:  # a line still being written
            tail.append(self.partial.decode("utf-8", "replace") + (f" [... {self.cut} more bytes]" if self.cut else ""))
        return "\n".join(tail)


# A backend that answered a request and then found itself unusable (burn's device lost after a panic) exits with
# this status; the request it had not read yet is sent again to a fresh process (docs/protocol.md).
RESTART_STATUS = 75  # sysexits.h EX_TEMPFAIL: try again
RESENT_NOTE = "the backend exited for a fresh process (status 75) before reading this request; sent again"


class SubprocessBackend:
    def __init__(self, command: str, *, timeout: float = 30.0, hello_timeout: float = 60.0,
                 max_restarts: int = MAX_FAILED_RESTARTS):
        self.argv = shlex.split(command)
        if not self.argv:
            raise BackendStartError("subprocess backend needs a command line")
        self.timeout, self.hello_timeout, self.max_restarts = timeout, hello_timeout, max_restarts
        self.proc, self._busy = None, False
        self.restarts, self.failed_restarts, self.gave_up, self._next_id = 0, 0, "", 0
        try:
            self.hello = self._start()
        except (_Failure, ProtocolError) as e:
            self._kill()
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
        self._exited = _exit_watch(self.proc.pid, self._sel)
        self._pending, self._writing = [], False
        obj, _, _ = self._exchange(encode_message(HELLO), self.hello_timeout)
        return parse_hello(obj)

    def _kill(self, known: dict | None = None):
        """Kill the child and everything it started, even helpers that left its process group (``known``: a
        snapshot of its descendants taken while it was alive), and reap it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        kill_tree(proc.pid, pipes=(self._in, self._out), known=known)
        self._sel.close()
        if self._exited is not None:
            os.close(self._exited)
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        self.stderr.thread.join(timeout=1)

    def close(self):
        helpers = None
        if self.proc is not None and not self._busy:  # interrupted mid-request: it would not read a bye
            helpers = snapshot(self.proc.pid)  # once it exits, its helpers are no longer its descendants
            try:
                os.write(self._in, _frame_prefix(blob := encode_message({"type": "bye"})) + blob)
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill(helpers)

    def _stderr_suffix(self) -> str:
        text = self.stderr.text() if getattr(self, "stderr", None) else ""
        return f"\nbackend stderr:\n{text}" if text else ""

    # -- requests --

    def run(self, op, params, inputs, *, _resent: bool = False):
        if self.gave_up:
            return Fault("crashed", self.gave_up, self._stderr_text())
        note = self._stale() if self.proc is not None else ""
        if note:
            self._kill()
        if self.proc is None:
            fault = self._restart()
            if fault is not None:
                return fault
        rid, blob = self._request(op, params, inputs)
        self._busy = True  # stays set if an interrupt (KeyboardInterrupt) leaves the exchange half done
        try:
            obj, tensors, late = self._exchange(blob, self.timeout, rid)
            self._busy = False
            outcome = parse_reply(obj, tensors, rid, self.hello.protocol)
            outcome.note = "; ".join(filter(None, [note, late]))
            return outcome
        except (_Failure, ProtocolError) as e:
            self._busy = False
            return self._after_fault(e, (op, params, inputs), note, _resent)

    def _request(self, op, params, inputs) -> tuple[str, bytes]:
        """(a fresh request id, the request's blob)."""
        self._next_id += 1
        rid = f"{self._next_id:x}"
        return rid, encode_message(request_message(rid, op, params), inputs)

    def _after_fault(self, e: Exception, request: tuple, note: str, resent: bool):
        """The outcome of the request in flight when ``e`` happened: the fault, or, when the backend had exited
        with status 75 before reading it, the outcome of sending it once more to a fresh process."""
        fault = Fault(e.kind, e.detail) if isinstance(e, _Failure) else Fault("protocol error", str(e))
        fresh = not resent and fault.kind == "crashed" and self._exited_for_restart()
        # the stream can no longer be trusted: start afresh for the next vector
        self._kill()
        if fresh:
            # It answered its previous request, then exited to get a fresh process (protocol.md, "Exit status 75")
            # before it read this one: this request is not to blame, so it is sent again, once, to the new process.
            outcome = self.run(*request, _resent=True)
            outcome.note = "; ".join(filter(None, [note, RESENT_NOTE, outcome.note]))
            return outcome
        fault.stderr = self._stderr_text()
        fault.note = note
        return fault

    def _exited_for_restart(self) -> bool:
        try:
            return self.proc is not None and self.proc.wait(timeout=5) == RESTART_STATUS
        except subprocess.TimeoutExpired:
            return False

    def run_many(self, requests: list[tuple[str, dict, dict]]) -> list:
        """Several requests in flight at once (protocol v1 unchanged: the child reads frames in order and
        answers each in turn, so replies come back in request order; the fuzzer sends batches). Each reply has
        its own deadline, ``timeout`` from the end of the reply before it (the child starts on a request once it
        has answered the one before). A fault lands on the request whose reply was due, exactly as in ``run``
        (a late reply to an earlier request is discarded); the replies before it are kept and the requests
        after it go to a fresh process."""
        if len(requests) <= 1 or self.gave_up:
            return [self.run(*r) for r in requests]
        note = self._stale() if self.proc is not None else ""
        if note:
            self._kill()
        if self.proc is None:  # (re)start it through run() for the first request, then batch again
            first = self.run(*requests[0])
            first.note = "; ".join(filter(None, [note, first.note]))
            return [first] + self.run_many(requests[1:])
        sent = [self._request(*r) for r in requests]
        self._pending = [memoryview(part) for _, b in sent for part in (_frame_prefix(b), b)]
        outcomes = []
        self._busy = True
        try:
            self._flush()
            for rid, _ in sent:
                obj, tensors, late = self._read_reply(time.monotonic() + self.timeout, self.timeout, rid)
                outcomes.append(parse_reply(obj, tensors, rid, self.hello.protocol))
                outcomes[-1].note = late
        except (_Failure, ProtocolError) as e:
            failure = e
        else:
            failure = None
        finally:
            self._stop_writing()
        self._busy = False  # stays set if an interrupt leaves the batch half done (close() then sends no bye)
        if failure is None:
            return outcomes
        k = len(outcomes)
        return outcomes + [self._after_fault(failure, requests[k], "", False)] + self.run_many(requests[k + 1:])

    def _stop_writing(self):
        """Forget request bytes not written yet (the exchange is over, or failed)."""
        if self._writing:
            self._sel.unregister(self._in)
        self._pending, self._writing = [], False

    def _stale(self) -> str:
        """Why the process cannot take the next request although the last one went fine: it exited after its
        reply, or wrote more after it. The next vector is not blamed: the process is restarted, with a note."""
        ready = {key.fd for key, _ in self._sel.select(0)}  # one system call when all is well
        if self._exited in ready or (self._exited is None and self.proc.poll() is not None):
            return f"the backend had exited (status {self.proc.wait()}) after its previous reply; restarted"
        if self._out in ready:
            try:
                extra = os.read(self._out, 48)
            except OSError:
                extra = b""
            return f"the backend wrote after its previous reply ({summarize(extra)}...); restarted"
        return ""

    def _restart(self) -> Fault | None:
        try:
            self.restarts += 1
            self._start()
            self.failed_restarts = 0
            return None
        except (BackendStartError, _Failure, ProtocolError) as e:
            self._kill()
            self.failed_restarts += 1
            reason = f"backend could not be restarted: {e}"
            if self.failed_restarts >= self.max_restarts:
                self.gave_up = (f"not run: the backend failed {self.failed_restarts} restarts in a row, so the "
                                f"runner gave up on it; the last one: {e}")
            return Fault("crashed", reason, self._stderr_text())

    def _stderr_text(self) -> str:
        return self.stderr.text() if getattr(self, "stderr", None) else ""

    def _exchange(self, blob: bytes, timeout: float, rid: str | None = None):
        """Write one frame, read the reply frame -> (message, tensors, note); _Failure on timeout/exit,
        ProtocolError on garbage. Replies to requests before ``rid`` are discarded (and noted)."""
        deadline = time.monotonic() + timeout
        self._pending = [memoryview(_frame_prefix(blob)), memoryview(blob)]
        try:
            self._flush()
            return self._read_reply(deadline, timeout, rid)
        finally:
            self._stop_writing()

    def _read_reply(self, deadline: float, timeout: float, rid: str | None):
        """The next reply frame that is not a late reply to a request before ``rid`` -> (message, tensors,
        note of what was discarded)."""
        notes = []
        while True:
            prefix = bytes(self._read_exact(bytearray(4), deadline, timeout))
            body = self._read_exact(_frame_buffer(frame_length(prefix)), deadline, timeout, prefix)
            obj, tensors = decode_message(memoryview(body))
            late = _earlier_id(obj.get("id"), rid)
            if late is None:
                return obj, tensors, "; ".join(notes)
            notes.append(f"discarded a late reply to earlier request {late} ({len(body)} bytes)")

    def _read_exact(self, buf: bytearray, deadline: float, timeout: float, prefix: bytes | None = None):
        """Fill ``buf`` from stdout. For a frame body (``prefix`` given), refuse it at its first bytes if they
        cannot start a safetensors blob."""
        view, got, checked = memoryview(buf), 0, prefix is None
        seen = lambda: (prefix or b"") + bytes(buf[:min(got, 48)])
        while got < len(buf):
            try:  # read first, wait only when nothing is there: one system call per chunk in the usual case
                if time.monotonic() >= deadline:  # a steady trickle must not outlive the deadline either
                    raise BlockingIOError
                n = os.readv(self._out, [view[got:]])
            except BlockingIOError:
                self._wait(deadline, timeout, seen)
                continue
            if n == 0:
                what = f" after {got} of {len(buf)} bytes of a frame" if prefix is not None else ""
                raise _Failure("crashed", f"backend closed its stdout{self._exit_text()}{what}; {summarize(seen())}"
                                          f"{text_hint(seen())}")
            got += n
            if not checked and got >= min(len(buf), BLOB_START):
                check_blob_start(prefix, bytes(buf[:BLOB_START]), len(buf))
                checked = True
        return buf

    def _wait(self, deadline: float, timeout: float, seen):
        """Block until stdout is readable, writing pending request bytes meanwhile. _Failure at the deadline, or
        when the child has exited and nothing is left to read although its stdout is still open (held by a
        process it started): that is a crash, not a hang."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Failure("timed out", f"no complete reply within {timeout:g} s ({summarize(seen())})"
                                            f"{text_hint(seen())}")
            ready = {key.fd for key, _ in self._sel.select(left)}
            if self._in in ready:
                self._flush()
            if self._out in ready:
                return
            if self._exited is not None and self._exited in ready and not _readable_now(self._out):
                code = self.proc.wait()
                raise _Failure("crashed", f"backend exited (status {code}{_signal_name(code)}) without a complete "
                                          f"reply while its stdout is still held open by another process (one "
                                          f"it started?); {summarize(seen())}")

    def _flush(self):
        """Write as much of the pending request as the pipe takes now; watch stdin for the rest. A closed stdin
        (the child exited mid-batch) ends the writing, not the exchange: the replies it wrote before are still
        in its stdout, and the fault lands on the first request whose reply is missing when stdout ends."""
        while self._pending:
            try:
                n = os.write(self._in, self._pending[0][:1 << 20])
            except BlockingIOError:
                break
            except (BrokenPipeError, ConnectionResetError):
                self._pending = []
                break
            self._pending[0] = self._pending[0][n:]
            if not self._pending[0]:
                self._pending.pop(0)
        if self._pending and not self._writing:
            self._sel.register(self._in, selectors.EVENT_WRITE)
            self._writing = True
        elif self._writing and not self._pending:
            self._sel.unregister(self._in)
            self._writing = False

    def _exit_text(self) -> str:
        try:
            code = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return ""
        return f" (exit status {code}{_signal_name(code)})"


LAZY_FRAME = 1 << 20
"""A frame body above this is read into anonymous memory (mmap) rather than a zeroed bytearray: its pages are
committed only as bytes arrive, so a length prefix of 1 GiB followed by nothing costs address space, not 1 GiB
(a bytearray of that size is zero-filled, every page touched, before the first byte is read)."""


def _frame_buffer(n: int):
    if n <= LAZY_FRAME:
        return bytearray(n)
    return mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)


def _frame_prefix(blob) -> bytes:
    return struct.pack("<I", len(blob))


def _earlier_id(got, rid: str | None) -> str | None:
    """``got`` when it names a request before ``rid`` (ids are our hex counter): a late or duplicate reply."""
    if rid is None or not isinstance(got, str) or got == rid:
        return None
    try:
        return got if 0 < int(got, 16) < int(rid, 16) else None
    except ValueError:
        return None


def _exit_watch(pid: int, sel) -> int | None:
    """A pidfd that becomes readable when the child exits (Linux >= 5.3), registered with ``sel``."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None
    sel.register(fd, selectors.EVENT_READ)
    return fd


def _readable_now(fd: int) -> bool:
    """Data (or EOF) waiting on ``fd`` right now."""
    with selectors.DefaultSelector() as s:
        s.register(fd, selectors.EVENT_READ)
        return bool(s.select(0))


def _signal_name(code: int) -> str:
    if code < 0:
        try:
            return f", killed by {signal.Signals(-code).name}"
        except ValueError:
            pass
    return ""
