"""Reading (and writing) golden vector suites, docs/vector-format.md.

``load_suite`` reads ``manifest.json`` and makes one pass over the shards: each shard is read once, its size
and sha256 checked against the manifest, decoded once, and every tensor reference resolved to a read-only
numpy array (views into the decoded shard; backends get them without copies). Every defect -- corrupt JSON, a
missing key, a bad hash, a truncated shard, a reference to a missing tensor or outside the suite folder, an
unknown op, an id that does not match its content -- raises ``VectorError`` naming the file and the vector,
before any backend is called. Nothing here imports the oracle.

``write_suite`` is the one writer: the generator and ``qconform repro`` both use it, so ids, tensor naming and
deduplication are defined once.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from oracle.profiles import DEFAULT_PROFILE
from oracle.scheme import QuantScheme
from oracle.stages import Stages
from oracle.vocabulary import FLOAT_DTYPES, OPS

from . import tensorio

FORMAT, FORMAT_VERSION = "qconform-vectors", 2
# Version 1 (an expectation per profile, under "expected") still loads: suites written before v2 (docs/repro/,
# a fuzz run's one-vector repros) stay runnable. Nothing writes it any more.
READABLE_VERSIONS = (1, FORMAT_VERSION)
KNOWN_OPS = frozenset(OPS)
COMPARE_KINDS = frozenset({"exact", "allclose"})
# Declared bounds of an allclose contract (also in the JSON Schema). A tolerance that accepts any answer makes a
# vector vacuous: rtol < 1 keeps the sign of every non-zero expected element; atol stays far below the range of
# the float outputs a contract may relax (the core suite needs at most 0.18 and 120). NaN and inf are refused.
TOLERANCE_BOUNDS = {"rtol": 0.5, "atol": 1024.0}


class VectorError(ValueError):
    """A suite that cannot be trusted; the message names the file and, when known, the vector."""

    def __init__(self, file: Path | str, message: str, vector: str | None = None):
        where = f"{file}: vector {vector}: " if vector else f"{file}: "
        super().__init__(where + message)
        self.file, self.vector = str(file), vector


@dataclass(frozen=True)
class Acceptable:
    """An outcome a profile also accepts because its expectation is a burn bug (``conformance/accidents.py``):
    the outputs and values it pins (the reply's others are not judged) and the invariant that makes it right."""
    outputs: dict[str, np.ndarray]
    values: dict
    why: str


@dataclass(frozen=True)
class Expected:
    """What one profile expects of one vector: outputs (+ JSON values), an error {code, message}, or nothing
    (``undefined``: why burn's behaviour under the profile is undefined, so the vector does not apply)."""
    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    compare: dict = field(default_factory=dict)
    stages: Stages = field(default_factory=Stages)
    """The oracle's stages of this expectation (the format's ``intermediates``), for diagnosis only."""
    error: dict | None = None
    undefined: str | None = None
    acceptable: tuple[Acceptable, ...] = ()
    """Set only where the expectation is a burn bug: the invariant-respecting outcomes a backend that is not
    burn may give instead (never accepted from burn's own builds, ``--exact-burn``)."""
    validation: str | None = None
    """Set only on an expected panic that refuses an invalid request (which one): declined for a backend that
    declares ``"validates": false``."""


def _spec_of(e: Expected) -> dict:
    if e.undefined is not None:
        return {"undefined": e.undefined}
    alternatives = [{"outputs": a.outputs, "values": a.values, "why": a.why} for a in e.acceptable]
    if e.error is not None:
        return ({"error": e.error} | ({"acceptable": alternatives} if alternatives else {})
                | ({"validation": e.validation} if e.validation else {}))
    out = {"outputs": e.outputs, "values": e.values, "compare": e.compare, "stages": e.stages}
    if alternatives:
        out["acceptable"] = alternatives
    return out


@dataclass
class Vector:
    id: str
    alias: str
    op: str
    params: dict
    inputs: dict[str, np.ndarray]
    expected: dict[str, Expected]
    tags: list[str] = field(default_factory=list)
    spec: list[str] = field(default_factory=list)
    reason: str = ""

    def to_spec(self) -> dict:
        """The form ``write_suite`` takes (used by ``qconform repro``)."""
        return {"id": self.id, "alias": self.alias, "op": self.op, "params": self.params,
                "inputs": self.inputs, "tags": self.tags, "spec": self.spec, "reason": self.reason,
                "expected": {p: _spec_of(e) for p, e in self.expected.items()}}


@dataclass
class Suite:
    path: Path
    name: str
    profiles: list[str]
    vectors: list[Vector]
    manifest: dict
    digest: str = ""  # suite_digest of manifest.json: names this exact suite in reports and statements

    def __post_init__(self):
        self._index = {v.id: v for v in self.vectors} | {v.alias: v for v in self.vectors}

    @property
    def default_profile(self) -> str:
        """The profile a backend that claims none is judged against, and the one ``explain`` shows: the
        oracle's default (``oracle.DEFAULT_PROFILE``, what ``--backend oracle`` and the library use) when the
        suite has it, else the suite's first. One definition, so ``run``, ``list`` and ``explain`` agree."""
        return DEFAULT_PROFILE if DEFAULT_PROFILE in self.profiles else self.profiles[0]

    def get(self, key: str) -> Vector:
        """A vector by id or alias (KeyError with a hint otherwise)."""
        try:
            return self._index[key]
        except KeyError:
            raise KeyError(f"no vector with id or alias {key!r} in suite {self.name} ({self.path})") from None


def suite_digest(manifest_bytes: bytes) -> str:
    """The suite's identity: sha256 of its ``manifest.json`` bytes. The manifest holds every shard's sha256 and
    every vector's id, params and expectations, so equal digests mean bit-identical suites. The one definition
    (reports, ``--quiet`` output and conformance statements all show it, shortened by :func:`short_digest`)."""
    return hashlib.sha256(manifest_bytes).hexdigest()


def short_digest(digest: str) -> str:
    """The first 12 hex digits, as printed for people (the JSON report keeps the whole digest)."""
    return digest[:12]


# The core suite: in a checkout, the committed ``vectors/core``; in an installed wheel, the copy setup.py puts
# inside the package. Both are loaded through load_suite, which checks every shard's size and sha256.
CHECKOUT_SUITE = Path(__file__).resolve().parents[1] / "vectors" / "core"
PACKAGED_SUITE = Path(__file__).resolve().parent / "data" / "vectors" / "core"


def default_suite_path() -> Path:
    """$QCONFORM_VECTORS, else the core suite of the checkout this package lives in, else the installed copy."""
    env = os.environ.get("QCONFORM_VECTORS")
    if env:
        return Path(env)
    return CHECKOUT_SUITE if (CHECKOUT_SUITE / "manifest.json").is_file() else PACKAGED_SUITE


# ---- ids and hashing ------------------------------------------------------------------------------------

def tensor_digest(array: np.ndarray) -> str:
    """sha256 of the raw little-endian element bytes (what a safetensors file holds)."""
    data = np.ascontiguousarray(array)
    if data.dtype.byteorder == ">":
        data = data.astype(data.dtype.newbyteorder("<"))
    return hashlib.sha256(data.tobytes()).hexdigest()


def vector_id(op: str, params: dict, inputs: dict[str, np.ndarray]) -> str:
    """First 20 hex digits of sha256 over the canonical JSON of {op, params, inputs: {dtype, shape, sha256}}.

    Canonical JSON = ``json.dumps(obj, sort_keys=True, separators=(",", ":"))`` (ensure_ascii default),
    dtype in safetensors spelling ("F32"), shape a list of ints.
    """
    desc = {name: {"dtype": tensorio.dtype_name(a), "shape": list(a.shape), "sha256": tensor_digest(a)}
            for name, a in inputs.items()}
    canon = json.dumps({"op": op, "params": params, "inputs": desc}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:20]


# ---- loading --------------------------------------------------------------------------------------------

def load_suite(path: str | Path, *, check_ids: bool = True) -> Suite:
    """Load and verify a suite folder (or its manifest.json)."""
    path = Path(path)
    folder = path.parent if path.name == "manifest.json" else path
    mfile = folder / "manifest.json"
    manifest, digest = _read_manifest(mfile)
    profiles = manifest["profiles"]
    shards = {s["file"]: _read_shard(folder, s, mfile) for s in manifest["shards"]}
    vectors, seen = [], {}
    for i, entry in enumerate(manifest["vectors"]):
        try:
            v = _read_vector(entry, i, shards, profiles, mfile, check_ids)
        except (RecursionError, TypeError, ValueError) as e:
            if isinstance(e, VectorError):
                raise
            raise VectorError(mfile, f"cannot be read: {type(e).__name__}: {str(e)[:200]}", f"#{i}") from None
        for key in (v.id, v.alias):
            if key in seen:
                raise VectorError(mfile, f"duplicate id/alias {key!r} (also vector #{seen[key]})", v.alias)
            seen[key] = i
        vectors.append(v)
    return Suite(folder, manifest["suite"], profiles, vectors, manifest, digest)


def _read_manifest(mfile: Path) -> tuple[dict, str]:
    try:
        raw = mfile.read_bytes()
        manifest = json.loads(raw)
    except FileNotFoundError:
        raise VectorError(mfile, "no such file (is this a suite folder?)") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:  # Recursion: nested thousands deep
        raise VectorError(mfile, f"not readable JSON: {str(e)[:200]}") from None
    if not isinstance(manifest, dict):
        raise VectorError(mfile, "manifest is not a JSON object")
    version = manifest.get("format_version")
    if manifest.get("format") != FORMAT or isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise VectorError(mfile, f"format {manifest.get('format')!r} version {version!r} is not {FORMAT!r}"
                                 f" version {' or '.join(map(str, READABLE_VERSIONS))}")
    for key, kind in (("suite", str), ("profiles", list), ("shards", list), ("vectors", list)):
        if not isinstance(manifest.get(key), kind):
            raise VectorError(mfile, f"{key!r} must be a {kind.__name__}")
    if not manifest["profiles"] or not all(isinstance(p, str) for p in manifest["profiles"]):
        raise VectorError(mfile, "'profiles' must be a non-empty list of names")
    for s in manifest["shards"]:
        if not (isinstance(s, dict) and isinstance(s.get("file"), str) and isinstance(s.get("sha256"), str)
                and isinstance(s.get("bytes"), int)):
            raise VectorError(mfile, f"shard entry {s!r:.200} needs 'file', 'sha256' and 'bytes'")
    return manifest, suite_digest(raw)


def _safe_name(name: str) -> bool:
    """A plain file name inside the suite folder: no separators, no '..', not absolute, no NUL or other
    control characters (a NUL would end the name early in C, or crash a path call)."""
    return (bool(name) and name.isprintable() and "/" not in name and "\\" not in name
            and name not in (".", "..") and ":" not in name)


def _read_shard(folder: Path, entry: dict, mfile: Path) -> dict[str, np.ndarray]:
    name = entry["file"]
    if not _safe_name(name):
        raise VectorError(mfile, f"shard file {name!r} is not a plain file name inside the suite folder")
    file = folder / name
    try:
        blob = file.read_bytes()
    except OSError as e:
        raise VectorError(file, f"cannot read shard: {e.strerror}") from None
    if len(blob) != entry["bytes"]:
        raise VectorError(file, f"shard has {len(blob)} bytes, manifest says {entry['bytes']} (truncated?)")
    digest = hashlib.sha256(blob).hexdigest()
    if digest != entry["sha256"].lower():
        raise VectorError(file, f"sha256 {digest} differs from the manifest's {entry['sha256']}")
    try:
        tensors, _ = tensorio.decode(blob)
    except tensorio.TensorIOError as e:
        raise VectorError(file, f"not a valid safetensors shard: {e}") from None
    for array in tensors.values():
        array.flags.writeable = False  # shared with backends without copies: nobody may write into them
    return tensors


def _read_vector(entry, i: int, shards: dict, profiles: list[str], mfile: Path, check_ids: bool) -> Vector:
    if not isinstance(entry, dict):
        raise VectorError(mfile, "is not an object", f"#{i}")
    label = entry.get("alias") or entry.get("id") or f"#{i}"

    def fail(msg: str):
        raise VectorError(mfile, msg, f"{label!r}")

    for key, kind in (("id", str), ("alias", str), ("op", str), ("params", dict), ("inputs", dict)):
        if not isinstance(entry.get(key), kind):
            fail(f"{key!r} must be a {kind.__name__}")
    if entry["op"] not in KNOWN_OPS:
        fail(f"unknown op {entry['op']!r} (known: {', '.join(sorted(KNOWN_OPS))})")
    for key in ("tags", "spec"):
        if not isinstance(entry.get(key, []), list) or not all(isinstance(t, str) for t in entry.get(key, [])):
            fail(f"{key!r} must be a list of strings")
    if not isinstance(entry.get("reason", ""), str):
        fail("'reason' must be a string")
    if "scheme" in entry["params"]:
        try:
            QuantScheme.from_json(entry["params"]["scheme"])
        except ValueError as err:
            fail(f"params.scheme: {err}")

    def ref(r, what: str) -> np.ndarray:
        if not isinstance(r, str) or "#" not in r:
            fail(f"{what}: tensor reference {r!r:.100} is not 'shard#name'")
        file, name = r.split("#", 1)
        if not _safe_name(file):
            fail(f"{what}: tensor reference {r!r} points outside the suite folder")
        if file not in shards:
            fail(f"{what}: shard {file!r} is not listed in the manifest")
        if name not in shards[file]:
            fail(f"{what}: shard {file!r} has no tensor {name!r}")
        return shards[file][name]

    def refs(d, what: str) -> dict[str, np.ndarray]:
        if not isinstance(d, dict):
            fail(f"{what} must be an object of tensor references")
        return {k: ref(r, f"{what}.{k}") for k, r in d.items()}

    inputs = refs(entry["inputs"], "inputs")
    if check_ids:
        want = vector_id(entry["op"], entry["params"], inputs)
        if want != entry["id"]:
            fail(f"id {entry['id']} does not match its content (recomputed {want}); edited by hand?")
    exp = _checked_outcomes(entry, profiles, fail)
    read: dict[int, Expected] = {}  # an outcome is read once; the profiles sharing it share its Expected
    for p in profiles:
        if id(exp[p]) not in read:
            read[id(exp[p])] = _read_expected(exp[p], p, refs, fail)
    expected = {p: read[id(exp[p])] for p in profiles}
    return Vector(entry["id"], entry["alias"], entry["op"], entry["params"], inputs, expected,
                  list(entry.get("tags", [])), list(entry.get("spec", [])), entry.get("reason", ""))


def outcomes_by_profile(entry: dict) -> dict[str, dict]:
    """A manifest vector's expectations per profile, as raw JSON, from either format version: v2's
    ``outcomes`` (each distinct outcome once, with the ``profiles`` that share it) or v1's ``expected`` (one
    per profile). Profiles of one outcome share one dict. For readers of a trusted manifest; ``load_suite``
    checks the structure first."""
    if "outcomes" not in entry:
        return entry["expected"]
    by_profile = {}
    for out in entry["outcomes"]:
        shared = {k: v for k, v in out.items() if k != "profiles"}
        by_profile |= {p: shared for p in out["profiles"]}
    return by_profile


def _checked_outcomes(entry: dict, profiles: list[str], fail) -> dict[str, dict]:
    """``outcomes_by_profile(entry)``, after checking that every profile of the manifest has exactly one."""
    if "outcomes" in entry:
        outcomes = entry["outcomes"]
        if not isinstance(outcomes, list) or not outcomes:
            fail("'outcomes' must be a non-empty list")
        for k, out in enumerate(outcomes):
            if not (isinstance(out, dict) and isinstance(out.get("profiles"), list) and out["profiles"]
                    and all(isinstance(p, str) for p in out["profiles"])):
                fail(f"outcomes[{k}] must be an object with a non-empty list of 'profiles'")
        seen = [p for out in outcomes for p in out["profiles"]]
        twice = sorted({p for p in seen if seen.count(p) > 1})
        if twice:
            fail(f"profile(s) {twice} have more than one outcome")
    elif not isinstance(entry.get("expected"), dict):
        fail("'outcomes' must be a list (format v2) or 'expected' an object (v1)")
    else:
        seen = list(entry["expected"])
    if set(seen) != set(profiles):
        fail(f"expected profiles {sorted(seen)} differ from the manifest's {sorted(profiles)}")
    return outcomes_by_profile(entry)


def _read_expected(e, profile: str, refs, fail) -> Expected:
    where = f"expected[{profile!r}]"
    if not isinstance(e, dict):
        fail(f"{where} must be an object")
    if "error" in e:
        err = e["error"]
        if not (isinstance(err, dict) and isinstance(err.get("code"), str) and isinstance(err.get("message"), str)):
            fail(f"{where}.error must be {{code, message}} strings")
        refused = e.get("validation")
        if refused is not None and (not isinstance(refused, str) or not refused.strip()):
            fail(f"{where}.validation must say which invalid request the panic refuses (a string)")
        return Expected(error=err, acceptable=_read_acceptable(e, where, refs, fail), validation=refused)
    if "undefined" in e:
        if not isinstance(e["undefined"], str) or not e["undefined"].strip():
            fail(f"{where}.undefined must say why (a string)")
        return Expected(undefined=e["undefined"])
    outputs = refs(e.get("outputs", {}), f"{where}.outputs")
    values = e.get("values", {})
    compare = e.get("compare", {})
    if not isinstance(values, dict) or not isinstance(compare, dict):
        fail(f"{where}: 'values' and 'compare' must be objects")
    if not outputs and not values:
        fail(f"{where} has neither outputs, values nor an error")
    for name, c in compare.items():
        if not isinstance(c, dict) or c.get("kind") not in COMPARE_KINDS:
            fail(f"{where}.compare.{name}: kind must be one of {sorted(COMPARE_KINDS)}")
        if c["kind"] == "allclose":
            _check_tolerance(c, outputs.get(name), f"{where}.compare.{name}", fail)
    try:
        stages = Stages.from_intermediates(refs(e.get("intermediates", {}), f"{where}.intermediates"))
    except ValueError as err:
        fail(f"{where}.intermediates: {err}")
    return Expected(outputs, values, compare, stages, acceptable=_read_acceptable(e, where, refs, fail))


def _read_acceptable(e: dict, where: str, refs, fail) -> tuple[Acceptable, ...]:
    """``acceptable``: a list of ``{outputs, values, why}``, each pinning at least one output or value."""
    alts = e.get("acceptable", [])
    if not isinstance(alts, list):
        fail(f"{where}.acceptable must be a list")
    out = []
    for i, a in enumerate(alts):
        at = f"{where}.acceptable[{i}]"
        if not isinstance(a, dict) or not isinstance(a.get("why"), str) or not a["why"].strip():
            fail(f"{at} must be an object that says why (a 'why' string)")
        outputs, values = refs(a.get("outputs", {}), f"{at}.outputs"), a.get("values", {})
        if not isinstance(values, dict) or not (outputs or values):
            fail(f"{at} pins neither an output nor a value")
        out.append(Acceptable(outputs, values, a["why"]))
    return tuple(out)


def _check_tolerance(contract: dict, output, where: str, fail):
    """An allclose contract relaxes a float output within TOLERANCE_BOUNDS, nothing else."""
    if output is None or tensorio.dtype_name(output).lower() not in FLOAT_DTYPES:
        fail(f"{where}: allclose applies to a float output tensor only")
    problem = tolerance_problem(contract)
    if problem:
        fail(f"{where}: {problem}")


def tolerance_problem(contract: dict) -> str | None:
    """Why an allclose contract's tolerances are outside TOLERANCE_BOUNDS, else None (the fuzzer asks too, so
    that it never writes a repro suite this loader refuses)."""
    for key, bound in TOLERANCE_BOUNDS.items():
        tol = contract.get(key)
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol <= bound:  # NaN fails too
            return f"allclose needs a numeric {key!r} in [0, {bound:g}], got {tol!r}"
    return None


# ---- writing --------------------------------------------------------------------------------------------

def write_suite(folder: str | Path, vectors: list[dict], *, suite: str, profiles: list[str],
                suite_version: str = "1", oracle_version: str = "", spec: str = "",
                shard_bytes: int = 64 << 20) -> dict:
    """Write a suite folder (manifest.json + shard-NNN.safetensors) and return the manifest.

    Each vector is a dict: ``alias, op, params, inputs: {name: ndarray}, expected: {profile: {"outputs":
    {name: ndarray}, "values", "compare", "stages": oracle.Stages} | {"error": {code, message}} |
    {"undefined": why}}``
    and optionally ``tags, spec, reason`` (``id`` is computed). Inputs are stored as ``<id>/<name>``;
    expected tensors once per content as ``t/<sha256 prefix>``, in profile order (so the shard layout does not
    depend on how outcomes are grouped); the manifest lists each distinct outcome once (``_outcomes``). Output
    is deterministic for equal input.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    writer = _ShardWriter(folder, suite, shard_bytes)
    entries = []
    for v in vectors:
        vid = vector_id(v["op"], v["params"], v["inputs"])
        entry = {"id": vid, "alias": v["alias"], "op": v["op"], "params": v["params"],
                 "inputs": {k: writer.put(f"{vid}/{k}", a) for k, a in v["inputs"].items()},
                 "tags": list(v.get("tags", [])), "spec": list(v.get("spec", [])), "reason": v.get("reason", "")}
        entry["outcomes"] = _outcomes({p: _stored(v["expected"][p], writer) for p in profiles})
        entries.append(entry)
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "suite": suite,
                "suite_version": suite_version, "oracle_version": oracle_version, "spec": spec,
                "profiles": list(profiles), "shards": writer.close(), "vectors": entries}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def _stored(e: dict, writer: _ShardWriter) -> dict:
    """One profile's expectation as the manifest writes it, its tensors stored by reference; the accident fields
    (``acceptable``, ``validation``, conformance/accidents.py) come with either form."""
    if "undefined" in e:
        return {"undefined": e["undefined"]}
    if "error" in e:
        out = {"error": dict(e["error"])}
    else:
        out = {"outputs": {k: writer.put_shared(a) for k, a in e.get("outputs", {}).items()},
               "values": e.get("values", {}), "compare": e.get("compare", {})}
        intermediates = e["stages"].intermediates() if "stages" in e else {}
        if intermediates:
            out["intermediates"] = {k: writer.put_shared(a) for k, a in intermediates.items()}
    if e.get("acceptable"):
        out["acceptable"] = [{"outputs": {k: writer.put_shared(a) for k, a in alt["outputs"].items()},
                              "values": alt.get("values", {}), "why": alt["why"]} for alt in e["acceptable"]]
    if e.get("validation"):
        out["validation"] = e["validation"]
    return out


def _outcomes(by_profile: dict[str, dict]) -> list[dict]:
    """Format v2: each distinct outcome once, with the profiles that share it (in the given profile order),
    outcomes ordered by their first profile. Most profiles agree on most vectors, so the manifest grows with
    the outcomes, not with vectors x profiles. Two outcomes are one when their JSON is equal (references to
    the same stored tensors, equal contracts, equal intermediates)."""
    groups: dict[str, dict] = {}
    for profile, e in by_profile.items():
        groups.setdefault(json.dumps(e, sort_keys=True), {"profiles": [], **e})["profiles"].append(profile)
    return list(groups.values())


class _ShardWriter:
    """Packs tensors into shards of about ``limit`` bytes, storing identical expected tensors once."""

    def __init__(self, folder: Path, suite: str, limit: int):
        self.folder, self.suite, self.limit = folder, suite, limit
        self.current: dict[str, np.ndarray] = {}
        self.size, self.shards, self.shared = 0, [], {}

    def _file(self) -> str:
        return f"shard-{len(self.shards):03d}.safetensors"

    def put(self, name: str, array: np.ndarray) -> str:
        if self.current and self.size + array.nbytes > self.limit:
            self._flush()
        self.current[name] = np.asarray(array)
        self.size += array.nbytes
        return f"{self._file()}#{name}"

    def put_shared(self, array: np.ndarray) -> str:
        array = np.asarray(array)
        key = hashlib.sha256(f"{tensorio.dtype_name(array)}{list(array.shape)}".encode()
                             + bytes.fromhex(tensor_digest(array))).hexdigest()[:24]
        if key not in self.shared:
            self.shared[key] = self.put(f"t/{key}", array)
        return self.shared[key]

    def _flush(self):
        blob = tensorio.encode(self.current, {"qconform-shard": self.suite})
        file = self._file()
        (self.folder / file).write_bytes(blob)
        self.shards.append({"file": file, "sha256": hashlib.sha256(blob).hexdigest(), "bytes": len(blob)})
        self.current, self.size = {}, 0

    def close(self) -> list[dict]:
        if self.current or not self.shards:
            self._flush()
        return self.shards
