"""``to_bytes`` / ``from_bytes``: the byte layout of a quantized TensorData (spec §7.1, §7.2, §7.4)."""

from __future__ import annotations

import numpy as np

import oracle as o
from oracle import QuantScheme

from . import case, f16, f32, i8, rng, scheme, u8

# The bytes a from_bytes vector reads are those burn-std 0.23.0-pre.1 writes (this profile packs in lines).
PACKED_LINES = "burn-0.23.0-pre.1/flex"
TWO_LEVEL = scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F32")


def _tb(alias, sch, codes, scales, glob=None, *, tags=(), spec=("§7.1",), reason=""):
    inputs = {"codes": codes, "scales": scales}
    if glob is not None:
        inputs["global"] = glob
    return case(alias, "to_bytes", {"scheme": sch}, inputs, tags=tags, spec=spec, reason=reason)


def _fb(alias, sch, shape, data, *, tags=(), spec=("§7.2",), reason=""):
    return case(alias, "from_bytes", {"scheme": sch, "shape": list(shape)}, {"bytes": data}, tags=tags, spec=spec,
                reason=reason)


EX1 = u8(0x81, 0xB9, 0x00, 0x23, 0xD4, 0x36, 0x68, 0x3C)
EX2 = u8(0x00, 0x19, 0x33, 0x4C, 0x66, 0x7F, 0x80, 0xFF, 0x30, 0x20, 0x00, 0x00, 0x40, 0x40)


def cases():
    codes8 = i8(0, 25, 51, 76, 102, 127, -128, -1)
    r = rng("to_bytes/q8s/block-2x4-bf16/random")
    out = [
        _tb("to_bytes/q8s/tensor/spec-example", scheme("Q8S"), i8(-127, -71, 0, 35), f32([0.014173228]),
            spec=("§7.1", "§7.4"), reason="spec §7.4 example 1: 81 B9 00 23 | D4 36 68 3C"),
        _tb("to_bytes/q8s/two-level-ue4m3/spec-example", TWO_LEVEL, codes8, f32(0.5, 0.125), f32([3.0]),
            spec=("§7.1", "§7.4"), reason="spec §7.4 example 2: 14 bytes, no padding between regions"),
        _tb("to_bytes/q8s/block-4-f16/spec-example", scheme("Q8S", block=[4], block_dtype="F16"), codes8[:4],
            f32([0.014175415]), spec=("§7.4",), reason="spec §7.4 example 4: F16 scale bytes 42 23"),
        _tb("to_bytes/q8s/block-2x4-bf16/random", scheme("Q8S", block=[2, 4], block_dtype="BF16"),
            r.integers(-128, 128, size=(4, 8)).astype(np.int8), np.exp(r.uniform(-5, 5, (2, 2))).astype(np.float32),
            spec=("§7.1", "§4.2"), reason="BF16 block scales off the grid are stored round-to-nearest-even"),
        _tb("to_bytes/q8s/tensor/extra-scales", scheme("Q8S"), codes8, f32(0.5, 0.25, 0.125), spec=("§7.1",),
            reason="per-tensor data stores only scales[0]"),
        _tb("to_bytes/q8s/block-4/extra-scales", scheme("Q8S", block=[4]), codes8, f32(0.5, 0.25, 0.125),
            spec=("§7.1",), reason="block data stores *all* given scales (no count check)"),
        _tb("to_bytes/q8s/tensor/no-scale", scheme("Q8S"), codes8, np.zeros((0,), np.float32), spec=("§7.4b",),
            reason="per-tensor &scales[..1] of an empty slice"),
        _tb("to_bytes/q8s/two-level/no-global", TWO_LEVEL, codes8, f32(0.5, 0.125), spec=("§7.1", "§8 #5"),
            reason="a two-level scheme requires a per-tensor scale"),
        _tb("to_bytes/q8s/block-4/global-given", scheme("Q8S", block=[4]), codes8, f32(0.5, 0.125), f32([3.0]),
            spec=("§7.1", "§8 #6"), reason="a one-level scheme does not take a per-tensor scale"),
        _tb("to_bytes/q8s/two-level-global-f16/refused", scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F16"),
            codes8, f32(0.5, 0.125), f32([3.0]), spec=("§7.1", "§8 #4"),
            reason="a two-level scheme stores its per-tensor scale as f32"),
        _tb("to_bytes/q4s-packed/tensor/not-packed", scheme("Q4S", store=("PackedU32", 0)), i8(0, 1, -1, 7, -7, 3, 2, 1),
            f32([0.5]), spec=("§7.1",), reason="0.22.0-pre.3 writes one i8 per value even for PackedU32 (no packing)"),
        _tb("to_bytes/q8s/block-4-ue8m0/support", scheme("Q8S", block=[4], block_dtype="UE8M0"), codes8,
            f32(0.5, 4.0), spec=("§4.2", "§8 #13", "§11"), reason="UE8M0 scale bytes: none before 0.22.0"),
        _tb("to_bytes/q8s/block-4-ue4m3/off-grid", scheme("Q8S", block=[4], block_dtype="UE4M3"), codes8,
            f32(0.3, 10.000001), spec=("§4.2",),
            reason="scales handed to TensorData::quantized off the UE4M3 grid are encoded round-to-nearest-even "
                   "(0.3 -> 0.3125 by proximity, 10.000001 -> 10), not rounded up"),
        _fb("from_bytes/q8s/tensor/spec-example", scheme("Q8S"), (4,), EX1, spec=("§7.2", "§7.4"),
            reason="spec §7.4 example 1 read back"),
        _fb("from_bytes/q8s/two-level-ue4m3/spec-example", TWO_LEVEL, (8,), EX2, spec=("§7.2", "§7.4"),
            reason="spec §7.4 example 2 read back: scales [0.5, 0.125], global 3.0"),
        _fb("from_bytes/q8s/two-level-ue4m3/truncated", TWO_LEVEL, (8,), EX2[:5], spec=("§7.2", "§8 #9"),
            reason="a buffer shorter than its parameters (6 bytes) panics"),
        _fb("from_bytes/q8s/two-level-ue4m3/short-values", TWO_LEVEL, (8,), EX2[2:], spec=("§7.2",),
            reason="a buffer missing value bytes but not parameter bytes: the values region just comes out short"),
        _fb("from_bytes/q8s/tensor/extra-bytes", scheme("Q8S"), (4,), np.concatenate([u8(1, 2), EX1]),
            spec=("§7.2",), reason="all bytes before the parameters are values (6 values for a 4-element shape)"),
        _fb("from_bytes/q8s/tensor/empty", scheme("Q8S"), (4,), np.zeros((0,), np.uint8), spec=("§7.2", "§8 #9"),
            reason="an empty buffer"),
        _fb("from_bytes/q4s-packed/tensor/unpacked-flat", scheme("Q4S", store=("PackedU32", 0)), (16,),
            np.concatenate([u8(0x10, 0x32, 0x54, 0x76, 0xFF, 0xFF, 0xFF, 0xFF), u8(0, 0, 0, 0x3F)]),
            spec=("§7.2", "§7.3"), reason="PackedU32 Q4 words are unpacked flat, lsb first: 0x76543210 -> 0..7"),
        _fb("from_bytes/q2s-packed/tensor/unpacked-flat", scheme("Q2S", store=("PackedU32", 0)), (20,),
            np.concatenate([u8(0x1B, 0xE4, 0x00, 0xFF, 0x55, 0, 0, 0), u8(0, 0, 0x80, 0x3F)]),
            spec=("§7.2", "§7.3"), reason="Q2 fields sign-extend: 0b11 -> -1, 0b10 -> -2; 20 values from 2 words"),
        _fb("from_bytes/q4s-packed/tensor/not-word-multiple", scheme("Q4S", store=("PackedU32", 0)), (8,),
            np.concatenate([u8(0x10, 0x32, 0x54), u8(0, 0, 0, 0x3F)]), spec=("§7.2",),
            reason="a values region that is not whole u32 words"),
        _fb("from_bytes/q8s-packed-d1/tensor/refused", scheme("Q8S", store=("PackedU32", 1)), (4,), EX1,
            spec=("§7.2", "§8 #10"), reason="PackedU32(1): packing must be on the innermost dimension"),
        _fb("from_bytes/e4m3-packed/tensor/refused", scheme("E4M3", store=("PackedU32", 0)), (4,), EX1,
            spec=("§7.2", "§8 #11"), reason="PackedU32 E4M3 is not yet supported"),
        _fb("from_bytes/e2m1-packed-native/tensor/refused", scheme("E2M1", store=("PackedNative", 0)), (4,), EX1,
            spec=("§7.2", "§8 #11"), reason="PackedNative is not yet supported on the CPU"),
        _fb("from_bytes/q8s-packed/tensor/raw-words", scheme("Q8S", store=("PackedU32", 0)), (4,), EX1,
            spec=("§7.2",), reason="PackedU32 Q8 bytes are read as plain i8 values (little-endian words)"),
        _fb("from_bytes/q8s/block-4-ue8m0/support", scheme("Q8S", block=[4], block_dtype="UE8M0"), (8,),
            np.concatenate([codes8.view(np.uint8), u8(126, 129)]), spec=("§4.2", "§8 #13", "§11"),
            reason="UE8M0 scale bytes decode as 2^(b-127) from 0.22.0 on"),
        _fb("from_bytes/q8s/block-2x4-f16/rank-2", scheme("Q8S", block=[2, 4], block_dtype="F16"), (4, 8),
            np.concatenate([np.arange(32, dtype=np.uint8), f16(0.5, 0.25, 0.125, 2.0).view(np.uint8)]),
            spec=("§7.2",), reason="the scale count comes from the block grid of the shape ([2, 2] here)"),
    ]
    return out + _packed_lines()


# burn-std 0.23.0-pre.1 packs the values of a PackedU32 / PackedNative store inside QuantizedBytes::new
# (quantization/packing.rs:83-177): the packed dim d (from the innermost) is swapped innermost, each line along it
# packed into little-endian words (u32 for PackedU32, the value's native pack for PackedNative: a byte of two E2M1
# codes, a byte per other value), every line padded to whole words; block scales of a scheme packed along an outer
# dim are stored in that order too (:32-43). Burn 0.22 writes one i8 per value whatever the store. The words below
# are worked by hand from that layout.
def _packed_lines():
    q4 = i8([[1, 2, 3, 4, 5], [-1, -2, -3, -4, -5], [7, -7, 0, 6, -8]])
    q8 = i8(np.arange(24) - 12).reshape(4, 6)
    e2m1 = i8([[0x1, 0x2, 0x3, 0x4, 0x5], [0x9, 0xA, 0xB, 0xC, 0xF]])
    cases = [
        ("q4s-packed/rank-2/padded-lines", scheme("Q4S", store=("PackedU32", 0)), q4, f32([0.5]),
         "3 rows of 5 Q4 codes: one word per row (0x00054321, 0x000BCDEF, 0x00086097), its top 3 nibbles padding"),
        ("q4s-packed-d1/rank-2/outer-dim", scheme("Q4S", store=("PackedU32", 1)), q4, f32([0.5]),
         "PackedU32(1) packs the columns: 5 lines of 3 codes, one word each"),
        ("q8s-packed/rank-2/whole-lines", scheme("Q8S", store=("PackedU32", 0)), q8, f32([0.25]),
         "rows of 6 Q8 codes take 2 words: 2 bytes of padding per row"),
        ("q4s-packed-d1/rank-2/whole-lines", scheme("Q4S", store=("PackedU32", 1)),
         i8(np.arange(16) % 15 - 7).reshape(8, 2), f32([0.5]), "columns of 8 Q4 codes fill one word each"),
        ("q8s-packed-d1/block-2x2/scale-order", scheme("Q8S", store=("PackedU32", 1), block=[2, 2]), q8,
         f32([[1, 2, 3], [4, 5, 6]]),
         ("packed along dim 0: columns of 4 codes (one word each), and the [2, 3] block scales stored column by "
         "column: 1, 4, 2, 5, 3, 6")),
        ("e2m1-packed-native/rank-2/nibble-pairs", scheme("E2M1", store=("PackedNative", 0)), e2m1, f32([1.0]),
         "two E2M1 codes per byte, first in the low nibble; 5 codes take 3 bytes per row"),
        ("e2m1-packed-native/rank-2/whole-lines", scheme("E2M1", store=("PackedNative", 0)), e2m1[:, :4],
         f32([1.0]), "4 codes per row: 2 whole bytes"),
        ("e2m1-packed-native-d1/rank-2/padded-lines", scheme("E2M1", store=("PackedNative", 1)), e2m1.T.copy(),
         f32([1.0]), "PackedNative(1) on [5, 2]: 2 columns of 5 codes, 3 bytes each"),
        ("q8s-packed-native-d1/rank-2/transposed", scheme("Q8S", store=("PackedNative", 1)), q8[:2, :3].copy(),
         f32([1.0]), "a byte per Q8 code, column by column"),
    ]
    out = []
    for name, sch, codes, scales, why in cases:
        out.append(_tb(f"to_bytes/{name}", sch, codes, scales, spec=("§7.1", "§11"), reason=why))
    for name in ("q4s-packed/rank-2/padded-lines", "q8s-packed-d1/block-2x2/scale-order",
                 "e2m1-packed-native/rank-2/nibble-pairs"):
        _, sch, codes, scales, _why = next(c for c in cases if c[0] == name)
        data = o.to_bytes(o.QTensor(codes, scales.ravel(), None, QuantScheme.from_json(sch)),
                          profile=PACKED_LINES)
        out.append(_fb(f"from_bytes/{name}", sch, codes.shape, data, spec=("§7.2", "§11"),
                       reason="the bytes burn 0.23 writes for this tensor (to_bytes vector of the same name), read "
                              "back: codes and row-major scales"))
    out.append(_tb("to_bytes/q4s-packed-d1/rank-1/no-such-dim", scheme("Q4S", store=("PackedU32", 1)),
                   i8(1, 2, 3, 4, 5, 6, 7, -1), f32([0.5]), spec=("§7.1", "§11"),
                   reason="packing along dim 1 of a rank-1 tensor: burn-std 0.23 PackedOrder::new asserts the dim "
                          "exists (quantization/packing.rs:90-95); 0.22 writes one byte per value"))
    out.append(_fb("from_bytes/q4s-packed-d1/rank-1/invalid-layout", scheme("Q4S", store=("PackedU32", 1)), (8,),
                   u8(0x10, 0x32, 0x54, 0x76, 0, 0, 0, 0x3F), spec=("§7.2", "§11"),
                   reason="burn-std 0.23 TensorData::from_bytes has no layout for a dim-1 packing of a rank-1 tensor "
                          "(data/tensor/base.rs:252-262); 0.22 asserts packing on the innermost dim"))
    return out
