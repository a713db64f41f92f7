#!/usr/bin/env bash
# Builds burn harness binaries in release mode and prints their paths, one per line, on stdout
# (cargo's own output goes to stderr).
#
#   adapters/burn/build.sh                # the builds releases.toml marks `ci = true` (what CI runs)
#   adapters/burn/build.sh pre3 gpu-0.22.1   # the named builds only (a row's `build` or one of its `aliases`)
#
# What each name builds (release, manifest, features, binaries, the profiles they claim) is one row of
# adapters/burn/releases.toml, read through scripts/releases.py; add a release there, not here.
#
# Everything lives outside the clone, under ~/.cache/qconform, so a new clone (CI) finds it warm:
# - the sources are built from a copy in src/ that is synced by content (scripts/sync_tree.py): a file whose bytes
#   did not change keeps its old mtime, so cargo does not rebuild the harness just because the clone is new or
#   lives at another path;
# - target dirs: each row's `target` (the 0.22 CPU workspaces share cargo-target, every GPU build shares
#   cargo-target-gpu: both releases' GPU graphs share wgpu, naga and the other third-party crates; the manifests
#   line up their features so nothing else is rebuilt).
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

# One line per cargo build: TARGET|MANIFEST|FEATURES (comma-separated)|BINARIES (space-separated). First, so an
# unknown build name fails before anything is synced.
plan="$(python3 "$here/../../scripts/releases.py" plan --extras "$features" "$@")"

python3 "$here/../../scripts/sync_tree.py" "$here/.." "$cache/src/adapters" >&2
src="$cache/src/adapters/burn"

paths=()
while IFS='|' read -r target manifest feats binaries; do
    target_dir="${override:-$cache/$target}"
    bin_args=()
    for bin in $binaries; do
        bin_args+=(--bin "$bin")
    done
    start=$(date +%s)
    CARGO_TARGET_DIR="$target_dir" cargo build --release --locked --manifest-path "$src/$manifest" \
        ${feats:+--features "$feats"} "${bin_args[@]}" >&2 < /dev/null
    echo "build.sh: $binaries built in $(($(date +%s) - start)) s" >&2
    for bin in $binaries; do
        paths+=("$target_dir/release/$bin")
    done
done <<< "$plan"

for path in "${paths[@]}"; do
    test -x "$path" || { echo "build.sh: missing $path" >&2; exit 1; }
    echo "$path"
done
