#!/usr/bin/env bash
# Real burn under test: builds the Rust harness on burn's crates and runs the whole golden suite through each
# binary, judged against the profile the binary claims (burn-<release>/<backend>). Any divergence fails.
# Messages must match burn's exact panic text too (--strict-messages), and a burn bug must be burn's own outcome, not
# the invariant-respecting alternative a vector also accepts from other backends (--exact-burn). Reports land in
# out/burn/<binary>.json.
# Then each binary is fuzzed for a fixed budget against its own profile (docs/fuzzing.md): a fixed seed, printed,
# so a failure reproduces; a divergence fails too, with its minimal case under out/burn/fuzz-<binary>/.
# The GPU binaries (burn-wgpu: WGSL and SPIR-V, 0.22.0-pre.3 and 0.22.1) run burn's real kernels on Mesa's lavapipe,
# installed first (a no-op when present).
set -euo pipefail
cd "$(dirname "$0")/.."
# No backtrace capture in the binaries: what is judged is burn's message, which does not include one, and at
# opt-level 0 (the GPU builds) capturing one per expected panic made fuzzing the SPIR-V binaries ~40% slower.
export RUST_BACKTRACE=0
bash scripts/install-lavapipe.sh
mkdir -p out/burn
mapfile -t binaries < <(bash adapters/burn/build.sh)
status=0
for binary in "${binaries[@]}"; do
    name=$(basename "$binary")
    echo "== $name"
    # A binary's recorded known divergences (adapters/burn/known/<binary>.toml), if any, run as xfail.
    known=(); [ -f "adapters/burn/known/$name.toml" ] && known=(--expectations "adapters/burn/known/$name.toml")
    .venv/bin/qconform run --backend "subprocess:$binary" --strict-messages --exact-burn "${known[@]}" \
        --report "out/burn/$name.json" || status=1
    # Two worker processes (one per core): the same cases and report, in about half the time for the GPU binaries.
    .venv/bin/qconform fuzz --backend "subprocess:$binary" --cases "${QCONFORM_FUZZ_CASES:-3000}" \
        --seed "${QCONFORM_FUZZ_SEED:-20261130}" --jobs 2 --out "out/burn/fuzz-$name" || status=1
done
exit $status
