"""``qconform profiles --diff A B``: the vectors whose expected outcome differs between two profiles, grouped by the
profile field that causes the difference.

Both profiles' expectations are already in the suite; the cause is found by substitution: profile ``A`` with one
field set to ``B``'s value is run through the oracle on the vector, and a field *explains* the vector when that
one substitution gives ``B``'s outcome. A vector no single field explains is grouped under the fields that each
move its outcome (they only explain it together), or under every differing field when none does on its own.
A profile is data, so the substitution needs no second code path (the mutants work the same way).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import json
from dataclasses import dataclass, field

import oracle
from oracle import Profile, choices, get_profile

from .backends.oracle import run_oracle
from .compare import expected_outcome, same_outcome
from .protocol import Error
from .vectors import Suite, Vector

# Fields that name a profile rather than describe a behaviour.
_IDENTITY = ("name", "description", "release", "backend")


@dataclass
class Group:
    fields: tuple[str, ...]
    changes: tuple[tuple[str, object, object], ...]
    explanation: str
    aliases: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return " + ".join(self.fields)


def field_docs() -> dict[str, str]:
    """Each ``Profile`` field's docstring, on one line."""
    body = ast.parse(inspect.getsource(Profile)).body[0].body
    return {node.target.id: " ".join(str(after.value.value).split())
            for node, after in itertools.pairwise(body)
            if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)}


def explain(name: str, new_value, docs: dict[str, str]) -> str:
    """One line on what a field's new value means: its meaning in the field's vocabulary (``oracle.choices``),
    or the first sentence of the field's docstring for a flag or a set."""
    choice = CHOICES.get(name)
    if choice is not None and isinstance(new_value, str) and new_value in choice.meanings:
        return f"{name}={new_value}: {choice.meanings[new_value]}"
    doc = docs.get(name, "").split(". ")[0].rstrip(".")
    return f"{name}: {doc}" if doc else name


CHOICES = {v.field: v for v in vars(choices).values() if isinstance(v, choices.Choice)}


def differing_fields(a: Profile, b: Profile) -> list[str]:
    return [f.name for f in dataclasses.fields(Profile)
            if f.name not in _IDENTITY and getattr(a, f.name) != getattr(b, f.name)]


def _same(want, got, contract: dict, vector: Vector) -> bool:
    """The same answer under the vector's contract; a panic also with the same message (a backend judged with
    ``--strict-messages`` has to print burn's exact text)."""
    if not same_outcome(want, got, contract, vector):
        return False
    return not isinstance(want, Error) or want.message == got.message


def expectations_differ(vector: Vector, a: str, b: str) -> bool:
    ea, eb = vector.expected[a], vector.expected[b]
    if ea.undefined is not None and eb.undefined is not None:
        return False  # neither profile expects an outcome (a fault is never the same as anything)
    want, got = expected_outcome(ea), expected_outcome(eb)
    return not (_same(want, got, ea.compare, vector) and _same(got, want, eb.compare, vector))


def cause(vector: Vector, a: Profile, b: Profile, fields: list[str]) -> tuple[str, ...]:
    """The field(s) of ``a`` that, set to ``b``'s values, turn ``a``'s outcome of ``vector`` into ``b``'s."""
    exp_a, exp_b = vector.expected[a.name], vector.expected[b.name]
    want_a, want_b = expected_outcome(exp_a), expected_outcome(exp_b)
    explains, moves = [], []
    for name in fields:
        got = run_oracle(vector.op, vector.params, vector.inputs, a.with_(**{name: getattr(b, name)}))
        if _same(want_a, got, exp_a.compare, vector):
            continue  # this field alone changes nothing here
        (explains if _same(want_b, got, exp_b.compare, vector) else moves).append(name)
    return tuple(explains[:1] or moves or fields)


def diff(suite: Suite, a: str | Profile, b: str | Profile) -> tuple[list[Group], int]:
    """The groups of vectors whose expectations differ between ``a`` and ``b`` (largest group first), and the
    number of vectors compared."""
    pa, pb = get_profile(a), get_profile(b)
    for p in (pa, pb):
        if p.name not in suite.profiles:
            raise KeyError(f"the suite has no expectations for profile {p.name!r}")
    fields = differing_fields(pa, pb)
    docs = field_docs()
    groups: dict[tuple[str, ...], Group] = {}
    for vector in suite.vectors:
        if not expectations_differ(vector, pa.name, pb.name):
            continue
        key = cause(vector, pa, pb, fields)
        if key not in groups:
            changes = tuple((f, getattr(pa, f), getattr(pb, f)) for f in key)
            groups[key] = Group(key, changes, "; ".join(explain(f, getattr(pb, f), docs) for f in key))
        groups[key].aliases.append(vector.alias)
    return sorted(groups.values(), key=lambda g: (-len(g.aliases), g.key)), len(suite.vectors)


def _show(value) -> str:
    if isinstance(value, frozenset | tuple):
        return "{" + ", ".join(sorted(value)) + "}"
    return json.dumps(value) if value is None or isinstance(value, bool) else str(value)


def format_text(a: str, b: str, groups: list[Group], total: int, *, examples: int = 3) -> str:
    n = sum(len(g.aliases) for g in groups)
    lines = [f"{n} of {total} vectors expect a different outcome under {b} than under {a}"]
    for g in groups:
        change = "; ".join(f"{f}: {_show(x)} -> {_show(y)}" for f, x, y in g.changes)
        lines.append(f"\n{len(g.aliases):>4}  {change}")
        lines.append(f"      {g.explanation}")
        shown = ", ".join(g.aliases[:examples]) + (", ..." if len(g.aliases) > examples else "")
        lines.append(f"      e.g. {shown}")
    return "\n".join(lines)


def to_json(a: str, b: str, groups: list[Group], total: int) -> dict:
    return {"a": a, "b": b, "vectors": total, "differ": sum(len(g.aliases) for g in groups),
            "groups": [{"fields": list(g.fields),
                        "changes": [{"field": f, "a": _jsonable(x), "b": _jsonable(y)} for f, x, y in g.changes],
                        "explanation": g.explanation, "count": len(g.aliases), "vectors": g.aliases}
                       for g in groups]}


def _jsonable(value):
    return sorted(value) if isinstance(value, frozenset | tuple) else value


# --- docs/upgrading.md ----------------------------------------------------------------------------------------

UPGRADING_BASE = "burn-0.22.0-pre.3/ndarray"
"""The profile the upgrade guide starts from: what qconform's users conformed to first."""


def upgrade_paths() -> list[tuple[str, str]]:
    """From the base to every CPU profile of a later release (one per backend), then each backend release by
    release, the GPU runtimes' too (a GPU profile is never compared with a CPU one: they differ everywhere)."""
    cpu = [n for n in oracle.PROFILES if get_profile(n).kernel == "cpu"]
    from_base = [(UPGRADING_BASE, n) for n in cpu if n != UPGRADING_BASE and _release(n) != _release(UPGRADING_BASE)]
    steps = []
    # The lean builds and burn's default (fused) builds are chained apart, release by release; each fused profile is
    # also reached from its lean twin (same release and runtime): what burn's default features change.
    for build in dict.fromkeys((get_profile(n).backend, get_profile(n).fusion) for n in oracle.PROFILES):
        chain = [n for n in oracle.PROFILES if (get_profile(n).backend, get_profile(n).fusion) == build]
        steps += [(a, b) for a, b in itertools.pairwise(chain) if (a, b) not in from_base]
    steps += [(n.removesuffix("-fused"), n) for n in oracle.PROFILES
              if get_profile(n).fusion and n.removesuffix("-fused") in oracle.PROFILES]
    return from_base + steps


def _release(name: str) -> str:
    return name.split("/")[0]


def upgrading_markdown(suite: Suite) -> str:
    """docs/upgrading.md: every upgrade path's grouped differences, as ``qconform profiles --diff`` finds them."""
    lines = [
        "# Upgrading burn: what changes for a conforming backend",
        "",
        "<!-- Generated by `qconform profiles --upgrading` from the committed suite; `make test` checks that it is",
        "     current (`qconform profiles --upgrading --check`). Do not edit by hand. -->",
        "",
        (f"A backend that conforms to `{UPGRADING_BASE}` and moves to a later burn release has to change what each "
        "group below names: the vectors of the group expect a different outcome under the new profile, and setting "
        "that one profile field to the new value (in the oracle) gives exactly the new outcomes. A group naming "
        "several fields only changes with all of them. Counts are vectors of the committed suite "
        f"(`{suite.name}`, {len(suite.vectors)} vectors); `qconform profiles --diff A B` lists them all, `--json` "
        "too. The GPU runtimes (`wgpu`, `vulkan`: burn's kernels on Mesa lavapipe) are compared release by release "
        "only, and burn's default builds (`-fused`: fusion and autotune on) both release by release and against the "
        "lean build of their release; the CUDA model (`cubecl`, one release) has no upgrade path."),
    ]
    for a, b in upgrade_paths():
        groups, total = diff(suite, a, b)
        n = sum(len(g.aliases) for g in groups)
        lines += ["", f"## `{a}` → `{b}`", "", f"{n} of {total} vectors expect a different outcome.", ""]
        if not groups:
            continue
        lines += ["| vectors | what changes | what the new value means | e.g. |", "|---:|---|---|---|"]
        for g in groups:
            change = "<br>".join(f"`{f}`: {_show(x)} → {_show(y)}" for f, x, y in g.changes)
            lines.append(f"| {len(g.aliases)} | {change} | {g.explanation.replace('|', '/')} | "
                         f"`{g.aliases[0]}` |")
    from .checkpoints import matrix_markdown  # the measured file interchange, beside the vectors' differences

    matrix = matrix_markdown()
    return "\n".join(lines) + "\n" + ("\n" + matrix if matrix else "")
