"""examples/read_vectors.py: a reader in plain Python (json, hashlib, struct, sys, numpy), under 60 lines."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import oracle

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "read_vectors.py"


def test_example_is_small_and_self_contained():
    source = EXAMPLE.read_text()
    assert len(source.splitlines()) < 60
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    assert imported <= {"json", "hashlib", "struct", "sys", "numpy"}


def _run_on(suite, *args):
    return subprocess.run([sys.executable, str(EXAMPLE), str(suite), *args],
                          capture_output=True, text=True, check=True, cwd="/").stdout


def _run(*args):
    return _run_on(ROOT / "vectors" / "core", *args)


def _by_profile(text):
    """Each outcome line ``  P1, P2: what`` as {profile: what}."""
    lines = [line.strip().split(": ", 1) for line in text.splitlines() if line.startswith("  burn-")]
    return {p: what for who, what in lines for p in who.split(", ")}


def test_example_reads_the_two_level_example():
    shown = _by_profile(_run("quantize_dynamic/q8s/two-level-ue4m3/spec-example"))
    assert set(shown) == set(oracle.PROFILES)  # every profile, each on one outcome line
    # WGSL has no i8: every release refuses the Native scheme, the fused builds at the read
    wgpu = {p for p in shown if p.endswith(("/wgpu", "/wgpu-fused"))}
    assert len(wgpu) == 5 and all("Q8S is not supported for native quantization" in shown[p] for p in wgpu)
    assert all('"codes": [13, -53, 26, 119, -127, 25, 4, -2]' in shown[p] for p in set(shown) - wgpu)


def test_example_reads_format_1_too():
    shown = _by_profile(_run_on(ROOT / "docs" / "repro" / "flex-nan-to-zero"))
    assert shown["burn-0.22.1/flex"].startswith('{"codes": [[1, 0, -2, 1, 1, 0, -2, 1]')
    assert shown["burn-0.22.1/ndarray"].startswith("error ndarray.nan_code")


def test_example_reads_errors_bf16_and_contracts():
    assert "error quantize.global_without_two_level" in _run("quantize/q8s/tensor/global-given-backend")
    bf16 = _run("dequantize/q8s/tensor/bf16-output")
    assert "-12.6875" in bf16 and "Unsupported dtype BF16" in bf16
    assert '"kind": "allclose"' in _run("ternary_matmul/spec-example")
