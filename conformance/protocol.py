"""The backend protocol, versions 1 and 2 (docs/protocol.md): messages, frames, handshake and reply validation.

A message is one safetensors blob whose ``__metadata__["qconform"]`` is a JSON object. Every adapter
(python, subprocess, http) ends in the same three outcome types below, so judging never depends on how the
backend was reached. Anything a backend sends is validated here; a defect becomes a ``ProtocolError`` whose
text summarizes the offending bytes, never an exception escaping into the runner.

Version 2 adds one reply, ``unsupported`` (the backend declines a request it does not implement: the vector is
*declined*, not failed), and the ``formats`` and ``validates`` capability keys. A v1 backend keeps working: the
runner's hello still says ``protocol: 1`` and lists every version it speaks in ``protocols``.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from oracle.scheme import QuantScheme
from oracle.vocabulary import LEVELS, SCALE_OPS, level

from . import tensorio
from .patterns import Pattern, PatternError, input_floats

PROTOCOL_VERSION = 2
PROTOCOLS = (1, 2)  # every version the runner speaks; a backend answers with the one it speaks
UNSUPPORTED_SINCE = 2  # the first version with the 'unsupported' reply
META_KEY = "qconform"
MAX_FRAME = 1 << 30  # frames above 1 GiB are refused (protocol.md, subprocess transport)
CONTENT_TYPE = "application/vnd.qconform+safetensors"

# Capability keys and what part of a vector each one constrains (see Capabilities.not_applicable).
CAPABILITY_KEYS = ("ops", "values", "stores", "modes", "levels", "scale_dtypes", "input_dtypes", "output_dtypes")
# `per_op` narrows those keys for one op, e.g. {"pack_u32": {"values": ["Q8F", "Q8S"]}}: a backend whose library
# packs only 8-bit codes still claims every value elsewhere.
PER_OP_KEY = "per_op"
# `validates: false`: the backend does not check its requests (a loader, a codec), so a vector whose expectation
# is only burn's refusal of an invalid request is declined for it (conformance/accidents.py); default true.
VALIDATES_KEY = "validates"

# `preset`: a named set of capabilities for a common kind of implementation (docs/protocol.md, "Presets"); keys
# given next to it replace the preset's.
PRESET_KEY = "preset"
PRESETS = {
    "loader": {"ops": ["load_quantized"]},  # reconstructs burn's stored tensors, nothing else
    "checkpoint-loader": {"ops": ["load_checkpoint"]},  # reads burn's burnpack files (docs/spec/checkpoint.md)
}
# `formats` (protocol 2): the combinations the backend implements, each a registry name or a pattern object
# (conformance/patterns.py); a vector applies when it matches any of them (and the flat lists). Allowed in per_op.
FORMATS_KEY = "formats"


class ProtocolError(Exception):
    """A backend said something the protocol does not allow."""


class Unsupported(Exception):
    """Raised by an in-process backend for a request it does not implement: the vector is declined, not failed
    (protocol 2's ``unsupported`` reply). ``reason`` is shown in every summary next to the vector."""

    def __init__(self, reason: str = "not implemented"):
        super().__init__(reason)
        self.reason = reason


class BackendError(Exception):
    """Raised by an in-process backend to report burn's error ``{code, message}`` (protocol.md, python)."""

    def __init__(self, code: str | None, message: str, panic: str | None = None):
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.panic = code, message, panic


# ---- outcomes: what one request to a backend can end in ------------------------------------------------

# `note` on every outcome: something the transport noticed that is not this vector's fault (a late reply to an
# earlier request discarded, a backend restarted after it exited); it goes to the verdict's note.

@dataclass
class Result:
    outputs: dict[str, np.ndarray]
    values: dict = field(default_factory=dict)
    note: str = ""


@dataclass
class Error:
    code: str | None
    message: str
    panic: str | None = None
    note: str = ""


@dataclass
class Fault:
    """The backend failed as a process or a peer: kind is 'crashed', 'timed out' or 'protocol error'."""
    kind: str
    detail: str
    stderr: str = ""
    note: str = ""


@dataclass
class Declined:
    """The backend answered 'unsupported' (protocol 2): it does not implement this request."""
    reason: str
    note: str = ""


Outcome = Result | Error | Fault | Declined


# ---- bytes ----------------------------------------------------------------------------------------------

def summarize(blob: bytes, limit: int = 48) -> str:
    """A short, printable description of bytes a backend sent, for error messages."""
    head = bytes(blob[:limit])
    text = head.decode("latin-1").encode("unicode_escape").decode("ascii")
    more = f" ... ({len(blob) - limit} more)" if len(blob) > limit else ""
    return f"{len(blob)} bytes: b'{text}'{more}"


def encode_message(meta: dict, tensors: dict[str, np.ndarray] | None = None) -> bytes:
    return tensorio.encode(tensors or {}, {META_KEY: json.dumps(meta, separators=(",", ":"))})


def decode_message(blob: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """Parse a message blob; ProtocolError (with the bytes summarized) if it is not one."""
    try:
        tensors, meta = tensorio.decode(blob)
    except tensorio.TensorIOError as e:
        raise ProtocolError(f"not a safetensors message ({e}); got {summarize(blob)}") from None
    if META_KEY not in meta:
        raise ProtocolError(f"safetensors metadata has no {META_KEY!r} key; got {summarize(blob)}")
    try:
        obj = json.loads(meta[META_KEY])
    except (ValueError, RecursionError) as e:  # RecursionError: JSON nested thousands deep
        raise ProtocolError(f"metadata {META_KEY!r} is not JSON ({str(e)[:200]}): {meta[META_KEY][:200]!r}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ProtocolError(f"message is not an object with a 'type': {meta[META_KEY][:200]!r}")
    return obj, tensors


# ---- frames (subprocess transport) ----------------------------------------------------------------------

def frame(blob: bytes) -> bytes:
    return struct.pack("<I", len(blob)) + blob


def text_hint(data: bytes) -> str:
    """A hint when bytes where a frame should start look like printed text (the usual cause: a stray print)."""
    head = bytes(data[:4])
    if len(head) >= 2 and all(32 <= b < 127 or b in b"\t\r\n" for b in head[:2]):
        return " (text on stdout? it carries frames only: log to stderr)"
    return ""


def frame_length(prefix: bytes) -> int:
    (n,) = struct.unpack("<I", prefix)
    if n > MAX_FRAME:
        raise ProtocolError(f"frame length {n} exceeds the 1 GiB limit; prefix {summarize(prefix)}"
                            f"{text_hint(prefix)}")
    return n


# A frame is refused as soon as its first bytes cannot begin a safetensors blob (an 8-byte header length that
# fits, then '{'), rather than after waiting a whole timeout for bytes that will never come.
BLOB_START = 9


def check_blob_start(prefix: bytes, head: bytes, n: int) -> None:
    """``head``: the first min(n, BLOB_START) bytes of an n-byte frame announced by ``prefix``."""
    if n < BLOB_START + 1 or struct.unpack_from("<Q", head)[0] > n - 8 or head[8:9] != b"{":
        raise ProtocolError(f"not a safetensors message (a {n}-byte frame that does not start with a header "
                            f"length that fits and '{{'); got {summarize(bytes(prefix) + bytes(head))}"
                            f"{text_hint(prefix)}")


# ---- handshake ------------------------------------------------------------------------------------------

# `protocol` stays 1 so that a v1 backend, which refuses any other number, still answers; `protocols` offers 2.
HELLO = {"type": "hello", "protocol": 1, "protocols": list(PROTOCOLS)}


@dataclass(frozen=True)
class Capabilities:
    """What a backend declares it supports; None means 'everything' for that key."""
    ops: frozenset | None = None
    values: frozenset | None = None
    stores: frozenset | None = None
    modes: frozenset | None = None
    levels: frozenset | None = None
    scale_dtypes: frozenset | None = None
    input_dtypes: frozenset | None = None
    output_dtypes: frozenset | None = None
    per_op: tuple[tuple[str, Capabilities], ...] = ()
    formats: tuple[Pattern, ...] | None = None
    validates: bool = True

    @classmethod
    def from_json(cls, d: dict, *, nested: bool = False) -> Capabilities:
        if not isinstance(d, dict):
            raise ProtocolError(f"capabilities must be an object, got {d!r:.200}")
        allowed = {*CAPABILITY_KEYS, FORMATS_KEY} - {"ops"} if nested else \
            {*CAPABILITY_KEYS, PER_OP_KEY, FORMATS_KEY, VALIDATES_KEY, PRESET_KEY}
        unknown = set(d) - allowed
        if unknown:
            raise ProtocolError(f"unknown capability keys {sorted(unknown)}; known: {sorted(allowed)}")
        if PRESET_KEY in d and not nested:
            name = d[PRESET_KEY]
            if name not in PRESETS:
                raise ProtocolError(f"unknown capabilities preset {name!r:.100}; known: {sorted(PRESETS)}")
            d = PRESETS[name] | {k: v for k, v in d.items() if k != PRESET_KEY}
        out: dict = {}
        for key, items in d.items():
            if key == FORMATS_KEY:
                out[key] = _patterns(items)
                continue
            if key == VALIDATES_KEY:
                if not isinstance(items, bool):
                    raise ProtocolError(f"capability 'validates' must be true or false, got {items!r:.100}")
                out[key] = items
                continue
            if key == PER_OP_KEY:
                if not isinstance(items, dict):
                    raise ProtocolError(f"capability 'per_op' must map op names to objects, got {items!r:.200}")
                out[key] = tuple(sorted((op, cls.from_json(sub, nested=True)) for op, sub in items.items()))
                continue
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise ProtocolError(f"capability {key!r} must be a list of strings, got {items!r:.200}")
            if key == "levels" and set(items) - set(LEVELS):
                raise ProtocolError(f"unknown levels {sorted(set(items) - set(LEVELS))}; known: {list(LEVELS)}")
            out[key] = frozenset(items)
        return cls(**out)

    @cached_property
    def unrestricted(self) -> bool:
        """Declares no limit at all (the oracle's): every vector applies, without working out what it needs."""
        return not self.per_op and self.formats is None and all(getattr(self, k) is None for k in CAPABILITY_KEYS)

    def to_json(self) -> dict:
        out: dict = {k: sorted(getattr(self, k)) for k in CAPABILITY_KEYS if getattr(self, k) is not None}
        if self.formats is not None:
            out[FORMATS_KEY] = [p.to_json() for p in self.formats]
        if not self.validates:
            out[VALIDATES_KEY] = False
        if self.per_op:
            out[PER_OP_KEY] = {op: caps.to_json() for op, caps in self.per_op}
        return out

    @cached_property
    def needs_protocol(self) -> int:
        """The first protocol version that can say these capabilities (2 for formats)."""
        formats = self.formats is not None or any(c.formats is not None for _, c in self.per_op)
        return 2 if formats else 1

    def patterns_for(self, op: str) -> tuple[Pattern, ...] | None:
        """The formats declared for ``op``: its per_op ``formats`` if any, else the top-level ones (None: none
        declared). Both must match when both are given; the narrower ones label the vector."""
        narrowed = dict(self.per_op).get(op)
        if narrowed is not None and narrowed.formats is not None:
            return narrowed.formats
        return self.formats

    def declared_formats(self) -> list[str]:
        """Every declared format's label, top level first, without repeats."""
        labels = [p.label for p in self.formats or ()]
        labels += [p.label for _, caps in self.per_op for p in caps.formats or ()]
        return list(dict.fromkeys(labels))

    def formats_of(self, vector) -> list[str]:
        """The labels of the declared formats ``vector`` is (for its op); [] when none are declared."""
        patterns = self.patterns_for(vector.op) or ()
        scheme = scheme_of(vector.params) if patterns else None
        return [p.label for p in patterns if p.mismatch(vector, scheme) is None]

    def not_applicable(self, vector) -> str | None:
        """Why a vector is outside these capabilities, or None if the backend claims it."""
        if self.unrestricted:
            return None
        wanted_all = needs(vector)
        for key, wanted in wanted_all.items():
            have = getattr(self, key)
            if have is not None:
                missing = sorted(wanted - have)
                if missing:
                    return f"backend does not declare {key} {', '.join(missing)}"
        if self.formats is not None:
            why = _no_format(self.formats, vector)
            if why is not None:
                return why
        narrowed = dict(self.per_op).get(vector.op)
        if narrowed is not None:
            why = narrowed.not_applicable(vector)
            if why is not None:
                return f"{why} for {vector.op}"
        return None


def applicable_by_format(caps: Capabilities, vectors) -> dict[str, dict[str, int]]:
    """``{format label: {op: applicable vectors of that format}}`` for every declared format and every op the
    backend declares (the suite's ops when it declares none); a 0 is a format the suite cannot judge there."""
    vectors = list(vectors)
    ops = sorted(caps.ops) if caps.ops is not None else sorted({v.op for v in vectors})
    table = {label: dict.fromkeys(ops, 0) for label in caps.declared_formats()}
    for v in vectors:
        if v.op in ops and caps.not_applicable(v) is None:
            for label in caps.formats_of(v):
                table[label][v.op] += 1
    return table


def _patterns(items) -> tuple[Pattern, ...]:
    if not isinstance(items, list) or not items:
        raise ProtocolError(f"capability 'formats' must be a non-empty list of format names or pattern objects, "
                            f"got {items!r:.200}")
    try:
        return tuple(Pattern.from_json(p) for p in items)
    except PatternError as e:
        raise ProtocolError(f"capability 'formats': {e}") from None


def _no_format(patterns: tuple[Pattern, ...], vector) -> str | None:
    """None when ``vector`` matches one of ``patterns``; else why not, naming the first pattern's reason."""
    scheme = scheme_of(vector.params)
    reasons = [p.mismatch(vector, scheme) for p in patterns]
    if any(r is None for r in reasons):
        return None
    return f"matches no declared format ({patterns[0].label}: {reasons[0]}" + \
        (f"; and {len(patterns) - 1} more)" if len(patterns) > 1 else ")")


def scheme_of(params: dict) -> QuantScheme | None:
    """The vector's scheme, parsed strictly (``QuantScheme.from_json``), or None if its op takes none."""
    return None if "scheme" not in params else QuantScheme.from_json(params["scheme"])


def needs(vector) -> dict[str, set[str]]:
    """What a vector asks of a backend, keyed like Capabilities (float dtypes in ops.md's lowercase)."""
    params = vector.params
    need: dict[str, set[str]] = {"ops": {vector.op}}
    # the vector's scheme, and those of the quantized other operands of its steps (float_ops' rhs_scheme)
    others = [s["rhs_scheme"] for s in params.get("steps", []) if isinstance(s, dict) and "rhs_scheme" in s]
    for scheme in [scheme_of(params), *(QuantScheme.from_json(o) for o in others)]:
        if scheme is None:
            continue
        need.setdefault("values", set()).add(scheme.value.name)
        need.setdefault("stores", set()).add(scheme.store.kind)
        need.setdefault("modes", set()).add(scheme.mode.name)
        need.setdefault("levels", set()).add(level(scheme))
        # The levels the scheme sets (a scheme without any sets none, though it scales per tensor in F32).
        need.setdefault("scale_dtypes", set()).update(
            dtype.name for dtype in (scheme.tensor, scheme.block and scheme.block.dtype) if dtype is not None)
    if "value" in params and "values" not in need:
        need["values"] = {params["value"]}
    dtype = params.get("dtype")
    if vector.op in SCALE_OPS and dtype:
        need.setdefault("scale_dtypes", set()).add(dtype)
    need["input_dtypes"] = input_floats(vector)
    if vector.op in ("dequantize", "load_quantized") and dtype:
        need["output_dtypes"] = {dtype}
    elif vector.op in ("compute_range", "compute_q_params") and need["input_dtypes"]:
        need["output_dtypes"] = set(need["input_dtypes"])
    return {k: v for k, v in need.items() if v}


@dataclass(frozen=True)
class Hello:
    name: str
    version: str
    profile: str | None
    capabilities: Capabilities
    protocol: int = PROTOCOL_VERSION

    def to_json(self) -> dict:
        return {"type": "hello", "protocol": self.protocol, "name": self.name, "version": self.version,
                "profile": self.profile, "capabilities": self.capabilities.to_json()}


def hello_for(hello: Hello, offer: dict) -> dict:
    """The hello reply to a runner's ``offer`` (its hello message): the backend's own version if offered, else
    version 1 when the capabilities need nothing newer; else a ``protocol.version`` error (``qconform serve``)."""
    offered = offer.get("protocols") if isinstance(offer.get("protocols"), list) else [offer.get("protocol")]
    usable = [v for v in PROTOCOLS if v in offered and hello.capabilities.needs_protocol <= v <= hello.protocol]
    version = max(usable, default=None)
    if version is None:
        return {"type": "error", "error": {"code": "protocol.version", "message":
                f"this backend speaks protocol {hello.protocol}; the runner offered {offered!r:.60}"}}
    return {**hello.to_json(), "protocol": version}


LABEL_CHARS = 128
"""The longest name, version or profile a hello may give (protocol.md, "Handshake")."""


def _check_label(key: str, text: str) -> None:
    """A hello's name, version and profile are printed in summaries, statements and badges: each must be one
    printable line (no control character, newline, bidi override or lone surrogate) of at most
    ``LABEL_CHARS`` characters. Refused, not cleaned: a report names the backend exactly as it named itself."""
    if len(text) > LABEL_CHARS or not text.isprintable():
        shown = text[:60].encode("unicode_escape").decode("ascii")
        raise ProtocolError(f"hello {key!r} must be one printable line of at most {LABEL_CHARS} characters, got "
                            f"{len(text)} characters: '{shown}'{'...' if len(text) > 60 else ''}")


def parse_hello(obj: dict) -> Hello:
    """Validate a backend's handshake reply (a decoded message, or a python backend's dict)."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"hello reply must be an object, got {obj!r:.200}")
    if obj.get("type", "hello") == "error":
        err = obj.get("error") or {}
        raise ProtocolError(f"backend refused the handshake: {err.get('code')}: {err.get('message')}")
    if obj.get("type", "hello") != "hello":
        raise ProtocolError(f"expected a hello reply, got type {obj.get('type')!r}")
    version = obj.get("protocol")
    if type(version) is not int or version not in PROTOCOLS:
        raise ProtocolError(f"backend speaks protocol {version!r}, runner speaks {', '.join(map(str, PROTOCOLS))}")
    for key in ("name", "version"):
        if not isinstance(obj.get(key), str):
            raise ProtocolError(f"hello reply needs a string {key!r}, got {obj.get(key)!r:.100}")
        _check_label(key, obj[key])
    profile = obj.get("profile")
    if profile is not None and not isinstance(profile, str):
        raise ProtocolError(f"hello 'profile' must be a string, got {profile!r:.100}")
    if profile is not None:
        _check_label("profile", profile)
    caps = Capabilities.from_json(obj.get("capabilities") or {})
    if version < caps.needs_protocol:
        raise ProtocolError(f"capability 'formats' needs protocol {caps.needs_protocol}; the hello "
                            f"says protocol {version}")
    return Hello(obj["name"], obj["version"], profile, caps, version)


# ---- requests and replies -------------------------------------------------------------------------------

def request_message(rid: str, op: str, params: dict) -> dict:
    return {"type": "request", "id": rid, "op": op, "params": params}


def reply_message(rid: str, outcome: Result | Error | Declined) -> tuple[dict, dict[str, np.ndarray]]:
    """The (JSON, tensors) of a backend's reply; used by the example backend and `qconform serve`."""
    if isinstance(outcome, Declined):
        return {"type": "unsupported", "id": rid, "reason": outcome.reason}, {}
    if isinstance(outcome, Error):
        err = {"code": outcome.code, "message": outcome.message}
        if outcome.panic:
            err["panic"] = outcome.panic
        return {"type": "error", "id": rid, "error": err}, {}
    return {"type": "result", "id": rid, "values": outcome.values}, outcome.outputs


def parse_reply(obj: dict, tensors: dict[str, np.ndarray], rid: str | None,
                protocol: int = PROTOCOL_VERSION) -> Result | Error | Declined:
    """Validate a decoded reply to request ``rid`` (None: do not check the id) from a backend that speaks
    ``protocol`` (its hello's)."""
    kind = obj.get("type")
    if rid is not None and obj.get("id") != rid:
        raise ProtocolError(f"reply id {obj.get('id')!r:.60} does not echo request id {rid!r}")
    if kind == "result":
        values = obj.get("values", {})
        if not isinstance(values, dict):
            raise ProtocolError(f"'values' must be an object, got {values!r:.200}")
        return Result(dict(tensors), values)
    if kind == "error":
        if tensors:
            raise ProtocolError(f"an error reply carries tensors {sorted(tensors)}")
        return parse_error(obj.get("error"))
    if kind == "unsupported" and protocol >= UNSUPPORTED_SINCE:
        reason = obj.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ProtocolError(f"an 'unsupported' reply needs a non-empty string 'reason', got {reason!r:.100}")
        if tensors:
            raise ProtocolError(f"an unsupported reply carries tensors {sorted(tensors)}")
        return Declined(reason)
    if kind == "unsupported":
        raise ProtocolError(f"an 'unsupported' reply needs protocol {UNSUPPORTED_SINCE}; the backend's hello said "
                            f"protocol {protocol}")
    expected = "'result', 'error' or 'unsupported'" if protocol >= UNSUPPORTED_SINCE else "'result' or 'error'"
    raise ProtocolError(f"expected a {expected} reply, got type {kind!r:.60}")


def parse_error(err) -> Error:
    if not isinstance(err, dict) or not isinstance(err.get("message"), str):
        raise ProtocolError(f"'error' must be an object with a string 'message', got {err!r:.200}")
    code, panic = err.get("code"), err.get("panic")
    if code is not None and not isinstance(code, str):
        raise ProtocolError(f"error 'code' must be a string, got {code!r:.100}")
    if panic is not None and not isinstance(panic, str):
        raise ProtocolError(f"error 'panic' must be a string, got {panic!r:.100}")
    return Error(code, err["message"], panic)


def split_outputs(outputs: dict) -> Result:
    """Split a python backend's return dict into tensors and JSON values, validating both."""
    if not isinstance(outputs, dict):
        raise ProtocolError(f"run() must return a dict, got {type(outputs).__name__}")
    tensors, values = {}, {}
    for name, v in outputs.items():
        if isinstance(v, np.ndarray):
            try:
                tensorio.dtype_name(v)
            except tensorio.TensorIOError as e:
                raise ProtocolError(f"output {name!r}: {e}") from None
            tensors[name] = v
        elif type(v) in _JSON_SCALARS:  # already what the JSON round trip below would give back
            values[name] = v
        else:
            try:
                # a JSON value, normalized (tuples -> lists, numpy scalars -> Python numbers)
                values[name] = json.loads(json.dumps(v, default=_numpy_scalar))
            except (TypeError, ValueError):
                raise ProtocolError(f"output {name!r} is neither an array nor a JSON value: "
                                    f"{type(v).__name__}") from None
    return Result(tensors, values)


_JSON_SCALARS = (str, int, float, bool, type(None))


def _numpy_scalar(o):
    if isinstance(o, (np.generic, np.ndarray)):
        return o.tolist()
    raise TypeError(type(o).__name__)
