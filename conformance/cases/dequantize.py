"""``dequantize``: ``Tensor::dequantize`` of a tensor rebuilt from codes, scales and global (spec §6, §7.5)."""

from __future__ import annotations

import numpy as np

from . import case, f32, i8, rng, scheme, u8
from .quantize import SHAPES, shape_setup


def _dq(alias, sch, codes, scales, glob=None, dtype="f32", *, tags=(), spec=("§6",), reason=""):
    inputs = {"codes": codes, "scales": scales}
    if glob is not None:
        inputs["global"] = glob
    return case(alias, "dequantize", {"scheme": sch, "dtype": dtype}, inputs, tags=tags, spec=spec, reason=reason)


LEVEL = {
    "tensor": (scheme("Q8S"), f32([0.1]), None),
    "block": (scheme("Q8S", block=[4]), f32(0.1, 0.013, 3.0, 7e-3), None),
    "two-level": (scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F32"), f32(288.0, 448.0, 10.0, 0.00390625),
                  f32([2.6363892e-05])),
}
CODES = i8([[-127, -77, -26, 25, 76, 127, 0, 1], [-128, 3, -3, 100, 64, -64, 7, 99]])


def cases():
    out = [
        _dq("dequantize/q8s/tensor/spec-example", scheme("Q8S"), i8(-127, -77, -26, 25, 76, 127), f32([0.1]),
            spec=("§6", "§10"), reason="burn test should_support_dequantize: x = f32(0.1 * q)"),
        _dq("dequantize/q8s/tensor/int8-example", scheme("Q8S"), i8(-127, -71, 0, 35), f32([0.014173228]),
            spec=("§6", "§10"), reason="burn test test_int8_symmetric_quantization: [-1.8, -1.0062993, 0, 0.496063]"),
    ]
    for level, (sch, scales, glob) in LEVEL.items():
        for dt in ("f32", "f16", "bf16"):
            out.append(_dq(f"dequantize/q8s/{level}/{dt}-output", sch, CODES, scales, glob, dt,
                           spec=("§6",), reason=f"f32(e * q) then {dt}: ndarray cannot build {dt} tensors, flex "
                                                "rounds the f32 product once, the GPU's one-level kernel rounds "
                                                "the scale to the output dtype first" if dt != "f32" else
                           "e * q in f32 is the same single product on every backend (two-level e = global * s)"))
        zero = scales.copy()
        zero[0] = 0.0
        out.append(_dq(f"dequantize/q8s/{level}/zero-scale", sch, CODES, zero, glob, tags=("class:zero-scale",),
                       spec=("§6", "§5.2"),
                       reason="a stored scale of 0: ndarray's strategy substitutes 0.1 (valid_scale), flex and "
                              "the GPU multiply by 0"))
    for tag, shape, block, note in SHAPES:
        alias = f"dequantize/q8s/shape/{tag}"
        sch, scales, _, _, r = shape_setup(alias, shape, block)
        codes = r.integers(-127, 128, size=shape).astype(np.int8)
        out.append(_dq(alias, sch, codes, scales, spec=("§1.8", "§6"), reason=note or f"a {tag} tensor"))
    r = rng("dequantize/q8s/block-2x4-on-4x8/random-scales")
    out.append(_dq("dequantize/q8s/block-2x4-on-4x8/random-scales", scheme("Q8S", block=[2, 4]),
                   r.integers(-128, 128, size=(4, 8)).astype(np.int8),
                   np.exp(r.uniform(-8, 3, size=(2, 2))).astype(np.float32), spec=("§1.8", "§6"),
                   reason="N-D blocks with distinct non-power-of-two scales: flat chunks would pick wrong scales"))
    for value, store in (("Q4S", "Native"), ("Q2S", "Native"), ("E4M3", "Native"), ("E5M2", "Native"),
                         ("Q4S", ("PackedU32", 0)), ("Q8S", ("PackedU32", 0)), ("E2M1", ("PackedNative", 0))):
        sname = store if isinstance(store, str) else f"{store[0]}-{store[1]}"
        codes = i8([0, 1, 2, 3, 0x38, 0x7E, -1, -8]) if value in ("E4M3", "E5M2") else i8([0, 1, -1, 2, -2, 3, 5, 7])
        if value == "Q2S":
            codes = i8([0, 1, -1, 1, -1, 0, 1, 0])
        if value == "E2M1":
            codes = i8([0, 1, 2, 3, 4, 5, 6, 7])
        out.append(_dq(f"dequantize/{value.lower()}-{sname.lower()}/tensor/support", scheme(value, store=store),
                       codes, f32([0.5]), spec=("§6", "§7.5", "§8 #30"),
                       reason=f"{value} {sname}: ndarray reloads only Q8F/Q8S; the GPU decodes fp8/fp4 bit patterns; "
                              "flex multiplies the stored integers"))
    out.append(_dq("dequantize/q8s-lookup/tensor/support", scheme("Q8S", mode="Lookup"), CODES[0], f32([0.5]),
                   spec=("§6", "§7.5", "§8 #45"), reason="Lookup data cannot be reloaded"))
    sch, scales, glob = LEVEL["two-level"]
    out += [
        _dq("dequantize/q8s/two-level/no-global", sch, CODES, scales, None, spec=("§7.1", "§8 #5"),
            reason="a two-level tensor without its global cannot be built"),
        _dq("dequantize/q8s/block/global-given", LEVEL["block"][0], CODES, LEVEL["block"][1], f32([2.0]),
            spec=("§7.1", "§8 #6"), reason="a one-level tensor with a global cannot be built"),
        _dq("dequantize/q8s/block/too-few-scales", LEVEL["block"][0], CODES, f32(0.1, 0.2, 0.3),
            spec=("§7.2", "§8 #2"),
            reason="3 scales for 4 blocks: the bytes split at the wrong place on reload"),
        _dq("dequantize/q8s/tensor-ue8m0/support", scheme("Q8S", tensor="UE8M0"), CODES, f32([0.25]),
            spec=("§4.2", "§8 #13", "§11"), reason="UE8M0 stored scales have no codec before burn 0.22.0"),
    ]
    out += [
        _dq("dequantize/e4m3/tensor/minifloat-values", scheme("E4M3"),
            u8(0x7E, 0x38, 0x01, 0xC4, 0x7F, 0x80, 0x00, 0xFE).view(np.int8), f32([2.0]), spec=("§6", "§11"),
            reason="flex 0.23.0-pre.1 decodes a minifloat code by value (quant_codes.rs:48-56): 0x7E = 448, 0xC4 = "
                   "-3, 0x7F = NaN, times the scale; 0.22 flex multiplies the code as an integer"),
        _dq("dequantize/e5m2/tensor/minifloat-values", scheme("E5M2"),
            u8(0x7B, 0x3C, 0x01, 0x7C, 0xFC, 0x7E, 0x80, 0x42).view(np.int8), f32([1.0]), spec=("§6", "§11"),
            reason="E5M2 codes by value: 0x7B = 57344, 0x01 = 2^-16, 0x7C = +inf, 0xFC = -inf, 0x7E = NaN"),
        _dq("dequantize/e2m1/tensor/high-nibble", scheme("E2M1"),
            u8(0x01, 0x07, 0x0D, 0xF1, 0x08, 0x0F, 0x72, 0x05).view(np.int8), f32([0.5]), spec=("§6", "§11"),
            reason="an E2M1 code is read from the low nibble of its byte (quant_codes.rs:54-55, burn's test: 0xF1 "
                   "is 0.5): 0x0D = -3, 0x0F = -6"),
    ]
    # burn 0.22.1's GPU packed dequantize decodes a minifloat field by value (cubek-quant-0.3.1 dequantize.rs:123-131,
    # measured on lavapipe); 0.22.0-pre.3's sign-extended every field into an integer.
    out += [
        _dq("dequantize/e4m3-packed/tensor/minifloat-values", scheme("E4M3", store=("PackedU32", 0)),
            u8(0x7E, 0x2A, 0x08, 0x01, 0xC4, 0x80, 0x44, 0x00).view(np.int8), f32([2.0]), spec=("§6", "§11"),
            reason="E4M3 fields of PackedU32 words: burn 0.22.1's GPU decodes them by value (0x7E = 448, 0x2A = "
                   "0.3125, 0x08 = 2^-6, 0x01 = 2^-9, 0xC4 = -3, 0x80 = -0), times the scale 2; 0.22.0-pre.3's GPU "
                   "read the integers 126, 42, 8, 1, -60, -128"),
        _dq("dequantize/e5m2-packed/tensor/minifloat-values", scheme("E5M2", store=("PackedU32", 0)),
            u8(0x7B, 0x3C, 0x01, 0x7C, 0xFC, 0x42, 0x80, 0x00).view(np.int8), f32([1.0]), spec=("§6", "§11"),
            reason="E5M2 fields of PackedU32 words by value on burn 0.22.1's GPU: 0x7B = 57344, 0x3C = 1, 0x01 = "
                   "2^-16, 0x7C = +inf, 0xFC = -inf, 0x42 = 3"),
    ]
    return out

