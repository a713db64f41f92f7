"""examples/read_vectors.py: a reader in plain Python (json, hashlib, struct, sys, numpy), under 60 lines."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


def _run(*args):
    return subprocess.run([sys.executable, str(EXAMPLE), str(ROOT / "vectors" / "core"), *args],
                          capture_output=True, text=True, check=True, cwd="/").stdout


def test_example_reads_the_two_level_example():
    text = _run("quantize_dynamic/q8s/two-level-ue4m3/spec-example")
    # every profile but burn-wgpu's two (WGSL has no i8, so both releases refuse the Native scheme)
    assert text.count('"codes": [13, -53, 26, 119, -127, 25, 4, -2]') == text.count("burn-") - 2 >= 4
    assert text.count("Q8S is not supported for native quantization") == 2


def test_example_reads_errors_bf16_and_contracts():
    assert "error quantize.global_without_two_level" in _run("quantize/q8s/tensor/global-given-backend")
    bf16 = _run("dequantize/q8s/tensor/bf16-output")
    assert "-12.6875" in bf16 and "Unsupported dtype BF16" in bf16
    assert '"kind": "allclose"' in _run("ternary_matmul/spec-example")
