"""The declared coverage lattice and the coverage / mutant reports: ``qconform coverage`` and ``qconform mutants``.

The lattice is a few *planes*, each the product of two or three axes (docs/coverage.md explains the choice).
A vector covers a cell when it carries every ``axis:value`` tag of the cell (tags are written by the
generator, most of them read off the data). A cell is covered, deliberately out of scope (with a reason), or
empty; a committed suite has no empty cell (``tests/suite/test_vectors_coverage.py``).

The mutant report judges every mutant of ``conformance.mutants`` against the expectations of its base
profile: the oracle runs with the mutant profile on each vector, and the vector *catches* the mutant when the
outputs differ (under the vector's comparison contract), when one side fails and the other does not, or when
the error codes differ.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from oracle import CATALOGUE, ScaleDtype
from oracle.vocabulary import FLOAT_DTYPES, FLOAT_STEPS, LAYOUT_STEPS, LEVELS, OPS, SCALE_DTYPES, SCALE_OPS, STORES, VALUES

from .backends.oracle import run_oracle
from .compare import expected_outcome, same_outcome
from .formats import FORMATS, get_format
from .mutants import MUTANTS
from .tags import GRID_CLASSES, VALUE_CLASSES
from .vectors import default_suite_path, load_suite

SHAPES = ("rank-1", "rank-2", "rank-3", "rank-4", "rank-5", "partial-block", "nd-block", "block-larger",
          "leading-1", "block-rank-exceeds", "empty", "large")
QUANTIZE = ("quantize", "quantize_dynamic")


@dataclass(frozen=True)
class Plane:
    name: str
    description: str
    axes: tuple[tuple[str, tuple[str, ...]], ...]
    ops: tuple[str, ...] = ()
    """When set, only vectors of these ops count (and ``op`` is not an axis of the plane)."""

    def cells(self):
        return itertools.product(*(values for _, values in self.axes))

    def tags(self, cell) -> set[str]:
        return {f"{axis}:{value}" for (axis, _), value in zip(self.axes, cell)}

    def label(self, cell) -> str:
        return " x ".join(f"{axis}:{value}" for (axis, _), value in zip(self.axes, cell))


PLANES = (
    Plane("ops", "every op succeeds somewhere and fails somewhere it can fail",
          (("op", OPS), ("outcome", ("ok", "error")))),
    Plane("support", "value x store x level, quantized dynamically or with explicit scales",
          (("value", VALUES), ("store", STORES), ("level", LEVELS)), QUANTIZE),
    Plane("scale-codec", "the scale-storage ops for every scale dtype",
          (("op", SCALE_OPS), ("scale", SCALE_DTYPES))),
    Plane("scale-level", "each scale dtype at each level (the innermost scales' dtype)",
          (("scale", SCALE_DTYPES), ("level", LEVELS)), QUANTIZE),
    Plane("input-dtype", "float dtype of the input (of the output for dequantize)",
          (("op", ("compute_range", "compute_q_params", "quantize", "quantize_dynamic", "dequantize")),
           ("dtype", FLOAT_DTYPES))),
    Plane("dtype-level", "float input dtype x level for the quantize paths",
          (("dtype", FLOAT_DTYPES), ("level", LEVELS)), QUANTIZE),
    Plane("shape", "shape classes for the ops that see a tensor shape and a block size",
          (("op", ("quantize", "quantize_dynamic", "dequantize", "scheme_info")), ("shape", SHAPES))),
    Plane("value-class", "adversarial value classes at each level (quantize or quantize_dynamic)",
          (("class", VALUE_CLASSES), ("level", LEVELS)), QUANTIZE),
    Plane("packed-layout", "burn >= 0.23.0-pre.1 packs a packed store line by line along its packed dim: store x "
          "packed dim x whether a line needs padding", (("store", ("PackedU32", "PackedNative")),
                                                         ("packed-dim", ("innermost", "outer")),
                                                         ("line", ("whole", "padded"))), ("to_bytes", "from_bytes")),
    Plane("loader", "a loader's question (load_quantized): burn's stored bytes of every store with every scale dtype",
          (("store", STORES), ("scale", SCALE_DTYPES)), ("load_quantized",)),
    Plane("minifloat", "E4M3/E5M2/E2M1 codes through the value classes a minifloat conversion can get wrong",
          (("value", ("E4M3", "E5M2", "E2M1")), ("class", ("nan", "signed-zero", "saturate"))),
          QUANTIZE),
    Plane("layout", "each layout step on a quantized tensor at each level (qlayout, chains included)",
          (("step", LAYOUT_STEPS), ("level", LEVELS)), ("qlayout",)),
    Plane("layout-store", "what each store becomes when a quantized tensor is loaded and moved",
          (("store", STORES), ("level", LEVELS)), ("qlayout",)),
    Plane("layout-view", "quantize_dynamic of a non-contiguous view, each view step at each level",
          (("view", ("transpose", "permute", "slice", "flip", "expand")), ("level", LEVELS)), ("quantize_view",)),
    Plane("float-ops", "each float op on a quantized tensor at each level (float_ops: its result's kind, spec §9.5)",
          (("step", (*FLOAT_STEPS, "matmul")), ("level", LEVELS)), ("float_ops",)),
    Plane("float-operands", "each kind of other side a binary op or matmul meets, at each level of the held tensor: "
          "a float tensor (rhs, or lhs of a matmul), the tensor itself, a second quantized tensor of its own scheme",
          (("other", ("float", "float-lhs", "self", "quantized")), ("level", LEVELS)), ("float_ops",)),
    Plane("panic", "every panic of spec §8 that the modelled ops can reach (oracle/errors.py CATALOGUE)",
          (("panic", tuple(CATALOGUE)),)),
)

# Per named format (conformance/formats.py): each op a third-party implementation of it runs, on weight-like
# tensors and through every class that decides bits under the format's scale grid.
FORMAT_OPS = ("quantize_dynamic", "quantize", "dequantize")
FORMAT_CLASSES = ("weight-like", "grid-tie", "grid-near-tie", "zero-block", "zero-scale", "scale-overflow",
                  "scale-underflow", "scale-subnormal", "scale-max", "scale-smallest", "subnormal", "inf", "nan")
assert set(FORMAT_CLASSES) <= {"weight-like", *VALUE_CLASSES, *GRID_CLASSES}
FORMAT_PLANES = tuple(
    Plane(f"format-{name}", f"{fmt.title}: op x class", (("format", (name,)), ("op", FORMAT_OPS),
                                                          ("class", FORMAT_CLASSES)), FORMAT_OPS)
    for name, fmt in FORMATS.items())
ALL_PLANES = PLANES + FORMAT_PLANES

# (plane, cell pattern as fnmatch patterns per axis) -> why the cell is deliberately left empty
OUT_OF_SCOPE: list[tuple[str, tuple[str, ...], str]] = [
    ("ops", ("pack_u32", "error"), "pack_u32 has no failure mode: any i8 codes pack (extra bits are masked)"),
    ("ops", ("scheme_info", "error"), "scheme-level queries are total functions"),
    ("value-class", ("two-level-split", "tensor"), "needs two scale factors (block scale and global)"),
    ("value-class", ("two-level-split", "block"), "needs two scale factors (block scale and global)"),
    *[("shape", (op, "large"), ("size is exercised once, by quantize_dynamic on a 64x64 two-level tensor; the "
                                "element paths of quantize, dequantize and scheme_info do not depend on size"))
      for op in ("quantize", "dequantize", "scheme_info")],
    ("panic", ("bytes.values_fill_shape",), ("§8 #1: TensorData::quantized checks the length first (#2, "
                                            "data.shape_mismatch), so QuantizedBytes::new's assert is unreachable")),
    ("panic", ("cubecl.reshape_recompute_sub_byte",),
     ("reached only by 4/2-bit PackedU32 codes, whose load overflows wgpu's upload: the SPIR-V device is then "
      "unusable for the next request (measured: the following vector crashed), so a unit test holds it "
      "(tests/oracle/test_gpu_0_22_0_pre_3.py)")),
]

_NO_DATA = "dequantize takes codes and decoded scales: no x, so no x / s, no calibration"
_NO_SCALES_OUT = "a scale at the dtype's edges is given, not computed, only in dequantize (the quantize ops' scales " \
    "are checked by scale-overflow, -underflow and -subnormal)"
def _format_out_of_scope(name: str, fmt) -> list[tuple[str, tuple[str, ...], str]]:
    """The cells of a format's plane that cannot hold a vector, and why."""
    plane = f"format-{name}"
    out = [(plane, (name, "dequantize", c), _NO_DATA) for c in ("grid-tie", "grid-near-tie", "zero-block",
                                                                "scale-overflow", "scale-underflow", "subnormal",
                                                                "inf", "nan")]
    out += [(plane, (name, op, c), _NO_SCALES_OUT) for op in QUANTIZE for c in ("scale-max", "scale-smallest")]
    out.append((plane, (name, "quantize", "zero-block"), "with explicit scales an all-zero block is 0 / s like any "
                                                         "small value; its scale of 0 is the zero-scale cell"))
    if (fmt.block_dtype or fmt.tensor_dtype) is ScaleDtype.F32:
        out.append((plane, (name, "quantize", "scale-underflow"), "a given scale is an f32: none is below F32's "
                                                                   "smallest positive value (2^-149)"))
    if fmt.block_dtype is ScaleDtype.UE8M0:
        out.append((plane, (name, "*", "scale-subnormal"), "UE8M0 is 2^e: no subnormal scales"))
        out += [(plane, (name, op, "zero-scale"), "UE8M0 has no zero: a computed or given scale of 0 is held as "
                 "2^-127 (dequantize, which takes decoded scales, has its zero-scale vector)") for op in QUANTIZE]
    return out


OUT_OF_SCOPE += [entry for name, fmt in FORMATS.items() for entry in _format_out_of_scope(name, fmt)]


def out_of_scope(plane: str, cell) -> str | None:
    for name, pattern, reason in OUT_OF_SCOPE:
        if name == plane and len(pattern) == len(cell) and all(fnmatch(v, p) for v, p in zip(cell, pattern)):
            return reason
    return None


@dataclass
class CellReport:
    plane: str
    label: str
    vectors: list[str]
    out_of_scope: str | None


def load_manifest(vectors_dir: Path) -> dict:
    path = Path(vectors_dir)
    path = path / "manifest.json" if path.is_dir() else path
    return json.loads(path.read_text())


def coverage(manifest: dict, planes=ALL_PLANES) -> list[CellReport]:
    tagged = [(v["alias"], v["op"], set(v.get("tags", []))) for v in manifest["vectors"]]
    reports = []
    for plane in planes:
        for cell in plane.cells():
            want = plane.tags(cell)
            hits = [alias for alias, op, tags in tagged
                    if want <= tags and (not plane.ops or op in plane.ops)]
            reports.append(CellReport(plane.name, plane.label(cell), hits, out_of_scope(plane.name, cell)))
    return reports


def summary(reports: list[CellReport]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in reports:
        s = out.setdefault(r.plane, {"cells": 0, "covered": 0, "out_of_scope": 0, "empty": 0})
        s["cells"] += 1
        if r.vectors:
            s["covered"] += 1
        elif r.out_of_scope:
            s["out_of_scope"] += 1
        else:
            s["empty"] += 1
    return out


def empty_cells(reports: list[CellReport]) -> list[CellReport]:
    return [r for r in reports if not r.vectors and not r.out_of_scope]


def format_coverage(reports: list[CellReport], verbose: bool = False, planes=ALL_PLANES) -> str:
    lines = []
    totals = {"cells": 0, "covered": 0, "out_of_scope": 0, "empty": 0}
    for plane in planes:
        s = summary(reports)[plane.name]
        for k in totals:
            totals[k] += s[k]
        lines.append(f"{plane.name:<12} {s['covered']:>4} covered  {s['out_of_scope']:>3} out of scope  "
                     f"{s['empty']:>3} empty  of {s['cells']:>4}   {plane.description}")
        for r in reports:
            if r.plane != plane.name:
                continue
            if not r.vectors and r.out_of_scope:
                lines.append(f"    out of scope  {r.label}: {r.out_of_scope}")
            elif not r.vectors:
                lines.append(f"    EMPTY         {r.label}")
            elif verbose:
                lines.append(f"    {len(r.vectors):>4} vectors  {r.label}  (e.g. {r.vectors[0]})")
    lines.append(f"{'total':<12} {totals['covered']:>4} covered  {totals['out_of_scope']:>3} out of scope  "
                 f"{totals['empty']:>3} empty  of {totals['cells']:>4}")
    return "\n".join(lines)


# ---- the mutation gate ----------------------------------------------------------------------------------

def catches(vector, mutant) -> bool:
    """Whether ``vector`` tells ``mutant`` from its base profile (the base profile's expectation is the truth)."""
    exp = vector.expected[mutant.base]
    if exp.undefined is not None:
        return False  # nothing to tell the mutant from
    answer = run_oracle(vector.op, vector.params, vector.inputs, mutant.profile)
    return not same_outcome(expected_outcome(exp), answer, exp.compare, vector)


def mutant_catches(suite) -> dict[str, dict[str, list[str]]]:
    """For every mutant and every op it applies to (``Mutant.ops``): the aliases of that op's vectors that
    catch it."""
    return {name: {op: [v.alias for v in suite.vectors if v.op == op and catches(v, m)] for op in m.ops}
            for name, m in sorted(MUTANTS.items())}


def escapes(caught: dict[str, dict[str, list[str]]]) -> list[tuple[str, str]]:
    """(mutant, op) pairs where the mutant applies to the op but none of the op's vectors catches it."""
    return [(name, op) for name, per_op in caught.items() for op, aliases in per_op.items() if not aliases]


def format_mutants(caught: dict[str, dict[str, list[str]]]) -> str:
    lines = []
    for name, per_op in caught.items():
        m = MUTANTS[name]
        whole = sum(len(a) for a in per_op.values())
        mark = "CAUGHT" if all(per_op.values()) else "ESCAPES"
        lines.append(f"{mark:<7} {name:<22} {whole:>4} vectors  [{m.base.split('/')[-1]}] {m.description}")
        for op, aliases in per_op.items():
            example = f"  e.g. {aliases[0]}" if aliases else "  ESCAPES: no vector of this op catches it"
            lines.append(f"          {op:<20} {len(aliases):>4}{example}")
    bad = escapes(caught)
    pairs = sum(len(p) for p in caught.values())
    lines.append(f"{pairs - len(bad)} of {pairs} (mutant, op) pairs caught, "
                 f"{sum(all(p.values()) for p in caught.values())} of {len(caught)} mutants caught on every op "
                 "they apply to" + (f"; escaped: {', '.join(f'{n} on {o}' for n, o in bad)}" if bad else ""))
    return "\n".join(lines)


# ---- entry points ---------------------------------------------------------------------------------------

def format_planes(names) -> tuple[Plane, ...]:
    """The coverage planes of the named formats (``get_format`` names an unknown one)."""
    return tuple(p for name in names for p in FORMAT_PLANES if p.name == f"format-{get_format(name).name}")


def main_coverage(vectors_dir: Path | None = None, verbose: bool = False, formats=()) -> int:
    """``qconform coverage``: covered, out-of-scope and empty cells; exit 1 if a cell is empty."""
    planes = format_planes(formats) if formats else ALL_PLANES
    reports = coverage(load_manifest(Path(vectors_dir or default_suite_path())), planes)
    print(format_coverage(reports, verbose or bool(formats), planes))
    return 1 if empty_cells(reports) else 0


def main_mutants(vectors_dir: Path | None = None) -> int:
    """``qconform mutants``: per mutant and per op it applies to, the vectors that catch it; exit 1 if a mutant
    escapes the vectors of an op it applies to."""
    caught = mutant_catches(load_suite(Path(vectors_dir or default_suite_path())))
    print(format_mutants(caught))
    return 1 if escapes(caught) else 0


def main(argv: list[str] | None = None) -> int:
    """``qconform coverage ...`` or ``qconform mutants ...``: each with its own parser, so ``--help`` describes
    the command that was asked for."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv.pop(0) if argv and argv[0] in ("coverage", "mutants") else "coverage"
    entry = main_mutants if command == "mutants" else main_coverage
    ap = argparse.ArgumentParser(prog=f"qconform {command}", description=entry.__doc__.split(": ", 1)[1])
    ap.add_argument("--vectors", type=Path, default=None,
                    help="suite folder (default $QCONFORM_VECTORS or vectors/core)")
    if command == "coverage":
        ap.add_argument("-v", "--verbose", action="store_true", help="list covered cells too")
        ap.add_argument("--format", action="append", default=[], metavar="NAME", dest="formats",
                        help=f"only the cells of this named format, each listed (repeatable; {', '.join(FORMATS)})")
    args = ap.parse_args(argv)
    if command == "mutants":
        return main_mutants(args.vectors)
    try:
        return main_coverage(args.vectors, args.verbose, args.formats)
    except ValueError as e:  # an unknown format name
        ap.error(str(e))


if __name__ == "__main__":
    sys.exit(main())
