#!/usr/bin/env python3
"""Vectors per second through each adapter, in one run: the oracle in process, the example subprocess backend,
and HTTP (``qconform serve --backend oracle`` on 127.0.0.1). Every vector is sent and judged exactly as in a
real run (diagnosis off: the backends conform, and a failure would be reported, not timed).

    python bench/bench_adapters.py [--vectors DIR] [--repeat N]

Without a committed suite (vectors/core) it builds a synthetic one from the oracle in a temporary folder.
Targets on the 2-core CI machine: oracle >= 2000/s, subprocess >= 500/s, http >= 300/s.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.runner import Runner
from conformance.vectors import default_suite_path, load_suite, write_suite

TARGETS = {"oracle (in process)": 2000, "subprocess (example backend)": 500, "http (qconform serve)": 300}


def synthetic_suite(folder: Path, n: int = 1200) -> Path:
    import oracle
    rng = np.random.default_rng(7)
    schemes = [{"value": v, "store": "Native", "mode": "Symmetric", "tensor": None, "block": b}
               for v in ("Q8S", "Q8F") for b in (None, {"size": [8], "dtype": "F32"})]
    vectors = []
    for i in range(n):
        if i % 3 == 0:
            op, params = "round_up", {"dtype": ["F16", "BF16", "F32"][i % 9 // 3]}
            inputs = {"scales": rng.uniform(1e-3, 4, 16).astype(np.float32)}
        else:
            op, params = "quantize_dynamic", {"scheme": schemes[i % len(schemes)]}
            inputs = {"x": (rng.standard_normal((4, 16)) * 3).astype(np.float32)}
        expected = {}
        for p in oracle.profiles():
            try:
                out = oracle.run(op, params, inputs, profile=p)
                expected[p] = {"outputs": {k: v for k, v in out.items() if isinstance(v, np.ndarray)}}
            except oracle.BurnPanic as e:
                expected[p] = {"error": {"code": e.code, "message": e.message}}
        vectors.append({"alias": f"bench/{op}/{i}", "op": op, "params": params, "inputs": inputs,
                        "expected": expected})
    write_suite(folder, vectors, suite="bench", profiles=list(oracle.profiles()))
    return folder


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    import httpx
    proc = subprocess.Popen([sys.executable, "-m", "conformance.cli", "serve", "--backend", "oracle",
                             "--port", str(port)], cwd=ROOT, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1)
            return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("qconform serve did not come up")


def measure(suite, spec: str, repeat: int) -> tuple[float, dict]:
    runner = Runner(suite, spec, diagnose=False).start()
    runner.run_vector(suite.vectors[0])  # warm up (imports, first connection)
    counts: dict[str, int] = {}
    t = time.perf_counter()
    for _ in range(repeat):
        for verdict in runner.run_all():
            counts[verdict.status] = counts.get(verdict.status, 0) + 1
    elapsed = time.perf_counter() - t
    runner.close()
    return repeat * len(suite.vectors) / elapsed, counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vectors", type=Path)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    folder = args.vectors or default_suite_path()
    tmp = None
    if not (folder / "manifest.json").exists():
        tmp = tempfile.TemporaryDirectory()
        folder = synthetic_suite(Path(tmp.name))
        print(f"no suite at {args.vectors or default_suite_path()}: using a synthetic one")
    t = time.perf_counter()
    suite = load_suite(folder)
    print(f"suite {suite.name}: {len(suite.vectors)} vectors, loaded in {time.perf_counter() - t:.3f} s")
    port = free_port()
    server = start_server(port)
    try:
        specs = {"oracle (in process)": "oracle",
                 "subprocess (example backend)": f"subprocess:{sys.executable} {ROOT / 'examples/subprocess_backend.py'}",
                 "http (qconform serve)": f"http://127.0.0.1:{port}"}
        worst = True
        for name, spec in specs.items():
            rate, counts = measure(suite, spec, args.repeat)
            ok = rate >= TARGETS[name]
            worst &= ok
            print(f"{name:<30} {rate:>9.0f} vectors/s   target {TARGETS[name]:>5}  {'ok' if ok else 'BELOW'}   {counts}")
    finally:
        server.terminate()
        server.wait()
        if tmp:
            tmp.cleanup()
    return 0 if worst else 1


if __name__ == "__main__":
    sys.exit(main())
