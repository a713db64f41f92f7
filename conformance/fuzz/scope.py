"""What a backend declares, as something to draw from: the fuzzer builds each case inside a declared format
instead of drawing anything and filtering (a one-format backend found 5 applicable cases in 5,000 that way).

A :class:`Target` is one declared combination: values, stores, modes, block rules (per-tensor, 1-D blocks of
``n`` along the last dim, one block per row, explicit N-D shapes), block and per-tensor scale dtypes, ranks and
input float dtypes. Targets come from the named formats (``--format``, ``conformance/formats.py``), from the
``formats`` patterns of a backend's capabilities when it declares them, or from its flat capability lists
(values x stores x levels x scale dtypes, drawn with realistic block lengths). :func:`scope_of` says which;
an unrestricted backend gets no scope, and the fuzzer keeps its default case stream.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

from oracle.vocabulary import LEVELS, MODES, SCALE_DTYPES, STORES, VALUES

from ..formats import ROW, Format, get_format

# The ops a scope draws (each takes a scheme and a tensor); the named formats are about the first three.
SCOPED_OPS = ("quantize_dynamic", "quantize", "dequantize", "to_bytes", "from_bytes", "compute_range",
              "compute_q_params", "scheme_info")
FORMAT_OPS = ("quantize_dynamic", "quantize", "dequantize")
REALISTIC_BLOCKS = (32, 16, 64, 128)  # the block lengths real formats use (GGUF/MX: 32, NVFP4: 16, AWQ/GPTQ: 128)
MAX_ELEMENTS = 4096                   # a tensor of a few thousand elements at most (rows x a few hundred columns)
WEIGHTS = {"quantize_dynamic": 4, "quantize": 4, "dequantize": 3}
FLAT_VALUES = ("Q8S", "Q8F", "Q4S", "Q4F", "Q2S", "Q2F", "E4M3", "E5M2", "E2M1")


@dataclass(frozen=True)
class Target:
    """One declared combination. ``blocks``: None (per-tensor), an int ``n`` (1-D blocks of ``n`` along the last
    dim), ``ROW`` or a tuple (an explicit canonical block shape). ``tensor_dtypes``: the per-tensor level's dtype,
    None in it meaning 'no per-tensor level' (one-level block scales)."""
    label: str
    values: tuple[str, ...]
    stores: tuple[str, ...]
    blocks: tuple
    block_dtypes: tuple[str, ...]
    tensor_dtypes: tuple
    modes: tuple[str, ...] = ("Symmetric",)
    ranks: tuple[int, ...] = (2, 2, 2, 1, 3)
    input_dtypes: tuple[str, ...] = ("f32",)
    output_dtypes: tuple[str, ...] = ("f32",)


def of_format(fmt: Format, input_dtypes=("f32",)) -> Target:
    return Target(fmt.name, (fmt.value.name,), fmt.stores, (fmt.block,),
                  (fmt.block_dtype.name,) if fmt.block_dtype else (),
                  (fmt.tensor_dtype.name if fmt.tensor_dtype else None,), input_dtypes=tuple(input_dtypes))


def of_flat(caps) -> Target:
    """The cross product flat lists declare, with realistic block lengths for the block levels."""
    levels = caps.levels or {"tensor", "block", "two-level"}
    dtypes = tuple(d for d in SCALE_DTYPES if caps.scale_dtypes is None or d in caps.scale_dtypes)
    blocks = ((None,) if "tensor" in levels else ()) + \
        (REALISTIC_BLOCKS if levels & {"block", "two-level"} else ())
    tensor = ((None,) if "block" in levels else ()) + (tuple(d for d in ("F32",) if d in dtypes) or dtypes[:1]
                                                       if levels & {"tensor", "two-level"} else ())
    return Target("declared capabilities", tuple(v for v in FLAT_VALUES if caps.values is None or v in caps.values),
                  tuple(s for s in STORES if caps.stores is None or s in caps.stores), blocks, dtypes, tensor,
                  modes=tuple(m for m in ("Symmetric",) if caps.modes is None or m in caps.modes) or ("Symmetric",),
                  input_dtypes=tuple(sorted(caps.input_dtypes)) if caps.input_dtypes else ("f32",),
                  output_dtypes=tuple(sorted(caps.output_dtypes)) if caps.output_dtypes else ("f32",))


def of_pattern(p) -> Target:
    """A ``formats`` pattern of the capabilities (``conformance.patterns.Pattern``): a registry name is that
    format; a pattern object's unset keys draw from everything."""
    if getattr(p, "named", None):
        return of_format(get_format(p.named), sorted(p.input_dtypes) if p.input_dtypes else ("f32",))
    rule = p.block
    if rule is None:
        blocks = (None,) + REALISTIC_BLOCKS
    else:
        blocks = ((None,) if rule.per_tensor else ()) + tuple(sorted(rule.last_dim)) + \
            ((ROW,) if rule.row else ()) + tuple(sorted(rule.shapes))
    return Target(p.label, tuple(sorted(p.values or FLAT_VALUES)), tuple(sorted(p.stores or STORES)), blocks,
                  tuple(sorted(p.block_dtypes or SCALE_DTYPES)),
                  tuple(p.tensor_dtypes) if p.tensor_dtypes is not None else (None, "F32"),
                  modes=tuple(sorted(p.modes or {"Symmetric"})),
                  ranks=tuple(sorted(p.ranks)) if p.ranks else Target.ranks,
                  input_dtypes=tuple(sorted(p.input_dtypes)) if p.input_dtypes else ("f32",))


@dataclass(frozen=True)
class Scope:
    """Per op, the targets to draw from; ``ops`` the ops drawn (weighted toward the arithmetic)."""
    targets: dict
    ops: tuple[str, ...]

    @functools.cached_property
    def weighted_ops(self) -> list[str]:
        """``ops`` with each op repeated by its weight: the list a case's op is picked from (made once)."""
        return [op for op in self.ops for _ in range(WEIGHTS.get(op, 1))]

    def labels(self) -> list[str]:
        return sorted({t.label for ts in self.targets.values() for t in ts})


def scope_of(caps, formats=(), ops=None) -> Scope | None:
    """The scope of a backend's capabilities, narrowed to the named ``formats`` when given; None when nothing
    restricts the backend (the default case stream)."""
    declared_ops = caps.ops
    wanted = [op for op in (ops or (FORMAT_OPS if formats else SCOPED_OPS))
              if declared_ops is None or op in declared_ops]
    if not formats and not any(_patterns(caps, op) is not None for op in wanted) and claims_every_scheme(caps):
        return None  # flat lists that restrict no scheme axis (burn's own harness): the default case stream, every op
    targets = {}
    for op in wanted:
        if formats:
            ts = [of_format(get_format(f)) for f in formats]
        elif _patterns(caps, op) is not None:
            ts = [of_pattern(p) for p in _patterns(caps, op)]
        elif caps.unrestricted:
            return None
        else:
            ts = [of_flat(_narrowed(caps, op))]
        if op == "compute_q_params":  # its tensors are the block grid, which a per-row rule cannot be read off
            ts = [replace(t, blocks=tuple(b for b in t.blocks if b != ROW)) for t in ts]
        targets[op] = tuple(t for t in ts if t.values and t.stores and t.blocks)
    ops = tuple(op for op in wanted if targets.get(op) and op in SCOPED_OPS)
    if not ops:
        raise ValueError("nothing to fuzz: the declared capabilities and formats leave no op with a strategy "
                         f"({', '.join(SCOPED_OPS)})")
    return Scope(targets, ops)


def claims_every_scheme(caps) -> bool:
    """Flat capabilities that leave every value, store, mode, level and scale dtype in: nothing for a scope to
    draw inside (dtype or per-op narrowing is left to the runner's filter, as for the default stream)."""
    full = {"values": VALUES, "stores": STORES, "modes": MODES, "levels": LEVELS, "scale_dtypes": SCALE_DTYPES}
    return all(getattr(caps, key) is None or set(getattr(caps, key)) >= set(words) for key, words in full.items())


def _patterns(caps, op):
    """The ``formats`` the capabilities declare for ``op`` (protocol 2), None when they declare none."""
    patterns_for = getattr(caps, "patterns_for", None)
    return patterns_for(op) if patterns_for is not None else None


def _narrowed(caps, op):
    """The flat capabilities for ``op``: a ``per_op`` entry narrows the top-level lists."""
    sub = dict(caps.per_op).get(op)
    if sub is None:
        return caps
    return replace(caps, **{k: getattr(sub, k) for k in ("values", "stores", "modes", "levels", "scale_dtypes",
                                                         "input_dtypes") if getattr(sub, k) is not None})


# ---- drawing inside a target ----------------------------------------------------------------------------------

def draw_scheme(d, target: Target) -> tuple[dict, int | tuple | str | None]:
    """A scheme JSON inside ``target`` and its block rule (the shape is drawn for it next)."""
    value = d.pick(target.values)
    store = d.pick(target.stores)
    block = d.pick(target.blocks)
    mode = d.pick(target.modes)
    scheme = {"value": value, "store": store if store == "Native" else {store: 0}, "mode": mode,
              "tensor": None, "block": None}
    if block is None:
        tensor = [t for t in target.tensor_dtypes if t is not None] or ["F32"]
        scheme["tensor"] = d.pick(tensor)
    else:
        scheme["block"] = {"size": None, "dtype": d.pick(target.block_dtypes)}
        scheme["tensor"] = d.pick(target.tensor_dtypes)
    return scheme, block


def draw_shape(d, target: Target, block) -> tuple[int, ...]:
    """Rows x a few hundred columns at most, mostly small (a case stays cheap): the last dim whole blocks of
    ``block`` (one case in 8 a partial last block), a per-row block 1..255 wide."""
    rank = d.pick(target.ranks)
    if block is None:
        last = d.pick([32, 64, 128, 256, 7, 100, 16, 512])
    elif block == ROW:
        last = d.pick([64, 128, 32, 255, 16, 200, 96, 2])  # not 1: BlockSize([1]) is no block at all
    elif isinstance(block, tuple):
        last = block[-1] * d.integer(1, 4)
    else:
        last = block * d.pick([1, 2, 4, 1, 2, 8, 3, 16])
        if not d.integer(0, 7):
            last += d.integer(1, block - 1) if block > 1 else 0
    lead = [d.pick([1, 2, 4, 1, 3, 8, 16, 2]) for _ in range(rank - 1)]
    if isinstance(block, tuple):
        ext = list(block)[-rank:] if len(block) >= rank else [1] * (rank - len(block)) + list(block)
        lead = [ext[i] * max(1, n // ext[i]) for i, n in enumerate(lead)]
    dims = lead + [last] if rank > 1 else [last]
    while math.prod(dims) > MAX_ELEMENTS and len(dims) > 1 and max(dims[:-1]) > 1:
        i = dims.index(max(dims[:-1]))
        dims[i] = max(1, dims[i] // 2)
    return tuple(dims)


def finish_scheme(scheme: dict, block, shape) -> dict:
    """The block size of a drawn scheme, now that the shape is known (a per-row block is the last dim)."""
    if scheme["block"] is None:
        return scheme
    if block == ROW:
        size = [min(shape[-1], 255)]
    elif isinstance(block, tuple):
        size = list(block)
    else:
        size = [block]
    return dict(scheme, block=dict(scheme["block"], size=size))
