"""``qlayout`` and ``quantize_view``: quantized tensors in motion (spec §9) and quantizing non-contiguous views.

Inputs are drawn independently of the oracle: random codes and random scales on each level's scale grid, so the
vectors pin what burn does with *any* held tensor (a transposed block grid, a kept scale list, a requantization)
rather than with the oracle's own quantization of something.
"""

from __future__ import annotations

import numpy as np

from . import case, f32, rng, scheme

SHAPE = (4, 8)

# level -> (scheme, number of block scales for SHAPE, scale sampler)
LEVELS = {
    "tensor": scheme("Q8S"),
    "block": scheme("Q8S", block=[4]),
    "block-2x4": scheme("Q8S", block=[2, 4]),
    "two-level": scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F32"),
}
_UE4M3_GRID = (448.0, 288.0, 240.0, 104.0, 26.0, 10.0, 3.25, 0.875, 0.01953125)

T, RESHAPE_ROWS = {"op": "transpose"}, {"op": "reshape", "shape": [8, 4]}
STEPS = {
    # alias segment: (steps, why)
    "reshape-8x4": ([RESHAPE_ROWS], "rows of 8 become rows of 4: 1-D blocks of 4 stay whole and in order"),
    "reshape-2x16": ([{"op": "reshape", "shape": [2, 16]}], "rows of 8 merge into rows of 16 (#4659)"),
    "reshape-16x2": ([{"op": "reshape", "shape": [16, 2]}],
                     "rows of 2 split every 4-block across rows (#4659: 'would split a block across rows')"),
    "unsqueeze": ([{"op": "reshape", "shape": [1, 4, 8]}], "a leading unit dim keeps every block"),
    "transpose": ([T], "the block grid must follow the axes (#5278)"),
    "swap-dims": ([{"op": "swap_dims", "dims": [1, 0]}], "swap_dims(1, 0) is transpose on rank 2"),
    "permute-3d": ([{"op": "reshape", "shape": [2, 2, 8]}, {"op": "permute", "axes": [2, 0, 1]}],
                   "a rank-3 permutation after an unsqueezing reshape"),
    "flip-rows": ([{"op": "flip", "axes": [0]}], "flip along rows: 1-D blocks keep their elements, in other rows"),
    "flip-cols": ([{"op": "flip", "axes": [1]}], ("flip along the blocked axis: each block's elements move to the "
                                                 "mirrored block")),
    "flip-both": ([{"op": "flip", "axes": [0, 1]}], "flip along both axes at once: every element to the mirrored "
                                                     "position of the whole tensor (issue 26)"),
    "slice-rows": ([{"op": "slice", "ranges": [[1, 3, 1], [0, 8, 1]]}], ("rows 1..3: the scales of rows 0 and 3 "
                                                                      "must go")),
    "slice-cols": ([{"op": "slice", "ranges": [[0, 4, 1], [4, 8, 1]]}], "the second block of every row"),
    "slice-stepped": ([{"op": "slice", "ranges": [[0, 4, 2], [1, 8, 3]]}], ("steps of 2 and 3 on both dims: rows 0 "
                                                                         "and 2, columns 1, 4 and 7")),
    "select-rows": ([{"op": "select", "dim": 0, "indices": [3, 0]}], "rows 3 and 0, in that order"),
    "select-cols": ([{"op": "select", "dim": 1, "indices": [0, 5, 6, 7]}], "columns across two blocks"),
    "repeat-dim": ([{"op": "repeat_dim", "dim": 0, "times": 2}], "the default dequantize -> repeat -> requantize"),
    "gather": ([{"op": "gather", "dim": 1, "indices": [7, 0, 3, 4] * 4, "shape": [4, 4]}],
               "Dispatch does not forward q_gather: the trait default requantizes, even on CPU"),
    "cat": ([{"op": "cat", "dim": 1, "copies": 2}], "q_cat dequantizes, concatenates and requantizes"),
    "cat-rows": ([{"op": "cat", "dim": 0, "copies": 2}], "cat along the first dim: the copies stack as new rows"),
    "repeat-cols": ([{"op": "repeat_dim", "dim": 1, "times": 2}], "repeat along the last dim: each row tiled"),
    "gather-rows": ([{"op": "gather", "dim": 0, "indices": [3, 0, 1, 2, 2, 1, 0, 3] * 2, "shape": [2, 8]}],
                    "gather along the first dim: each column reads its own rows"),
    "expand": ([{"op": "reshape", "shape": [1, 4, 8]}, {"op": "expand", "shape": [2, 4, 8]}],
               "burn-tensor's expand dequantizes: the result is a float tensor"),
    "mul-scalar": ([{"op": "mul_scalar", "value": 2.0}], "arithmetic on a quantized tensor returns floats (q * 2)"),
    "matmul": ([{"op": "matmul", "rhs": [round(0.25 * ((7 * i) % 11) - 1.25, 2) for i in range(24)],
                 "shape": [8, 3]}], "q.matmul(f): dequantize, then a float GEMM (a float result)"),
    "transpose-twice": ([T, T], "transposing back must give the input exactly"),
    "reshape-transpose": ([RESHAPE_ROWS, T], "a reshape that keeps blocks, then a transpose"),
    "transpose-flip": ([T, {"op": "flip", "axes": [0]}], "a transposed grid, then a flip"),
}


def _scales(level: str, r: np.random.Generator) -> tuple[np.ndarray, np.ndarray | None]:
    if level == "tensor":
        return f32([np.float32(r.uniform(0.005, 0.05))]), None
    n = {"block": 8, "block-2x4": 4, "two-level": 8}[level]
    if level == "two-level":
        return f32(r.choice(_UE4M3_GRID, size=n)), f32([2.6363892e-05])
    return np.exp(r.uniform(-6, 1, size=n)).astype(np.float32), None


def _ql(alias, sch, steps, codes, scales, glob, *, reason, spec=("§9",), tags=()):
    inputs = {"codes": codes, "scales": scales}
    if glob is not None:
        inputs["global"] = glob
    return case(alias, "qlayout", {"scheme": sch, "steps": steps}, inputs, tags=tags, spec=spec, reason=reason)


def qlayout_cases():
    out = []
    for level, sch in LEVELS.items():
        for name, (steps, why) in STEPS.items():
            alias = f"qlayout/q8s/{level}/{name}"
            r = rng(alias)
            codes = r.integers(-127, 128, size=SHAPE).astype(np.int8)
            scales, glob = _scales(level, r)
            out.append(_ql(alias, sch, steps, codes, scales, glob, reason=why,
                           spec=("§9.1", "§9.2") if level == "tensor" else ("§9.1", "§9.3")))
    # Each block spans its full code range (one +-127 per block), as a quantize_dynamic result does: there flex's
    # requantization finds the same scales again.
    for level in ("block", "block-2x4", "two-level"):
        for name in ("transpose", "flip-cols", "reshape-2x16"):
            alias = f"qlayout/q8s/{level}/{name}/calibrated"
            r = rng(alias)
            sch = LEVELS[level]
            codes = r.integers(-126, 127, size=SHAPE).astype(np.int8)
            extent = (2, 4) if level == "block-2x4" else (1, 4)
            codes[::extent[0], ::extent[1]] = np.where(r.random((SHAPE[0] // extent[0], SHAPE[1] // extent[1])) < 0.5,
                                                       -127, 127)
            scales, glob = _scales(level, r)
            steps, why = STEPS[name]
            out.append(_ql(alias, sch, steps, codes, scales, glob, spec=("§9.1", "§9.3"),
                           reason=f"{why}; every block holds a +-127 code, like a freshly quantized tensor"))
    # Stores and values beyond Native Q8S: what q_from_data makes of them, then a move.
    for value, store, seg in (("Q8S", ("PackedU32", 0), "q8s-packed"), ("Q8S", ("PackedNative", 0), "q8s-packed-native"),
                              ("Q8F", "Native", "q8f"), ("Q4S", "Native", "q4s")):
        for level in ("tensor", "block", "two-level"):
            alias = f"qlayout/{seg}/{level}/transpose"
            r = rng(alias)
            lo, hi = (-8, 8) if value == "Q4S" else (-127, 128)
            codes = r.integers(lo, hi, size=SHAPE).astype(np.int8)
            scales, glob = _scales(level, r)
            sch = (scheme(value, store=store) if level == "tensor" else
                   scheme(value, store=store, block=[4], **({"block_dtype": "UE4M3", "tensor": "F32"}
                                                             if level == "two-level" else {})))
            out.append(_ql(alias, sch, [T], codes, scales, glob, spec=("§9.1", "§7.5"),
                           reason=f"{value} {store}: the store is rewritten to Native on load (ndarray reloads "
                                  "only Q8F/Q8S), then the codes move"))
    return out + form_cases()


def form_cases():
    """FORMS at each level, an empty input, and a matmul whose products overflow f32."""
    out = []
    for level in ("tensor", "block", "two-level"):
        for name, (steps, why) in FORMS.items():
            alias = f"qlayout/q8s/{level}/{name}"
            r = rng(alias)
            scales, glob = _scales(level, r)
            out.append(_ql(alias, LEVELS[level], steps, r.integers(-127, 128, size=SHAPE).astype(np.int8), scales,
                           glob, spec=("§9",), reason=why))
    for name, steps in (("transpose", [T]), ("reshape", [{"op": "reshape", "shape": [0, 2, 4]}]),
                        ("cat", [{"op": "cat", "dim": 0, "copies": 2}])):
        out.append(_ql(f"qlayout/q8s/tensor/empty-input-{name}", LEVELS["tensor"], steps,
                       np.zeros((0, 8), np.int8), f32([0.5]), None, spec=("§9",),
                       reason=f"an empty [0, 8] quantized tensor, then {name}: what burn keeps of it (a reshape "
                              "to [0, 2, 4] is an empty dim in every release; cat of empties is a float tensor)"))
    alias = "qlayout/q8s/tensor/matmul-overflow-one-sign"
    codes = rng(alias).integers(64, 128, size=SHAPE).astype(np.int8)
    codes[::2] *= -1  # rows of one sign each: +inf and -inf
    out.append(_ql(alias, LEVELS["tensor"], [{"op": "matmul", "rhs": [2.0**127] * 8, "shape": [8, 1]}],
                   codes, f32([0.5]), None, spec=("§9",),
                   reason="every product of a row has one sign and exceeds f32::MAX: any f32 GEMM gives -inf or "
                          "+inf whatever its order (products of both signs would leave the answer to the order: "
                          "undefined, oracle.views.check_gemm_order); one rhs column, so WGSL's kernel name keeps "
                          "vector size 1 (an even N widens it, not modelled)"))
    return out


# Argument forms of burn's public ``Tensor`` API beyond the plain ones (issue 22; the fuzzer draws them all): what
# each release reads them as, and the answers burn gives for results with no element.
FORMS = {
    "slice-negative-bounds": ([{"op": "slice", "ranges": [[-3, -1, 1], [-8, 8, 1]]}],
                              "negative bounds count from the end (convert_signed_index): rows 1 and 2"),
    "slice-reversed": ([{"op": "slice", "ranges": [[0, 4, -1]]}],
                       "a negative step walks the range from its last element (burn's Slice, not numpy's): rows "
                       "3, 2, 1, 0; the trailing dim is not named, so it is kept whole"),
    "slice-reversed-stepped": ([{"op": "slice", "ranges": [[0, 4, 1], [1, 8, -3]]}],
                               "step -3 over 1..8 takes 7, 4, 1 (numpy's slice(1, 8, -3) would take nothing)"),
    "slice-clamped": ([{"op": "slice", "ranges": [[-10, 3, 2], [-20, -6, 1]]}],
                      "bounds past either end are clamped: rows 0 and 2, columns 0 and 1"),
    "slice-empty": ([{"op": "slice", "ranges": [[3, 1, 1]]}],
                    "start >= end is an empty slice: burn-tensor answers with K::empty, a float tensor [0, 8], "
                    "before any backend sees the call"),
    "slice-empty-transposed": ([{"op": "slice", "ranges": [[0, 4, 1], [5, 5, 1]]}, T],
                               "an empty [4, 0] float tensor, then a float transpose: [0, 4]"),
    "repeat-dim-zero": ([{"op": "repeat_dim", "dim": 1, "times": 0}],
                        "repeat_dim(_, 0) is burn-tensor's K::empty as well: a float [4, 0]"),
    "select-none": ([{"op": "select", "dim": 0, "indices": []}],
                    "select with no index reaches the backend: an empty tensor that stays quantized"),
    "select-none-cat": ([{"op": "select", "dim": 0, "indices": []}, {"op": "cat", "dim": 0, "copies": 2}],
                        "cat of tensors all empty along the dim is burn-tensor's K::empty: a float [0, 8] (found by "
                        "fuzzing: the oracle had requantized)"),
    "select-repeated": ([{"op": "select", "dim": 1, "indices": [6, 6, 1, 6]}],
                        "a repeated index repeats its column (and its block's scale)"),
    "reshape-zero": ([{"op": "reshape", "shape": [0, 2, 4]}],
                     "a 0 in a reshape Shape: until 0.22.1 the source's dim 0 (a [4, 2, 4] tensor); 0.23.0-pre.1 "
                     "reads an empty dim and its element-count check panics (tensor.reshape_count)"),
    "reshape-zero-past-rank": ([{"op": "reshape", "shape": [4, 8, 0]}],
                               "a 0 past the source's rank: until 0.22.1 Shape::reshape indexes the source's dims "
                               "out of bounds (tensor.reshape_zero_index); 0.23.0-pre.1's count check panics"),
    "matmul-empty": ([{"op": "slice", "ranges": [[0, 4, 1], [3, 3, 1]]}, {"op": "matmul", "rhs": [], "shape": [0, 3]}],
                     "a float [4, 0] @ [0, 3]: zeros from flex; burn-ndarray divides its batch count by m*k = 0 "
                     "(ndarray.matmul_empty; found by fuzzing)"),
}

VIEWS = {
    "transposed": ([T], "#4491: quantizing a transposed (non-contiguous) tensor"),
    "permuted": ([{"op": "reshape", "shape": [2, 2, 8]}, {"op": "permute", "axes": [1, 0, 2]}],
                 "a permuted rank-3 view (the blocked last axis stays last)"),
    "sliced": ([{"op": "slice", "ranges": [[0, 4, 1], [2, 6, 1]]}], "a column slice: strided rows"),
    "stepped": ([{"op": "slice", "ranges": [[0, 4, 2], [0, 8, 1]]}], "every other row (a step of 2)"),
    "flipped": ([{"op": "flip", "axes": [1]}], "a flipped view (negative strides where the backend has them)"),
    "flipped-both": ([{"op": "flip", "axes": [0, 1]}], "a view flipped along both axes"),
    "expanded": ([{"op": "slice", "ranges": [[1, 2, 1], [0, 8, 1]]}, {"op": "expand", "shape": [4, 8]}],
                 "a broadcast view: one row repeated with stride 0"),
    "reversed": ([{"op": "slice", "ranges": [[0, 4, 1], [0, 8, -1]]}],
                 "a negative step: each row read backwards (burn's Slice walks 0..8 from 7)"),
    "negative-bounds": ([{"op": "slice", "ranges": [[-4, -2, 1], [-8, 8, 1]]}],
                        "rows 0 and 1 named from the end"),
    "reshape-zero": ([{"op": "reshape", "shape": [0, 2, 4]}],
                     "a 0 in the target: the source's dim until 0.22.1, 0.23.0-pre.1's count-check panic"),
}


def quantize_view_cases():
    out = []
    for level, sch in LEVELS.items():
        for name, (view, why) in VIEWS.items():
            alias = f"quantize_view/q8s/{level}/{name}"
            x = rng(alias).standard_normal(SHAPE).astype(np.float32)
            out.append(case(alias, "quantize_view", {"scheme": sch, "view": view}, {"x": x},
                            spec=("§5.1", "§9"), reason=why))
    alias = "quantize_view/q8s/block-8/transposed-not-whole"
    out.append(case(alias, "quantize_view", {"scheme": scheme("Q8S", block=[8]), "view": [T]},
                    {"x": rng(alias).standard_normal(SHAPE).astype(np.float32)}, spec=("§2", "§8", "§9"),
                    reason="blocks of 8 tile the [4, 8] tensor but not its [8, 4] transpose: calibration refuses "
                           "the view"))
    return out


def cases():
    return qlayout_cases() + quantize_view_cases()
