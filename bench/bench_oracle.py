"""Oracle throughput on 16M f32 values, as ratios to a numpy copy measured in the same run (issue 2).

Prints one table: Mvalues/s, the ratio to the copy (the memory-bound reference) and the peak extra memory as a
multiple of the input (numpy allocations are visible to tracemalloc). Median of --repeat runs.

    .venv/bin/python bench/bench_oracle.py [--n 16777216] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np

import oracle as o
from oracle import QuantScheme, QuantValue, ScaleDtype

Q8S = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S)
CASES = {
    "quantize_dynamic Q8S per-tensor": Q8S,
    "quantize_dynamic Q8S per-block [32] F16": Q8S.per_block([32], ScaleDtype.F16),
    "quantize_dynamic Q8S two-level [16] UE4M3+F32": Q8S.per_block([16], ScaleDtype.UE4M3).per_tensor(ScaleDtype.F32),
}


def measure(fn, repeat: int, input_bytes: int) -> tuple[float, float]:
    """(median seconds, peak extra memory / input bytes)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return statistics.median(times), peak / input_bytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=16 * 1024 * 1024)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", default=o.DEFAULT_PROFILE)
    args = parser.parse_args()
    x = np.random.default_rng(0).standard_normal(args.n, dtype=np.float32).reshape(-1, 4096)
    rows = [("numpy copy (reference)", *measure(lambda: x.copy(), args.repeat, x.nbytes))]
    for name, scheme in CASES.items():
        rows.append((name, *measure(lambda s=scheme: o.quantize_dynamic(x, s, profile=args.profile),
                                    args.repeat, x.nbytes)))
    qt = o.quantize_dynamic(x, Q8S, profile=args.profile)
    rows.append(("dequantize Q8S per-tensor -> f32",
                 *measure(lambda: o.dequantize(qt, profile=args.profile), args.repeat, x.nbytes)))
    copy_rate = args.n / rows[0][1]
    print(f"{args.n} f32 values, profile {args.profile}, median of {args.repeat}")
    print(f"{'operation':48} {'Mvalues/s':>10} {'x copy':>8} {'peak mem':>9}")
    for name, seconds, memory in rows:
        rate = args.n / seconds
        print(f"{name:48} {rate / 1e6:10.1f} {rate / copy_rate:8.3f} {memory:8.2f}x")


if __name__ == "__main__":
    main()
