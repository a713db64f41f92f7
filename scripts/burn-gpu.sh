#!/usr/bin/env bash
# burn's real GPU kernels under test on Mesa's lavapipe: builds the burn-wgpu harness binaries
# (by default CI's: adapters/burn/build.sh gpu-0.22.1 gpu-0.23.0-pre.1-fused, 0.22.1's WGSL and SPIR-V and 0.23.0-pre.1's
# default-feature WGSL build) and runs the whole golden suite through each, judged against the profile each binary
# claims (burn-<release>/wgpu, .../vulkan, .../wgpu-fused) or the one given, with exact messages. `make test` runs the
# same binaries through scripts/burn-conformance.sh (suite and fuzzing).
# Reports land in out/burn-gpu/<binary>.json. Exit status 1 when any vector diverges.
#
#   scripts/burn-gpu.sh                                  # CI's GPU builds, each against its own profile
#   PROFILE=burn-0.22.0-pre.3/cubecl scripts/burn-gpu.sh gpu-pre3   # against the modelled CUDA profile
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-lavapipe.sh
# Default: every CI build with a WGSL binary (each also builds its SPIR-V one), from adapters/burn/releases.toml.
if [ "$#" -eq 0 ]; then
    mapfile -t builds < <(python3 scripts/releases.py names --ci --feature wgpu)
    set -- "${builds[@]}"
fi
profile="${PROFILE:-}"
mkdir -p out/burn-gpu
mapfile -t binaries < <(bash adapters/burn/build.sh "$@")
status=0
for binary in "${binaries[@]}"; do
    name=$(basename "$binary")
    echo "== $name against ${profile:-its own profile}"
    .venv/bin/qconform run --backend "subprocess:$binary" ${profile:+--profile "$profile"} --strict-messages --exact-burn \
        --timeout 120 --report "out/burn-gpu/$name.json" || status=1
done
exit $status
