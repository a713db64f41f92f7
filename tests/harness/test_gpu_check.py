"""scripts/gpu-check.sh must fail loudly, never skip, on a machine that cannot run burn's CUDA kernels.

The script is the only way the CUDA profile can ever leave "modelled, not run"; a green exit on a machine without
a GPU would read as a passed check. Each case below gives the script a PATH with a stand-in for one missing piece
and expects exit status 1 with the reason on stderr, before anything is built.
"""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu-check.sh"


def _fake_bin(tmp_path: Path, name: str, body: str) -> None:
    tool = tmp_path / name
    tool.write_text(f"#!/bin/sh\n{body}\n")
    tool.chmod(0o755)


def _run(tmp_path: Path) -> subprocess.CompletedProcess:
    # Only the stand-ins plus the basic tools the script itself uses (bash, dirname): no real nvidia-smi/nvcc.
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "HOME": str(tmp_path), "CUDA_PATH": str(tmp_path / "no-cuda")}
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60)


def _has_real(tool: str) -> bool:
    return any(os.access(Path(d) / tool, os.X_OK) for d in ("/usr/bin", "/bin"))


@pytest.fixture(autouse=True)
def _no_real_cuda():
    if _has_real("nvidia-smi") or _has_real("nvcc"):
        pytest.skip("this machine has a real NVIDIA driver or CUDA toolkit in /usr/bin")


def test_no_driver_fails(tmp_path):
    result = _run(tmp_path)
    assert result.returncode == 1
    assert "FAILED: nvidia-smi not found" in result.stderr


def test_driver_without_gpu_fails(tmp_path):
    _fake_bin(tmp_path, "nvidia-smi", "exit 0")  # answers, lists nothing
    result = _run(tmp_path)
    assert result.returncode == 1
    assert "FAILED: nvidia-smi lists no GPU" in result.stderr


def test_gpu_without_toolkit_fails(tmp_path):
    _fake_bin(tmp_path, "nvidia-smi", "echo 'NVIDIA Test GPU'")
    result = _run(tmp_path)
    assert result.returncode == 1
    assert "FAILED: no CUDA toolkit" in result.stderr
