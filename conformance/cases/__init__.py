"""Declarative golden-vector cases, one small module per op (or op family).

A :class:`Case` says *what is asked* (op, params, inputs) and *why* (tags, spec sections, reason); it never says
what the answer is: ``conformance.generate`` asks the oracle, once per profile. Cases are plain data built
with the helpers below; inputs that need randomness draw from :func:`rng`, seeded from the case's alias, never
from global random state.

Conventions (checked by the generator): the alias starts with the op name and is made of lowercase path
segments (``quantize_dynamic/q8s/block-2x4-on-4x8/ties-even``); tags are ``axis:value``; spec sections are
``§N[.M]``. Tags that can be read off the data (ties, subnormals, partial blocks, ...) are added by the
generator, and a declared one that the data does not show is an error.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from oracle import QuantMode, QuantScheme, QuantStore, QuantValue, ScaleDtype


@dataclass(frozen=True)
class Case:
    alias: str
    op: str
    params: dict
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    spec: tuple[str, ...] = ()
    reason: str = ""


def case(alias: str, op: str, params: dict, inputs: dict | None = None, *, tags=(), spec=(), reason="") -> Case:
    return Case(alias, op, params, dict(inputs or {}), tuple(tags), tuple(spec), reason)


# ---- randomness ---------------------------------------------------------------------------------------------

def rng(alias: str) -> np.random.Generator:
    """numpy PCG64 seeded with the first 8 bytes (little-endian) of sha256(alias): the same draws everywhere."""
    seed = int.from_bytes(hashlib.sha256(alias.encode()).digest()[:8], "little")
    return np.random.Generator(np.random.PCG64(seed))


# ---- tensors ------------------------------------------------------------------------------------------------

def f32(*values) -> np.ndarray:
    return np.array(values[0] if len(values) == 1 and not np.isscalar(values[0]) else values, dtype=np.float32)


def f16(*values) -> np.ndarray:
    return f32(*values).astype(np.float16)


def bf16(*values) -> np.ndarray:
    return f32(*values).astype(ml_dtypes.bfloat16)


def i8(*values) -> np.ndarray:
    return np.array(values[0] if len(values) == 1 and not np.isscalar(values[0]) else values, dtype=np.int8)


def u8(*values) -> np.ndarray:
    return np.array(values[0] if len(values) == 1 and not np.isscalar(values[0]) else values, dtype=np.uint8)


def u32(*values) -> np.ndarray:
    return np.array(values[0] if len(values) == 1 and not np.isscalar(values[0]) else values, dtype=np.uint32)


def from_bits(bits, dtype=np.float32) -> np.ndarray:
    """Floats from their bit patterns (``np.float32`` → u32 patterns, ``np.float16`` → u16, bf16 → u16)."""
    width = {np.dtype(np.float32): np.uint32, np.dtype(np.float16): np.uint16,
             np.dtype(ml_dtypes.bfloat16): np.uint16}[np.dtype(dtype)]
    return np.array(bits, dtype=width).view(dtype)


def up(x, n: int = 1) -> np.ndarray:
    """``n`` f32 steps toward +inf."""
    x = np.asarray(x, dtype=np.float32)
    for _ in range(n):
        x = np.nextafter(x, np.float32(np.inf))
    return x


def down(x, n: int = 1) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    for _ in range(n):
        x = np.nextafter(x, np.float32(-np.inf))
    return x


F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.finfo(np.float32).tiny)  # f32::MIN_POSITIVE
F32_DENORM = float(from_bits([1])[0])  # smallest positive subnormal


# ---- schemes ------------------------------------------------------------------------------------------------

def scheme(value: str = "Q8S", *, store: str | tuple = "Native", block=None, block_dtype: str = "F32",
           tensor: str | None = None, mode: str = "Symmetric", raw_block: list[int] | None = None) -> dict:
    """A QuantScheme JSON (``QuantScheme.to_json``, canonical). ``store`` is ``"Native"``, ``("PackedU32", d)``
    or ``("PackedNative", d)``; ``block`` a list of extents (per-block level), ``tensor`` the per-tensor level's
    dtype. ``raw_block`` writes that block list verbatim instead of the canonical form (readers must
    canonicalize it)."""
    s = QuantScheme(value=QuantValue[value], mode=QuantMode[mode],
                    store=QuantStore("Native") if store == "Native" else QuantStore(store[0], store[1]))
    if block is not None or raw_block is not None:
        s = s.per_block(block if block is not None else raw_block, ScaleDtype[block_dtype])
    if tensor is not None:
        s = s.per_tensor(ScaleDtype[tensor])
    j = s.to_json()
    if raw_block is not None:
        j["block"]["size"] = list(raw_block)
    return j


def level_scheme(level: str, value: str = "Q8S", *, block=(4,), block_dtype: str = "F32",
                 two_level_dtype: str = "UE4M3", **kw) -> dict:
    """The scheme of a level: ``tensor`` (per-tensor F32), ``block`` (one-level, ``block_dtype``) or
    ``two-level`` (``two_level_dtype`` blocks + F32 per-tensor)."""
    if level == "tensor":
        return scheme(value, **kw)
    if level == "block":
        return scheme(value, block=list(block), block_dtype=block_dtype, **kw)
    return scheme(value, block=list(block), block_dtype=two_level_dtype, tensor="F32", **kw)


STORES = (("native", "Native"), ("packed", ("PackedU32", 0)), ("packed-native", ("PackedNative", 0)))


def value_range(value: str) -> tuple[float, float]:
    return QuantValue[value].range()


def half_span(value: str) -> float:
    """``(b - a) / 2``: with ``max |x| = half_span * s`` a dynamic scale is exactly ``s`` (§3 step 4)."""
    a, b = value_range(value)
    return (b - a) / 2
