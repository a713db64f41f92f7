#!/usr/bin/env bash
# The Rust side of the protocol for backend authors: tests the qconform-protocol crate (adapters/protocol),
# builds examples/rust-backend on it and runs the whole golden suite through it. Every vector inside the
# example's declared capabilities must pass (--strict); the rest is "not applicable".
# Cheap: no burn, two small crates (safetensors, serde_json); its own cargo target dir, so it never waits
# for the burn builds' lock. Cold about 2 minutes on 2 cores, warm a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:$HOME/.cargo/bin"
export CARGO_TARGET_DIR="${QCONFORM_PROTOCOL_TARGET:-$HOME/.cache/qconform/cargo-target-protocol}"
start=$(date +%s)
# --release for both, so the tests and the example share their compiled dependencies.
cargo test --release --locked --quiet --manifest-path adapters/protocol/Cargo.toml >&2
cargo build --release --locked --quiet --manifest-path examples/rust-backend/Cargo.toml >&2
echo "rust-example.sh: crate tested and example built in $(($(date +%s) - start)) s" >&2
mkdir -p out
.venv/bin/qconform run --backend "subprocess:$CARGO_TARGET_DIR/release/qconform-example-rust-backend" \
    --strict --report out/rust-example.json
# The run above can fail: judged against flex's profile (x * (1/s), NaN -> 0, its own panics), the same
# backend must fail some of the same vectors.
if .venv/bin/qconform run --backend "subprocess:$CARGO_TARGET_DIR/release/qconform-example-rust-backend" \
    --profile burn-0.22.0-pre.3/flex --no-diagnose -q > /dev/null; then
    echo "rust-example.sh: the example passed flex's profile too; the vectors do not tell the profiles apart" >&2
    exit 1
fi
