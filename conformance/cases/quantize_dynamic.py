"""``quantize_dynamic``: MinMax calibration → ``compute_q_params`` → the backend's quantize (spec §5.1, §2-§5)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import oracle
from oracle import QuantScheme
from oracle.vocabulary import LEVELS, VALUES

from . import (
    F32_DENORM,
    F32_MAX,
    STORES,
    case,
    f32,
    half_span,
    level_scheme,
    rng,
    scheme,
)
from ._values import grid_with_ties, reciprocal, split_search
from .quantize import SHAPES, shape_setup

TWO_LEVEL = scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F32")


def _qd(alias, sch, x, *, tags=(), spec=("§5.1",), reason=""):
    return case(alias, "quantize_dynamic", {"scheme": sch}, {"x": x}, tags=tags, spec=spec, reason=reason)


def _rows(value: str, scales=(0.25, 0.5)) -> np.ndarray:
    """Two rows of 16 on-grid values and ties, each row's max |x| = half_span * s, so per-tensor and per-row
    (block [16]) dynamic scales are exactly s (a power of two) and x/s is exactly the designed value."""
    v = grid_with_ties(value)
    return np.stack([v * np.float32(s) for s in scales]).astype(np.float32)


def _level(level: str, value: str = "Q8S", **kw) -> dict:
    return level_scheme(level, value, **kw)


def cases():
    out = [
        _qd("quantize_dynamic/q8s/tensor/spec-example", scheme("Q8S"), f32(5.0, 0.0, 4.0, -12.7),
            spec=("§5.1", "§10"), reason="burn test should_support_quantize_dynamic_int8: scale 25.4/254 = 0.1, "
                                         "codes [50, 0, 40, -127]"),
        _qd("quantize_dynamic/q8s/tensor/arange-32", scheme("Q8S"), np.arange(32, dtype=np.float32),
            spec=("§5.1", "§10"), reason="burn test should_quantize_dequantize_symmetric_single_with_transform: "
                                         "scale 62/254, codes 0, 4, 8, ..., 127"),
        _qd("quantize_dynamic/q8s/block-2x4-on-4x8/constant-blocks", scheme("Q8S", block=[2, 4]),
            np.kron(f32([[1, 10], [100, 1000]]), np.ones((2, 4), np.float32)), spec=("§5.1", "§1.8", "§10"),
            reason="burn test should_quantize_blocks_that_do_not_span_the_trailing_dim: block scales "
                   "[1, 10, 100, 1000]/127 in grid order, codes all 127"),
        _qd("quantize_dynamic/q8s/two-level-ue4m3/spec-example", TWO_LEVEL,
            f32(0.1, -0.4, 0.2, 0.9, -1.5, 0.3, 0.05, -0.02), spec=("§3.1", "§5.2", "§10"),
            reason="burn test should_support_the_two_level_schemes_it_can_quantize: global 2.6363892e-05, "
                   "normalized [268.8, 448] -> UE4M3 [288, 448], codes [13, -53, 26, 119, -127, 25, 4, -2]"),
        _qd("quantize_dynamic/q8s/tensor/flex-example", scheme("Q8S"), f32(-3, -1.5, 0, 1.5, 3, 4.5),
            spec=("§5.1", "§10"), reason="flex test: F32 scale 9/254"),
        _qd("quantize_dynamic/q8s/tensor-ue4m3/flex-example", scheme("Q8S", tensor="UE4M3"),
            f32(-3, -1.5, 0, 1.5, 3, 4.5), spec=("§4.1", "§10"),
            reason="flex test test_quantize_dynamic_honors_scale_dtype_precision: UE4M3 scale 0.0390625"),
        _qd("quantize_dynamic/q8f/tensor/range-255", scheme("Q8F"), f32(-7.5, 0.0, 7.5, 3.0, -3.75),
            spec=("§1.2", "§10"), reason="Q8F divides by 255 (scale 15/255) and can produce -128"),
        _qd("quantize_dynamic/q8s/block-4/flex-example", scheme("Q8S", block=[4]),
            f32(-2, -1, 0, 1, 4, 5, 6, 7), spec=("§5.1", "§10"), reason="flex test: block scales 4/254, 14/254"),
        _qd("quantize_dynamic/q8s/two-level-ue4m3/arange-256", scheme("Q8S", block=[2, 16], block_dtype="UE4M3",
                                                                      tensor="F32"),
            (np.arange(256, dtype=np.float32) / np.float32(256)).reshape(16, 16), spec=("§3.1", "§10"),
            reason="burn test should_round_trip_two_level_through_bytes: 2x16 UE4M3 blocks + f32 global"),
        _qd("quantize_dynamic/q8s/two-level-f16/arange-256", scheme("Q8S", block=[2, 16], block_dtype="F16",
                                                                    tensor="F32"),
            (np.arange(256, dtype=np.float32) / np.float32(256)).reshape(16, 16), spec=("§3.1", "§10"),
            reason="burn test should_quantize_symmetric_two_level_f16_block_scales"),
        _qd("quantize_dynamic/q2s/tensor/ternary-weight", scheme("Q2S"),
            f32([[0.9, -0.2, 0.5], [-0.8, 0.1, 0.7], [0, 0.6, -0.4], [0.3, -0.9, 0.2]]), spec=("§9.4", "§10"),
            reason="burn test q2s_ternary_matmul_matches_dequantized: gamma 0.9, ternary codes"),
    ]
    out += _support_matrix()
    for level in LEVELS:
        out += _level_classes(level)
    out += _dtype_cases()
    out += _shape_cases()
    out += _errors()
    return out


def _support_matrix() -> list:
    """Every value x store x level: which backend quantizes what, and how (ties included in the data)."""
    out = []
    for value in VALUES:
        for store_name, store in STORES:
            for level in LEVELS:
                sch = level_scheme(level, value, block=(16,), store=store)
                out.append(_qd(f"quantize_dynamic/{value.lower()}-{store_name}/{level}/support", sch, _rows(value),
                               spec=("§5.2", "§5.3", "§5.4", "§5.5"),
                               reason=f"{value} stored {store_name}, {level}: on-grid data with ties, scale "
                                      f"exactly 0.25 / 0.5 per row; each profile's support and rounding"))
    return out


def _level_classes(level: str) -> list:
    sch = _level(level, block=(16,))
    base = f"quantize_dynamic/q8s/{level}"
    out = []
    spec = ("§5.1", "§5.2", "§5.3", "§5.4") + (("§3.1",) if level == "two-level" else ())
    rows = _rows("Q8S")
    shuffled = _rows("Q8S", (2.0, 0.125))
    rng(f"{base}/ties").shuffle(shuffled, axis=1)
    out.append(_qd(f"{base}/ties", sch, shuffled,
                   tags=("class:tie-even-pos", "class:tie-even-neg", "class:tie-odd-pos", "class:tie-odd-neg",
                         ) if level != "two-level" else ("class:tie-even-pos",),
                   spec=spec, reason="a calibrated scale that is exactly a power of two and data on the half-integer "
                                     "grid: exact ties at even and odd codes of both signs"))
    zero = rows.copy()
    zero[0] = 0.0
    if level == "tensor":
        zero[:] = 0.0
    out.append(_qd(f"{base}/zero-block", sch, zero, tags=("class:zero-block",), spec=spec,
                   reason="an all-zero block gets scale 0: ndarray divides by 0.1 (codes 0) and stores 0, flex "
                          "stores round_up(MIN_POSITIVE), the GPU computes 0/0 = NaN and clamps to b"))
    for name, x, tag, why in (
        ("nan", rows * np.where(np.arange(16) == 5, np.float32(np.nan), np.float32(1)), "class:nan",
         "a NaN element: NaN range on the CPU backends (ndarray panics, flex gives 0), the GPU gives b"),
        ("inf", rows * np.where(np.arange(16) == 3, np.float32(np.inf), np.float32(1)), "class:inf",
         "an infinite element makes its block's scale infinite: x/inf = 0, inf/inf = NaN"),
        ("max-finite", np.where(np.arange(16) == 2, np.float32(-F32_MAX), rows).astype(np.float32),
         "class:max-finite", "2*f32::MAX overflows: the scale is infinite although every element is finite"),
        ("specials", np.where(np.arange(16) < 4, f32([-0.0, F32_DENORM, -F32_DENORM, 0.0] * 4), rows)
         .astype(np.float32), "class:subnormal", "signed zeros and subnormals next to normal data"),
    ):
        tags = (tag,) if name != "specials" else ("class:subnormal", "class:signed-zero")
        out.append(_qd(f"{base}/{name}", sch, x.astype(np.float32), tags=tags, spec=spec, reason=why))
    # reciprocal split: rows with a non-power-of-two dynamic scale (max 12.7 -> 0.1 per row)
    m = [12.7, 3.3] if level != "tensor" else [12.7, 12.7]
    blocks = []
    for mx in m:
        s = np.float32(np.float32(2 * np.float32(mx)) / np.float32(254))
        if level == "two-level":
            s = None
        hits = split_search([s], 127, reciprocal, 7)[0] if s is not None else []
        blocks.append([mx] + hits + [-h for h in hits])
    if level == "two-level":
        out.append(_two_level_split(base, sch, spec))
    else:
        x = np.zeros((2, 16), np.float32)
        for r, vals in enumerate(blocks):
            x[r, : len(vals)] = vals
        bsch = sch if level == "tensor" else level_scheme("block", "Q8S", block=(16,))
        out.append(_qd(f"{base}/reciprocal-split", bsch, x, tags=("class:reciprocal-split",), spec=spec,
                       reason="a calibrated scale of 0.1 and elements where x/s and x*(1/s) round apart: "
                              "flex multiplies by the reciprocal"))
    return out


def _two_level_split(base, sch, spec):
    """Two-level: the effective scales global*s are fixed by each block's maximum (computed with the oracle's
    public functions), then elements below the maximum are searched where x/e and x*(1/e) round apart."""
    sch = scheme("Q8S", block=[16], block_dtype="UE4M3", tensor="F32")
    x = np.zeros((2, 16), np.float32)
    x[:, 0] = f32(12.7, 3.3)
    lo, hi = oracle.compute_range(x, QuantScheme.from_json(sch), "minmax")
    s, g = oracle.compute_q_params(lo, hi, QuantScheme.from_json(sch))
    e = (g[0] * oracle.round_up(s.ravel(), oracle.ScaleDtype.UE4M3)).astype(np.float32)
    for j, hits in enumerate(split_search(e, 100, reciprocal, 7)):
        x[j, 1:1 + len(hits)] = hits
        x[j, 8:8 + len(hits)] = [-h for h in hits]
    return _qd(f"{base}/reciprocal-split", sch, x, tags=("class:reciprocal-split",), spec=spec,
               reason="two-level blocks whose effective scales global*s are inexact, with elements (searched "
                      "below each block's maximum) where x/e and x*(1/e) round apart")


def _dtype_cases() -> list:
    out = []
    for level in LEVELS:
        for dt, conv in (("f16", np.float16), ("bf16", ml_dtypes.bfloat16)):
            alias = f"quantize_dynamic/q8s/{level}/{dt}-input"
            r = rng(alias)
            x = (r.standard_normal((2, 16)) * 2).astype(conv)
            out.append(_qd(alias, _level(level, block=(16,)), x, spec=("§2", "§3", "§3.1", "§5.3", "§5.4"),
                           tags=("class:cast-back",) if level == "two-level" else (),
                           reason=f"an {dt} tensor: calibration and scales in {dt}; two-level normalized scales "
                                  f"cast back to {dt} before the round-up; ndarray has no {dt} tensors"))
    x = f32([[0.1, -0.4, 0.2, 0.9], [-1.5, 0.3, 0.05, -0.02], [1e-3, 3e-3, -2e-3, 4e-4],
             [1000.0, -600.0, 2.5, 1.0]])
    out.append(_qd("quantize_dynamic/q8s/two-level-f16/f16-cast-back",
                   scheme("Q8S", block=[4], block_dtype="F16", tensor="F32"), x.astype(np.float16),
                   tags=("class:cast-back",), spec=("§3.1",),
                   reason="F16 blocks on an f16 tensor: the normalized scales are rounded to f16 (RNE) before the "
                          "round-up, which can land one f16 step below the f32 route"))
    out.append(_qd("quantize_dynamic/q8s/block-f16/subnormal-scales", scheme("Q8S", block=[4], block_dtype="F16"),
                   f32([[1e-4, -3e-4, 2e-4, 5e-5], [5e-5, -2e-5, 1e-5, 3e-5]]), spec=("§4.1", "§5.1"),
                   reason="F16 block scales in F16's subnormal range (below 2^-14, steps of 2^-24): 3e-4 / 127 lies "
                          "between 39 and 40 steps and rounds up to 40, 5e-5 / 127 up to 7 steps; a round-up that "
                          "is one step short there changes the scales and the codes"))
    return out


def _shape_cases() -> list:
    out = []
    for tag, shape, block, note in SHAPES:
        alias = f"quantize_dynamic/q8s/shape/{tag}"
        sch, _scales, e, targets, r = shape_setup(alias, shape, block)
        x = (targets * e).astype(np.float32)
        out.append(_qd(alias, sch, x, spec=("§1.7", "§1.8", "§2"),
                       reason=(note or f"a {tag} tensor") + "; dynamic calibration refuses partial blocks"))
    alias = "quantize_dynamic/q8s/two-level-ue4m3/large-64x64"
    r = rng(alias)
    x = (r.standard_normal((64, 64)) * np.exp2(r.integers(-8, 8, size=(64, 1)))).astype(np.float32)
    out.append(_qd(alias, scheme("Q8S", block=[8, 8], block_dtype="UE4M3", tensor="F32"), x, spec=("§3.1", "§5.2"),
                   reason="the one large case: 64 two-level 8x8 blocks over rows spanning 16 binades, so many "
                          "normalized scales fall in the UE4M3 subnormal range"))
    alias = "quantize_dynamic/q8s/two-level-ue4m3/outlier"
    x = np.tile(f32([0.01, -0.02, 0.015, 0.005]), (4, 1)) * f32([[1.0], [0.25], [1e-3], [0.125]])
    x[3] = f32(1000.0, -700.0, 350.0, 1.0)
    out.append(_qd(alias, TWO_LEVEL, x.astype(np.float32), tags=("class:ue4m3-subnormal-scale",),
                   spec=("§3.1", "§4.1"),
                   reason="one outlier block sets the global; the other blocks' normalized scales fall below 2^-6 "
                          "into the UE4M3 subnormals (spacing 2^-9), some to the minimum"))
    out.append(_qd("quantize_dynamic/q8s/block-ue4m3/tiny-blocks", scheme("Q8S", block=[4], block_dtype="UE4M3"),
                   f32([1e-4, -2e-4, 5e-5, 0.0, 3.0, -1.0, 2.0, 0.5]), tags=("class:ue4m3-subnormal-scale",),
                   spec=("§4.1",), reason="one-level UE4M3: a tiny block's scale rounds up to the smallest "
                                          "subnormal 2^-9"))
    ramp = np.sin(np.arange(128, dtype=np.float32) * np.float32(0.37)).astype(np.float32).reshape(4, 32)
    for name, store in (("e2m1-packed", ("PackedU32", 0)), ("e2m1-packed-native", ("PackedNative", 0))):
        out.append(case(f"quantize_dynamic/{name}/block-32-ue8m0/mxfp4-ramp", "quantize_dynamic",
                        {"scheme": scheme("E2M1", store=store, block=[32], block_dtype="UE8M0")}, {"x": ramp},
                        spec=("§5.3", "§11"),
                        reason="MXFP4 (E2M1 codes, UE8M0 scales per 32) on burn's own test ramp sin(0.37 i) "
                               "(burn-flex-0.23.0-pre.1 ops/qtensor.rs tests): 0.23 flex keeps the packed store and "
                               "encodes real E2M1 codes; 0.22 flex rounds to integers"))
    return out


def _errors() -> list:
    return [
        _qd("quantize_dynamic/q8s/tensor/empty", scheme("Q8S"), np.zeros((0,), np.float32), spec=("§2", "§8 #34"),
            reason="an empty tensor: min of nothing panics (each CPU backend its own text)"),
        _qd("quantize_dynamic/q8s/block-4/empty", scheme("Q8S", block=[4]), np.zeros((0, 4), np.float32),
            spec=("§2", "§5.2"), reason="an empty tensor with blocks: an empty grid, nothing to reduce"),
        _qd("quantize_dynamic/q8s/two-level-f32-blocks/refused",
            scheme("Q8S", block=[4], block_dtype="F32", tensor="F32"), f32(1, 2, 3, 4), spec=("§3.1", "§8 #20"),
            reason="F32 block scales in a two-level scheme: normalize_scales asserts"),
        _qd("quantize_dynamic/q8s/two-level-global-f16/refused",
            scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F16"), f32(1, 2, 3, 4),
            spec=("§7.1", "§7.6", "§8 #4", "§8 #44"), reason="a two-level scheme whose global is F16"),
        _qd("quantize_dynamic/q8s/two-level-ue8m0/refused",
            scheme("Q8S", block=[4], block_dtype="UE8M0", tensor="F32"), f32(1, 2, 3, 4),
            spec=("§3.1", "§8 #20", "§11"), reason="UE8M0 blocks reach f32's range: refused in every release"),
        *[_qd(f"quantize_dynamic/q8s/{level}-{dt.lower()}/scale-dtype", level_scheme(level, block=(16,),
                                                                                   block_dtype=dt, tensor=None)
              if level == "block" else scheme("Q8S", tensor=dt), _rows("Q8S", (0.3, 3.0)), spec=("§4.1", "§5.2"),
              reason=f"{dt} scales at the {level} level: the calibrated scale is rounded up onto the {dt} grid")
          for level in ("tensor", "block") for dt in ("F16", "BF16")],
        _qd("quantize_dynamic/q8s/two-level-bf16/refused",
            scheme("Q8S", block=[4], block_dtype="BF16", tensor="F32"), f32(1, 2, 3, 4), spec=("§3.1", "§8 #20"),
            reason="BF16 block scales reach f32's range: no two-level form"),
        _qd("quantize_dynamic/q8s/tensor-ue8m0/support", scheme("Q8S", tensor="UE8M0"), _rows("Q8S")[0],
            spec=("§4.1", "§8 #12", "§11"), reason="per-tensor UE8M0: panics before 0.22.0, power of two after"),
        _qd("quantize_dynamic/q8s/block-ue8m0/support", scheme("Q8S", block=[16], block_dtype="UE8M0"),
            _rows("Q8S", (0.3, 3.0)), spec=("§4.1", "§8 #12", "§11"),
            reason="one-level UE8M0 blocks: each scale rounds up to a power of two (burn 0.22.1)"),
        _qd("quantize_dynamic/q8s-lookup/tensor/support", scheme("Q8S", mode="Lookup"), _rows("Q8S")[0],
            spec=("§1.4", "§8 #58"), reason="Lookup mode through the public path"),
        _qd("quantize_dynamic/q8s/tensor/half-span-check", scheme("Q8S"), f32([half_span("Q8S") * 0.5, -3.75]),
            tags=("class:tie-odd-neg",), spec=("§3",), reason="max 63.5 gives a scale of exactly 0.5: -3.75/0.5 = -7.5 is a tie at an odd code"),
    ]
