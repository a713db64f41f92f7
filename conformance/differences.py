"""What differs, in words: the data classes of one wrong output's differing elements (issue 21).

Each class is a pattern a real bug leaves in the data, independent of any hypothesis about the arithmetic:
signed zeros only, NaN encodings only, wrap-around vs saturation, exact .5 ties of ``x/s`` (computed with the
*backend's* scale when it returned one), and a scale's distance in steps of its own dtype's grid (an F16
subnormal step is one step, not 16384 f32 ulps). Texts carry no counts, so equal classes aggregate across
vectors; the element count travels beside them.
"""

from __future__ import annotations

import numpy as np

from oracle.blocks import layout_of
from oracle.rounding import minifloat_values, round_up
from oracle.scheme import QuantValue, ScaleDtype

from . import tensorio
from .hypotheses import grid_index, is_minifloat_encoding, is_subnormal, minifloat_midpoints
from .protocol import scheme_of

SCALE_OUTPUTS = ("scales", "global", "rounded")


def differing(want: np.ndarray, got: np.ndarray) -> np.ndarray:
    """The elements whose bit patterns differ (any NaN equals any NaN in a float output, as compare does)."""
    bad = tensorio.bits(want) != tensorio.bits(got)
    if want.dtype.kind == "f" or tensorio.dtype_name(want) == "BF16":
        bad &= ~(np.isnan(want.astype(np.float32)) & np.isnan(got.astype(np.float32)))
    return bad


def classify(name: str, want: np.ndarray, got: np.ndarray, vector, scaled: np.ndarray | None = None) -> list[dict]:
    """The classes of output ``name``'s differing elements: [{"class", "text", "elements"}]."""
    if want.shape != got.shape or tensorio.dtype_name(want) != tensorio.dtype_name(got):
        return []
    bad = differing(want, got)
    n = int(bad.sum())
    if not n:
        return []
    w, g = want[bad], got[bad]
    out = []

    def add(cls: str, text: str, count: int = n):
        out.append({"class": cls, "text": f"{name}: {text}", "elements": count})

    value = _value(vector)
    if want.dtype.kind == "f" or tensorio.dtype_name(want) == "BF16":
        w32, g32 = w.astype(np.float32), g.astype(np.float32)
        if ((w32 == 0) & (g32 == 0)).all():
            sign = "-0.0 where burn gives +0.0" if np.signbit(g32).all() else \
                "+0.0 where burn gives -0.0" if not np.signbit(g32).any() else "the other signed zero"
            add("signed-zero", f"signed zero only: {sign}")
        dtype = _scale_dtype(name, vector)
        if name == "scales" and dtype is not None:  # before the steps: it names the case, they only measure it
            out += _guarded(w32, g32, dtype, n)
            out += _no_zero(w32, g32, dtype, n)
        if dtype is not None:
            out += _scale_steps(name, w32, g32, dtype, n)
        if name == "global" and dtype is ScaleDtype.F32:
            out += _global(w32, g32, n)
        if name == "x" and vector is not None and vector.op == "dequantize":
            out += _given_scales(vector, got, bad, n)
        return out
    nans = scaled is not None and scaled.shape == want.shape and bool(np.isnan(scaled[bad]).all())
    minifloat = value is not None and value.is_float and want.dtype == np.int8
    encoding = minifloat and bool((np.isnan(minifloat_values(w, value)) & np.isnan(minifloat_values(g, value))).all())
    if nans and not encoding and want.dtype.kind in "iu":
        codes = ", ".join(str(int(c)) for c in np.unique(w)[:3])
        add("nan-input", f"every differing element is a NaN of x/s (the backend's scale), where burn stores code "
                         f"{codes} (the NaN rule)")
    if minifloat:
        if encoding:
            add("nan-encoding", f"NaN encoding only: both are NaN codes of {value.name}, with other bits")
        elif scaled is not None and not nans and is_minifloat_encoding(scaled, want, value):
            out += _minifloat_ties(name, scaled[bad], minifloat_values(g, value), value, n)
        return out
    if want.dtype.kind in "iu" and value is not None and not value.is_float:
        out += _integer_codes(name, w.astype(np.int64), g.astype(np.int64), value, n)
        if scaled is not None and scaled.shape == want.shape and not nans:
            out += _ties(name, scaled[bad].astype(np.float64), g.astype(np.float64), n)
    return out


def _given_scales(vector, got: np.ndarray, bad: np.ndarray, n: int) -> list[dict]:
    """Every differing element is its code times the *given* f32 scale: the backend skipped the round trip, in
    which burn stores each scale in the scheme's scale dtype first and multiplies by the stored one (a scale off
    that grid moves; UE8M0 has no 0, so a 0 is stored as its smallest value, 2^-127)."""
    scheme = scheme_of(vector.params)
    codes, scales = vector.inputs.get("codes"), vector.inputs.get("scales")
    if scheme is None or scheme.num_levels() != 1 or codes is None or scales is None:
        return []
    try:
        spread = layout_of(codes.shape, scheme).spread(np.asarray(scales, np.float32).ravel())
    except ValueError:  # a deliberately wrong scale count: no per-element scale to compare with
        return []
    values = minifloat_values(codes, scheme.value) if scheme.value.is_float else codes.astype(np.float32)
    with np.errstate(all="ignore"):
        naive = (values * spread).astype(np.float32).astype(got.dtype)
    if naive.shape != got.shape or differing(naive[bad], got[bad]).any():
        return []
    dtype = scheme.scale_dtype().name
    return [{"class": "given-scales", "text": f"x: every differing element is its code times the given f32 scale, "
                                              f"where burn first stores the scales as {dtype} (dequantize is burn's "
                                              f"round trip, docs/ops.md; a loader of stored bytes wants "
                                              f"load_quantized)", "elements": n}]


def _minifloat_ties(name, v, got_values, value: QuantValue, n: int) -> list[dict]:
    """Whether every differing element's x/s lies exactly halfway between two codes of the minifloat's grid
    (burn's conversions round those to even), and which way the backend's codes went."""
    tie, below, above = minifloat_midpoints(v, value)
    grid = f"the {value.name} grid"
    if not tie.any():
        return []
    if not tie.all():
        return [{"class": "some-ties", "text": f"{name}: some differing elements of x/s (the backend's scale) are "
                                               f"exactly halfway between two codes of {grid}, others not",
                 "elements": n}]
    mag = np.abs(got_values.astype(np.float64))
    rules = {"away from zero": mag == above, "toward zero": mag == below}
    which = [rule for rule, hit in rules.items() if hit.all()]
    how = f", rounded {' or '.join(which)} where burn rounds to even" if which else ""
    return [{"class": "ties", "text": f"{name}: every differing element of x/s (the backend's scale) is exactly "
                                      f"halfway between two codes of {grid}{how}", "elements": n}]


def _value(vector) -> QuantValue | None:
    scheme = scheme_of(vector.params) if vector is not None else None
    if scheme is not None:
        return scheme.value
    v = vector.params.get("value") if vector is not None else None
    return QuantValue[v] if v in QuantValue.__members__ else None


def _scale_dtype(name: str, vector) -> ScaleDtype | None:
    if name not in SCALE_OUTPUTS or vector is None:
        return None
    if "dtype" in vector.params and vector.params["dtype"] in ScaleDtype.__members__:
        return ScaleDtype[vector.params["dtype"]]
    scheme = scheme_of(vector.params)
    if scheme is None:
        return None
    return scheme.global_scale_dtype() if name == "global" else scheme.scale_dtype()


def _scale_steps(name, w, g, dtype: ScaleDtype, n: int) -> list[dict]:
    """The distance in steps of the scale dtype's grid (the most common one named)."""
    fin = np.isfinite(w) & np.isfinite(g) & (np.sign(w) == np.sign(g))
    if dtype is ScaleDtype.F32 or not fin.any():
        return []
    steps = grid_index(g[fin], dtype) - grid_index(w[fin], dtype)
    values, counts = np.unique(np.round(steps, 3), return_counts=True)
    top = values[np.argmax(counts)]
    where = " (F16 subnormals)" if dtype is ScaleDtype.F16 and is_subnormal(w[fin], dtype).all() else \
        " (subnormals of the dtype)" if is_subnormal(w[fin], dtype).all() else ""
    unit = "step" if abs(top) == 1 else "steps"
    text = f"{top:+g} {dtype.name} {unit} from burn's{where}"
    if top == 0:  # off the grid by less than a thousandth of a step: "-0 steps" would read as no difference
        text = f"off the {dtype.name} grid, within a thousandth of a step of burn's{where}"
    if len(values) > 1:
        text = f"mostly {text}"
    return [{"class": "scale-steps", "text": f"{name}: {text}", "elements": int(counts.max()) if len(values) > 1 else n}]


def _guarded(w, g, dtype: ScaleDtype, n: int) -> list[dict]:
    """Every differing scale is burn-flex's guard value ``round_up(f32::MIN_POSITIVE)`` (§5.3), which replaces a
    scale that is 0, negative, NaN or infinite: the backend stored that scale (or something else) instead."""
    guard = round_up(np.array([np.finfo(np.float32).tiny], np.float32), dtype, ue8m0=True)[0]  # 2^-126 on UE8M0
    if not (w == guard).all() or (g == guard).any():
        return []
    return [{"class": "scale-guard", "text": f"scales: burn stores its guard value {guard:g} where the backend does "
                                             "not: a scale that is 0, negative, NaN or infinite becomes it (§5.3; "
                                             "e.g. 2·amax overflowing f32)", "elements": n}]


def _no_zero(w, g, dtype: ScaleDtype, n: int) -> list[dict]:
    """Every differing scale is 0 where burn stores UE8M0's smallest value: E8M0 has no zero (code 0 is 2^-127),
    so a zero scale is held as that."""
    if dtype is not ScaleDtype.UE8M0 or not (g == 0).all() or not (w == np.float32(2.0**-127)).all():
        return []
    return [{"class": "ue8m0-no-zero", "text": "scales: 0 where burn stores 2^-127, UE8M0's smallest value (E8M0 "
                                                "has no zero: a zero scale is held as code 0)", "elements": n}]


def _global(w, g, n: int) -> list[dict]:
    """A two-level global that is 1 (no split into a global and block scales), or a few f32 ulps off burn's
    ``f32(max(block scales) / M)`` (§3.1: the same quantity computed in another order, such as amax / (6 · 448))."""
    if (g == 1).all() and not (w == 1).any():
        return [{"class": "global-one", "text": "global: 1.0 where burn's is f32(max(block scales) / M) (§3.1): the "
                                                "backend does not split the scale into a global and block scales",
                 "elements": n}]
    fin = np.isfinite(w) & np.isfinite(g) & (w > 0) & (g > 0)
    if not fin.all():
        return []
    ulps = g.view(np.int32).astype(np.int64) - w.view(np.int32).astype(np.int64)
    if (np.abs(ulps) > 4).any():
        return []
    top = int(ulps[0]) if (ulps == ulps[0]).all() else None
    far = f"{top:+d} f32 ulp{'s' if abs(top) > 1 else ''}" if top is not None else "within 4 f32 ulps"
    return [{"class": "global-ulps", "text": f"global: {far} from burn's f32(max(block scales) / M) (§3.1): the same "
                                             "quantity rounded another way, e.g. amax / (range · M) in one division",
             "elements": n}]


def scale_steps_text(name: str, want: np.ndarray, got: np.ndarray, vector) -> str:
    """How far the differing scales of output ``name`` are from burn's on the scale dtype's own grid ("-1 F16 step
    from burn's"), or '' where the output is not a scale stored on a coarser grid than f32."""
    dtype = _scale_dtype(name, vector)
    if dtype is None or want.dtype != np.float32:
        return ""
    found = _scale_steps(name, want.astype(np.float64), got.astype(np.float64), dtype, int(want.size))
    return found[0]["text"].split(": ", 1)[1] if found else ""


def _integer_codes(name, w, g, value: QuantValue, n: int) -> list[dict]:
    a, b = (int(v) for v in value.range())
    d = g - w
    span = b - a
    out = []
    wrap = np.abs(d) > span // 2
    if wrap.all():
        saturates = np.isin(w, (a, b)).all()
        how = "wraps where burn saturates" if saturates else "wrap-around"
        out.append({"class": "wrap", "text": f"{name}: {how} (code distance near the range)", "elements": n})
    elif np.isin(g, (a, b)).all() and not np.isin(w, (a, b)).any():
        out.append({"class": "saturation", "text": f"{name}: saturates where burn does not", "elements": n})
    return out


def _ties(name, v, g, n: int) -> list[dict]:
    """Whether every differing element is an exact .5 tie of x/s, and which rule the backend's codes follow."""
    with np.errstate(invalid="ignore"):
        tie = np.abs(v - np.trunc(v)) == 0.5
    if not tie.any():
        return [{"class": "not-ties", "text": f"{name}: no differing element is an exact .5 tie of x/s "
                                                  "(the backend's scale)", "elements": n}]
    if not tie.all():
        return [{"class": "some-ties", "text": f"{name}: some differing elements are exact .5 ties of x/s "
                                                   "(the backend's scale), others not", "elements": n}]
    rules = {"to even": np.rint(v), "toward zero": np.trunc(v), "away from zero": np.trunc(v) + np.sign(v)}
    which = [rule for rule, r in rules.items() if (r == g).all()]
    how = f", rounded {' or '.join(which)}" if which else ""
    return [{"class": "ties", "text": f"{name}: every differing element is an exact .5 tie of x/s (the backend's "
                                          f"scale){how}", "elements": n}]
