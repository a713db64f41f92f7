"""burn's accidents are not requirements: which expectations are burn bugs, and which only test burn's validation.

A profile's expectation is what burn does, and burn's own builds are judged by it exactly. A backend written for
the same arithmetic need not copy two kinds of accident, so the suite marks them (docs/vector-format.md,
"Accidents"):

* **burn bugs** (tag ``accident:burn-bug``): an expectation that breaks an invariant ``docs/findings.md``
  records. The profile's entry then lists the invariant-respecting outcome under ``acceptable``, and the runner
  accepts either from a backend that is not burn (``Runner(exact_burn=False)``); the verdict says which one the
  backend gave (``Verdict.gave``).
* **validation only** (tag ``accident:validation``): an expected panic whose only point is refusing an invalid
  request (bytes of the wrong length, a scale count that is not the block count, ...); the profile's entry says
  which request under ``validation``. A backend that declares ``"validates": false`` gets such a vector declined
  under that profile: counted, never failed.

The two invariants checked here, each computed by the oracle from the vector itself:

1. *A pure move keeps every value* (``qlayout``): ``dequantize(op(q)) == op(dequantize(q))`` (findings,
   "burn bugs: dequantize(op(q)) != op(dequantize(q))"). Acceptable: the moved dequantized input as ``x``; the
   codes and scales of the result are the backend's own.
2. *burn reads back the bytes it writes* (findings, "Q4S PackedU32 nibble re-read"): up to burn 0.22.1 a 4/2-bit
   PackedU32 tensor is written one byte per value and read back as packed u32 words, so its codes change on the
   way through ``TensorData``. Acceptable: the outcome of the same request with the values held as written (the
   scheme's ``Native`` twin, which stores one byte per value), when that twin is a result and differs. burn-cubecl
   0.22.1 also reads a tensor packed along an outer axis as if its bytes were its stored twin's (that axis swapped
   innermost), which burn-std 0.22.1 does not write: acceptable there is the same request packed along the
   innermost dim.
3. *A view quantizes as its contiguous copy* (``quantize_view``): burn-cubecl reads a view through its strides,
   and there burn-std's reshape analysis indexes past the shape of some views with a 0-size dim and cubek-reduce's
   vectors fold other elements than the view's (findings, "burn 0.22.1 on the GPU route"). Acceptable, where the
   copy has a result unlike burn's: the same request on the view's values, contiguous.
"""

from __future__ import annotations

import numpy as np

from oracle import QuantScheme, get_profile
from oracle.errors import BurnPanic
from oracle.dequantize import stored_swapped
from oracle.scheme import NATIVE, QuantStore
from oracle.views import resolved, view

BURN_BUG, VALIDATION_ONLY = "accident:burn-bug", "accident:validation"

# Panic codes (oracle/errors.py) that refuse an invalid request, each with the request it refuses. A panic that
# is burn's limit (an unsupported scheme, dtype or store, "not yet supported") or burn's bug (an empty tensor's
# max) is not here: those stay requirements of the profile.
VALIDATION = {
    "data.shape_mismatch": "values that do not fill the tensor's shape",
    "flex.clamp_reversed": "clamp bounds with min > max",
    "bytes.values_fill_shape": "values that do not fill the tensor's shape",
    "bytes.global_not_f32": "a two-level global in another dtype than f32",
    "bytes.global_missing": "a two-level scheme without its global",
    "bytes.global_unexpected": "a global for a scheme without two levels",
    "bytes.too_short": "fewer bytes than the scheme's parameters",
    "bytes.not_u32_multiple": "packed values that are not whole u32 words",
    "bytes.values_length": "a values region of the wrong length",
    "data.invalid_length": "bytes of the wrong length for the shape and scheme",
    "data.invalid_layout": "a packed dim or block beyond the tensor's rank",
    "quantize.global_mismatch": "a global that does not match the scheme",
    "quantize.global_without_two_level": "a global for a scheme without two levels",
    "quantize.two_level_without_global": "a two-level scheme without its global",
    "tensor.global_not_one": "a global of more than one element",
    "tensor.global_not_f32": "a global that is not an f32 tensor",
    "cubecl.global_not_f32": "a two-level global in another dtype than f32",
    "cubecl.global_tensor_not_f32": "a global that is not an f32 tensor",
    "cubecl.scale_bindings": "a scale count that is not the scheme's levels",
    "ndarray.block_count": "a scale count that is not the block count",
    "scale.index_out_of_bounds": "fewer scales than blocks",
    "scale.slice_out_of_bounds": "no scale at all",
    "flex.qtensor_no_scale": "no scale at all",
    "range.block_not_divisible": "a tensor that is not a whole number of blocks",
    "flex.block_not_whole": "a tensor that is not a whole number of blocks",
}

# The ops whose result passes through burn's TensorData bytes (written, then read back by into_vec_i8).
THROUGH_BYTES = ("quantize", "quantize_dynamic", "quantize_view", "dequantize", "load_quantized")


# The ops that move a quantized tensor after loading it: a validation panic there is validation only when the
# load alone raises it (else it is burn's bug on a valid tensor, e.g. ndarray's block count after a slice).
MOVES = {"qlayout": "steps", "quantize_view": "view"}

# Panics of burn <= 0.22.1 reading back 4/2-bit PackedU32 bytes it wrote one byte per value.
READ_BACK = ("data.shape_mismatch", "bytes.not_u32_multiple")


def validation(op: str, params: dict, inputs: dict, profile: str, entry: dict, run) -> str | None:
    """What invalid request an expected panic refuses (the entry's ``validation``), or None when the panic is
    not validation only: not a validation code, a move's panic on a valid tensor, or a burn bug (``acceptable``)."""
    why = VALIDATION.get((entry.get("error") or {}).get("code"))
    if why is None or entry.get("acceptable"):
        return None
    if op in MOVES:
        loaded = run(op, dict(params, **{MOVES[op]: []}), inputs, profile)
        if getattr(loaded, "code", None) != entry["error"]["code"]:
            return None
    return why


def mark(op: str, params: dict, inputs: dict, entries: dict[str, dict], run) -> dict[str, dict]:
    """Each profile's expectation of a request with its accidents marked, in place: ``acceptable`` where it is a
    burn bug, ``validation`` where it only refuses an invalid request. -> the entries marked."""
    marked = {}
    for p, e in entries.items():
        alternatives = acceptable(op, params, inputs, p, e, run)
        if alternatives:
            e["acceptable"] = alternatives
        refused = validation(op, params, inputs, p, e, run)
        if refused:
            e["validation"] = refused
        if alternatives or refused:
            marked[p] = e
    return marked


def acceptable(op: str, params: dict, inputs: dict, profile: str, entry: dict, run) -> list[dict]:
    """The invariant-respecting outcomes of one profile's expectation ``entry`` (empty when burn keeps the
    invariants there): ``[{"outputs", "values", "why"}]``. ``run(op, params, inputs, profile)`` asks the oracle.
    The expectation may be a panic: burn 0.22 cannot read back some of the bytes it writes."""
    if op == "quantize_view" and "undefined" not in entry and params["view"]:
        copy = _contiguous_copy(params, inputs, profile, entry.get("outputs"), run)
        if copy is not None:
            return [copy]
    if "undefined" in entry or ("error" in entry and entry["error"]["code"] not in READ_BACK):
        return []
    moved = _moved(entry) if "outputs" in entry else None
    if moved is not None:
        return [moved]
    twin = _written_twin(op, params, inputs, profile, entry, run) or _innermost_twin(op, params, inputs, profile,
                                                                                    entry, run)
    return [] if twin is None else [twin]


def _contiguous_copy(params, inputs, profile, held, run) -> dict | None:
    """The view's values quantized as a contiguous tensor (the same request with no view steps), where that is a
    result unlike burn's outputs ``held``."""
    try:
        steps = resolved(np.shape(inputs["x"]), params["view"], get_profile(profile).reshape_zero_keeps_dim)
    except BurnPanic:  # burn-tensor refuses the view itself: no copy to compare with
        return None
    twin = run("quantize_view", dict(params, view=[]), {"x": view(np.asarray(inputs["x"]), steps)}, profile)
    return _as_written(twin, held, "a view quantizes as its contiguous copy (burn-cubecl reads this view through its "
                                   "strides and answers otherwise, docs/findings.md)")


def _moved(entry: dict) -> dict | None:
    stages = entry.get("stages")
    moved = None if stages is None else stages.moved
    x = entry["outputs"].get("x")
    if moved is None or x is None:
        return None
    if x.shape == moved.shape and np.array_equal(x.view(np.uint32), moved.view(np.uint32)):
        return None
    return {"outputs": {"x": np.ascontiguousarray(moved)}, "values": {},
            "why": "a pure move keeps every value: x = op(dequantize(q)) (burn changes values here, "
                   "docs/findings.md); the result's codes and scales are the backend's own"}


def _written_twin(op, params, inputs, profile, entry, run) -> dict | None:
    if op not in THROUGH_BYTES or "scheme" not in params or get_profile(profile).value_layout != "bytes":
        return None  # a release that packs what it writes (>= 0.23.0-pre.1) reads it back as written
    scheme = QuantScheme.from_json(params["scheme"])
    if scheme.store.kind != "PackedU32" or scheme.value.is_float or scheme.value.size_bits >= 8:
        return None
    twin = run(op, dict(params, scheme=scheme.with_store(NATIVE).to_json()), inputs, profile)
    return _as_written(twin, entry.get("outputs"),
                       "burn reads back the bytes it writes: the values held as written, one byte each (burn <= 0.22.1 "
                       "writes 4/2-bit PackedU32 codes one byte per value and reads them back as packed u32 words, "
                       "docs/findings.md)")


def _as_written(twin, held: dict | None, why: str) -> dict | None:
    """The twin request's outcome as the acceptable one: a result unlike burn's outputs ``held`` (None where burn
    panics), else nothing."""
    outputs = getattr(twin, "outputs", None)
    if outputs is None or (held is not None and (set(outputs) != set(held) or _same(outputs, held))):
        return None
    return {"outputs": {k: np.ascontiguousarray(v) for k, v in outputs.items()}, "values": dict(twin.values),
            "why": why}


def _same(a: dict, b: dict) -> bool:
    return all(a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes() for k in a)


def _innermost_twin(op, params, inputs, profile, entry, run) -> dict | None:
    """burn-cubecl 0.22.1 reads a tensor packed along an outer axis from bytes laid out as its stored twin's, which
    burn-std 0.22.1 does not write (``oracle.dequantize.stored_swapped``): the values as written are the same
    tensor's packed along its innermost dim, which the device reads in order."""
    held = entry.get("outputs")  # burn's panics here are not this bug's
    if held is None or op not in THROUGH_BYTES or "scheme" not in params or "codes" not in inputs:
        return None
    scheme = QuantScheme.from_json(params["scheme"])
    if not stored_swapped(scheme, np.shape(inputs["codes"]), get_profile(profile)):
        return None
    twin = run(op, dict(params, scheme=scheme.with_store(QuantStore.packed_u32(0)).to_json()), inputs, profile)
    return _as_written(twin, held,
                       "burn reads back the bytes it writes: the values as written, which the same tensor packed along "
                       "its innermost dim reads back in order (burn-cubecl 0.22.1 takes an outer-packed tensor's bytes "
                       "as its stored twin's, docs/findings.md)")


def tags(entries: dict[str, dict]) -> set[str]:
    """``accident:burn-bug`` when some profile's expectation has an acceptable alternative, ``accident:validation``
    when some profile's expectation is a validation panic."""
    out = set()
    if any(e.get("acceptable") for e in entries.values()):
        out.add(BURN_BUG)
    if any(e.get("validation") for e in entries.values()):
        out.add(VALIDATION_ONLY)
    return out
