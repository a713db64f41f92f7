#!/usr/bin/env bash
# Builds every burn harness binary in release mode and prints their paths, one per line, on stdout
# (cargo's own output goes to stderr).
#
#   adapters/burn/build.sh                # all releases: 0.22.0-pre.3, 0.22.1 and 0.23.0-pre.1
#   adapters/burn/build.sh pre3           # only burn 0.22.0-pre.3 (ndarray, flex)
#   adapters/burn/build.sh 0.22.1         # only burn 0.22.1 (ndarray, flex)
#   adapters/burn/build.sh 0.23.0-pre.1   # only burn 0.23.0-pre.1 (flex; burn-ndarray stops at 0.22.1)
#
# Target dirs live outside the clone so CI can cache them: ~/.cache/qconform/cargo-target for the 0.22
# workspaces (which share their non-burn crates), ~/.cache/qconform/cargo-target-0_23_0_pre_1 for 0.23 (its
# dependency tree is a different one; its own dir keeps the two from blocking on cargo's directory lock).
# $CARGO_TARGET_DIR, if set, is used for every workspace. Needs only cargo (from rustup) and access to
# crates.io; --locked keeps the committed Cargo.lock files authoritative.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# rustup puts cargo in ~/.cargo/bin, which a non-login shell (CI) may not have on its PATH.
export PATH="$PATH:$HOME/.cargo/bin"
# BURN_FEATURES=simd,multi-threads builds burn's default configuration instead, into its own target dir.
features="${BURN_FEATURES:-}"
target_override="${CARGO_TARGET_DIR:-}"

if [ "$#" -eq 0 ]; then
    set -- pre3 0.22.1 0.23.0-pre.1
fi

paths=()
for release in "$@"; do
    case "$release" in
        pre3 | 0.22.0-pre.3)
            manifest="$here/Cargo.toml"
            bins=(qconform-burn-pre3-ndarray qconform-burn-pre3-flex)
            ;;
        0.22.1 | 0_22_1)
            manifest="$here/v0_22_1/Cargo.toml"
            bins=(qconform-burn-0_22_1-ndarray qconform-burn-0_22_1-flex)
            ;;
        0.23.0-pre.1 | 0_23_0_pre_1 | 0.23)
            manifest="$here/v0_23_0_pre_1/Cargo.toml"
            bins=(qconform-burn-0_23_0_pre_1-flex)
            target=cargo-target-0_23_0_pre_1
            ;;
        *)
            echo "build.sh: unknown release '$release' (pre3 | 0.22.1 | 0.23.0-pre.1)" >&2
            exit 2
            ;;
    esac
    export CARGO_TARGET_DIR="${target_override:-$HOME/.cache/qconform/${target:-cargo-target}${features:+-defaults}}"
    unset target
    start=$(date +%s)
    cargo build --release --locked --manifest-path "$manifest" --bins ${features:+--features "$features"} >&2
    echo "build.sh: burn $release built in $(($(date +%s) - start)) s" >&2
    for bin in "${bins[@]}"; do
        paths+=("$CARGO_TARGET_DIR/release/$bin")
    done
done

for path in "${paths[@]}"; do
    test -x "$path" || { echo "build.sh: missing $path" >&2; exit 1; }
    echo "$path"
done
