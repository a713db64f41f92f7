#!/usr/bin/env bash
# A proving campaign (oracle/profiles.py Campaign, docs/fuzzing.md "Proving campaigns"): every op of the default
# fuzz set, CASES cases each (20,000 to prove), one `qconform fuzz --ops OP` run per op against BINARY's own
# profile, then the Campaign record to paste into EVIDENCE.
#
#   scripts/fuzz-campaign.sh BINARY [SEED] [CASES] [OUT]      (defaults: seed 20261201, 20000 cases, out/campaign)
#
# About 5 minutes per CPU build (2026-12-07, two builds side by side on this 2-core machine); run it under nice.
# FUZZ_TIMEOUT=S sets the per-case timeout (a default-feature build's autotune benchmarks its first matmuls past
# the 30 s default).
set -euo pipefail
bin=$1; seed=${2:-20261201}; cases=${3:-20000}; out=${4:-out/campaign}
py=${PYTHON:-.venv/bin/python}
name=$(basename "$bin")
dir="$out/$name"; mkdir -p "$dir"
ops=$("$py" -c "from conformance.fuzz.strategies import DEFAULT_OPS; print(' '.join(DEFAULT_OPS))")
diverging=0
for op in $ops; do
  start=$(date +%s)
  set +e
  "$py" -m conformance.cli fuzz --backend "subprocess:$bin" --exact-burn --ops "$op" --cases "$cases" --seed "$seed" \
    --no-shrink ${FUZZ_TIMEOUT:+--timeout "$FUZZ_TIMEOUT"} --out "$dir/repro" > "$dir/$op.log" 2>&1
  rc=$?
  set -e
  counts=$(grep -E '^  [a-z].*[0-9]$' "$dir/$op.log" | head -1)
  failed=$(sed -nE 's/.*failed ([0-9]+).*/\1/p' <<< "$counts")
  diverging=$((diverging + ${failed:-0}))
  echo "$op rc=$rc $(( $(date +%s) - start ))s $counts" | tee -a "$dir/summary.txt"
  [ "$rc" -le 1 ] || { echo "$op: the fuzzer stopped (status $rc): see $dir/$op.log" >&2; exit "$rc"; }
done
commit=$(git rev-parse --short HEAD)
quoted=$(for op in $ops; do printf '"%s", ' "$op"; done)
echo "Campaign($seed, $cases, (${quoted%, }), \"$(date -u +%F)\", \"$name\", \"$commit\", $diverging)"
