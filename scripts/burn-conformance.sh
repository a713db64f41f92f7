#!/usr/bin/env bash
# Real burn under test: builds the Rust harness on burn's crates and runs the whole golden suite through each
# binary, judged against the profile the binary claims (burn-<release>/<backend>). Any divergence fails.
# Messages must match burn's exact panic text too (--strict-messages), and a burn bug must be burn's own outcome, not
# the invariant-respecting alternative a vector also accepts from other backends (--exact-burn). Reports land in
# out/burn/<binary>.json.
# Then each binary is fuzzed for a fixed budget (releases.toml's ci_fuzz) against its own profile (docs/fuzzing.md):
# a fixed seed, printed, so a failure reproduces; a divergence fails too, with its minimal case under
# out/burn/fuzz-<binary>/.
# The GPU binaries (burn-wgpu: WGSL and SPIR-V of 0.22.1, burn-wgpu 0.23.0-pre.1's default build; `make burn-all`: every
# other GPU build but CUDA) run burn's real kernels on Mesa's lavapipe,
# installed first (a no-op when present).
set -euo pipefail
cd "$(dirname "$0")/.."
# No backtrace capture in the binaries: what is judged is burn's message, which does not include one, and at
# opt-level 0 (the GPU builds) capturing one per expected panic made fuzzing the SPIR-V binaries ~40% slower.
export RUST_BACKTRACE=0
bash scripts/install-lavapipe.sh
mkdir -p out/burn
# QCONFORM_BUILDS (build names of releases.toml, space-separated) widens the run beyond the CI rows: `make burn-all`.
# shellcheck disable=SC2086
mapfile -t binaries < <(bash adapters/burn/build.sh ${QCONFORM_BUILDS:-})

# The suite through every binary, two at a time (one per core: a binary's run is one process, on lavapipe mostly
# shader compilation on one thread), each printed whole, in build order, once all are done.
suite() {
    local binary=$1 name; name=$(basename "$1")
    # A binary's recorded known divergences (adapters/burn/known/<binary>.toml), if any, run as xfail.
    local known=(); [ -f "adapters/burn/known/$name.toml" ] && known=(--expectations "adapters/burn/known/$name.toml")
    local rc=0
    # --timeout 120: a default (autotune) build benchmarks its kernels on first use, past the 30 s default.
    .venv/bin/qconform run --backend "subprocess:$binary" --strict-messages --exact-burn --timeout 120 "${known[@]}" \
        --report "out/burn/$name.json" > "out/burn/$name.log" 2>&1 || rc=$?
    echo "$rc" > "out/burn/$name.rc"
}
for binary in "${binaries[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
    suite "$binary" &
done
wait
status=0
for binary in "${binaries[@]}"; do
    name=$(basename "$binary")
    echo "== $name"
    cat "out/burn/$name.log"
    [ "$(cat "out/burn/$name.rc")" = 0 ] || status=1
done

# Then a fixed fuzz budget per binary (releases.toml's ci_fuzz; QCONFORM_FUZZ_CASES overrides it), two worker
# processes (one per core).
for binary in "${binaries[@]}"; do
    name=$(basename "$binary")
    cases="${QCONFORM_FUZZ_CASES:-$(python3 scripts/releases.py ci-fuzz "$name")}"
    [ "$cases" -gt 0 ] || continue
    echo "== fuzz $name"
    .venv/bin/qconform fuzz --backend "subprocess:$binary" --exact-burn --cases "$cases" \
        --seed "${QCONFORM_FUZZ_SEED:-20261130}" --jobs 2 --out "out/burn/fuzz-$name" || status=1
done
exit $status
