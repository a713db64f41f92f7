"""A backend that implements one real-world format, NVFP4, as burn computes it, and declines everything else.

Written from README.md and docs/ alone (docs/protocol.md's format table; docs/spec/qparams.md §3 and §3.1,
scales.md §4.1 and §4.2, quantize.md §5, dequantize.md §6), the way a runtime author who knows the public
NVFP4 description writes it: E2M1 codes (values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives, one nibble
each), blocks of 16 along the last dim with one UE4M3 scale each, and one F32 global per tensor. burn's
arithmetic differs from NVIDIA's reference recipe in two places a port must copy:

* the global is ``f32(max(block scales) / 448)`` with block scales ``f32(2 amax / 12)`` (§3.1), not
  ``amax / (6 · 448)`` in one division (that is a different f32 for some tensors), and never below
  ``f32::MIN_POSITIVE``;
* a block scale is ``f32(scale / global)`` rounded **up** onto the UE4M3 grid (§4.1), not cast to nearest.

Its codes are those of burn from 0.23.0-pre.1 (``x / (global · s)``, clamped to ±6, then the nearest E2M1
value, ties to even; a NaN becomes +6), so it claims ``burn-0.23.0-pre.1/flex``: burn 0.22's flex quantizes
E2M1 as integers clipped to i8 (quantize.md §5.3). It uses numpy only, no code of the oracle.

    qconform list --backend python:examples.nvfp4_backend:Backend     # from the repository root
    qconform run -q --backend python:examples.nvfp4_backend:Backend
    qconform fuzz --backend python:examples.nvfp4_backend:Backend --format nvfp4 --cases 500
"""

from __future__ import annotations

import numpy as np

from conformance import Unsupported

BLOCK = 16
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float32)  # the magnitudes of codes 0..7; bit 3 is the sign
E2M1_MAX = np.float32(6)
UE4M3_MAX = np.float32(448)
MIN_POSITIVE = np.float32(2.0**-126)  # f32::MIN_POSITIVE, the global's floor (§3.1)


def _e4m3_magnitudes() -> np.ndarray:
    """Every finite non-negative E4M3 value, ascending: subnormals m·2^-9, then (1 + m/8)·2^(e-7), up to 448."""
    sub = [m * 2.0**-9 for m in range(8)]
    normal = [(1 + m / 8) * 2.0 ** (e - 7) for e in range(1, 16) for m in range(8) if (e, m) != (15, 7)]
    return np.array(sub + normal, dtype=np.float32)


UE4M3 = _e4m3_magnitudes()


def round_up_ue4m3(s: np.ndarray) -> np.ndarray:
    """The smallest UE4M3 value not below each non-negative f32 scale, saturating at 448; NaN stays NaN (§4.1)."""
    s = np.asarray(s, np.float32)
    i = np.searchsorted(UE4M3, s, side="left")
    return np.where(np.isnan(s), s, UE4M3[np.minimum(i, UE4M3.size - 1)])


def validated(s, smallest):
    """burn-flex's guard (quantize.md §5.3): a rounded scale that is not positive and finite (0, negative, NaN,
    inf) becomes the round-up of f32::MIN_POSITIVE: 2^-9 for UE4M3, MIN_POSITIVE itself for the F32 global."""
    s = np.asarray(s, np.float32)
    return np.where(np.isfinite(s) & (s > 0), s, np.float32(smallest)).astype(np.float32)


def nearest_ue4m3(s: np.ndarray) -> np.ndarray:
    """Scales as burn stores them when it is handed f32 scales (§4.2: the encoder rounds to nearest, ties to an
    even mantissa, and saturates at 448)."""
    s = np.minimum(np.asarray(s, np.float32), UE4M3_MAX)
    i = np.clip(np.searchsorted(UE4M3, s), 1, UE4M3.size - 1)
    lo, hi = UE4M3[i - 1], UE4M3[i]
    pick_hi = (hi - s < s - lo) | ((hi - s == s - lo) & (i % 2 == 0))  # index parity = mantissa parity
    return np.where(s <= 0, np.float32(0), np.where(pick_hi, hi, lo)).astype(np.float32)


class Backend:
    profile = "burn-0.23.0-pre.1/flex"

    def hello(self):
        return {"protocol": 2, "name": "nvfp4-example", "version": "0.1", "profile": self.profile,
                "capabilities": {"ops": ["quantize_dynamic", "quantize", "dequantize"], "formats": ["nvfp4"],
                                 "input_dtypes": ["f32"], "output_dtypes": ["f32"], "validates": False}}

    # --- the steps, one method each (the tests redo one of them the way a real port gets it wrong) ---------

    def global_and_scales(self, amax: np.ndarray):
        """§3 and §3.1: raw block scales f32(2 amax / 12), global f32(max / 448) (at least MIN_POSITIVE),
        block scales f32(raw / global) rounded up onto UE4M3."""
        with np.errstate(over="ignore", invalid="ignore"):  # 2 amax overflows for |x| near f32::MAX, as in burn
            raw = (np.float32(2) * amax) / np.float32(12)
            g = np.maximum(np.float32(raw.max() / UE4M3_MAX), MIN_POSITIVE)
            return g, round_up_ue4m3(raw / g)

    def encode(self, y: np.ndarray) -> np.ndarray:
        """An E2M1 nibble per value of ``y`` = x / e: clamped to ±6, nearest value, ties to the even code; NaN
        becomes +6 (code 7); the sign bit is kept for -0 too."""
        a = np.minimum(np.abs(y), E2M1_MAX)
        i = np.clip(np.searchsorted(E2M1, np.nan_to_num(a, nan=E2M1_MAX)), 1, E2M1.size - 1)
        lo, hi = E2M1[i - 1], E2M1[i]
        pick_hi = (hi - a < a - lo) | ((hi - a == a - lo) & (i % 2 == 0))
        code = np.where(pick_hi, i, i - 1) | (np.signbit(y) << 3)
        return np.where(np.isnan(y), 7, code).astype(np.int8)

    # --- the ops -------------------------------------------------------------------------------------------

    def run(self, op, params, inputs):
        if op == "quantize_dynamic":
            x = self.blocks(inputs["x"])
            if not np.isfinite(x).all():
                raise Unsupported("inf or NaN input: burn's calibration of those is not implemented")
            g, s = self.global_and_scales(np.abs(x).max(axis=1))
            return self.quantize(inputs["x"], s, g)
        if op == "quantize":
            given = inputs["scales"].astype(np.float32).reshape(-1)
            g = inputs.get("global")
            if g is None or g.size != 1 or given.size * BLOCK != inputs["x"].size:
                raise Unsupported("only a global and one scale per block of 16")
            return self.quantize(inputs["x"], round_up_ue4m3(given), g.astype(np.float32).reshape(-1)[0])
        if op == "dequantize":
            codes = inputs["codes"]
            s = nearest_ue4m3(inputs["scales"].astype(np.float32).reshape(-1))
            nibble = codes.astype(np.int16) & 0xF
            v = np.where(nibble & 8, -E2M1[nibble & 7], E2M1[nibble & 7]).astype(np.float32)
            e = np.float32(inputs["global"].astype(np.float32).reshape(-1)[0]) * s  # f32(global · s), §6
            return {"x": (self.blocks(v) * e[:, None]).reshape(codes.shape)}
        raise Unsupported(f"{op} is not implemented")

    def quantize(self, x: np.ndarray, s: np.ndarray, g: np.float32) -> dict:
        s, g = validated(s, UE4M3[1]), validated(g, MIN_POSITIVE)[()]
        e = g * s  # the effective scale, one f32 product (§5.1)
        codes = self.encode(self.blocks(x) / e[:, None]).reshape(x.shape)
        return {"codes": codes, "scales": s, "global": np.array([g], np.float32)}

    @staticmethod
    def blocks(x: np.ndarray) -> np.ndarray:
        """``x`` as f32 rows of 16 consecutive values along its last dim."""
        if x.ndim == 0 or x.size == 0 or x.shape[-1] % BLOCK:
            raise Unsupported(f"an empty tensor, or a last dim that is not a multiple of {BLOCK}")
        return np.asarray(x, np.float32).reshape(-1, BLOCK)
