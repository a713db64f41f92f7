"""Read a qconform suite without qconform: manifest.json + safetensors shards (docs/vector-format.md).
Usage: python read_vectors.py SUITE_DIR [ALIAS]   (json, hashlib, struct, sys and numpy only)"""
import hashlib
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": "<f4", "F16": "<f2", "I8": "i1", "U8": "u1", "U32": "<u4", "I64": "<i8", "BF16": "<u2"}


def read_shard(path, want_sha256):
    with open(path, "rb") as f:
        blob = f.read()
    if hashlib.sha256(blob).hexdigest() != want_sha256:
        raise ValueError(f"{path}: sha256 differs from the manifest")
    (n,) = struct.unpack("<Q", blob[:8])  # header length, then the JSON header, then the data
    header, data = json.loads(blob[8:8 + n]), blob[8 + n:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        a = np.frombuffer(data[start:end], dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
        if info["dtype"] == "BF16":  # bf16 = the top 16 bits of an f32
            a = (a.astype("<u4") << 16).view("<f4")
        tensors[name] = a
    return tensors


def main(folder, alias=None):
    with open(f"{folder}/manifest.json") as f:
        manifest = json.load(f)
    shards = {s["file"]: s for s in manifest["shards"]}
    vector = next(v for v in manifest["vectors"] if alias in (None, v["alias"]))
    loaded = {}

    def tensor(ref):  # "shard-000.safetensors#name"
        file, name = ref.split("#", 1)
        if file not in loaded:
            loaded[file] = read_shard(f"{folder}/{file}", shards[file]["sha256"])
        return loaded[file][name]

    print(f"{vector['alias']} [{vector['id']}] op={vector['op']} params={json.dumps(vector['params'])}")
    for name, ref in vector["inputs"].items():
        print(f"  input {name} = {tensor(ref).tolist()}")
    for exp in vector.get("outcomes") or [dict(e, profiles=[p]) for p, e in vector["expected"].items()]:
        who = ", ".join(exp["profiles"])  # v2: each distinct outcome once, with the profiles sharing it
        if "outputs" in exp:
            outs = {k: tensor(r).tolist() for k, r in exp["outputs"].items()} | exp["values"]
            print(f"  {who}: {json.dumps(outs)} compare={json.dumps(exp['compare'])}")
        else:  # burn's panic, or why burn's behaviour is undefined under these profiles
            print(f"  {who}: " + (f"error {exp['error']['code']}: {exp['error']['message']!r}" if "error" in exp
                                  else f"undefined ({exp['undefined']})"))


if __name__ == "__main__":
    main(*sys.argv[1:3])
