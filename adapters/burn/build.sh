#!/usr/bin/env bash
# Builds burn harness binaries in release mode and prints their paths, one per line, on stdout
# (cargo's own output goes to stderr).
#
#   adapters/burn/build.sh                # what CI runs: pre3 0.22.1 0.23.0-pre.1 gpu-pre3 gpu-0.22.1
#   adapters/burn/build.sh pre3           # burn 0.22.0-pre.3 on the CPU (ndarray, flex)
#   adapters/burn/build.sh 0.22.1         # burn 0.22.1 on the CPU (ndarray, flex)
#   adapters/burn/build.sh 0.23.0-pre.1   # burn 0.23.0-pre.1 on the CPU (flex; burn-ndarray stops at 0.22.1)
#   adapters/burn/build.sh gpu-pre3       # burn 0.22.0-pre.3 on burn-wgpu: WGSL (wgpu) and SPIR-V (vulkan)
#   adapters/burn/build.sh gpu-0.22.1     # burn 0.22.1 on burn-wgpu: WGSL (wgpu) and SPIR-V (vulkan)
#   adapters/burn/build.sh cuda-pre3      # burn 0.22.0-pre.3 on burn-cuda (NVIDIA + CUDA toolkit; never in CI)
#   adapters/burn/build.sh cuda-0.22.1    # burn 0.22.1 on burn-cuda
#
# Everything lives outside the clone, under ~/.cache/qconform, so a new clone (CI) finds it warm:
# - the sources are built from a copy in src/ that is synced by content (scripts/sync_tree.py): a file whose bytes
#   did not change keeps its old mtime, so cargo does not rebuild the harness just because the clone is new or
#   lives at another path;
# - target dirs: cargo-target for the 0.22 CPU workspaces (which share their non-burn crates),
#   cargo-target-0_23_0_pre_1, and cargo-target-gpu for every GPU build (both releases' GPU graphs share wgpu,
#   naga and the other third-party crates; the manifests line up their features so nothing else is rebuilt).
# $CARGO_TARGET_DIR, if set, is used for every workspace. Needs only cargo (rustup) and crates.io; --locked keeps
# the committed Cargo.lock files authoritative.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="$HOME/.cache/qconform"
# rustup puts cargo in ~/.cargo/bin, which a non-login shell (CI) may not have on its PATH.
export PATH="$PATH:$HOME/.cargo/bin"
# BURN_FEATURES=simd,multi-threads builds burn's default CPU configuration instead, into its own target dir.
features="${BURN_FEATURES:-}"
override="${CARGO_TARGET_DIR:-}"

python3 "$here/../../scripts/sync_tree.py" "$here/.." "$cache/src/adapters" >&2
src="$cache/src/adapters/burn"

if [ "$#" -eq 0 ]; then
    set -- pre3 0.22.1 0.23.0-pre.1 gpu-pre3 gpu-0.22.1
fi

paths=()

# build TARGET MANIFEST FEATURES BIN...: one cargo build of the given binaries with the given features, into
# ~/.cache/qconform/TARGET (or $CARGO_TARGET_DIR).
build() {
    local target_dir="${override:-$cache/$1}" manifest="$src/$2" feats="$3"
    shift 3
    local bin_args=() bin start
    for bin in "$@"; do
        bin_args+=(--bin "$bin")
    done
    start=$(date +%s)
    CARGO_TARGET_DIR="$target_dir" cargo build --release --locked --manifest-path "$manifest" \
        ${feats:+--features "$feats"} "${bin_args[@]}" >&2
    echo "build.sh: $* built in $(($(date +%s) - start)) s" >&2
    for bin in "$@"; do
        paths+=("$target_dir/release/$bin")
    done
}

cpu="cargo-target${features:+-defaults}"
for release in "$@"; do
    case "$release" in
        pre3 | 0.22.0-pre.3)
            build "$cpu" Cargo.toml "$features" qconform-burn-pre3-ndarray qconform-burn-pre3-flex ;;
        0.22.1 | 0_22_1)
            build "$cpu" v0_22_1/Cargo.toml "$features" qconform-burn-0_22_1-ndarray qconform-burn-0_22_1-flex ;;
        0.23.0-pre.1 | 0_23_0_pre_1 | 0.23)
            build "cargo-target-0_23_0_pre_1${features:+-defaults}" v0_23_0_pre_1/Cargo.toml "$features" \
                qconform-burn-0_23_0_pre_1-flex ;;
        # One cargo build per GPU runtime: the WGSL build must not see the `vulkan` feature (it changes
        # the device properties cubecl registers, docs/burn-harness.md "GPU route"); both share the
        # target dir, so the second rebuilds only the crates whose features differ (cubecl, cubek, burn).
        gpu-pre3 | gpu-0.22.0-pre.3)
            for route in wgpu vulkan; do
                build cargo-target-gpu gpu-pre3/Cargo.toml "$route" "qconform-burn-pre3-$route"
            done ;;
        gpu-0.22.1 | gpu-0_22_1)
            for route in wgpu vulkan; do
                build cargo-target-gpu gpu-0_22_1/Cargo.toml "$route" "qconform-burn-0_22_1-$route"
            done ;;
        cuda-pre3 | cuda-0.22.0-pre.3)
            build cargo-target-gpu gpu-pre3/Cargo.toml cuda qconform-burn-pre3-cuda ;;
        cuda-0.22.1 | cuda-0_22_1)
            build cargo-target-gpu gpu-0_22_1/Cargo.toml cuda qconform-burn-0_22_1-cuda ;;
        *)
            echo "build.sh: unknown build '$release' (pre3 | 0.22.1 | 0.23.0-pre.1 | gpu-pre3 | gpu-0.22.1 | cuda-pre3 | cuda-0.22.1)" >&2
            exit 2 ;;
    esac
done

for path in "${paths[@]}"; do
    test -x "$path" || { echo "build.sh: missing $path" >&2; exit 1; }
    echo "$path"
done
