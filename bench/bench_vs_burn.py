"""The oracle next to burn's own quantize/dequantize, in one run (issue 5).

burn's figures are timed inside the harness (`<binary> --bench`, no protocol I/O, single thread, release build);
the oracle's in this process, on the same number of values and the same schemes. Prints Mvalues/s and the ratio
oracle / burn (> 1: the oracle is faster).

``--rounds K`` alternates the two K times (burn's bench, then the oracle's, per binary): each round gives a
ratio of two measurements taken back to back, and the table shows the median round (its rates) with the range
of the K ratios. On a shared machine whose load moves between burn's run and the oracle's, one round's ratio
says mostly how the load moved.

    .venv/bin/python bench/bench_vs_burn.py $(bash adapters/burn/build.sh pre3) [--n 16777216] [--runs 5]
                                                                                  [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import subprocess

import numpy as np
from bench_oracle import Q8S, measure

import oracle as o
from oracle import ScaleDtype

# The harness's scheme labels, and the same schemes for the oracle.
SCHEMES = {
    "Q8S per_tensor(F32)": Q8S,
    "Q8S per_block([32], F16)": Q8S.per_block([32], ScaleDtype.F16),
    "Q8S per_block([16], UE4M3).per_tensor(F32)": Q8S.per_block([16], ScaleDtype.UE4M3).per_tensor(ScaleDtype.F32),
}


def oracle_rates(n: int, runs: int, profile: str) -> dict[tuple[str, str], float]:
    x = np.random.default_rng(0).standard_normal(n, dtype=np.float32).reshape(-1, 4096)
    rates = {}
    for label, scheme in SCHEMES.items():
        seconds, _ = measure(lambda s=scheme: o.quantize_dynamic(x, s, profile=profile), runs, x.nbytes)
        rates["quantize_dynamic", label] = n / seconds / 1e6
        qt = o.quantize_dynamic(x, scheme, profile=profile)
        seconds, _ = measure(lambda q=qt: o.dequantize(q, profile=profile), runs, x.nbytes)
        rates["dequantize", label] = n / seconds / 1e6
    return rates


def burn_rates(binary: str, n: int, runs: int) -> tuple[str, dict[tuple[str, str], float]]:
    out = subprocess.run([binary, "--bench", "--n", str(n), "--runs", str(runs)], capture_output=True, text=True,
                         check=True, timeout=3600)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    name = f"{rows[0]['backend']} {rows[0]['burn']}"
    return name, {(r["op"], r["scheme"]): r["mvalues_per_s"] for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--n", type=int, default=16 * 1024 * 1024)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1, help="alternate burn's and the oracle's runs this often")
    args = parser.parse_args()
    print(f"{args.n} f32 values, median of {args.runs}, {args.rounds} round(s); Mvalues/s")
    print(f"{'op':17} {'scheme':44} {'backend':26} {'burn':>8} {'oracle':>8} {'oracle/burn':>11}  rounds")
    for binary in args.binaries:
        rounds = []  # per round: (burn's rates, the oracle's rates), measured back to back
        for _ in range(args.rounds):
            name, burn = burn_rates(binary, args.n, args.runs)
            profile = f"burn-{name.split()[1]}/{name.split()[0].removeprefix('burn-')}"
            rounds.append((burn, oracle_rates(args.n, args.runs, profile)))
        for key in rounds[0][0]:
            if key not in rounds[0][1]:
                continue
            ratios = sorted((mine[key] / burn[key], burn[key], mine[key]) for burn, mine in rounds)
            ratio, rate, ours = ratios[len(ratios) // 2]
            spread = f"{ratios[0][0]:.2f}-{ratios[-1][0]:.2f}" if len(ratios) > 1 else ""
            print(f"{key[0]:17} {key[1]:44} {name:26} {rate:8.1f} {ours:8.1f} {ratio:11.2f}  {spread}")


if __name__ == "__main__":
    main()
