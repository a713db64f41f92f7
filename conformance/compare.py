"""Judging one backend reply against one vector's expectation: comparison contracts and bit-level diffs.

The default contract is bit-exact: element bytes compared as unsigned integers, where any NaN equals any NaN
and nothing else is relaxed (-0.0 != +0.0). ``allclose`` is used only where a vector's contract says so.
The verdict carries both a human message (TestFloat-style bit fields, code/ULP distances) and a structured
form for the JSON report.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field

import numpy as np

import oracle

from . import tensorio
from .differences import scale_steps_text
from .protocol import Error, Fault, Outcome, Result, scheme_of

FIRST = 8  # differing elements shown per output

# Bit layouts (sign, exponent, mantissa) of float tensor dtypes and of fp8/fp4 element codes.
FLOAT_FIELDS = {"F32": (1, 8, 23), "F16": (1, 5, 10), "BF16": (1, 8, 7)}
CODE_FIELDS = {"E4M3": (1, 4, 3), "E5M2": (1, 5, 2), "E2M1": (1, 2, 1)}

# Statuses of a verdict, and the failure kinds a 'failed' verdict can have.
PASSED, FAILED, NOT_APPLICABLE = "passed", "failed", "not applicable"
XFAILED, XPASSED, SKIPPED = "xfailed", "xpassed", "skipped"
# The backend answered 'unsupported' (protocol 2) for a vector inside its declared capabilities: not a failure,
# but counted and listed in every summary, so that declining cannot pass for conforming.
DECLINED = "declined"
STATUSES = (PASSED, FAILED, DECLINED, NOT_APPLICABLE, XFAILED, XPASSED, SKIPPED)
# The note that starts a not-applicable verdict on a validation-only vector declined for a backend that declares
# ``validates: false`` (conformance/accidents.py); reports count them apart.
VALIDATION_DECLINED = "validation only, declined"
# A failure kind of the runner itself (an exception while judging): the vector is failed, never lost.
RUNNER_ERROR = "runner error"
FAILURE_KINDS = ("mismatch", "wrong error", "unexpected error", "missing error", "message mismatch", "crashed",
                 "timed out", "protocol error", RUNNER_ERROR)


@dataclass
class Verdict:
    id: str
    alias: str
    op: str
    profile: str
    status: str
    kind: str | None = None       # mismatch | wrong error | unexpected error | missing error | message mismatch
    #                               | crashed | timed out | protocol error | runner error
    message: str = ""             # human-readable, multi-line
    details: dict = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    note: str = ""                # e.g. a tolerated message mismatch, an expectation's reason
    diagnosis: dict | None = None
    gave: str = ""                # on a burn-bug expectation (accidents.py): "burn" or "acceptable", which one passed
    formats: list[str] = field(default_factory=list)  # the backend's declared formats this vector is

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> Verdict:
        return cls(**d)


def scheme_text(params: dict) -> str:
    """A compact one-line description of a vector's scheme (or of its scale dtype / value)."""
    s = scheme_of(params)
    if s is None:
        return " ".join(f"{k}={params[k]}" for k in ("dtype", "value") if k in params) or "-"
    parts = [s.value.name, s.store.debug(), s.mode.name]
    if s.tensor is not None:
        parts.append(f"tensor-scale {s.tensor.name}")
    if s.block is not None:
        parts.append(f"block {'x'.join(map(str, s.block.size.dims))} {s.block.dtype.name}")
    else:
        parts.append("per-tensor")
    return " ".join(parts)


# ---- judging --------------------------------------------------------------------------------------------

def judge(vector, profile: str, outcome: Outcome, *, strict_messages: bool = False,
          classify=None, exact_burn: bool = False) -> Verdict:
    """The verdict on one vector. ``classify(message) -> code`` infers codes a backend left out. Where the
    expectation is a burn bug, the invariant-respecting outcome it lists as ``acceptable`` passes too, unless
    ``exact_burn`` (burn's own builds must give burn's outcome)."""
    v = _judge_burn(vector, profile, outcome, strict_messages, classify)
    alternatives = vector.expected[profile].acceptable
    if not alternatives:
        return v
    if v.status == PASSED:
        v.gave = "burn"
    elif not exact_burn and isinstance(outcome, Result):
        accepted = next((a for a in alternatives if _gives(a, outcome, vector)), None)
        if accepted is not None:
            return Verdict(vector.id, vector.alias, vector.op, profile, PASSED, tags=list(vector.tags),
                           gave="acceptable", note=f"not burn's outcome (a burn bug); acceptable: {accepted.why}")
    return v


def _gives(alternative, outcome: Result, vector) -> bool:
    """Whether the reply gives an acceptable outcome: exactly the outputs and values it pins (others are free)."""
    pinned = Result({k: v for k, v in outcome.outputs.items() if k in alternative.outputs},
                    {k: v for k, v in outcome.values.items() if k in alternative.values})
    return not diff_results(Result(alternative.outputs, alternative.values), pinned, {}, vector)


def _judge_burn(vector, profile: str, outcome: Outcome, strict_messages: bool, classify) -> Verdict:
    """The verdict against burn's own outcome under ``profile``."""
    exp = vector.expected[profile]
    v = Verdict(vector.id, vector.alias, vector.op, profile, FAILED, tags=list(vector.tags))
    head = lambda: _head(vector, profile)  # built only for a verdict that carries a message
    if isinstance(outcome, Fault):
        v.kind = outcome.kind
        v.details = {"detail": outcome.detail, "stderr": outcome.stderr[-4000:]}
        tail = f"\n  backend stderr (last lines):\n{_indent(outcome.stderr, 4, 20)}" if outcome.stderr else ""
        v.message = f"{head()}\n  {outcome.kind}: {outcome.detail}{tail}"
        return v
    if exp.error is not None:
        return _judge_error(v, head, exp.error, outcome, strict_messages, classify)
    if isinstance(outcome, Error):
        v.kind = "unexpected error"
        actual = _actual_error(outcome, classify)
        v.details = {"actual_error": actual}
        how = " (inferred from the message)" if actual["code_inferred"] else ""
        v.message = f"{head()}\n  expected outputs, backend raised {actual['code']}{how}: {outcome.message}"
        return v
    diffs = diff_results(expected_outcome(exp), outcome, exp.compare, vector, exp.stages.scaled, profile=profile)
    if not diffs:
        v.status = PASSED
        return v
    v.kind = "mismatch"
    v.details = {"outputs": diffs}
    v.message = head() + "".join("\n" + render_diff(d) for d in diffs)
    return v


def _head(vector, profile: str) -> str:
    """A failure message's first lines: which vector, scheme and profile (built only for a failure)."""
    head = f"{vector.alias} [{vector.id}] op {vector.op}, {scheme_text(vector.params)}, profile {profile}"
    if getattr(vector, "reason", ""):  # what the vector is about: often the shortest route to the bug
        head += f"\n  vector: {vector.reason}"
    return head


def _actual_error(outcome, classify) -> dict:
    """The backend's error with its code, classified from the message when the backend gave none."""
    code, inferred = outcome.code, False
    if code is None and classify is not None:
        code, inferred = classify(outcome.message), True
    return {"code": code, "message": outcome.message, "code_inferred": inferred, "panic": outcome.panic}


def _judge_error(v: Verdict, head, want: dict, outcome, strict_messages: bool, classify) -> Verdict:
    """``head()``: the message's first lines, built only when the verdict needs a message."""
    expected = f"{want['code']}: {want['message']!r}"
    if isinstance(outcome, Result):
        v.kind = "missing error"
        v.details = {"expected_error": want, "outputs": sorted(outcome.outputs) + sorted(outcome.values)}
        v.message = f"{head()}\n  expected error {expected}\n  backend returned data: {v.details['outputs']}"
        return v
    actual = _actual_error(outcome, classify)
    code = actual["code"]
    v.details = {"expected_error": want, "actual_error": actual}
    how = " (inferred from the message)" if actual["code_inferred"] else ""
    # a code read off the text names the first site with that text; the expected site may share it (an index panic)
    if code != want["code"] and not (actual["code_inferred"] and oracle.errors.fits(want["code"], outcome.message)):
        v.kind = "wrong error"
        v.message = f"{head()}\n  expected error {expected}\n  backend error  {code}{how}: {outcome.message!r}"
        return v
    if not oracle.message_matches(want["message"], outcome.message):
        v.kind = "message mismatch"
        text = f"right code {code}{how}, different message:\n  expected {want['message']!r}\n" \
               f"  actual   {outcome.message!r}"
        if strict_messages:
            v.message = f"{head()}\n  {text}"
            return v
        v.note = text
    v.status = PASSED
    return v


# ---- output comparison ----------------------------------------------------------------------------------

def expected_outcome(exp) -> Result | Error:
    """A vector's expectation under one profile, as the outcome a conforming backend returns."""
    if exp.undefined is not None:
        return Fault("undefined behaviour", exp.undefined)
    if exp.error is not None:
        return Error(exp.error["code"], exp.error["message"])
    return Result(exp.outputs, exp.values)


def same_outcome(want: Outcome, got: Outcome, contract: dict, vector=None) -> bool:
    """Whether two outcomes are the same answer under a vector's comparison ``contract``: errors by their code,
    results output by output (exact, or the contract's tolerance) and value by value. A fault, or an error
    without a code, is never the same as anything. The mutation gate and the diagnosis both ask this."""
    if isinstance(want, Error) and isinstance(got, Error):
        return want.code is not None and want.code == got.code
    if isinstance(want, Result) and isinstance(got, Result):
        return not diff_results(want, got, contract, vector)
    return False


def diff_results(want: Result, got: Result, contract: dict, vector=None, scaled: np.ndarray | None = None, *,
                 profile: str | None = None) -> list[dict]:
    """Every way the result ``got`` differs from ``want`` under the comparison ``contract``; an empty list means
    it conforms. ``scaled`` (the expectation's x/s stage) is shown next to differing elements it lines up with;
    ``profile`` (the judged one) says how its codes read."""
    diffs = []
    for name, expected in want.outputs.items():
        actual = got.outputs.get(name)
        if actual is None:
            diffs.append({"output": name, "problem": "missing", "text": f"output {name!r} is missing"})
            continue
        d = diff_tensor(name, expected, actual, contract.get(name), vector, scaled, profile)
        if d:
            diffs.append(d)
    for name in sorted(set(got.outputs) - set(want.outputs)):
        diffs.append({"output": name, "problem": "unexpected",
                      "text": f"unexpected output {name!r} ({_shape_dtype(got.outputs[name])})"})
    for name, expected in want.values.items():
        actual = got.values.get(name, _MISSING)
        if actual is _MISSING or _canon(actual) != _canon(expected):
            shown = "missing" if actual is _MISSING else json.dumps(actual)
            diffs.append({"output": name, "problem": "value", "expected": expected,
                          "actual": None if actual is _MISSING else actual,
                          "text": f"value {name!r}: expected {json.dumps(expected)}, actual {shown}"})
    return diffs


_MISSING = object()


def _canon(v) -> str:
    return json.dumps(v, sort_keys=True)


def _shape_dtype(a: np.ndarray) -> str:
    return f"{tensorio.dtype_name(a)}{list(a.shape)}"


def diff_tensor(name: str, want: np.ndarray, got: np.ndarray, contract: dict | None, vector,
                scaled: np.ndarray | None = None, profile: str | None = None) -> dict | None:
    """The differences of one output, or None. ``scaled`` is the vector's ``x/s`` intermediate (the divided
    values before rounding), shown next to each differing element when it lines up with the output."""
    if tensorio.dtype_name(got) != tensorio.dtype_name(want) or got.shape != want.shape:
        return {"output": name, "problem": "dtype/shape", "expected": _shape_dtype(want),
                "actual": _shape_dtype(got),
                "text": f"output {name!r}: expected {_shape_dtype(want)}, got {_shape_dtype(got)}"}
    if contract and contract.get("kind") == "allclose":
        return _diff_allclose(name, want, got, contract, vector)
    if want.tobytes() == got.tobytes():  # the same bytes are the same bit patterns: the common case, one C call
        return None
    bad = tensorio.bits(want) != tensorio.bits(got)
    if want.dtype.kind == "f" or tensorio.dtype_name(want) == "BF16":
        bad &= ~(np.isnan(want) & np.isnan(got))  # any NaN equals any NaN
    if not bad.any():
        return None
    return _element_report(name, want, got, bad, vector, "exact", scaled, profile)


def _diff_allclose(name, want, got, contract, vector) -> dict | None:
    w, g = want.astype(np.float64), got.astype(np.float64)
    rtol, atol = contract["rtol"], contract["atol"]
    bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return None
    d = _element_report(name, want, got, bad, vector, f"allclose rtol={rtol} atol={atol}")
    err = np.abs(g - w)[bad]
    d["max_abs_error"] = float(np.nanmax(err)) if err.size else 0.0
    d["text"] += f" (max |error| {d['max_abs_error']:.3g}, allowed {atol} + {rtol}*|expected|)"
    return d


def _element_report(name, want, got, bad, vector, contract: str, scaled: np.ndarray | None = None,
                    profile: str | None = None) -> dict:
    code_kind = actual_kind = _code_kind(name, want, vector)
    integer = code_kind is not None and _integer_minifloats(profile)
    if integer:  # burn's codes are integers there: the minifloat bit fields would misname them (not a port's)
        code_kind = None
    dist = distances(want[bad], got[bad], code_kind)
    hist = Counter(dist)
    where = np.argwhere(bad)[:FIRST]
    primary = _primary_input(vector, want.shape)
    rows = []
    for idx in map(tuple, where):
        row = {"index": list(map(int, idx)), "expected": _element(want[idx], code_kind),
               "actual": _element(got[idx], actual_kind), "distance": _dist_one(want[idx], got[idx], code_kind)}
        if primary is not None:
            row["input"] = _element(primary[1][idx], None) | {"name": primary[0]}
        if scaled is not None and scaled.shape == want.shape:
            row["scaled"] = repr(float(scaled[idx]))
        rows.append(row)
    n, total = int(bad.sum()), int(bad.size)
    unit = "code" if want.dtype.kind in "iu" else "ulp"
    top = ", ".join(f"{k:+d} {unit} x{c}" if isinstance(k, int) else f"{k} x{c}" for k, c in hist.most_common(4))
    text = f"output {name!r}: {n} of {total} elements differ ({tensorio.dtype_name(want)}, {contract}); {top}"
    if integer:
        text += (f" ({profile} stores {actual_kind} values as x/s rounded and clamped to an integer, not as the "
                 "format's codes)")
    steps = scale_steps_text(name, want[bad], got[bad], vector) if unit == "ulp" else ""
    if steps:  # an f32 ulp count says nothing about a scale stored as F16, BF16, UE4M3 or UE8M0
        text += f" (on the scale dtype's grid: {steps})"
    return {"output": name, "problem": "elements", "differing": n, "total": total, "contract": contract,
            "code_kind": code_kind, "histogram": {str(k): c for k, c in hist.most_common()}, "first": rows,
            "text": text}


def _code_kind(name: str, want: np.ndarray, vector) -> str | None:
    """'E4M3' etc. when an I8 output holds fp8/fp4 bit patterns rather than integers."""
    scheme = scheme_of(vector.params) if vector else None
    value = scheme.value.name if scheme is not None else (vector.params.get("value") if vector else None)
    return value if want.dtype == np.int8 and value in CODE_FIELDS else None


def _integer_minifloats(profile: str | None) -> bool:
    """Whether ``profile`` (an oracle profile) stores a minifloat value's codes as integers (``float_codes``)."""
    try:
        return profile is not None and oracle.get_profile(profile).float_codes == "integer"
    except (KeyError, ValueError):  # a suite's own profile the oracle does not know
        return False


def _primary_input(vector, shape):
    """The input whose elements line up with the output's (x for codes, codes for x, ...), if any."""
    if vector is None:
        return None
    for name, a in vector.inputs.items():
        if a.shape == shape:
            return name, a
    return None


# ---- element display and distance -----------------------------------------------------------------------

def fields(pattern: int, layout: tuple[int, int, int]) -> str:
    """'s|exponent|mantissa' binary fields of a bit pattern."""
    _, e, m = layout
    sign = (pattern >> (e + m)) & 1
    exp = (pattern >> m) & ((1 << e) - 1)
    man = pattern & ((1 << m) - 1)
    return f"{sign}|{exp:0{e}b}|{man:0{m}b}"


def _element(x: np.ndarray, code_kind: str | None) -> dict:
    kind = tensorio.dtype_name(np.asarray(x).reshape(1))
    raw = int(np.asarray(x).reshape(1).view(f"u{x.dtype.itemsize}")[0])
    out = {"value": x.item() if kind not in FLOAT_FIELDS else float(x), "bits": f"0x{raw:0{2 * x.dtype.itemsize}x}"}
    if kind in FLOAT_FIELDS:
        out["fields"] = fields(raw, FLOAT_FIELDS[kind])
        out["value"] = repr(float(x))
    elif code_kind:
        out["fields"] = fields(raw & ((1 << sum(CODE_FIELDS[code_kind])) - 1), CODE_FIELDS[code_kind])
    return out


def _ordered(bits: np.ndarray, nbits: int) -> np.ndarray:
    """Sign-magnitude bit patterns mapped to integers whose difference counts representable steps."""
    bits = bits.astype(np.int64) & ((1 << nbits) - 1)
    sign = bits >> (nbits - 1)
    mag = bits & ((1 << (nbits - 1)) - 1)
    return np.where(sign == 1, -mag, mag)


def distances(want: np.ndarray, got: np.ndarray, code_kind: str | None) -> list:
    """Per element: integer code distance (actual - expected), or ULP / fp-code step distance; 'nan' if a
    side is NaN."""
    if code_kind:
        nbits = sum(CODE_FIELDS[code_kind])
        return (_ordered(tensorio.bits(got), nbits) - _ordered(tensorio.bits(want), nbits)).tolist()
    if want.dtype.kind in "iu":
        return (got.astype(np.int64) - want.astype(np.int64)).tolist()
    nbits = 8 * want.dtype.itemsize
    d = (_ordered(tensorio.bits(got), nbits) - _ordered(tensorio.bits(want), nbits)).tolist()
    nan = (np.isnan(want) | np.isnan(got)).tolist()
    return ["nan" if n else x for x, n in zip(d, nan)]


def _dist_one(want, got, code_kind):
    return distances(np.asarray(want).reshape(1), np.asarray(got).reshape(1), code_kind)[0]


def render_diff(d: dict) -> str:
    lines = ["  " + d["text"]]
    for row in d.get("first", []):
        inp = row.get("input")
        shown = f"{inp['name']}={inp['value']} " if inp else ""
        shown += f"x/s={row['scaled']} " if "scaled" in row else ""
        lines.append(f"    at {row['index']}: {shown}expected {_show(row['expected'])}  "
                     f"actual {_show(row['actual'])}  distance {row['distance']}")
    if d.get("differing", 0) > len(d.get("first", [])):
        lines.append(f"    ... {d['differing'] - len(d['first'])} more")
    return "\n".join(lines)


def _show(e: dict) -> str:
    f = f" {e['fields']}" if "fields" in e else ""
    return f"{e['value']} ({e['bits']}{f})"


def _indent(text: str, n: int, last: int) -> str:
    return "\n".join(" " * n + line for line in text.rstrip().splitlines()[-last:])
