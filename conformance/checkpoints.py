"""Golden burnpack files written by the real burn builds, and the cross-release read matrix (docs/spec/checkpoint.md).

``vectors/checkpoints/`` holds, per release, the file each ``save_checkpoint`` case of the core suite gives when
that release's burn harness saves it (``<release>/<case>.bpk``), and ``manifest.json``: every file with its
sha256 and decoded content as the writing release loads it (shape, ``DType`` text, the dequantized floats' bits),
every save the release refused (burn-pack's error), and the matrix: each release's binaries loading every file
(identical tensor, different values, or burn's error). ``record`` writes it all from the real binaries
(``scripts/checkpoint_goldens.py``); ``check`` (run by ``qconform generate --check``) proves the oracle writes
every file byte for byte, reads each as recorded and predicts every cell of the matrix, without any binary.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

import oracle

from .cases import checkpoint as cases

FOLDER = Path(__file__).resolve().parents[1] / "vectors" / "checkpoints"
WRITERS = cases.WRITERS
"""release -> the profile of the binary that writes its files (a save is host code: every backend of a release
writes the same bytes, which ``record`` verifies)."""


def save_cases() -> list:
    return [c for c in cases.cases() if c.op == "save_checkpoint"]


def _file_name(alias: str) -> str:
    return alias.removeprefix("save_checkpoint/").replace("/", "__") + ".bpk"


def _hex(a: np.ndarray) -> str:
    return np.asarray(a, dtype="<f4").tobytes().hex()


def _content(outputs: dict, values: dict) -> dict:
    """What a load gives, as recorded: the descriptor read and the dequantized floats' bit patterns."""
    return {"shape": list(values["shape"]), "dtype": values["dtype"], "x": _hex(outputs["x"])}


def _cell(content: dict | None, error: tuple[str, str] | None, writer: dict) -> dict:
    if error is not None:
        return {"outcome": "error", "code": error[0], "message": error[1]}
    same = content == writer
    return {"outcome": "identical" if same else "different"}


# ---- recording from real binaries ---------------------------------------------------------------------------

def _code(error) -> str | None:
    """An error's code: the backend's, or read off burn's panic text (protocol.md: a panic carries no code)."""
    return error.code or oracle.classify_panic(error.message)


def _saved(out) -> object:
    """A save's outcome, comparable: the file's bytes, or the error's code and text."""
    outputs = getattr(out, "outputs", None)
    if outputs is not None:
        return np.asarray(outputs["file"], dtype=np.uint8).tobytes()
    return (getattr(out, "code", None), getattr(out, "message", repr(out)))


def record(backends: dict[str, object], folder: Path = FOLDER) -> dict:
    """Save every case with each release's backends and load every file with every backend; write the folder.
    ``backends``: profile name -> an open backend (``run(op, params, inputs)``) claiming that profile."""
    from .protocol import Result

    manifest: dict = {"files": [], "refused": [], "matrix": []}
    files: dict[tuple[str, str], bytes] = {}
    for release, profile in WRITERS.items():
        same_release = [p for p in backends if p.startswith(f"burn-{release}/")]
        for c in save_cases():
            outs = {p: backends[p].run(c.op, c.params, c.inputs) for p in same_release}
            first = outs[profile]
            for p, out in outs.items():
                if _saved(out) != _saved(first):
                    raise RuntimeError(f"{p} saves {c.alias} differently from {profile}")
            if isinstance(first, Result):
                files[(release, c.alias)] = np.asarray(first.outputs["file"], dtype=np.uint8).tobytes()
            else:
                manifest["refused"].append({"release": release, "case": c.alias, "code": _code(first),
                                            "message": first.message})
    contents = {}
    for (release, alias), data in files.items():
        for reader, backend in backends.items():
            out = backend.run("load_checkpoint", {}, {"file": np.frombuffer(data, dtype=np.uint8).copy()})
            if reader == WRITERS[release]:
                contents[(release, alias)] = _content(out.outputs, out.values)
            if isinstance(out, Result):
                manifest["matrix"].append({"writer": release, "reader": reader, "case": alias,
                                           "content": _content(out.outputs, out.values)})
            else:
                manifest["matrix"].append({"writer": release, "reader": reader, "case": alias,
                                           "error": [_code(out), out.message]})
    for cell in manifest["matrix"]:
        writer = contents[(cell["writer"], cell["case"])]
        got = cell.pop("content", None)
        error = cell.pop("error", None)
        cell.update(_cell(got, None if error is None else tuple(error), writer))
    for (release, alias), data in files.items():
        path = folder / release / _file_name(alias)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        manifest["files"].append({"release": release, "case": alias, "file": f"{release}/{_file_name(alias)}",
                                  "sha256": hashlib.sha256(data).hexdigest(), **contents[(release, alias)]})
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


# ---- checking against the oracle ---------------------------------------------------------------------------

def _oracle_load(data: bytes, profile: str) -> tuple[dict | None, tuple[str, str] | None]:
    try:
        out = oracle.run("load_checkpoint", {}, {"file": np.frombuffer(data, dtype=np.uint8).copy()},
                         profile=profile)
    except oracle.BurnPanic as e:
        return None, (e.code, e.message)
    return {"shape": out["shape"], "dtype": out["dtype"], "x": _hex(out["x"])}, None


def load_manifest(folder: Path = FOLDER) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def check(folder: Path = FOLDER) -> list[str]:
    """Every way the committed golden files and the oracle disagree (empty: they agree bit for bit)."""
    if not (folder / "manifest.json").is_file():
        return [f"{folder}/manifest.json does not exist: run scripts/checkpoint_goldens.py"]
    manifest, problems = load_manifest(folder), []
    by_alias = {c.alias: c for c in save_cases()}
    for entry in manifest["files"]:
        c, profile = by_alias[entry["case"]], WRITERS[entry["release"]]
        data = (folder / entry["file"]).read_bytes()
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            problems.append(f"{entry['file']}: sha256 is not the recorded one")
        try:
            written = np.asarray(oracle.run(c.op, c.params, c.inputs, profile=profile)["file"]).tobytes()
        except oracle.BurnPanic as e:
            problems.append(f"{entry['file']}: the oracle refuses to save it ({e.code})")
            continue
        if written != data:
            problems.append(f"{entry['file']}: the oracle writes other bytes")
        content, error = _oracle_load(data, profile)
        if content != {k: entry[k] for k in ("shape", "dtype", "x")}:
            problems.append(f"{entry['file']}: the oracle reads it as {error or content}, not as recorded")
    for entry in manifest["refused"]:
        c = by_alias[entry["case"]]
        try:
            oracle.run(c.op, c.params, c.inputs, profile=WRITERS[entry["release"]])
            problems.append(f"{entry['release']} {entry['case']}: the oracle saves what burn refused")
        except oracle.BurnPanic as e:
            if (e.code, e.message) != (entry["code"], entry["message"]):
                problems.append(f"{entry['release']} {entry['case']}: the oracle refuses with {e.code}: {e.message}")
    recorded = {(f["release"], f["case"]): f for f in manifest["files"]}
    for cell in manifest["matrix"]:
        writer = recorded[(cell["writer"], cell["case"])]
        content, error = _oracle_load((folder / writer["file"]).read_bytes(), cell["reader"])
        predicted = _cell(content, error, {k: writer[k] for k in ("shape", "dtype", "x")})
        if predicted != {k: v for k, v in cell.items() if k not in ("writer", "reader", "case")}:
            problems.append(f"{cell['reader']} reading {writer['file']}: the oracle predicts {predicted}")
    return problems


# ---- the matrix as a table ---------------------------------------------------------------------------------

def matrix_markdown(folder: Path = FOLDER) -> str:
    """docs/upgrading.md's "Checkpoints" section: per writer and reader, how many files read identical, with
    different values, or fail (and with which error)."""
    if not (folder / "manifest.json").is_file():
        return ""
    manifest = load_manifest(folder)
    readers = sorted({c["reader"] for c in manifest["matrix"]}, key=list(oracle.PROFILES).index)
    lines = ["## Checkpoints: which release reads which release's files", "",
             (f"Measured with the real burn builds (`vectors/checkpoints/manifest.json`, recorded by "
             f"`scripts/checkpoint_goldens.py`; `qconform generate --check` proves the oracle predicts every cell): "
             f"each release saves the {len(save_cases())} `save_checkpoint` cases of the suite (every value, store, "
             f"level and scale dtype) as burnpack files, and every binary loads every file. A cell counts the files "
             f"whose tensor it reads *identical* (the descriptor and the dequantized floats bit for bit, as the "
             f"writing release reads them), with *different* values, or refuses with an *error*."), "",
             "| written by | files | refused saves | " + " | ".join(f"read by `{r}`" for r in readers) + " |",
             "|---|---:|---:|" + "---|" * len(readers)]
    for release in WRITERS:
        cells = [c for c in manifest["matrix"] if c["writer"] == release]
        files = sum(1 for f in manifest["files"] if f["release"] == release)
        refused = sum(1 for r in manifest["refused"] if r["release"] == release)
        row = []
        for reader in readers:
            mine = [c for c in cells if c["reader"] == reader]
            counts = {k: sum(1 for c in mine if c["outcome"] == k) for k in ("identical", "different", "error")}
            codes = sorted({c["code"] for c in mine if c["outcome"] == "error"})
            row.append(f"{counts['identical']} identical, {counts['different']} different, {counts['error']} error"
                       + (f" (`{'`, `'.join(codes)}`)" if codes else ""))
        lines.append(f"| {release} | {files} | {refused} | " + " | ".join(row) + " |")
    refusals = sorted({(r["release"], r["code"]) for r in manifest["refused"]})
    if refusals:
        lines += ["", "Refused saves: " + "; ".join(
            f"{rel}: {sum(1 for r in manifest['refused'] if (r['release'], r['code']) == (rel, code))} × `{code}`"
            for rel, code in refusals) + ". `checkpoint.bytes_size_mismatch` is burn #5349's class: burn-store "
            "declares `quantized_data_len` bytes and the payload has another length (spec §13.5); `bytes.ue8m0` "
            "is #5486 (UE8M0 scales cannot be written before 0.22.1). Every *different* cell is a minifloat tensor "
            "(E4M3, E5M2, E2M1 in a Native store): the same bytes in every release, but 0.23.0-pre.1 decodes the "
            "codes as the format's values and 0.22 as integers (spec §13.7). No file is misread for its value "
            "layout: the packed tensors whose layout changed in 0.23 are exactly those 0.22 refuses to save."]
    return "\n".join(lines) + "\n"
