"""The semantic cells a vector covers, as tags: structural ones read off its op and params (``value:Q8S``,
``level:two-level``, ``shape:partial-block``), value classes read off its data and the oracle's stages
(``class:tie-odd-neg``, ``class:reciprocal-split``) and outcome tags (``panic:<code>``, ``profiles:disagree``).
``qconform coverage`` aggregates them over the declared lattice (``conformance/coverage.py``)."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np

import oracle
from oracle import BlockLayout, QuantScheme, Stages, get_profile
from oracle.vocabulary import level

from . import tensorio
from .cases import Case
from .formats import formats_of

# The value classes a vector's data shows (``class:...`` tags), every one derived from the data by data_tags.
VALUE_CLASSES = ("signed-zero", "subnormal", "inf", "nan", "max-finite", "tie-even-pos", "tie-even-neg",
                 "tie-odd-pos", "tie-odd-neg", "tie-neighbour", "almost-half", "on-grid", "saturate", "zero-block",
                 "zero-scale", "ue4m3-subnormal-scale", "reciprocal-split", "two-level-split")
# Classes of the scale grid (``class:...``), read off the data like the value classes but kept out of the
# value-class plane: they are cells of a named format (``qconform coverage --format``), whose scale dtype
# decides which of them can occur. grid-tie / grid-near-tie: x / s at (one f32 step from) a midpoint of the
# value's own code grid (for a minifloat these are not the integer ties); scale-overflow / -underflow: a scale
# before it is stored above the scale dtype's largest value / below its smallest positive one (a block that is
# not all zero); scale-subnormal: a stored scale in the scale dtype's subnormal range; scale-max /
# scale-smallest: a dequantize scale at the scale dtype's largest / smallest positive value.
GRID_CLASSES = ("grid-tie", "grid-near-tie", "scale-overflow", "scale-underflow", "scale-subnormal", "scale-max",
                "scale-smallest")
_REFERENCE_ORDER = ("ndarray", "cubecl", "flex")
# The smallest positive and the smallest normal value of each scale dtype (UE8M0 has no subnormals).
_SCALE_SMALLEST = {"F32": 2.0**-149, "F16": 2.0**-24, "BF16": 2.0**-133, "UE8M0": 2.0**-127, "UE4M3": 2.0**-9}
_SCALE_MIN_NORMAL = {"F32": 2.0**-126, "F16": 2.0**-14, "BF16": 2.0**-126, "UE8M0": 2.0**-127, "UE4M3": 2.0**-6}


def code_grid(value) -> np.ndarray:
    """The non-negative finite values a code of ``value`` (a QuantValue) stands for, ascending."""
    if value in oracle.rounding.MINIFLOAT_DTYPES:
        bits = np.arange(1 << (4 if value.name == "E2M1" else 8), dtype=np.uint8).view(np.int8)
        v = oracle.rounding.minifloat_values(bits, value).astype(np.float64)
        return np.unique(v[np.isfinite(v) & (v >= 0)])
    return np.arange(0, value.range()[1] + 1, dtype=np.float64)


def code_midpoints(value) -> np.ndarray:
    """The midpoints between neighbouring codes of ``value``: where the tie rule decides (f32)."""
    g = code_grid(value)
    return ((g[:-1] + g[1:]) / 2).astype(np.float32)


def structural_tags(c: Case) -> set[str]:
    tags = {f"op:{c.op}"}
    p = c.params
    if "scheme" in p:
        s = QuantScheme.from_json(p["scheme"])
        tags |= {f"value:{s.value.name}", f"store:{s.store.kind}", f"mode:{s.mode.name}", f"level:{level(s)}",
                 f"scale:{s.scale_dtype().name}"}
        if s.global_scale_dtype() is not None:
            tags.add(f"global:{s.global_scale_dtype().name}")
        raw = (p["scheme"].get("block") or {}).get("size") or []
        if raw and raw[0] == 1:
            tags.add("shape:leading-1")
        if raw and raw != list(s.block_size().dims):
            tags.add("shape:canonicalized")
    for key, axis in (("steps", "step"), ("view", "view")):
        tags |= {f"{axis}:{s['op']}" for s in p.get(key, [])}
    tags |= {f"other:{kind}" for kind in map(_other_side, p.get("steps", [])) if kind}
    if "dtype" in p and p["dtype"] in oracle.ScaleDtype.__members__:
        tags.add(f"scale:{p['dtype']}")
    if "value" in p:
        tags.add(f"value:{p['value']}")
    for key in ("api", "calibration"):
        if key in p:
            tags.add(f"{key}:{p[key]}")
    primary = next((c.inputs[k] for k in ("x", "codes", "min", "lhs", "scales", "bytes", "words") if k in c.inputs),
                   None)
    if c.op in ("dequantize", "load_quantized"):
        tags.add(f"dtype:{p.get('dtype', 'f32')}")
    elif primary is not None and primary.dtype.kind == "f" or (primary is not None and primary.dtype.name == "bfloat16"):
        tags.add(f"dtype:{oracle.rounding.dtype_name(primary.dtype)}")
    shape = tuple(p["shape"]) if c.op == "scheme_info" else (None if primary is None else primary.shape)
    if shape is not None and c.op in ("quantize", "quantize_dynamic", "dequantize", "scheme_info", "compute_range",
                                      "to_bytes", "from_bytes", "load_quantized"):
        if c.op in ("from_bytes", "load_quantized"):
            shape = tuple(p["shape"])
        tags |= _shape_tags(shape, p.get("scheme"))
    if "scheme" in p and shape is not None:  # the named formats (conformance/formats.py) the request is
        tags |= {f"format:{name}" for name in formats_of(QuantScheme.from_json(p["scheme"]), shape)}
    return tags


def _other_side(step: dict) -> str | None:
    """What a step's other operand is: a second quantized tensor, the held tensor itself, a float rhs or lhs."""
    if "rhs_scheme" in step:
        return "quantized"
    if step.get("rhs") == "self":
        return "self"
    return "float" if "rhs" in step else "float-lhs" if "lhs" in step else None


def _shape_tags(shape: tuple, scheme_json) -> set[str]:
    tags = {f"shape:rank-{len(shape)}"}
    numel = math.prod(shape)
    if numel == 0:
        tags.add("shape:empty")
    if numel >= 4096:
        tags.add("shape:large")
    if scheme_json is None:
        return tags
    scheme = QuantScheme.from_json(scheme_json)
    tags |= _packed_line_tags(shape, scheme)
    size = scheme.block_size()
    if size is None:
        return tags
    ext = size.to_dim_vec(len(shape))
    if any(d % e for d, e in zip(shape, ext)):
        tags.add("shape:partial-block")
    if any(e > 1 for e in ext[:-1]):
        tags.add("shape:nd-block")
    if any(e > d for d, e in zip(shape, ext)):
        tags.add("shape:block-larger")
    if len(size.dims) > len(shape):
        tags.add("shape:block-rank-exceeds")
    return tags


def _packed_line_tags(shape: tuple, scheme: QuantScheme) -> set[str]:
    """Where a packed store's lines run (burn >= 0.23.0-pre.1 packs along the packed dim) and whether each line
    needs padding to whole words."""
    if scheme.store.kind == "Native" or not shape or scheme.store.dim >= len(shape):
        return set()
    _, per_word, _ = oracle.packing.word_layout(scheme)
    line = shape[len(shape) - 1 - scheme.store.dim]
    return {f"packed-dim:{'innermost' if scheme.store.dim == 0 else 'outer'}",
            f"line:{'whole' if line % per_word == 0 else 'padded'}"}


def _round_away(v):
    return oracle.round_half_away(np.asarray(v, dtype=np.float32))


def data_tags(c: Case, entries: dict[str, dict]) -> set[str]:
    """Value classes read off the inputs and the reference profile's stages."""
    tags: set[str] = set()
    x = c.inputs.get("x")
    if x is not None and x.size and c.op in ("quantize", "quantize_dynamic", "compute_range"):
        xf = x.astype(np.float32)
        info_tiny = float(np.finfo(np.float16).tiny) if x.dtype == np.float16 else oracle.scheme.F32_MIN_POSITIVE
        finite_max = {np.dtype(np.float16): 65504.0}.get(x.dtype, None)
        if finite_max is None:
            finite_max = float(np.finfo(np.float32).max) if x.dtype == np.float32 else oracle.scheme.BF16_MAX
        if np.any((xf == 0) & np.signbit(xf)):
            tags.add("signed-zero")
        if np.any((xf != 0) & (np.abs(xf) < info_tiny)):
            tags.add("subnormal")
        if np.any(np.isinf(xf)):
            tags.add("inf")
        if np.any(np.isnan(xf)):
            tags.add("nan")
        if np.any(np.abs(xf) == finite_max):
            tags.add("max-finite")
        if c.op == "quantize_dynamic":
            s = QuantScheme.from_json(c.params["scheme"])
            size = s.block_size()
            if size is None:
                zero = not np.any(xf)
            else:
                layout = BlockLayout(x.shape, size)
                zero = layout.divides() and bool(np.any(np.all(
                    layout.element_view(xf) == 0, axis=tuple(range(1, 2 * x.ndim, 2)))))
            if zero:
                tags.add("zero-block")
    if c.op == "dequantize":
        tags |= _stored_scale_classes(c)
    if c.op not in ("quantize", "quantize_dynamic"):
        return {f"class:{t}" for t in tags}
    scheme = QuantScheme.from_json(c.params["scheme"])
    a, b = scheme.value.range()
    ref = None
    for backend in _REFERENCE_ORDER:
        for name, e in entries.items():
            stages = e.get("stages")
            if get_profile(name).backend == backend and stages is not None and stages.scaled is not None:
                ref = ref or stages
    for e in entries.values():
        r = e["stages"].rounded_scales if "stages" in e else None
        if r is not None and r.size:
            if np.any(r == 0):
                tags.add("zero-scale")
            if scheme.scale_dtype().name == "UE4M3" and np.any((r > 0) & (r < 2.0**-6)):
                tags.add("ue4m3-subnormal-scale")
    if ref is None:
        return {f"class:{t}" for t in tags}
    with np.errstate(all="ignore"):
        tags |= _scale_range_classes(c, ref, scheme) | _grid_tie_classes(ref, scheme)
        return {f"class:{t}" for t in tags | _scaled_classes(ref, x, scheme, a, b)}


def _stored_scale_classes(c: Case) -> set[str]:
    """dequantize: the given (decoded) scales at the edges of the scheme's scale dtype."""
    s = c.inputs.get("scales")
    if s is None or "scheme" not in c.params:
        return set()
    dtype = QuantScheme.from_json(c.params["scheme"]).scale_dtype()
    s = np.asarray(s, dtype=np.float32)
    tags = set()
    if np.any(s == 0):
        tags.add("zero-scale")
    if np.any(s == np.float32(dtype.max_representable())):
        tags.add("scale-max")
    if np.any(s == np.float32(_SCALE_SMALLEST[dtype.name])):
        tags.add("scale-smallest")
    if np.any((s > 0) & (s < _SCALE_MIN_NORMAL[dtype.name])):
        tags.add("scale-subnormal")
    return tags


def _scale_range_classes(c: Case, ref: Stages, scheme: QuantScheme) -> set[str]:
    """The scale before it is stored (the caller's for quantize; compute_q_params', normalized against the global
    for two-level, for quantize_dynamic) against the scale dtype's range, and the stored scale's subnormality."""
    dtype = scheme.scale_dtype()
    if c.op == "quantize":
        before = np.asarray(c.inputs["scales"], dtype=np.float32).ravel()
        live = np.ones(before.shape, bool)
    else:
        before = ref.normalized_scales if ref.normalized_scales is not None else ref.raw_scales
        if before is None:
            return set()
        before = np.asarray(before, dtype=np.float32).ravel()
        live = before != 0
        if ref.max is not None and ref.min is not None and np.size(ref.max) == before.size:
            live = (np.asarray(ref.max).ravel() != 0) | (np.asarray(ref.min).ravel() != 0)
    tags = set()
    if np.any(before > dtype.max_representable()):
        tags.add("scale-overflow")
    # a given scale of 0 is the zero-scale class; a computed one of a block that is not all zero underflowed
    positive = before > 0 if c.op == "quantize" else before >= 0
    if np.any(live & np.isfinite(before) & positive & (before < _SCALE_SMALLEST[dtype.name])):
        tags.add("scale-underflow")
    stored = ref.rounded_scales
    if stored is not None and np.any((stored > 0) & (stored < _SCALE_MIN_NORMAL[dtype.name])):
        tags.add("scale-subnormal")
    return tags


def _grid_tie_classes(ref: Stages, scheme: QuantScheme) -> set[str]:
    """x / e exactly at, or one f32 step from, a midpoint of the value's code grid."""
    v = np.abs(np.asarray(ref.scaled, dtype=np.float32).ravel())
    v = v[np.isfinite(v)]
    mids = code_midpoints(scheme.value)
    tags = set()
    if np.any(np.isin(v, mids)):
        tags.add("grid-tie")
    near = np.concatenate([np.nextafter(mids, np.float32(0)), np.nextafter(mids, np.float32(np.inf))])
    if np.any(np.isin(v, near)):
        tags.add("grid-near-tie")
    return tags


def _per_element(grid: np.ndarray, shape: tuple, scheme: QuantScheme) -> np.ndarray:
    """Per-block values spread over a tensor of ``shape``."""
    size = scheme.block_size()
    if size is None:
        return np.broadcast_to(grid.ravel()[0], shape)
    layout = BlockLayout(shape, size)
    return layout.spread(grid.ravel()[: layout.block_count()])


def _scaled_classes(ref: Stages, x: np.ndarray, scheme: QuantScheme, a: float, b: float) -> set[str]:
    """Classes of the divided values ``x / e`` (the reference profile's ``scaled`` stage), and whether the
    division forms burn's backends use would round some element differently."""
    tags: set[str] = set()
    v = ref.scaled.ravel()
    fin = np.isfinite(v)
    av = np.abs(v)
    fl = np.floor(av)
    tie = fin & (av - fl == 0.5)
    inside = np.where(np.signbit(v), fl + 1 <= -a, fl + 1 <= b)
    for parity, name in ((0, "even"), (1, "odd")):
        hit = tie & inside & (fl % 2 == parity)
        if np.any(hit & ~np.signbit(v)):
            tags.add(f"tie-{name}-pos")
        if np.any(hit & np.signbit(v)):
            tags.add(f"tie-{name}-neg")
    half = (fl + 0.5).astype(np.float32)
    near = fin & ~tie & ((np.nextafter(half, np.float32(0)) == av) | (np.nextafter(half, np.float32(np.inf)) == av))
    if np.any(near & (av < b)):
        tags.add("tie-neighbour")
    if np.any(av == np.float32(0.49999997)):
        tags.add("almost-half")
    if np.any((v > b) | (v < a)):
        tags.add("saturate")
    nonzero = fin & (v != 0)
    if nonzero.sum() >= 2 and np.all(v[fin] == np.trunc(v[fin])) and np.all(fin):
        tags.add("on-grid")
    x32 = x.astype(np.float32).ravel()
    e = _per_element(ref.effective_scales, x.shape, scheme).ravel()
    div = np.clip(_round_away(x32 / e), a, b)
    rec = np.clip(_round_away(x32 * (np.float32(1) / e)), a, b)
    if np.any((div != rec) & np.isfinite(div) & np.isfinite(rec)):
        tags.add("reciprocal-split")
    if ref.global_scale is not None:
        g = ref.global_scale.ravel()[0]
        s_el = _per_element(ref.rounded_scales, x.shape, scheme).ravel()
        seq = np.clip(_round_away((x32 / s_el) / g), a, b)
        prod = np.clip(_round_away(x32 / (g * s_el)), a, b)
        if np.any((seq != prod) & np.isfinite(seq) & np.isfinite(prod)):
            tags.add("two-level-split")
    return tags


def outcome_tags(entries: dict[str, dict]) -> set[str]:
    tags = set()
    errors = [e["error"]["code"] for e in entries.values() if "error" in e]
    tags |= {f"panic:{code}" for code in errors}
    defined = [e for e in entries.values() if "undefined" not in e]
    tags.add("outcome:error" if errors else "outcome:ok")
    if len(errors) not in (0, len(defined)):
        tags.add("outcome:ok")
    if len(defined) < len(entries):
        tags.add("outcome:undefined")
    if len({_fingerprint(e) for e in entries.values()}) > 1:
        tags.add("profiles:disagree")
    return tags | invariant_tags(entries)


def invariant_tags(entries: dict[str, dict]) -> set[str]:
    """``invariant:broken-<backend>`` where a chain of pure moves on a quantized tensor does not dequantize to the
    moved dequantized input (the oracle's ``moved`` stage, ``oracle/layout.py``): burn changed the values."""
    tags = set()
    for name, e in entries.items():
        moved = e["stages"].moved if e.get("stages") is not None else None
        x = (e.get("outputs") or {}).get("x")
        if moved is None or x is None:
            continue
        kept = x.shape == moved.shape and np.array_equal(x.view(np.uint32), moved.view(np.uint32))
        tags.add(f"invariant:{'kept' if kept else 'broken'}-{get_profile(name).backend}")
    return tags


def _fingerprint(e: dict) -> str:
    if "undefined" in e:
        return "undefined"
    if "error" in e:
        return "error:" + e["error"]["code"]
    h = hashlib.sha256()
    for name in sorted(e["outputs"]):
        a = e["outputs"][name]
        h.update(f"{name}{tensorio.dtype_name(a)}{a.shape}".encode() + a.tobytes())
    h.update(json.dumps(e["values"], sort_keys=True).encode())
    return h.hexdigest()
