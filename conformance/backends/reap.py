"""Killing a backend process and everything it started, including helpers that left its process group.

A backend runs in its own session, so killing its process group normally takes its helpers along. A helper
that called ``setsid`` (or ``setpgid``) escapes a group kill. On Linux we therefore also find, in ``/proc``:

* every descendant of the backend (by parent pid), found while the backend is still alive, so none has been
  re-parented yet; each is stopped first (SIGSTOP: it can no longer fork) and the search repeated until no new
  process appears, then all are killed;
* every process that holds one of the backend's pipes (its stdin or stdout), wherever it lives in the tree.

A backend that exits on its own (the ``bye`` at the end of a run) re-parents its helpers before we look, so
:func:`snapshot` records its descendants while it is still alive, just before the ``bye``, and ``kill_tree``
kills those of them that still run (each checked by its start time, so a recycled pid is left alone).

What cannot be found this way (docs/reliability.md): a process that was double-forked away from the backend
(its parent exited, so it is no longer a descendant) *and* closed the backend's pipes, before cleanup started
(or, at the end of a run, started after the snapshot). Without ``/proc`` (not Linux) only the process group is
killed.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

PROC = Path("/proc")


def snapshot(pid: int) -> dict[int, str]:
    """The descendants of ``pid`` now (itself excluded), each with its start time: for ``kill_tree(known=)``."""
    if not PROC.is_dir():
        return {}
    return {p: t for p in _descendants(pid) - {pid, os.getpid()} if (t := _start_time(p)) is not None}


def kill_tree(pid: int, pipes: tuple[int, ...] = (), known: dict[int, str] | None = None) -> None:
    """SIGKILL ``pid``, its process group, its descendants, holders of ``pipes`` (our ends' fds) and the
    processes of a :func:`snapshot` (``known``) that are still the same processes."""
    victims = set()
    if PROC.is_dir():
        inodes = {_pipe_inode(fd) for fd in pipes} - {None}
        survivors = {p for p, t in (known or {}).items() if _start_time(p) == t}
        while True:  # stop before kill: a stopped process cannot fork a new one behind our back
            found = (_descendants(pid) | _holders(inodes) | set().union(*map(_descendants, survivors)))
            found -= victims | {os.getpid()}
            if not found:
                break
            for p in found:
                _signal(p, signal.SIGSTOP)
            victims |= found
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), *(lambda p=p: _signal(p, signal.SIGKILL) for p in victims)):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass


def _signal(pid: int, sig) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (start time in clock ticks since boot): with the pid, names one process."""
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _parents() -> dict[int, int]:
    out = {}
    for d in PROC.iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            out[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])  # the comm field may hold spaces
    return out


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (empty without /proc)."""
    return [c for c, parent in _parents().items() if parent == pid] if PROC.is_dir() else []


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found, todo = {root}, [root]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in found:
                found.add(c)
                todo.append(c)
    return found


def _pipe_inode(fd: int) -> str | None:
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return target if target.startswith("pipe:") else None


def _holders(inodes: set[str]) -> set[int]:
    """Processes (other than us) with a file descriptor on one of these pipes."""
    if not inodes:
        return set()
    me, out = os.getpid(), set()
    for d in PROC.iterdir():
        if not d.name.isdigit() or int(d.name) == me:
            continue
        try:
            fds = list((d / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(fd) in inodes:
                    out.add(int(d.name))
                    break
            except OSError:
                continue
    return out
