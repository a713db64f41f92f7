"""Batched evaluation: the expectations of many fuzz cases of one scheme from one oracle run.

An evaluation strategy of the same spec, not a second model: the oracle's cost is per numpy call, not per
element (docs/performance.md), so cases whose blocks are independent of each other are evaluated together, by
the oracle itself (``generate.expect``), on one tensor made of all their blocks, and the answer is split back.

It applies where that is the same arithmetic block by block (and the case's own rank meets no limit of the
backend's: ndarray's range reshapes a rank-r tensor to 2r dims, at most 6): ``quantize_dynamic``, ``quantize`` and
``dequantize`` of a one-level scheme whose blocks are 1-D along the last dim (``B`` long), on a CPU kernel
profile, for a non-empty tensor with (``quantize``, ``dequantize``) exactly one scale per block; and ``quantize``
and ``dequantize`` of such a two-level scheme whose one-element global the group shares (the same bits): given the
global, every block's effective scale ``f32(global * s)`` is its own (``quantize_dynamic`` computes its global from
the whole tensor, so it is never stacked). Such a tensor
viewed as rows (``(rows, L)``: ``L = B`` when its last dim is a whole number of blocks, else ``L`` = the last dim,
partial block included) has the same blocks in the same order, so every stage of every block is computed from
the same values by the same steps; the stacked rows of a group (same op, params, ``L`` and dtypes) are one such
tensor. Anything else, and any group whose stacked run panics (a panic's message is the case's own: the per-case
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
_SHARED = "global"  # a two-level case's input that a stacked group shares rather than concatenates


def stack_rows(case, profile: str) -> tuple[int, int] | None:
    """``(B, L)`` when ``case`` can be evaluated stacked with others of its scheme, else None: its blocks are
    ``B`` long along the last dim, and its tensor is stacked as rows of ``L`` elements (one block when the last
    dim is a whole number of blocks, else the whole last dim, partial block included)."""
    prof = get_profile(profile)
    if case.op not in OPS or "scheme" not in case.params or prof.kernel != "cpu":
        return None
    try:
        scheme = QuantScheme.from_json(case.params["scheme"])
    except ValueError:
        return None
    size = scheme.block_size()
    if size is None or len(size.dims) != 1 or size.dims[0] < 2:
        return None
    two_level = scheme.num_levels() != 1
    if set(case.inputs) != _ALLOWED_INPUTS[case.op] | ({_SHARED} if two_level else set()):
        return None
    if two_level and (case.op == "quantize_dynamic" or case.inputs[_SHARED].size != 1):
        return None
    b = size.dims[0]
    main = case.inputs[_MAIN[case.op]]
    if main.ndim == 0 or main.size == 0:
        return None
    if case.op == "quantize_dynamic" and prof.max_reshape_dims is not None and 2 * main.ndim > prof.max_reshape_dims:
        return None  # its range splits every dim in two: past the backend's rank limit alone, not as stacked rows
    row = b if main.shape[-1] % b == 0 else main.shape[-1]
    if "scales" in case.inputs and case.inputs["scales"].size != main.size // row * -(-row // b):
        return None
    return b, row


def group_key(case, b: int, row: int) -> tuple:
    """Cases that may share one stacked run: same op, params (scheme included), row length and input dtypes, and
    for a two-level scheme the same global (its bits and shape)."""
    dtypes = tuple((k, case.inputs[k].dtype) for k in sorted(case.inputs))  # a dtype (its .str is made per call)
    shared = case.inputs.get(_SHARED)
    glob = None if shared is None else (shared.shape, shared.tobytes())
    return case.op, b, row, params_key(case.params), dtypes, glob



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


def _batched(cases: list, profile: str, answer, with_stages: bool) -> list:
    out: list = [None] * len(cases)
    groups: dict[tuple, list[int]] = {}
    for i, case in enumerate(cases):
        shape = stack_rows(case, profile)
        if shape is not None:
            groups.setdefault(group_key(case, *shape), []).append(i)
    for (op, b, row, *_), members in groups.items():
        if len(members) < 2:
            continue
        split = _stacked([cases[i] for i in members], op, b, row, profile, with_stages)
        if split is not None:
            for i, (outputs, stages) in zip(members, split):
                out[i] = answer(cases[i], outputs, stages)
    return out


def _stacked(group: list, op: str, b: int, row: int, profile: str, with_stages: bool) -> list[tuple] | None:
    """Per case of ``group``, ``(outputs, stages)`` split from one oracle run on their stacked rows (``stages``
    None unless ``with_stages``), or None when the stacked run does not give data for all of them."""
    main = _MAIN[op]
    inputs = {main: np.concatenate([c.inputs[main].reshape(-1, row) for c in group])}
    if "scales" in group[0].inputs:
        inputs["scales"] = np.concatenate([c.inputs["scales"].reshape(-1) for c in group])
    if _SHARED in group[0].inputs:
        inputs[_SHARED] = group[0].inputs[_SHARED]
    whole = _run(Case(f"{op}/fuzz/batch", op, group[0].params, inputs, reason="fuzz"), profile, with_stages)
    if whole is None or "outputs" not in whole or whole["values"]:
        return None  # a panic or undefined behaviour: each case's own run says which, with its own message
    rows = Rows(row, -(-row // b), len(inputs[main]))
    bounds = np.cumsum([0] + [c.inputs[main].size // row for c in group])
    split = []
    for case, lo, hi in zip(group, bounds[:-1], bounds[1:]):
        shape = case.inputs[main].shape
        outputs = {name: rows.part(a, lo, hi, shape) for name, a in whole["outputs"].items()}
        stages = _stages(whole["stages"], rows, lo, hi, shape) if with_stages else None
        if any(v is None for v in outputs.values()) or (with_stages and stages is None):
            return None
        split.append((outputs, stages))
    return split


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

    def part(self, a: np.ndarray, lo: int, hi: int, shape: tuple) -> np.ndarray | None:
        """Rows ``lo..hi`` of a stacked array, in the shape the case's own run gives it: per element
        (``(count, length)``) the case's tensor shape, per block as a grid (``(count, blocks)``) the case's block
        grid, per block flat (``(count * blocks,)``) flat. Any other shape is not known to split: None."""
        if a.ndim == 2 and a.shape == (self.count, self.length):
            return np.ascontiguousarray(a[lo:hi].reshape(shape))
        if a.ndim == 2 and a.shape == (self.count, self.blocks):
            return np.ascontiguousarray(a[lo:hi].reshape(shape[:-1] + (-1,)))
        if a.ndim == 1 and a.shape[0] == self.count * self.blocks:
            return a[lo * self.blocks:hi * self.blocks].copy()
        if a.ndim == 1 and a.shape[0] == 1 and self.count * self.blocks != 1:  # the shared global, the same for each
            return a.copy()
        return None


def _stages(whole: Stages, rows: Rows, lo: int, hi: int, shape: tuple) -> Stages | None:
    parts = {}
    for name, a in vars(whole).items():
        if a is None:
            continue
        part = rows.part(np.asarray(a), lo, hi, shape)
        if part is None:
            return None
        parts[name] = part
    return Stages(**parts)
