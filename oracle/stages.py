"""The quantize pipeline's stages, as one typed record (spec §2-§5).

An op that is asked for its stages (``oracle.run(..., stages=Stages())``) fills the fields of the steps it runs,
each written once by the step that computes it: calibration (``min``/``max``), ``compute_q_params``
(``raw_scales``, two-level ``normalized_scales`` and ``global_scale``), the stored scales (``rounded_scales``),
the effective scale of each block (``effective_scales``: ``valid(f32(global * s))``; a per-tensor scheme is one
block covering the tensor), the divided values before rounding (``scaled`` = x / e, shaped like x) and the codes.

The golden vectors carry every stage but the codes (which are an output) as their ``intermediates``, so a
divergence can be located at its first wrong stage.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

# The vector format's name of a stage, where it differs from the field's.
_FORMAT_NAMES = {"global_scale": "global"}
_NOT_AN_INTERMEDIATE = {"codes"}


@dataclass
class Stages:
    """What each step of one run produced (``None``: the run has no such step)."""

    min: np.ndarray | None = None
    max: np.ndarray | None = None
    raw_scales: np.ndarray | None = None
    """``compute_q_params``' scales, before the two-level split."""
    normalized_scales: np.ndarray | None = None
    """Two-level: the block scales normalized against the global (§3.1)."""
    rounded_scales: np.ndarray | None = None
    """The scales the backend holds: rounded up to the scale dtype (flex: validated, extras kept)."""
    effective_scales: np.ndarray | None = None
    """Per block, the scale each element is divided by (quantize) or multiplied by (dequantize)."""
    global_scale: np.ndarray | None = None
    scaled: np.ndarray | None = None
    """``x / e`` before rounding, in f32, shaped like ``x``."""
    codes: np.ndarray | None = None
    moved: np.ndarray | None = None
    """``qlayout`` of pure moves: the steps applied to the dequantized input, i.e. what a user expects the
    result to dequantize to (``oracle/layout.py``)."""

    def intermediates(self) -> dict[str, np.ndarray]:
        """The recorded stages in pipeline order, as f32 arrays under their vector-format names."""
        return {_FORMAT_NAMES.get(f.name, f.name): np.ascontiguousarray(np.asarray(v, dtype=np.float32))
                for f in fields(self)
                if f.name not in _NOT_AN_INTERMEDIATE and (v := getattr(self, f.name)) is not None}

    @classmethod
    def from_intermediates(cls, named: dict[str, np.ndarray]) -> Stages:
        """The record of a vector's ``intermediates`` (unknown names are an error)."""
        by_format = {_FORMAT_NAMES.get(f.name, f.name): f.name for f in fields(cls)
                     if f.name not in _NOT_AN_INTERMEDIATE}
        unknown = set(named) - set(by_format)
        if unknown:
            raise ValueError(f"unknown intermediate(s) {sorted(unknown)}; known: {sorted(by_format)}")
        return cls(**{by_format[name]: a for name, a in named.items()})
