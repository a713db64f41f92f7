"""Every file and folder a command writes (reports, JUnit, badges, HTML, repro and fuzz suites), written so that
no run loses its verdict to its outputs.

* Checked before the work starts (``check_file``, ``check_folder``, ``check_inside``): a path that cannot be written is a named
  error then, not a traceback after an hour of running. The check creates and removes a probe file in the
  target's folder, because permission bits say nothing to root and nothing about a read-only mount.
* Written atomically (``write_file``, ``write_folder``): into a temporary file or folder beside the target, then
  renamed over it, so a full disk or a killed process leaves the old file whole or no file, never a cut one.
  Only a regular file (or nothing) is ever replaced: renaming over a device or a FIFO would replace the node
  itself, and a folder would be lost.
* A write that fails after the work raises ``OutputError``; the commands print their verdict first and then
  exit with ``WRITE_FAILED``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

WRITE_FAILED = 6
"""Exit status of a command that printed its verdict but could not write one of its outputs (docs/runner.md)."""


class OutputError(Exception):
    """An output cannot be written; the message names the path and why."""


def _target(path: str | Path) -> Path:
    """``path`` with symbolic links resolved: a link to a report is replaced where the report is."""
    return Path(os.path.realpath(path))


def _existing_parent(path: Path) -> Path:
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


def _probe(folder: Path, what: str) -> None:
    if not folder.is_dir():
        raise OutputError(f"{what}: {folder} is not a folder")
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".qconform-probe-")
    except OSError as e:
        raise OutputError(f"{what}: cannot write in {folder}: {e.strerror or e}") from None
    os.close(fd)
    os.unlink(probe)


def check_file(path: str | Path) -> Path:
    """Fail now if ``path`` cannot be written as a file: its folder must exist and take a new file, and the path,
    if it exists, must be a regular file. Returns the resolved target."""
    target = _target(path)
    if target.exists() and not stat.S_ISREG(target.stat().st_mode):
        raise OutputError(f"{path}: exists and is not a regular file (only a regular file is replaced)")
    if not target.parent.exists():
        raise OutputError(f"{path}: folder {target.parent} does not exist")
    _probe(target.parent, str(path))
    return target


def check_folder(path: str | Path, *, force: bool = False) -> Path:
    """Fail now if a suite folder cannot be written at ``path``: an existing one is replaced only with ``force``
    (and only a folder); missing parents are created at write time, so the nearest existing one is probed."""
    target = _target(path)
    if target.exists() or target.is_symlink():
        if not target.is_dir():
            raise OutputError(f"{path}: exists and is not a folder")
        if not force:
            raise OutputError(f"{path}: exists; not replaced without --force")
    _probe(_existing_parent(target), str(path))
    return target


def check_inside(path: str | Path) -> Path:
    """Fail now if files cannot be written inside the folder ``path`` (created at write time if missing)."""
    target = _target(path)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{path}: exists and is not a folder")
    _probe(target if target.exists() else _existing_parent(target), str(path))
    return target


def write_file(path: str | Path, data: str | bytes) -> None:
    """``data`` (text is UTF-8) to ``path``, atomically: a temporary file beside it, synced, renamed over it."""
    target = check_file(path)
    blob = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp's 0600 would make a report private to its writer
        os.replace(tmp, target)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"{path}: not written: {e.strerror or e}") from None


def write_folder(path: str | Path, fill: Callable[[Path], object], *, force: bool = False):
    """A folder written by ``fill(folder)`` into a temporary folder beside ``path``, then renamed to it (an
    existing folder is replaced only with ``force``). Returns what ``fill`` returned."""
    target = check_folder(path, force=force)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    old = None
    try:
        result = fill(tmp)
        os.chmod(tmp, 0o777 & ~_umask())
        if target.exists():
            old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
            os.replace(target, old / "x")
        os.replace(tmp, target)
    except OSError as e:
        if old is not None and not target.exists():
            with contextlib.suppress(OSError):
                os.replace(old / "x", target)  # put the old suite back
        raise OutputError(f"{path}: not written: {e.strerror or e}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return result


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
