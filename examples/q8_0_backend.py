"""A backend that implements one real-world format, GGUF Q8_0's shape, and declines everything else.

Written from docs/ alone (docs/spec/qparams.md §3, scales.md §4.1, quantize.md §5, dequantize.md §6): int8
codes in 1-D blocks of 32 along the last dim, one F16 scale per block, burn's arithmetic (not llama.cpp's,
which rounds its scale to nearest: burn rounds it *up* onto the F16 grid). It shows protocol 2:

* ``"formats": ["q8_0"]`` in the capabilities: only vectors of that format apply;
* ``conformance.Unsupported`` for a request inside the format that this codec does not implement (scales that
  are not finite and positive: it does not reproduce burn's handling of those): such a vector is *declined*,
  counted and listed, never passed;
* ``"validates": false``: it does not check its input the way burn does.

    qconform list --backend python:examples.q8_0_backend:Backend     # from the repository root
    qconform run --backend python:examples.q8_0_backend:Backend
"""

from __future__ import annotations

import numpy as np

from conformance import Unsupported

BLOCK = 32
Q_MAX = 127                  # Q8S codes are symmetric: [-127, 127] (§1.2, b - a = 254)
F16_MAX = np.float32(65504)  # the largest finite F16; a larger scale saturates to it (§4.1)


def round_up_f16(s: np.ndarray) -> np.ndarray:
    """The smallest F16 value not below each f32 scale, saturating at 65504 (§4.1), as f32."""
    s = np.asarray(s, dtype=np.float32)
    near = s.astype(np.float16).astype(np.float32)  # round to nearest even ...
    up = np.where(near < s, np.nextafter(s.astype(np.float16), np.float16(np.inf)).astype(np.float32), near)
    return np.where(s >= F16_MAX, F16_MAX, up)  # ... then one F16 step up where that fell below


def blocks(x: np.ndarray) -> np.ndarray:
    """``x`` viewed as rows of 32 consecutive values along its last dim."""
    if x.ndim == 0 or x.shape[-1] % BLOCK:
        raise Unsupported(f"shape {list(x.shape)}: the last dim is not a multiple of {BLOCK}")
    return x.reshape(-1, BLOCK)


def encode(x: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """codes = clamp(round_half_away(x · f32(1/s)), -127, 127) in f32: burn-flex multiplies by the reciprocal
    (§5.3), which differs from x / s in the last bit, and so in ties."""
    if not (np.all(np.isfinite(scales)) and np.all(scales > 0)):
        raise Unsupported("a scale that is zero, negative or not finite: burn's guards are not implemented")
    y = blocks(x.astype(np.float32)) * (np.float32(1) / scales)[:, None]
    rounded = np.trunc(y + np.copysign(np.float32(0.5), y))
    rounded = np.where(np.abs(y - np.trunc(y)) < 0.5, np.trunc(y), rounded)  # only exact halves go away from 0
    return np.clip(rounded, -Q_MAX, Q_MAX).astype(np.int8).reshape(x.shape)


def dynamic_scales(x: np.ndarray) -> np.ndarray:
    """Per block: alpha = max|x|, scale = f32(2 alpha / 254) (§3), then rounded up to F16 (§4.1)."""
    if not np.all(np.isfinite(x)):
        raise Unsupported("inf or NaN input: burn's calibration of those is not implemented")
    alpha = np.abs(blocks(x.astype(np.float32))).max(axis=1)
    return round_up_f16((np.float32(2) * alpha) / np.float32(2 * Q_MAX))


class Backend:
    def hello(self):
        return {"protocol": 2, "name": "q8_0-example", "version": "0.1", "profile": "burn-0.22.1/flex",
                "capabilities": {"ops": ["quantize_dynamic", "quantize", "dequantize"], "formats": ["q8_0"],
                                 "input_dtypes": ["f32"], "validates": False}}

    def run(self, op, params, inputs):
        if op == "quantize_dynamic":
            scales = dynamic_scales(inputs["x"])
            return {"codes": encode(inputs["x"], scales), "scales": scales}
        if op == "quantize":
            if params.get("api") != "backend" or "global" in inputs:
                raise Unsupported("only the backend api (B::quantize), without a global")
            scales = round_up_f16(inputs["scales"].astype(np.float32).reshape(-1))
            if scales.size * BLOCK != inputs["x"].size:
                raise Unsupported("the scale count is not one per block of 32")
            return {"codes": encode(inputs["x"], scales), "scales": scales}
        if op == "dequantize":
            return {"x": self.dequantize(inputs["codes"], inputs["scales"], params["dtype"])}
        raise Unsupported(f"op {op}")

    @staticmethod
    def dequantize(codes, scales, dtype):
        """burn-flex: x = f32(s * f32(q)), then to the requested dtype with round to nearest even (§6)."""
        out = (blocks(codes.astype(np.float32)) * scales.astype(np.float32).reshape(-1)[:, None]).reshape(codes.shape)
        if dtype == "f32":
            return out
        if dtype == "f16":
            return out.astype(np.float16)
        raise Unsupported(f"output dtype {dtype}")
