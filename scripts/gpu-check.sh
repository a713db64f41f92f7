#!/usr/bin/env bash
# burn's CUDA kernels under test, for a machine with an NVIDIA GPU and the CUDA toolkit (never run in CI:
# CI has no GPU). Builds the burn-cuda harness binaries (adapters/burn/build.sh cuda-pre3 cuda-0.22.1) and runs
# the whole golden suite through each, judged against the profile it claims (burn-<release>/cubecl, "modelled,
# not run" until this script passes somewhere), with exact messages. Reports land in out/gpu-check/.
#
#   scripts/gpu-check.sh              # both releases
#   scripts/gpu-check.sh cuda-pre3    # one
#
# The 0.22.1 build needs GitHub at build time: cubecl-cuda 0.11.3 depends on cubecl-llvm, whose build script
# (tracel-llvm-bundler) downloads a prebuilt LLVM bundle; without that access cargo fails with its own message.
#
# Fails loudly (exit 1, a message on stderr) when there is no NVIDIA GPU or no CUDA toolkit: a skipped check
# must never read as a passed one.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "gpu-check.sh: FAILED: $*" >&2; exit 1; }

command -v nvidia-smi >/dev/null || fail "nvidia-smi not found: no NVIDIA driver on this machine (this check needs an NVIDIA GPU)"
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || true)
[ -n "$gpus" ] || fail "nvidia-smi lists no GPU (this check needs an NVIDIA GPU)"
command -v nvcc >/dev/null || [ -x "${CUDA_PATH:-/usr/local/cuda}/bin/nvcc" ] \
    || fail "no CUDA toolkit (nvcc not on PATH nor in \${CUDA_PATH:-/usr/local/cuda}/bin); cubecl-cuda compiles kernels with NVRTC from it"
echo "gpu-check.sh: GPU: $gpus" >&2

# Default: every CUDA build of adapters/burn/releases.toml.
if [ "$#" -eq 0 ]; then
    mapfile -t builds < <(python3 scripts/releases.py names --feature cuda)
    set -- "${builds[@]}"
fi
make setup >&2
mapfile -t binaries < <(bash adapters/burn/build.sh "$@")
mkdir -p out/gpu-check
status=0
for binary in "${binaries[@]}"; do
    name=$(basename "$binary")
    echo "== $name ($("$binary" --hello | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)["profile"])'))"
    .venv/bin/qconform run --backend "subprocess:$binary" --strict-messages --report "out/gpu-check/$name.json" \
        || status=1
done
[ "$status" -eq 0 ] || fail "the suite diverges from the CUDA profile (reports in out/gpu-check/): the profile is wrong, or burn-cuda is"
echo "gpu-check.sh: every CUDA binary passes the whole suite against its profile" >&2
