"""Batched evaluation: the expectations of many fuzz cases of one scheme from one oracle run.

An evaluation strategy of the same spec, not a second model: the oracle's cost is per numpy call, not per
element (docs/performance.md), so cases whose blocks are independent of each other are evaluated together, by
the oracle itself (``generate.expect``), on one tensor made of all their blocks, and the answer is split back.

It applies where that is the same arithmetic block by block: ``quantize_dynamic``, ``quantize`` and
``dequantize`` of a one-level scheme whose blocks are 1-D along the last dim (``B`` long), on a CPU kernel
profile, for a non-empty tensor with (``quantize``, ``dequantize``) exactly one scale per block. Such a tensor
viewed as rows (``(rows, L)``: ``L = B`` when its last dim is a whole number of blocks, else ``L`` = the last dim,
partial block included) has the same blocks in the same order, so every stage of every block is computed from
the same values by the same steps; the stacked rows of a group (same op, params, ``L`` and dtypes) are one such
tensor. A row longer than a block that ends in a partial one is cut in two pieces (``pieces``): its whole blocks
join the rows of ``B``, its partial last block the rows of that block's own length. Anything else, and any group whose stacked run panics (a panic's message is the case's own: the per-case
oracle decides it), is evaluated case by case: the per-case oracle stays the reference, and
``tests/suite/test_fuzz_batched.py`` compares the two, bit patterns, shapes, dtypes and errors, over thousands of
drawn cases of every named format and op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from oracle import Stages
from oracle.profiles import get_profile
from oracle.scheme import QuantScheme

from ..backends.oracle import run_oracle
from ..cases import Case
from ..contracts import TOLERANT_OPS, contracts
from ..generate import CaseError, expect
from ..patterns import params_key
from ..protocol import Result

OPS = ("quantize_dynamic", "quantize", "dequantize")
_MAIN = {"quantize_dynamic": "x", "quantize": "x", "dequantize": "codes"}
_ALLOWED_INPUTS = {"quantize_dynamic": {"x"}, "quantize": {"x", "scales"}, "dequantize": {"codes", "scales"}}


def stack_rows(case, profile: str) -> tuple[int, int] | None:
    """``(B, L)`` when ``case`` can be evaluated stacked with others of its scheme, else None: its blocks are
    ``B`` long along the last dim, and its tensor is stacked as rows of ``L`` elements (one block when the last
    dim is a whole number of blocks, else the whole last dim, partial block included)."""
    if case.op not in OPS or set(case.inputs) != _ALLOWED_INPUTS[case.op] or "scheme" not in case.params:
        return None
    if get_profile(profile).kernel != "cpu":
        return None
    try:
        scheme = QuantScheme.from_json(case.params["scheme"])
    except ValueError:
        return None
    size = scheme.block_size()
    if size is None or len(size.dims) != 1 or size.dims[0] < 2 or scheme.num_levels() != 1:
        return None
    b = size.dims[0]
    main = case.inputs[_MAIN[case.op]]
    if main.ndim == 0 or main.size == 0:
        return None
    row = b if main.shape[-1] % b == 0 else main.shape[-1]
    if "scales" in case.inputs and case.inputs["scales"].size != main.size // row * -(-row // b):
        return None
    return b, row


def pieces(case, b: int, row: int) -> list[tuple[int, slice]]:
    """How a case's rows of ``row`` elements are stacked: ``(L, columns)`` per piece, each piece's rows ``L``
    long. A row of whole blocks, or one shorter than a block, is one piece; a longer row with a partial last
    block is two, its whole blocks (stacked as rows of ``B`` with the other cases' whole blocks) and its partial
    last block (stacked with the partial blocks of its own length): each block is computed alone by the same
    steps either way. Cut only where no storage word straddles the cut (a packed store's word holds
    ``num_quants`` values, and the bytes are read back word by word)."""
    tail = row % b
    per_word = QuantScheme.from_json(case.params["scheme"]).num_quants()
    if row <= b or tail % per_word or b % per_word:
        return [(row, slice(0, row))]
    return [(b, slice(0, row - tail)), (tail, slice(row - tail, row))]


def group_key(case, b: int, length: int) -> tuple:
    """Pieces that may share one stacked run: same op, params (scheme included), row length and input dtypes."""
    dtypes = tuple((k, case.inputs[k].dtype) for k in sorted(case.inputs))  # a dtype (its .str is made per call)
    return case.op, b, length, params_key(case.params), dtypes


def expectations(cases: list, profile: str, as_case) -> list[dict | None]:
    """Per case, ``generate.expect``'s answer computed in a stacked run, or None where the case must be evaluated
    on its own (``as_case`` turns a fuzz case into the ``Case`` that ``expect`` takes)."""
    def expectation(case, outputs, stages):  # contracts gives a tolerance only to TOLERANT_OPS (no Case made else)
        compare = contracts(as_case(case), profile) if case.op in TOLERANT_OPS else {}
        return {"outputs": outputs, "values": {}, "compare": compare, "stages": stages}
    return _batched(cases, profile, expectation, with_stages=True)


def answers(requests: list, profile: str) -> list[dict | None]:
    """Per ``(op, params, inputs)`` request, the oracle's outputs (what ``run_oracle`` returns for it alone)
    computed in a stacked run, or None where the request must be run on its own: the same grouping and split
    as ``expectations``, without the stages (a backend's ``run_many`` answers with outputs only)."""
    cases = [Request(*r) for r in requests]
    return _batched(cases, profile, lambda case, outputs, stages: outputs, with_stages=False)


@dataclass(frozen=True)
class Request:
    """A backend request seen as a case (what ``stack_rows`` reads of one)."""
    op: str
    params: dict
    inputs: dict


@dataclass(frozen=True)
class Piece:
    """Some columns of a case's rows (``pieces``): its inputs as rows of ``length``, ``rows`` rows of the case's."""
    case: int
    index: int  # its place in the case's row, counted in pieces
    params: dict
    inputs: dict
    rows: int


def _piece(i: int, index: int, case, b: int, row: int, length: int, columns: slice) -> Piece:
    main = case.inputs[_MAIN[case.op]].reshape(-1, row)
    inputs = {_MAIN[case.op]: main[:, columns].reshape(-1, length)}
    if "scales" in case.inputs:  # one scale per block of a row: the columns of the piece's blocks in that grid
        grid = case.inputs["scales"].reshape(len(main), -1)
        inputs["scales"] = grid[:, columns.start // b:-(-columns.stop // b)].reshape(-1)
    return Piece(i, index, case.params, inputs, len(main))


def _batched(cases: list, profile: str, answer, with_stages: bool) -> list:
    groups: dict[tuple, list[Piece]] = {}
    parts: dict[int, list] = {}  # case -> its pieces' answers, in column order (None until answered)
    for i, case in enumerate(cases):
        shape = stack_rows(case, profile)
        if shape is None:
            continue
        cut = pieces(case, *shape)
        parts[i] = [None] * len(cut)
        for index, (length, columns) in enumerate(cut):
            groups.setdefault(group_key(case, shape[0], length), []).append(
                _piece(i, index, case, *shape, length, columns))
    for (op, b, length, _, _), members in groups.items():
        if len(members) < 2:
            continue
        split = _stacked(members, op, b, length, profile, with_stages)
        if split is not None:
            for piece, got in zip(members, split):
                parts[piece.case][piece.index] = got
    out: list = [None] * len(cases)
    for i, got in parts.items():
        if all(p is not None for p in got):  # every piece of the case was in a stacked run that gave data
            joined = _joined(got, cases[i].inputs[_MAIN[cases[i].op]].shape, with_stages)
            if joined is not None:
                out[i] = answer(cases[i], *joined)
    return out


def _stacked(group: list[Piece], op: str, b: int, length: int, profile: str,
             with_stages: bool) -> list[tuple] | None:
    """Per piece of ``group``, ``(outputs, stages)`` as row parts (``Rows.part``) split from one oracle run on
    their stacked rows (``stages`` None unless ``with_stages``), or None when the stacked run gives no data."""
    main = _MAIN[op]
    inputs = {main: np.concatenate([p.inputs[main] for p in group])}
    if "scales" in group[0].inputs:
        inputs["scales"] = np.concatenate([p.inputs["scales"] for p in group])
    whole = _run(Case(f"{op}/fuzz/batch", op, group[0].params, inputs, reason="fuzz"), profile, with_stages)
    if whole is None or "outputs" not in whole or whole["values"]:
        return None  # a panic or undefined behaviour: each case's own run says which, with its own message
    rows = Rows(length, -(-length // b), len(inputs[main]))
    bounds = np.cumsum([0] + [len(p.inputs[main]) for p in group])
    split = []
    for piece, lo, hi in zip(group, bounds[:-1], bounds[1:]):
        outputs = {name: rows.part(a, lo, hi, piece.rows) for name, a in whole["outputs"].items()}
        stages = ({name: rows.part(np.asarray(a), lo, hi, piece.rows) for name, a in vars(whole["stages"]).items()
                   if a is not None} if with_stages else None)
        if any(v is None for v in outputs.values()) or (with_stages and any(v is None for v in stages.values())):
            return None
        split.append((outputs, stages))
    return split


def _joined(parts: list[tuple], shape: tuple, with_stages: bool) -> tuple | None:
    """A case's ``(outputs, stages)`` from its pieces' row parts, side by side in column order, in the shapes
    the case's own run gives them; None when the pieces do not agree on what they hold."""
    outputs = _side_by_side([p[0] for p in parts], shape)
    if not with_stages:
        return None if outputs is None else (outputs, None)
    stages = _side_by_side([p[1] for p in parts], shape)
    return None if outputs is None or stages is None else (outputs, Stages(**stages))


def _side_by_side(parts: list[dict], shape: tuple) -> dict | None:
    if any(p.keys() != parts[0].keys() for p in parts):
        return None
    joined = {}
    for name in parts[0]:
        kinds = {p[name][0] for p in parts}
        if len(kinds) != 1:
            return None
        kind = kinds.pop()
        a = parts[0][name][1] if len(parts) == 1 else np.concatenate([p[name][1] for p in parts], axis=1)
        joined[name] = _in_shape(kind, a, shape)
    return joined


def _in_shape(kind: str, a: np.ndarray, shape: tuple) -> np.ndarray:
    """A case's rows as its own run gives them: per element its tensor's shape, per block its block grid or flat."""
    if kind == "element":
        return np.ascontiguousarray(a.reshape(shape))
    if kind == "grid":
        return np.ascontiguousarray(a.reshape(shape[:-1] + (-1,)))
    return np.ascontiguousarray(a).reshape(-1).copy()


def _run(case: Case, profile: str, with_stages: bool) -> dict | None:
    """The oracle on the stacked case: ``expect``'s answer (stages recorded), or just its outputs and values;
    None when the oracle itself failed (each case's own run reports it, as the case it is)."""
    if with_stages:
        try:
            return expect(case, profile)
        except CaseError:
            return None
    try:
        split = run_oracle(case.op, case.params, case.inputs, profile)
    except Exception:  # noqa: BLE001 - as for expect: the cases' own runs report the oracle's failure
        return None
    if not isinstance(split, Result):
        return None
    return {"outputs": dict(split.outputs), "values": split.values}


@dataclass(frozen=True)
class Rows:
    """The stacked tensor: ``count`` rows of ``length`` elements, ``blocks`` blocks each."""
    length: int
    blocks: int
    count: int

    def part(self, a: np.ndarray, lo: int, hi: int, rows: int) -> tuple[str, np.ndarray] | None:
        """Rows ``lo..hi`` of a stacked array as ``(kind, one row of the piece's per row of its case)``: per
        element (``(count, length)``), per block as a grid (``(count, blocks)``) or per block flat
        (``(count * blocks,)``), the case's ``rows`` rows each. Any other shape is not known to split: None."""
        if a.ndim == 2 and a.shape == (self.count, self.length):
            return "element", a[lo:hi].reshape(rows, -1)
        if a.ndim == 2 and a.shape == (self.count, self.blocks):
            return "grid", a[lo:hi].reshape(rows, -1)
        if a.ndim == 1 and a.shape[0] == self.count * self.blocks:
            return "flat", a[lo * self.blocks:hi * self.blocks].reshape(rows, -1)
        return None
