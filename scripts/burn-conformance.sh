#!/usr/bin/env bash
# Real burn under test: builds the Rust harness on burn's crates and runs the whole golden suite through each
# binary, judged against the profile the binary claims (burn-<release>/<backend>). Any divergence fails.
# Messages must match burn's exact panic text too (--strict-messages). Reports land in out/burn/<binary>.json.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p out/burn
mapfile -t binaries < <(bash adapters/burn/build.sh)
status=0
for binary in "${binaries[@]}"; do
    name=$(basename "$binary")
    echo "== $name"
    .venv/bin/qconform run --backend "subprocess:$binary" --strict-messages --report "out/burn/$name.json" || status=1
done
exit $status
