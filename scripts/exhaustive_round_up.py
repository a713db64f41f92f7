"""Exhaustive check of ``oracle.scale_to_dtype`` (``ScaleDtype::round_up``) for F16, BF16 and UE4M3 over all 2^31 non-negative f32 patterns.

Expected side: numerics-notes §2 formulation (b), "cast, then bump": xc = min(x, max); y = RNE cast of xc to the
dtype (ml_dtypes / numpy); where y < xc, add 1 to y's bit pattern; NaN stays NaN. A different algorithm from the
oracle's f32 bit trick. Not run in CI (minutes); results go to docs/verification.md.

Usage: python scripts/exhaustive_round_up.py [--chunk-bits 24] [--dtypes F16,BF16,UE4M3]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import ml_dtypes
import numpy as np

import oracle
from oracle import ScaleDtype

TARGETS = {
    "F16": (np.float16, np.uint16, np.float32(65504.0)),
    "BF16": (ml_dtypes.bfloat16, np.uint16, np.uint32(0x7F7F0000).view(np.float32)),
    "UE4M3": (ml_dtypes.float8_e4m3fn, np.uint8, np.float32(448.0)),
}


def cast_then_bump(x: np.ndarray, dtype: str) -> np.ndarray:
    np_dt, bits_dt, mx = TARGETS[dtype]
    with np.errstate(invalid="ignore"):
        xc = np.minimum(x, mx)  # NaN propagates
        y = xc.astype(np_dt)
        yf = y.astype(np.float32)
        low = yf < xc
    yb = y.view(bits_dt).copy()
    yb[low] += 1
    out = yb.view(np_dt).astype(np.float32)
    out[np.isnan(x)] = np.nan
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunk-bits", type=int, default=24)
    ap.add_argument("--dtypes", default="F16,BF16,UE4M3")
    ap.add_argument("--profile", default="burn-0.22.0-pre.3/ndarray")
    args = ap.parse_args()
    print(f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, python {platform.python_version()}", flush=True)
    chunk = 1 << args.chunk_bits
    total_patterns = 1 << 31
    mismatches = {}
    start = time.time()
    for dtype in args.dtypes.split(","):
        t0 = time.time()
        bad = 0
        first = []
        for lo in range(0, total_patterns, chunk):
            bits = np.arange(lo, lo + chunk, dtype=np.uint32)
            x = bits.view(np.float32)
            got = np.asarray(oracle.scale_to_dtype(x, ScaleDtype[dtype], args.profile), dtype=np.float32)
            want = cast_then_bump(x, dtype)
            same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
            n = int((~same).sum())
            if n:
                bad += n
                for i in np.flatnonzero(~same)[: max(0, 5 - len(first))]:
                    first.append((int(bits[i]), float(got[i]), float(want[i])))
            if (lo // chunk) % 16 == 15:
                print(f"  {dtype}: {lo + chunk:#010x} patterns done, {bad} mismatches, {time.time() - t0:.0f}s",
                      flush=True)
        mismatches[dtype] = bad
        print(f"{dtype}: {total_patterns} patterns, {bad} mismatches, {time.time() - t0:.1f}s; first: {first}",
              flush=True)
    print(f"TOTAL: {mismatches}, {time.time() - start:.1f}s", flush=True)
    return 1 if any(mismatches.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
