"""``float_ops``: burn's float ops on a quantized tensor, each family at each level (spec §9.5), matmul with a
quantized side, and chains that start from a tensor quantized on the device (f32, f16 and bf16 inputs).

Every scale is a power of two and every code is small, so every value, product and partial sum is an exact f32:
a sum burn leaves to the backend's order (``sum``, ``mean_dim``, ``matmul``) has one answer, compared bit for bit.
The codes of a row are distinct, so ``argmax``, ``sort`` and ``max_dim`` meet no ties.
"""

from __future__ import annotations

import numpy as np

from . import bf16, case, f16, f32, rng, scheme

SHAPE = (4, 8)
LEVELS = {
    "tensor": scheme("Q8S"),
    "block": scheme("Q8S", block=[4]),
    "two-level": scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F32"),
}
_ROW = [round(0.25 * ((5 * i) % 9) - 1.0, 2) for i in range(8)]  # a float row: multiples of 1/4

STEPS = {
    # name: (steps, why)
    "abs": ([{"op": "abs"}], "q_abs is dequant_op_quant!: the result is requantized under the input scheme"),
    "neg": ([{"op": "neg"}], "q_neg is dequant_op_flow!: a float result (propagation Inhibit)"),
    "abs-sqrt": ([{"op": "abs"}, {"op": "sqrt"}], "a requantized abs, then sqrt through the bridge: floats"),
    "add-scalar": ([{"op": "add_scalar", "value": 0.375}], "q_add_scalar: a float result"),
    "clamp": ([{"op": "clamp", "min": -0.5, "max": 0.75}], "q_clamp: a float result"),
    "clamp-reversed": ([{"op": "clamp", "min": 0.75, "max": -0.5}],
                       "min > max, which burn's clamp takes: ndarray tests x < min, then x > max; flex's f32::clamp "
                       "panics; the GPU gives max (0.22.0-pre.3's FClamp) or min (clamp_nan from 0.22.1) everywhere"),
    "clamp-past-range": ([{"op": "clamp", "min": -1e39, "max": 3.4028235e38}],
                         "a bound past f32's range is -inf once `as f32`, f32::MAX is kept: every value stays"),
    "clamp-rounded-bounds": ([{"op": "clamp", "min": -0.1, "max": 0.1}],
                             "bounds that round to f32 (0.1 -> 0x3DCCCCCD): the clamped values are the rounded bounds"),
    "add-float": ([{"op": "add", "rhs": _ROW, "shape": [1, 8]}],
                  "a float other side: the bridge dequantizes the quantized side (q_bin_ops!), broadcast rows"),
    "div-float": ([{"op": "div", "rhs": [v or 0.5 for v in _ROW], "shape": [1, 8]}],
                  "division by a float tensor: one IEEE division per element"),
    "mul-self": ([{"op": "mul", "rhs": "self"}], "both sides quantized: q_mul (dequant_op_flow!), floats"),
    "sub-self": ([{"op": "sub", "rhs": "self"}], "q - q: q_sub of two quantized tensors, zeros as floats"),
    "mask-greater": ([{"op": "mask_fill", "compare": "greater_elem", "value": 0.0, "fill": 2.5}],
                     "a comparison and mask_fill both dequantize through the bridge"),
    "mask-lower-equal": ([{"op": "mask_fill", "compare": "lower_equal_elem", "value": -0.25, "fill": -9.0}],
                         "lower_equal_elem: the mask of a quantized tensor, the fill a float result"),
    "mask-where-float": ([{"op": "mask_where", "compare": "greater_elem", "value": 0.0, "rhs": [v * 2 for v in _ROW * 4],
                           "shape": [4, 8]}],
                         "mask_where: the tensor and its source both through the bridge's into_float, floats"),
    "greater-elem": ([{"op": "greater_elem", "value": 0.0}], "a comparison of a quantized tensor: a Bool, read as "
                                                             "floats (Tensor::float)"),
    "lower-equal-elem": ([{"op": "lower_equal_elem", "value": -0.125}], "lower_equal_elem: 1.0 where it holds"),
    "greater-equal-elem": ([{"op": "greater_equal_elem", "value": 0.25}], "greater_equal_elem, read as floats"),
    "lower-elem": ([{"op": "lower_elem", "value": 0.5}], "lower_elem, read as floats"),
    "equal-elem": ([{"op": "equal_elem", "value": 0.0}], "equal_elem: where the code is 0 (the value +0.0)"),
    "sum": ([{"op": "sum"}], "q_sum: a float [1], exact in any summation order"),
    "sum-dim-0": ([{"op": "sum_dim", "dim": 0}], "q_sum_dim along rows: the dim kept, floats"),
    "sum-dim-1": ([{"op": "sum_dim", "dim": 1}], "q_sum_dim along the blocked dim"),
    "mean-dim-1": ([{"op": "mean_dim", "dim": 1}], "q_mean_dim: the exact sum divided by 8"),
    "mean-dim-0": ([{"op": "mean_dim", "dim": 0}], "q_mean_dim along rows: the exact sum divided by 4"),
    "prod": ([{"op": "prod"}], "q_prod: a float [1], exact in any multiplication order"),
    "prod-dim-1": ([{"op": "prod_dim", "dim": 1}], "q_prod_dim along the blocked dim: the dim kept, floats"),
    "prod-dim-0": ([{"op": "prod_dim", "dim": 0}], "q_prod_dim along rows"),
    "cumsum-1": ([{"op": "cumsum", "dim": 1}], "q_cumsum along the blocked dim: every prefix sum exact, floats"),
    "cumsum-0": ([{"op": "cumsum", "dim": 0}], "q_cumsum along rows"),
    "cumprod-1": ([{"op": "cumprod", "dim": 1}], "q_cumprod: every prefix product exact, floats"),
    "max-dim-1": ([{"op": "max_dim", "dim": 1}], "q_max_dim is q_argmax then q_gather: requantized"),
    "min-dim-0": ([{"op": "min_dim", "dim": 0}], "q_min_dim: q_argmin then q_gather, requantized"),
    "argmax-1": ([{"op": "argmax", "dim": 1}], "Dispatch's q_argmax default dequantizes: indices of the values"),
    "argmin-0": ([{"op": "argmin", "dim": 0}], "q_argmin along rows: indices of the values, not of the codes"),
    "argsort-1": ([{"op": "argsort", "dim": 1}], "q_argsort dequantizes, then float_argsort: int indices of the "
                                                 "values (distinct along each row)"),
    "argsort-desc-0": ([{"op": "argsort", "dim": 0, "descending": True}], "argsort_descending along rows"),
    "sort-1": ([{"op": "sort", "dim": 1}], "q_sort is dequant_op_quant!: sorted values requantized"),
    "sort-desc-0": ([{"op": "sort", "dim": 0, "descending": True}], "sort_descending along rows"),
    "topk-3": ([{"op": "topk", "dim": 1, "k": 3}], "q_topk: the 3 largest of each row, requantized"),
    "topk-columns": ([{"op": "topk", "dim": 0, "k": 2}],
                     "the 2 largest of each column: on the GPU a reduction along an axis of stride > 1, whose "
                     "TopK repeats the top value in lower slots for some shapes (undefined there)"),
    "topk-columns-k1": ([{"op": "topk", "dim": 0, "k": 1}],
                        "the largest of each column: one slot, which the GPU's strided TopK gets right"),
    "stack-0": ([{"op": "stack", "dim": 0, "copies": 2}], "stack: q_reshape of each copy, then q_cat requantizes"),
    "stack-2": ([{"op": "stack", "dim": 2, "copies": 3}], "stack along a new last dim: [4, 8, 3]"),
    "matmul-float-rhs": ([{"op": "matmul", "rhs": [v * 0.5 for v in _ROW * 3], "shape": [8, 3]}],
                         "q.matmul(f): q_matmul dequantizes and runs the float GEMM; exact products"),
    "matmul-quantized-rhs": ([{"op": "matmul", "lhs": [v * 0.5 for v in _ROW[:4] * 3], "shape": [3, 4]}],
                             "f.matmul(q): a quantized rhs, dequantized to the lhs's dtype"),
    "reshape-matmul-self": ([{"op": "reshape", "shape": [2, 4, 4]}, {"op": "matmul", "rhs": "self"}],
                            "both sides quantized: q.matmul(q), batched [2, 4, 4] after a reshape that keeps every "
                            "block whole (every block holds a +-127 code, so flex's requantization keeps it)"),
}


def _scales(level: str, r: np.random.Generator) -> tuple[np.ndarray, np.ndarray | None]:
    """Powers of two: every dequantized value is an exact multiple of the smallest."""
    if level == "tensor":
        return f32([2.0 ** -int(r.integers(3, 7))]), None
    scales = f32(2.0 ** -r.integers(0, 6, size=8).astype(np.float64))
    return (scales, f32([2.0 ** -5])) if level == "two-level" else (scales, None)


PRODUCTS = frozenset({"prod", "prod-dim-1", "prod-dim-0", "cumprod-1"})
"""Families whose answer is a product of many values: small codes and scales near 1 keep it exact and normal."""


def _product_parts(level: str, r: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Codes +-1 and +-2, with a few +-3 (the odd significands of the whole tensor's product stay below 2^24), and
    power-of-two scales from 1/2 to 4 (every partial product of the 32 values stays a normal f32)."""
    codes = r.choice(np.int8([-2, -1, 1, 2]), size=SHAPE)
    codes.flat[r.choice(codes.size, size=6, replace=False)] = r.choice(np.int8([-3, 3]), size=6)
    if level == "tensor":
        return codes, f32([0.5]), None
    scales = f32(r.choice([0.5, 1.0, 2.0], size=8))
    return (codes, f32(scales * 2), f32([0.25])) if level == "two-level" else (codes, scales, None)


def _codes(r: np.random.Generator, shape=SHAPE, lo=-40, hi=41, calibrated=False) -> np.ndarray:
    """Distinct codes along every row and column (a random permutation of a range, laid out row-major);
    ``calibrated``: one +-127 in every block of 4, as a freshly quantized tensor has."""
    codes = r.permutation(np.arange(lo, hi))[: int(np.prod(shape))].reshape(shape)
    if calibrated:
        codes[:, ::4] = np.where(r.random((shape[0], shape[1] // 4)) < 0.5, -127, 127)
    return codes.astype(np.int8)


def _from_parts(alias, sch, steps, codes, scales, glob, why):
    inputs = {"codes": codes, "scales": scales} | ({} if glob is None else {"global": glob})
    return case(alias, "float_ops", {"scheme": sch, "steps": steps}, inputs, spec=("§9.5",), reason=why)


def family_cases():
    out = []
    for level, sch in LEVELS.items():
        for name, (steps, why) in STEPS.items():
            alias = f"float_ops/q8s/{level}/{name}"
            r = rng(alias)
            if name in PRODUCTS:
                codes, scales, glob = _product_parts(level, r)
            else:
                scales, glob = _scales(level, r)
                codes = _codes(r, calibrated="self" in str(steps))
            out.append(_from_parts(alias, sch, steps, codes, scales, glob, why))
    for value, codes_of, names, seg in (("E4M3", _fp8_codes, ("argmax-1", "argmin-0", "max-dim-1", "sort-1"), "e4m3"),
                                        ("Q4S", _q4_rows, ("argmax-1", "max-dim-1", "sort-1"), "q4s")):
        for name in names:
            alias = f"float_ops/{seg}/block/{name}"
            r = rng(alias)
            scales, _ = _scales("block", r)
            steps, why = STEPS[name]
            out.append(_from_parts(alias, scheme(value, block=[4]), steps, codes_of(r), scales, None,
                                   f"{why}; {value} codes do not order as their values under per-block scales "
                                   "(burn-ndarray's own q_argmax would read the codes, but Dispatch never calls it)"))
    return out


def _q4_rows(r: np.random.Generator) -> np.ndarray:
    """Q4S codes distinct along every row (15 values cannot fill 32 distinct ones)."""
    return np.stack([r.permutation(np.arange(-7, 8))[:SHAPE[1]] for _ in range(SHAPE[0])]).astype(np.int8)


def _fp8_codes(r: np.random.Generator) -> np.ndarray:
    """E4M3 bit patterns of distinct finite values, negatives included (as i8, their sign bit reads negative)."""
    patterns = np.array([p for p in range(256) if p & 0x7F not in (0x7F, 0)], dtype=np.uint8)
    return r.permutation(patterns)[:32].reshape(SHAPE).view(np.int8)


# Chains from a tensor quantized on the device: x = k/32 with a +-127/32 in every block of 4, so every Q8S scale is
# exactly 1/32 (a requantization that keeps the blocks finds it again).
DEVICE_CHAINS = {
    "plain": ([], "quantize_dynamic on the device, read back as a loaded tensor is"),
    "transpose-slice": ([{"op": "transpose"}, {"op": "slice", "ranges": [[1, 7, 2], [0, 4, 1]]}],
                        "layout steps on a tensor quantized on the device (issue 22: not only from_data)"),
    "gather-abs": ([{"op": "gather", "dim": 1, "indices": [7, 0, 3, 4] * 4, "shape": [4, 4]}, {"op": "abs"}],
                   "a requantizing gather, then a requantizing abs"),
    "reshape-sum-dim": ([{"op": "reshape", "shape": [2, 16]}, {"op": "sum_dim", "dim": 1}],
                        "a reshape, then an exact float reduction"),
    "neg-matmul": ([{"op": "neg"}, {"op": "matmul", "rhs": [v * 0.5 for v in _ROW * 3], "shape": [8, 3]}],
                   "a float neg, then a float GEMM with exact products"),
    "sort-abs": ([{"op": "sort", "dim": 1}, {"op": "abs"}], "two requantizations in a row"),
}


def _device_x(r: np.random.Generator, dtype) -> np.ndarray:
    k = r.integers(-126, 127, size=SHAPE)
    k[:, ::4] = np.where(r.random((SHAPE[0], SHAPE[1] // 4)) < 0.5, -127, 127)
    return dtype(k / 32.0)


def device_cases():
    out = []
    for seg, dtype in (("f32", f32), ("f16", f16), ("bf16", bf16)):
        for level in ("tensor", "block"):
            for name, (steps, why) in DEVICE_CHAINS.items():
                alias = f"float_ops/from-x/{seg}/{level}/{name}"
                out.append(case(alias, "float_ops", {"scheme": LEVELS[level], "steps": steps},
                                {"x": _device_x(rng(alias), dtype)}, spec=("§9.5", "§5.1"),
                                reason=f"{why}; x is {seg}"))
    return out


# E5M2 codes of 1.0, a NaN, -1.0, -0.0, +0.0 and another NaN (0x7E, 0xFE: payloads burn's decoding does not keep);
# a max_dim's row has no zero (which of +-0.0 an argmax picks is left undefined) and 16 elements (numpy's max rewrites
# a NaN only on its vector path, from 16 elements on).
_E5M2_NAN_ZEROS = np.array([0x3C, 0x7E, 0xBC, 0x80, 0x00, 0xFE], np.uint8).view(np.int8)
_E5M2_NAN_ROW = np.array([[0x3C, 0x7E, 0xBC, *range(0x40, 0x4D)]], np.uint8).view(np.int8)  # 1, NaN, -1, 2 .. 12
_E5M2_NEG_INF_ROW = np.array([[0x3C, 0xFC, 0xBC, 0x40]], np.uint8).view(np.int8)  # 1, -inf, -1, 2
NAN_STEPS = {
    "sort-nan-zeros": ([{"op": "sort", "dim": 0}], _E5M2_NAN_ZEROS,
                       ("burn's sort is sort_unstable_by(f32::total_cmp) on every backend: -0.0 before +0.0, NaNs "
                        "last, moved bits and all; burn-flex 0.23.0-pre.1 decodes every fp8 NaN to 0x7FFFE000 and "
                        "encodes it again as 0x7F (a sort that rewrote it to 0x7FC00000, as numpy's does, gives 0x7E)")),
    "sort-desc-nan-zeros": ([{"op": "sort", "dim": 0, "descending": True}], _E5M2_NAN_ZEROS,
                            "sort_descending: the reverse total order, NaNs first, +0.0 before -0.0"),
    "clamp-signed-zeros": ([{"op": "clamp", "min": -0.0, "max": 0.75}], _E5M2_NAN_ZEROS,
                           ("a NaN stays, bits kept, on every backend; on the CPU a zero equal to a zero bound keeps "
                            "its sign (strict comparisons); on the GPU +0.0 against the -0.0 bound is the min/max's "
                            "pick: undefined there")),
    "clamp-zero-max": ([{"op": "clamp", "min": -1.5, "max": 0.0}], _E5M2_NAN_ZEROS,
                       "-0.0 against the +0.0 bound: kept on the CPU, undefined on the GPU (lavapipe gave +0.0)"),
    "topk-nan": ([{"op": "topk", "dim": 1, "k": 3}], _E5M2_NAN_ROW,
                 ("the host sort puts a NaN first (the total order's largest), bits kept; the GPU's TopK slots "
                  "compare it false, so where it lands follows their insertion order: undefined there")),
    "topk-neg-inf": ([{"op": "topk", "dim": 1, "k": 4}], _E5M2_NEG_INF_ROW,
                     ("a -inf among the kept values: the sort keeps it; cubek-reduce 0.3's slots start at f32::MIN "
                      "and a -inf never enters one, so burn-cubecl 0.22 reads f32::MIN there (0.23.0-pre.1's "
                      "start at -inf); the requantization then scales by the row's largest magnitude")),
    "max-dim-nan": ([{"op": "max_dim", "dim": 1}], _E5M2_NAN_ROW,
                    ("q_max_dim is q_argmax then q_gather: argmax stops at the first NaN, and the gather moves that "
                     "element's bits (a float max that rewrote the NaN would give 0x7E on 0.23.0-pre.1 flex)")),
}


def nan_cases():
    """Where a value-moving float op puts NaNs and signed zeros, and whether it keeps a NaN's bits."""
    return [_from_parts(f"float_ops/e5m2/tensor/{name}", scheme("E5M2"), steps, codes, f32([1.0]), None, why)
            for name, (steps, codes, why) in NAN_STEPS.items()]


def _peaked(r: np.random.Generator, shape: tuple, qmax: int, unit: float, rows: bool = False) -> list[float]:
    """Values ``k * unit``, ``k`` a multiple of 1/4 with ``|k| <= qmax``, and a ``+-qmax * unit`` in the whole tensor
    (in every row with ``rows``): quantize_dynamic then finds the power-of-two scale ``unit`` (per tensor, or per
    block of a row) and rounds each ``k`` to an integer code (ties among them), so every dequantized value is exact
    (a GEMM's products and sums too) and differs from the float operand's."""
    k = np.clip(r.integers(-4 * qmax, 4 * qmax + 1, size=shape) / 4, -qmax, qmax)
    peaks = np.where(r.random(shape[0] if rows else 1) < 0.5, -qmax, qmax)
    if rows:
        k[np.arange(shape[0]), r.integers(0, shape[1], size=shape[0])] = peaks
    else:
        k.flat[int(r.integers(0, k.size))] = peaks[0]
    return [float(v) * unit for v in k.ravel()]


def _operand(r: np.random.Generator, shape: tuple, nonzero: bool = False) -> list[float]:
    """Multiples of 1/8 in [-3, 3] (nonzero: away from zero, so no quantized divisor rounds to 0)."""
    k = r.integers(1, 25, size=shape) * np.where(r.random(shape) < 0.5, -1, 1) if nonzero else \
        r.integers(-24, 25, size=shape)
    return [float(v) / 8 for v in k.ravel()]


# A second quantized tensor, of its own scheme, on the other side: name -> (step builder, why). Each builder takes
# the vector's generator; the operand is the float list the step quantizes on the device (``rhs_scheme``).
OPERANDS = {
    "add-q4s-block": (lambda r: {"op": "add", "rhs": _operand(r, SHAPE), "shape": list(SHAPE),
                                 "rhs_scheme": scheme("Q4S", store=("PackedU32", 0), block=[8])},
                      "q.add(p): two QFloat tensors of different schemes, q_add dequantizes each (lhs first)"),
    "sub-q8s-row": (lambda r: {"op": "sub", "rhs": _operand(r, (1, 8)), "shape": [1, 8], "rhs_scheme": scheme("Q8S")},
                    "q.sub(p) with p one per-tensor Q8S row, broadcast over q's rows"),
    "mul-e4m3": (lambda r: {"op": "mul", "rhs": _operand(r, SHAPE), "shape": list(SHAPE), "rhs_scheme": scheme("E4M3")},
                 "q.mul(p), p per-tensor E4M3: each side dequantized by its own scheme, one IEEE product each"),
    "div-q8s-block": (lambda r: {"op": "div", "rhs": _operand(r, SHAPE, nonzero=True), "shape": list(SHAPE),
                                 "rhs_scheme": scheme("Q8S", block=[4])},
                      "q.div(p), p per-block Q8S [4]: one IEEE division per element of the two dequantized sides"),
    "add-nvfp4": (lambda r: {"op": "add", "rhs": _operand(r, SHAPE), "shape": list(SHAPE),
                             "rhs_scheme": scheme("E2M1", store=("PackedU32", 0), block=[8], block_dtype="UE4M3", tensor="F32")},
                  "q.add(p), p two-level E2M1 (UE4M3 block scales under an F32 global, NVFP4's levels)"),
    "mask-where-q8s": (lambda r: {"op": "mask_where", "compare": "greater_elem", "value": 0.0,
                                  "rhs": _operand(r, SHAPE), "shape": list(SHAPE), "rhs_scheme": scheme("Q8S", block=[8])},
                       "mask_where with a quantized source: both through into_float, floats"),
    "matmul-q8s": (lambda r: {"op": "matmul", "rhs": _peaked(r, (8, 3), 127, 2.0 ** -7), "shape": [8, 3],
                              "rhs_scheme": scheme("Q8S")},
                   "q.matmul(w), both quantized (w per-tensor Q8S, its scale exactly 2^-7): q_matmul dequantizes each"),
    "matmul-q8s-rows": (lambda r: {"op": "matmul", "rhs": _peaked(r, (8, 3), 127, 2.0 ** -6, rows=True),
                                   "shape": [8, 3], "rhs_scheme": scheme("Q8S", block=[3])},
                        "q.matmul(w), w per-block Q8S, one block per row (each row's scale exactly 2^-6)"),
    "matmul-q4s": (lambda r: {"op": "matmul", "rhs": _peaked(r, (8, 3), 7, 2.0 ** -3), "shape": [8, 3],
                              "rhs_scheme": scheme("Q4S", store=("PackedU32", 0))},
                   "q.matmul(w), w per-tensor Q4S (scale exactly 2^-3)"),
}


def operand_cases():
    """Two different quantized tensors in one op (issue 22): the held tensor at each level, the other side quantized
    on the device under its own scheme."""
    out = []
    for level, sch in LEVELS.items():
        for name, (build, why) in OPERANDS.items():
            alias = f"float_ops/two-quantized/{level}/{name}"
            r = rng(alias)
            scales, glob = _scales(level, r)
            out.append(_from_parts(alias, sch, [build(r)], _codes(r), scales, glob, why))
    return out


# Float ops that meet or make NaN and inf: sqrt of negative values (an IEEE invalid operation, whose NaN is the
# machine's default one: its sign differs between x86 and Arm, so no vector lets a sort read it) and fp8 NaN and inf
# codes loaded as parts (each decodes to a non-finite f32 that the float op and a requantization meet). Any NaN
# matches any NaN in a judged output (docs/vector-format.md), so a vector pins where NaNs go, not their bits.
_SIGNED = np.array([[3, -5, 7, 1], [2, -8, 4, 6]], np.int8)
_E4M3_NAN = np.array([[0x38, 0x7F, 0xC0, 0x40], [0xFF, 0x30, 0xB8, 0x44]], np.uint8).view(np.int8)  # 1 NaN -2 2 / -NaN
_E5M2_INF = np.array([[0x3C, 0x7C, 0xC0, 0x40], [0xFC, 0x38, 0xBC, 0x7D]], np.uint8).view(np.int8)  # 1 inf -2 2 / -inf
_E5M2_NAN_BLOCKS = np.array([[0x3C, 0x7E, 0x40], [0xFD, 0x38, 0x44], [0x3C, 0x40, 0x44], [0x38, 0x7D, 0x3C]],
                            np.uint8).view(np.int8)  # NaN codes 0x7E, 0xFD, 0x7D in three of the six [2, 1] blocks
_QUARTER, _ONE = f32([0.25]), f32([1.0])
NON_FINITE = {
    "q8s/sqrt": (scheme("Q8S"), _SIGNED, _QUARTER, [{"op": "sqrt"}], "sqrt of the negative values: NaN, a float result"),
    "q8s/sqrt-abs-sort": (scheme("Q8S"), _SIGNED, _QUARTER, [{"op": "sqrt"}, {"op": "abs"}, {"op": "sort", "dim": 1}],
                          "abs clears the sign of sqrt's NaNs (negative on x86, positive on Arm): the total-order "
                          "sort then puts them last on every machine"),
    "q8s/sqrt-argmax": (scheme("Q8S"), _SIGNED, _QUARTER, [{"op": "sqrt"}, {"op": "argmax", "dim": 1}],
                        "argmax of a float row with NaNs: the first NaN's index"),
    "q8s/sqrt-mask": (scheme("Q8S"), _SIGNED, _QUARTER, [{"op": "sqrt"}, {"op": "mask_fill", "compare": "lower_elem",
                                                                 "value": 2.0, "fill": 0.5}],
                      "a NaN compares false: mask_fill leaves it"),
    "e4m3/abs": (scheme("E4M3"), _E4M3_NAN, _ONE, [{"op": "abs"}],
                 "E4M3 NaN codes (0x7F, 0xFF) decode to NaN: abs requantizes a tensor whose max is NaN"),
    "e4m3/argmax": (scheme("E4M3"), _E4M3_NAN, _ONE, [{"op": "argmax", "dim": 1}],
                    "argmax of the decoded values: the first NaN's index"),
    "e4m3/neg": (scheme("E4M3"), _E4M3_NAN, _ONE, [{"op": "neg"}], "neg of the decoded values: NaN stays NaN, the "
                                                              "finite values change sign"),
    "e5m2/abs": (scheme("E5M2"), _E5M2_INF, _ONE, [{"op": "abs"}],
                 "E5M2 inf and NaN codes: abs requantizes a tensor whose max is inf"),
    "e5m2/add-scalar": (scheme("E5M2"), _E5M2_INF, _ONE, [{"op": "add_scalar", "value": 0.5}],
                        "inf + 0.5 stays inf, NaN stays NaN: a float result"),
    "e5m2/max-dim": (scheme("E5M2"), _E5M2_INF, _ONE, [{"op": "max_dim", "dim": 1}],
                     "max_dim meets inf and a NaN: q_argmax then q_gather, requantized"),
    "e5m2-block/select-neg": (scheme("E5M2", block=[2, 1], block_dtype="UE4M3"), _E5M2_NAN_BLOCKS,
                              f32([1.0, 0.5, 2.0, 1.0, 0.25, 1.0]),
                              [{"op": "select", "dim": 1, "indices": [0]}, {"op": "neg"}],
                              "select requantizes the blocks, one of them holding a NaN code: its NaN scale goes "
                              "through the kernel's round-up, which keeps 0x7FC00000 (SPIR-V's fp8 decoding) a NaN "
                              "and wraps 0x7FFFE000 (burn's host decoding) to -0.0 (profile field fp8_nan)"),
}


def non_finite_cases():
    """NaN and inf made by a float op or loaded as codes, through the float op and any requantization after it."""
    return [_from_parts(f"float_ops/non-finite/{name}", sch, steps, codes, scales, None, why)
            for name, (sch, codes, scales, steps, why) in NON_FINITE.items()]


def cases():
    return family_cases() + device_cases() + nan_cases() + operand_cases() + non_finite_cases()
