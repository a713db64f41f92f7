"""The types of the command line's numeric options, shared by every subcommand (`qconform run`, `serve`, `fuzz` ...):
a bad value is an argparse usage error (exit 2) naming the option, never a backend's fault or a traceback."""
from __future__ import annotations

import argparse
import math


def seconds(text: str) -> float:
    """A duration: a finite number of seconds above 0 (0, negative, NaN or infinite would make every wait
    either fail at once or never end)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, got {text!r}")
    return value


def count(text: str) -> int:
    """A count of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def indices(text: str) -> list[int]:
    """Case indices, comma-separated, each a whole number of at least 0 or a range ``A-B`` (both included), none
    repeated (the order kept): what :func:`compact` writes."""
    values: list[int] = []
    for part in text.split(","):
        lo, dash, hi = part.partition("-")
        try:
            first, last = int(lo), int(hi if dash else lo)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a case index or a range A-B: {part!r} in {text!r}") from None
        if first < 0 or last < first:
            raise argparse.ArgumentTypeError(f"a case index is at least 0, a range A-B has A <= B: got {part!r}")
        values.extend(range(first, last + 1))
    seen: set[int] = set()
    for v in values:
        if v in seen:
            raise argparse.ArgumentTypeError(f"case {v} given twice in {text!r}")
        seen.add(v)
    return values


def compact(values: list[int]) -> str:
    """Indices as :func:`indices` reads them, each run of consecutive ones as a range ``A-B``."""
    parts: list[str] = []
    start = prev = None
    for v in [*values, None]:
        if start is not None and v == prev + 1:
            prev = v
            continue
        if start is not None:
            parts.append(str(start) if prev == start else f"{start}-{prev}")
        start = prev = v
    return ",".join(parts)


def port(text: str) -> int:
    """A TCP port: 0 (any free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {text!r}")
    return value
