"""The deterministic golden-vector generator: ``qconform generate [--suite NAME] [--out DIR] [--check]``.

Cases (``conformance/cases``) say what is asked; this module asks the oracle once per profile, records either
the outputs (with a comparison contract and diagnostic intermediates) or the expected error, derives the tags
that can be read off the data, refuses anything that would break the format (duplicate aliases or ids, bad
names, dtypes safetensors cannot carry, params that are not plain JSON, an oracle that fails with something
other than a burn panic), and writes the suite with ``conformance.vectors.write_suite``.

Determinism: no clock, no global random state (cases seed numpy's PCG64 from their alias), a fixed case and
profile order, sorted params keys, and a writer whose shard layout depends only on that order. ``--check``
regenerates into a temporary folder and reports, per vector id, what was added, removed or changed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import oracle
from oracle import QuantScheme, Stages

from . import accidents, tensorio
from .backends.oracle import run_oracle
from .cases import Case
from .contracts import contracts
from .protocol import Error, Fault, ProtocolError
from .tags import VALUE_CLASSES, data_tags, outcome_tags, structural_tags
from .vectors import KNOWN_OPS, outcomes_by_profile, vector_id, write_suite

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "vectors"
SUITE_VERSION = "1"
SPEC = "docs/spec (burn 0.22.0-pre.3 = 2c06be3; 0.22.1 for the burn-0.22.1 profiles)"
SHARD_BYTES = 64 << 10  # tensor bytes per shard (headers come on top): a few shards, so readers meet more than one
PROFILES = list(oracle.PROFILES)

_ALIAS = re.compile(r"^[a-z0-9_]+(/[a-z0-9][a-z0-9._+-]*)+$")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_TAG = re.compile(r"^[a-z0-9-]+:[A-Za-z0-9._-]+$")
_SECTION = re.compile(r"^§\d+(\.\d+)*[a-z]?( #\d+)?$")


class CaseError(ValueError):
    """A case that would break the format or the suite's invariants (the message names the alias)."""


class UndefinedCase(CaseError):
    """A case on which burn's behaviour is undefined under every profile (a fuzzer skips it; under some profiles
    only, the vector expects ``{"undefined": why}`` of those and does not apply to them)."""


# ---- suites -------------------------------------------------------------------------------------------------

def suite_cases(suite: str) -> list[Case]:
    """The cases of a suite, in their fixed order."""
    if suite != "core":
        raise CaseError(f"unknown suite {suite!r} (known: core)")
    from .cases import (
        calibration,
        checkpoint,
        codec,
        dequantize,
        float_ops,
        formats,
        fuzz_found,
        layout,
        load_quantized,
        matmul,
        packing,
        qparams,
        quantize,
        quantize_dynamic,
        round_up,
        scale_codec,
        scheme_info,
    )
    modules = (round_up, scale_codec, calibration, qparams, quantize, quantize_dynamic, dequantize, codec,
               packing, matmul, scheme_info, layout, float_ops, load_quantized, checkpoint, fuzz_found, formats)
    return [c for m in modules for c in m.cases()]


# ---- validation ---------------------------------------------------------------------------------------------

def canonical_json(value, where: str):
    """Plain JSON (no NaN/inf, no numpy scalars), with every object's keys sorted."""
    try:
        text = json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise CaseError(f"{where}: not plain JSON ({e})") from None
    return json.loads(text)


def validate(c: Case) -> None:
    where = f"case {c.alias!r}"
    if not _ALIAS.match(c.alias) or c.alias.split("/")[0] != c.op:
        raise CaseError(f"{where}: an alias is '<op>/<lowercase segments>' starting with its op ({c.op})")
    if c.op not in KNOWN_OPS:
        raise CaseError(f"{where}: unknown op {c.op!r}")
    if not c.reason.strip():
        raise CaseError(f"{where}: every vector says why it exists (reason)")
    if not c.spec or not all(_SECTION.match(s) for s in c.spec):
        raise CaseError(f"{where}: spec sections must look like '§5.2' (got {list(c.spec)})")
    for t in c.tags:
        if not _TAG.match(t):
            raise CaseError(f"{where}: tag {t!r} is not 'axis:value'")
    for name, a in c.inputs.items():
        if not _NAME.match(name):
            raise CaseError(f"{where}: input name {name!r} is not a plain identifier")
        if not isinstance(a, np.ndarray):
            raise CaseError(f"{where}: input {name!r} is not a numpy array")
        try:
            tensorio.dtype_name(a)
        except tensorio.TensorIOError as e:
            raise CaseError(f"{where}: input {name!r}: {e}") from None
    if "scheme" in c.params:
        try:
            QuantScheme.from_json(c.params["scheme"])
        except ValueError as e:
            raise CaseError(f"{where}: {e}") from None


# ---- one profile's expectation ---------------------------------------------------------------------------

def expect(c: Case, profile: str) -> dict:
    """``{"error": {code, message}}``, ``{"outputs", "values", "compare", "stages"}``, or ``{"undefined": why}``
    when burn's behaviour under the profile is undefined (a GPU kernel reading past a buffer, racing writes)."""
    stages = Stages()
    try:
        split = run_oracle(c.op, c.params, c.inputs, profile, stages=stages)
    except ProtocolError as e:  # the oracle's answer fails the validation a python backend's answer gets
        raise CaseError(f"case {c.alias!r} under {profile}: {e}") from None
    except Exception as e:
        raise CaseError(f"case {c.alias!r}: the oracle failed under {profile} with {type(e).__name__}: {e}") from e
    if isinstance(split, Error):
        return {"error": {"code": split.code, "message": split.message}}
    if isinstance(split, Fault):
        return {"undefined": split.detail}
    outputs = {name: np.ascontiguousarray(v) for name, v in split.outputs.items()}
    values = {name: canonical_json(v, f"case {c.alias!r}: value {name!r}") for name, v in split.values.items()}
    # The oracle's own stages of this very run (what the expectation is made of), for locating a divergence.
    return {"outputs": outputs, "values": values, "compare": contracts(c, profile), "stages": stages}


# ---- building and writing ---------------------------------------------------------------------------------

def build(suite: str = "core") -> list[dict]:
    """Every vector of ``suite`` in the form ``write_suite`` takes (ids checked unique)."""
    vectors, aliases, ids = [], {}, {}
    for c in suite_cases(suite):
        validate(c)
        params = canonical_json(c.params, f"case {c.alias!r}: params")
        c = Case(c.alias, c.op, params, {k: np.ascontiguousarray(v) for k, v in c.inputs.items()}, c.tags, c.spec,
                 c.reason)
        if c.alias in aliases:
            raise CaseError(f"duplicate alias {c.alias!r}")
        vid = vector_id(c.op, params, c.inputs)
        if vid in ids:
            raise CaseError(f"case {c.alias!r} asks exactly what {ids[vid]!r} asks (same id {vid})")
        aliases[c.alias], ids[vid] = vid, c.alias
        entries = {p: expect(c, p) for p in PROFILES}
        if all("undefined" in e for e in entries.values()):
            raise UndefinedCase(f"case {c.alias!r}: undefined under every profile (no vector can expect it)")
        accidents.mark(c.op, params, c.inputs, entries, run_oracle)  # burn's bugs and burn's validation
        derived = structural_tags(c) | data_tags(c, entries) | outcome_tags(entries) | accidents.tags(entries)
        declared = set(c.tags)
        checkable = c.op in ("quantize", "quantize_dynamic")
        missing = {t for t in declared if checkable and t.startswith("class:") and t[6:] in VALUE_CLASSES} - derived
        if missing:
            raise CaseError(f"case {c.alias!r} declares {sorted(missing)} but its data does not show it")
        vectors.append({"alias": c.alias, "op": c.op, "params": params, "inputs": c.inputs,
                        "tags": sorted(declared | derived), "spec": list(c.spec), "reason": c.reason,
                        "expected": entries})
    return vectors


def generate(suite: str, out: Path) -> dict:
    """Write ``suite`` into ``out`` (replacing its manifest and shards) and return the manifest."""
    vectors = build(suite)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("shard-*.safetensors"):
        old.unlink()
    return write_suite(out, vectors, suite=suite, profiles=PROFILES, suite_version=SUITE_VERSION,
                       oracle_version=oracle.__version__, spec=SPEC, shard_bytes=SHARD_BYTES)


def suite_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(Path(folder).iterdir())
            if p.name == "manifest.json" or p.suffix == ".safetensors"}


# ---- --check: a readable diff ------------------------------------------------------------------------------

def _resolved(entry: dict) -> dict:
    """A vector entry with its expectations per profile (whatever the format version) under ``expected``, and
    tensor references reduced to their tensor names (shard placement aside)."""
    def strip(refs):
        return {k: r.split("#", 1)[1] for k, r in refs.items()}
    e = {k: v for k, v in entry.items() if k != "outcomes"}
    e["expected"] = json.loads(json.dumps(outcomes_by_profile(entry)))
    e["inputs"] = strip(e["inputs"])
    for exp in e["expected"].values():
        for key in ("outputs", "intermediates"):
            if key in exp:
                exp[key] = strip(exp[key])
        for alt in exp.get("acceptable", []):
            alt["outputs"] = strip(alt["outputs"])
    return e


def diff_manifests(old: dict, new: dict) -> list[str]:
    """Human-readable differences: header fields, then vectors added, removed or changed (field by field)."""
    lines = []
    for key in sorted(set(old) | set(new)):
        if key in ("vectors", "shards"):
            continue
        if old.get(key) != new.get(key):
            lines.append(f"manifest {key}: {json.dumps(old.get(key))} -> {json.dumps(new.get(key))}")
    ov = {v["id"]: _resolved(v) for v in old.get("vectors", [])}
    nv = {v["id"]: _resolved(v) for v in new.get("vectors", [])}
    old_alias = {v["alias"]: i for i, v in ov.items()}
    for vid in sorted(set(nv) - set(ov), key=lambda i: nv[i]["alias"]):
        alias = nv[vid]["alias"]
        was = f" (alias had id {old_alias[alias]}: params or inputs changed)" if alias in old_alias else ""
        lines.append(f"added   {vid} {alias}{was}")
    new_alias = {v["alias"] for v in nv.values()}
    for vid in sorted(set(ov) - set(nv), key=lambda i: ov[i]["alias"]):
        note = " (alias kept under a new id)" if ov[vid]["alias"] in new_alias else ""
        lines.append(f"removed {vid} {ov[vid]['alias']}{note}")
    for vid in sorted(set(ov) & set(nv), key=lambda i: nv[i]["alias"]):
        a, b = ov[vid], nv[vid]
        fields = [k for k in sorted(set(a) | set(b)) if k != "expected" and a.get(k) != b.get(k)]
        for p in sorted(set(a["expected"]) | set(b["expected"])):
            ea, eb = a["expected"].get(p), b["expected"].get(p)
            if ea != eb:
                sub = [k for k in sorted(set(ea or {}) | set(eb or {})) if (ea or {}).get(k) != (eb or {}).get(k)]
                fields.append(f"expected[{p}].{'/'.join(sub)}")
        if fields:
            lines.append(f"changed {vid} {b['alias']}: {', '.join(fields)}")
    if not lines and old.get("shards") != new.get("shards"):
        lines.append("shard bytes differ (same vectors): the writer's layout or tensor bytes changed")
    return lines


def check_suite(suite: str, committed: Path) -> tuple[bool, list[str]]:
    """Regenerate ``suite`` into a temporary folder and compare with ``committed`` byte for byte."""
    with tempfile.TemporaryDirectory(prefix="qconform-check-") as tmp:
        fresh = Path(tmp) / suite
        generate(suite, fresh)
        new_files = suite_files(fresh)
        try:
            old_files = suite_files(committed)
        except FileNotFoundError:
            return False, [f"{committed} does not exist: run `qconform generate --suite {suite}`"]
        if old_files == new_files:
            return True, []
        try:
            old = json.loads(old_files.get("manifest.json", b"{}"))
        except ValueError:
            old = {}
        lines = diff_manifests(old, json.loads(new_files["manifest.json"]))
        for name in sorted(set(old_files) ^ set(new_files)):
            lines.append(f"file {name}: {'only committed' if name in old_files else 'only regenerated'}")
        return False, lines or ["files differ byte for byte (manifest formatting?)"]


# ---- entry points ---------------------------------------------------------------------------------------

def main_generate(suite: str | None = None, out: Path | None = None, check: bool = False) -> int:
    """``qconform generate``: write (or with ``check``, verify) a suite. Returns the exit code."""
    suite = suite or "core"
    target = Path(out) if out else VECTORS / suite
    start = time.perf_counter()
    try:
        if check:
            ok, lines = check_suite(suite, target)
            if suite == "core" and out is None:
                from . import checkpoints  # the golden burnpack files ride with the core suite
                problems = checkpoints.check()
                ok, lines = ok and not problems, lines + [f"vectors/checkpoints: {p}" for p in problems]
            took = time.perf_counter() - start
            if ok:
                print(f"{target}: up to date ({took:.1f} s)")
                return 0
            print(f"{target} differs from a fresh generation ({took:.1f} s):")
            for line in lines:
                print(f"  {line}")
            print(f"regenerate with: qconform generate --suite {suite}" + (f" --out {out}" if out else ""))
            return 1
        manifest = generate(suite, target)
    except CaseError as e:
        print(f"qconform generate: {e}", file=sys.stderr)
        return 2
    took = time.perf_counter() - start
    size = sum(s["bytes"] for s in manifest["shards"]) + (target / "manifest.json").stat().st_size
    print(f"wrote {target}: {len(manifest['vectors'])} vectors, {len(manifest['shards'])} shard(s), "
          f"{size / 1e6:.2f} MB, {took:.1f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="qconform generate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="core")
    ap.add_argument("--out", type=Path, help="output folder (default vectors/<suite>)")
    ap.add_argument("--check", action="store_true", help="regenerate into a temp folder and diff, write nothing")
    args = ap.parse_args(argv)
    return main_generate(args.suite, args.out, args.check)


if __name__ == "__main__":
    sys.exit(main())
