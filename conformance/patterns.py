"""Format patterns: the ``formats`` a backend declares in its capabilities (docs/protocol.md, "Formats").

A flat capability list declares a cross product (values x stores x scale dtypes x any block shape); a real
implementation is a few *combinations* ("Q8S per-tensor F32; Q4S per-block [32] F16 PackedU32"). A pattern is
one such combination: every key it sets constrains the vector, every key it leaves out allows anything. A
format name of the registry (``conformance.formats``) is shorthand for that format's pattern.

What a pattern constrains is what the vector has: the scheme (value, store, mode, level, scale dtypes, block
shape) for ops that take one, ``params.value`` and ``params.dtype`` for those that name only a value or a scale
dtype, the float dtype of the inputs, and the rank of the tensor the op works on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from oracle.scheme import QuantScheme, memo_key
from oracle.vocabulary import FLOAT_DTYPES, LEVELS, MODES, SCALE_DTYPES, SCALE_OPS, STORES, VALUES, level

from .formats import FORMATS, ROW, Format

# The keys of a pattern object, and what each accepts (a single name or a list of names, unless said otherwise).
PATTERN_KEYS = ("name", "value", "store", "mode", "level", "block", "block_dtype", "tensor_dtype", "ranks",
                "input_dtypes")
FLOATS = {"F32": "f32", "F16": "f16", "BF16": "bf16"}


class PatternError(ValueError):
    """A format pattern that cannot mean anything (a typo must not silently mean 'everything')."""


@dataclass(frozen=True)
class BlockRule:
    """Which block shapes a pattern accepts. ``per_tensor``: no block level at all (``"block": null``);
    ``shapes``: explicit canonical shapes; ``last_dim``: 1-D blocks of these extents along the last dim;
    ``row``: one block per row (the extent is the tensor's last dim)."""
    per_tensor: bool = False
    shapes: frozenset = frozenset()
    last_dim: frozenset = frozenset()
    row: bool = False

    def accepts(self, scheme: QuantScheme, shape) -> bool:
        if scheme.block is None:
            return self.per_tensor
        dims = scheme.block.size.dims
        if dims in self.shapes or (len(dims) == 1 and dims[0] in self.last_dim):
            return True
        return self.row and shape is not None and len(shape) >= 1 and dims == (shape[-1],)

    def describe(self) -> str:
        parts = ["per-tensor"] if self.per_tensor else []
        parts += ["x".join(map(str, s)) for s in sorted(self.shapes)]
        if self.last_dim:
            parts.append("last-dim " + "|".join(map(str, sorted(self.last_dim))))
        return " or ".join(parts + (["per-row"] if self.row else []))


def _canonical(dims) -> tuple[int, ...]:
    """burn's BlockSize keeps no leading 1s: ``[1, 32]`` is ``[32]``."""
    dims = list(dims)
    while len(dims) > 1 and dims[0] == 1:
        dims.pop(0)
    return tuple(dims)


def _is_shape(x) -> bool:
    return isinstance(x, list) and bool(x) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 1
                                                   for d in x)


def parse_block(raw) -> BlockRule:
    """``null`` | a shape ``[32]`` | shapes ``[[32], [4, 8]]`` | ``"row"`` | ``{"last_dim": [16, 32]}``."""
    if raw is None:
        return BlockRule(per_tensor=True)
    if raw == ROW:
        return BlockRule(row=True)
    if _is_shape(raw):
        return BlockRule(shapes=frozenset({_canonical(raw)}))
    if isinstance(raw, list) and raw and all(_is_shape(s) for s in raw):
        return BlockRule(shapes=frozenset(_canonical(s) for s in raw))
    if isinstance(raw, dict) and set(raw) == {"last_dim"}:
        extents = raw["last_dim"]
        extents = [extents] if isinstance(extents, int) else extents
        if _is_shape(extents):
            return BlockRule(last_dim=frozenset(extents))
    raise PatternError(f"'block' must be null (per-tensor), a shape like [32], a list of shapes, \"row\" or "
                       f"{{\"last_dim\": [16, 32]}}; got {raw!r:.120}")


# The names each key accepts (burn's, from oracle.vocabulary): a typo is an error, never a pattern matching nothing.
KNOWN = {"value": VALUES, "store": STORES, "mode": MODES, "level": LEVELS, "input_dtypes": FLOAT_DTYPES,
         "block_dtype": SCALE_DTYPES, "tensor_dtype": SCALE_DTYPES}


def _known(key: str, items: frozenset) -> frozenset:
    unknown = sorted(str(i) for i in items - set(KNOWN[key]) - {None})
    if unknown:
        raise PatternError(f"unknown {key} {', '.join(unknown)}; known: {', '.join(KNOWN[key])}")
    return items


def _names(key: str, raw) -> frozenset:
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        raise PatternError(f"{key!r} must be a name or a non-empty list of names, got {raw!r:.120}")
    return _known(key, frozenset(items))


def _dtypes(key: str, raw) -> frozenset:
    """A scale dtype set; ``null`` in it (or alone) means 'no such level' (e.g. no per-tensor scale)."""
    items = raw if isinstance(raw, list) else [raw]
    if not items or not all(i is None or isinstance(i, str) for i in items):
        raise PatternError(f"{key!r} must be a scale dtype, null, or a list of them, got {raw!r:.120}")
    return _known(key, frozenset(items))


@dataclass(frozen=True)
class Pattern:
    """One declared format; ``None`` on a field means 'any'."""
    label: str
    values: frozenset | None = None
    stores: frozenset | None = None
    modes: frozenset | None = None
    levels: frozenset | None = None
    block: BlockRule | None = None
    block_dtypes: frozenset | None = None
    tensor_dtypes: frozenset | None = None
    ranks: frozenset | None = None
    input_dtypes: frozenset | None = None
    named: str | None = None    # the registry format this pattern is, if declared by name
    source: str = ""            # the pattern object as declared (JSON text), so that to_json gives it back

    @classmethod
    def from_json(cls, raw) -> Pattern:
        if isinstance(raw, str):
            if raw not in FORMATS:
                raise PatternError(f"unknown format {raw!r}; known: {', '.join(FORMATS)} (or a pattern object)")
            return of_format(FORMATS[raw])
        if not isinstance(raw, dict) or not raw:
            raise PatternError(f"a format is a registry name or a non-empty pattern object, got {raw!r:.120}")
        unknown = set(raw) - set(PATTERN_KEYS)
        if unknown:
            raise PatternError(f"unknown pattern keys {sorted(unknown)}; known: {list(PATTERN_KEYS)}")
        out: dict = {}
        for key, field_name in (("value", "values"), ("store", "stores"), ("mode", "modes"),
                                ("input_dtypes", "input_dtypes")):
            if key in raw:
                out[field_name] = _names(key, raw[key])
        if "level" in raw:
            out["levels"] = _names("level", raw["level"])
        if "block" in raw:
            out["block"] = parse_block(raw["block"])
        for key, field_name in (("block_dtype", "block_dtypes"), ("tensor_dtype", "tensor_dtypes")):
            if key in raw:
                out[field_name] = _dtypes(key, raw[key])
        if "ranks" in raw:
            ranks = raw["ranks"]
            if not _is_shape(ranks):
                raise PatternError(f"'ranks' must be a non-empty list of positive ints, got {ranks!r:.120}")
            out["ranks"] = frozenset(ranks)
        label = raw.get("name")
        if label is not None and not isinstance(label, str):
            raise PatternError(f"'name' must be a string, got {label!r:.60}")
        return cls(label=label or describe(raw), source=json.dumps(raw, sort_keys=True), **out)

    def to_json(self):
        """What the backend declared: the format's name, or the pattern object."""
        return self.named if self.named else json.loads(self.source)

    def mismatch(self, vector, scheme: QuantScheme | None = None) -> str | None:
        """Why ``vector`` is not this format (the first key that excludes it), or None when it is. ``scheme``:
        the vector's, already parsed (a caller matching many patterns parses it once)."""
        params, shape = vector.params, tensor_shape(vector)
        if scheme is None and "scheme" in params:
            scheme = QuantScheme.from_json(params["scheme"])
        if scheme is not None and self.block is not None and not self.block.accepts(scheme, shape):
            return f"block {_block_text(scheme)} is not {self.block.describe()}"
        checks = self._scheme_checks(scheme) if scheme is not None else self._param_checks(vector)
        if self.ranks is not None and shape is not None:
            checks.append(("rank", self.ranks, len(shape)))
        if self.input_dtypes is not None:
            checks += [("input dtype", self.input_dtypes, dtype) for dtype in sorted(input_floats(vector))]
        for key, allowed, got in checks:
            if allowed is not None and got not in allowed:
                return f"{key} {got} is not {'|'.join(sorted(map(str, allowed)))}"
        return None

    def _scheme_checks(self, scheme: QuantScheme) -> list[tuple]:
        """(key, allowed, the scheme's) for an op that takes a scheme."""
        tensor = scheme.tensor_scale()  # F32 for a scheme that sets no level: it scales per tensor in F32
        return [("value", self.values, scheme.value.name), ("store", self.stores, scheme.store.kind),
                ("mode", self.modes, scheme.mode.name), ("level", self.levels, level(scheme)),
                ("block_dtype", self.block_dtypes, scheme.block and scheme.block.dtype.name),
                ("tensor_dtype", self.tensor_dtypes, tensor and tensor.name)]

    def _param_checks(self, vector) -> list[tuple]:
        """(key, allowed, the vector's) for an op that names only a value or a scale dtype."""
        params, checks = vector.params, []
        if "value" in params:
            checks.append(("value", self.values, params["value"]))
        if vector.op in SCALE_OPS and params.get("dtype"):
            either = None if self.block_dtypes is None and self.tensor_dtypes is None else \
                (self.block_dtypes or frozenset()) | (self.tensor_dtypes or frozenset())
            checks.append(("scale dtype", either, params["dtype"]))
        return checks


def _block_text(scheme: QuantScheme) -> str:
    if scheme.block is None:
        return "per-tensor"
    # BlockSize::new drops leading 1s, so [1] is the empty size: say what it is rather than print nothing
    return "x".join(map(str, scheme.block.size.dims)) or "[] (one element per block)"


def describe(raw: dict) -> str:
    """A compact label for an unnamed pattern object, e.g. ``Q4S/PackedU32/block 32/F16``."""
    parts = []
    for key in ("value", "store", "mode", "level"):
        if key in raw:
            parts.append("|".join(_names(key, raw[key])) if not isinstance(raw[key], str) else raw[key])
    if "block" in raw:
        parts.append("block " + parse_block(raw["block"]).describe())
    for key in ("block_dtype", "tensor_dtype"):
        if key in raw:
            words = {"block_dtype": "scales", "tensor_dtype": "tensor-scale"}
            parts.append(f"{words[key]} " + "|".join(str(d) for d in _dtypes(key, raw[key])))
    for key in ("ranks", "input_dtypes"):
        if key in raw:
            parts.append(f"{key} " + "|".join(map(str, raw[key])))
    return "/".join(parts)


def of_format(f: Format) -> Pattern:
    """The pattern of a registry format (the same conditions as ``Format.matches``)."""
    block = BlockRule(per_tensor=True) if f.block is None else (
        BlockRule(row=True) if f.block == ROW else BlockRule(shapes=frozenset({(f.block,)})))
    return Pattern(label=f.name, named=f.name, values=frozenset({f.value.name}), stores=frozenset(f.stores),
                   modes=frozenset({"Symmetric"}), block=block,
                   block_dtypes=None if f.block is None else frozenset({f.block_dtype.name}),
                   tensor_dtypes=frozenset({f.tensor_dtype.name if f.tensor_dtype else None}))


def tensor_shape(vector) -> tuple[int, ...] | None:
    """The shape of the tensor the op works on: ``params.shape``, else input ``x``, else ``codes``."""
    if isinstance(vector.params.get("shape"), list):
        return tuple(vector.params["shape"])
    for name in ("x", "codes"):
        if name in vector.inputs:
            return tuple(vector.inputs[name].shape)
    return None


def capability_key(vector) -> tuple:
    """Everything of ``vector`` that capabilities read (``Capabilities.not_applicable`` and ``formats_of``, through
    ``needs`` and ``Pattern.mismatch``): its op, params, its inputs' dtypes, and of the tensor it works on only the
    rank (a ``ranks`` rule) and the last dim (a per-row block rule, ``BlockRule.accepts``). Two vectors with one
    key get the same answers, so a caller may remember them by it; a rule that reads more must be keyed here."""
    shape = tensor_shape(vector)
    return (vector.op, params_key(vector.params), tuple((k, a.dtype) for k, a in vector.inputs.items()),
            None if shape is None else (len(shape), shape[-1] if shape else None))


def params_key(params: dict) -> tuple:
    """A key equal for two params only when they are equal JSON with the same exact types: the scheme by
    ``memo_key`` (oracle/scheme.py), a plain scalar by its type and value, anything else by its ``repr``. Equal
    params built in another key order get two keys, which costs a cache entry or a group, never a wrong answer."""
    return tuple((k, memo_key(v) if k == "scheme" else (type(v), v) if type(v) in _SCALARS else repr(v))
                 for k, v in params.items())


_SCALARS = (str, int, bool, type(None))  # not float: a NaN would make a key unequal to itself (repr'd instead)


def input_floats(vector) -> set[str]:
    """The float dtypes of the vector's inputs, spelled like ops.md (``f32``, ``f16``, ``bf16``)."""
    from .tensorio import dtype_name
    return {FLOATS[dtype_name(a)] for a in vector.inputs.values() if dtype_name(a) in FLOATS}
