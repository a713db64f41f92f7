"""Exhaustive check of the oracle's element rounding over all 2^32 f32 patterns.

``oracle.rounding.round_half_away`` (Rust ``f32::round``) and ``round_half_even`` (``rint``) against references
computed in float64, where they are exact for every f32 input: |x| + 0.5 is exact in binary64 for |x| < 2^52
(an f32 has 24 significant bits), and f32 values >= 2^52 are multiples of 2^29, so adding 0.5 rounds back to
x (a tie only at ulp 1, resolved to the even x). floor/rint of a double are exact. Equality is bitwise, signed
zeros included; NaN equals NaN. Not run in CI; results go to docs/verification.md.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np

from oracle import rounding


def ref_away(x: np.ndarray) -> np.ndarray:
    d = x.astype(np.float64)
    return np.copysign(np.floor(np.abs(d) + 0.5), d).astype(np.float32)


def ref_even(x: np.ndarray) -> np.ndarray:
    return np.rint(x.astype(np.float64)).astype(np.float32)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunk-bits", type=int, default=24)
    args = ap.parse_args()
    print(f"numpy {np.__version__}, python {platform.python_version()}", flush=True)
    chunk = 1 << args.chunk_bits
    bad = {"away": 0, "even": 0}
    first = {"away": [], "even": []}
    t0 = time.time()
    with np.errstate(invalid="ignore"):
        for lo in range(0, 1 << 32, chunk):
            bits = np.arange(lo, lo + chunk, dtype=np.uint64).astype(np.uint32)
            x = bits.view(np.float32)
            for name, fn, ref in (("away", rounding.round_half_away, ref_away),
                                  ("even", rounding.round_half_even, ref_even)):
                got = np.asarray(fn(x), dtype=np.float32)
                want = ref(x)
                same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
                n = int((~same).sum())
                if n:
                    bad[name] += n
                    for i in np.flatnonzero(~same)[: max(0, 5 - len(first[name]))]:
                        first[name].append((f"{int(bits[i]):#010x}", float(got[i]), float(want[i])))
            if (lo // chunk) % 32 == 31:
                print(f"  {lo + chunk:#011x} patterns done, mismatches {bad}, {time.time() - t0:.0f}s", flush=True)
    print(f"TOTAL: 2^32 patterns, mismatches {bad}, first {first}, {time.time() - t0:.1f}s", flush=True)
    return 1 if any(bad.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
