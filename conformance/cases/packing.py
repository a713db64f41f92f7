"""``pack_u32`` / ``unpack_u32``: bit-level packing of codes into little-endian u32 words (spec §7.3)."""

from __future__ import annotations

import numpy as np

from . import case, i8, rng, u32


def cases():
    r = rng("pack_u32/q4s/random-130")
    out = [
        case("pack_u32/q8s/spec-example", "pack_u32", {"value": "Q8S"}, {"codes": i8(-128, 2, -3, 127)},
             spec=("§7.3", "§10"), reason="burn test should_pack_i8s_to_u32: 2147287680"),
        case("pack_u32/q8s/padded", "pack_u32", {"value": "Q8S"}, {"codes": i8(-128, 2, -3, 127, 55)},
             spec=("§7.3", "§10"), reason="a partial last word is zero-padded: [2147287680, 55]"),
        case("pack_u32/q4s/arange", "pack_u32", {"value": "Q4S"}, {"codes": i8(0, 1, 2, 3, 4, 5, 6, 7, -1, -2, -7, -8)},
             spec=("§7.3", "§7.4"), reason="nibbles lsb first: 0..7 -> 0x76543210; negative codes keep 4 bits"),
        case("pack_u32/q2s/fields", "pack_u32", {"value": "Q2S"}, {"codes": i8([1, -1, 0, -2] * 5)},
             spec=("§7.3",), reason="16 two-bit fields per word, lsb first, two's complement"),
        case("pack_u32/e2m1/nibbles", "pack_u32", {"value": "E2M1"}, {"codes": i8(0, 1, 7, 8, 15, 9, 2, 3)},
             spec=("§7.3",), reason="E2M1 bit patterns pack like 4-bit integers"),
        case("pack_u32/q4s/random-130", "pack_u32", {"value": "Q4S"},
             {"codes": r.integers(-8, 8, size=130).astype(np.int8)}, spec=("§7.3",),
             reason="130 random Q4 codes (PCG64 from the alias): 17 words, the last one padded"),
        case("unpack_u32/q4s/spec-example", "unpack_u32", {"value": "Q4S", "numel": 8}, {"words": u32(286331136)},
             spec=("§7.3",), reason="0x11111100 -> [0, 0, 1, 1, 1, 1, 1, 1]"),
        case("unpack_u32/q4s/arange-words", "unpack_u32", {"value": "Q4S", "numel": 128},
             {"words": u32([0x76543210] * 8 + [0xFEDCBA98] * 8)}, spec=("§7.3", "§10"),
             reason="sign extension: 0x8..0xF -> -8..-1"),
        case("unpack_u32/q2s/sign-extension", "unpack_u32", {"value": "Q2S", "numel": 20},
             {"words": u32(0xE4E4E4E4, 0x000000FF)}, spec=("§7.3",), reason="0b11 -> -1, 0b10 -> -2, 0b01 -> 1"),
        case("unpack_u32/q8s/bytes", "unpack_u32", {"value": "Q8S", "numel": 5},
             {"words": u32(2147287680, 55)}, spec=("§7.3",), reason="8-bit fields; the padding of the last word "
                                                                 "is dropped"),
        case("unpack_u32/q4s/surplus-words", "unpack_u32", {"value": "Q4S", "numel": 4},
             {"words": u32(0x76543210, 0xFEDCBA98)}, spec=("§7.3",),
             reason="more words than numel needs: release builds wrap the subtraction and yield whole words"),
        case("unpack_u32/e2m1/nibbles-unsigned", "unpack_u32", {"value": "E2M1", "numel": 8},
             {"words": u32(0xFEDCBA98)}, spec=("§7.3", "§11"),
             reason="burn-std 0.23.0-pre.1 keeps a float field's bits (quantization/packing.rs:69-77): E2M1 codes "
                    "8..15 stay 8..15; 0.22's unpacker sign-extends every 4-bit field to -8..-1"),
        case("unpack_u32/q4s/short-words", "unpack_u32", {"value": "Q4S", "numel": 9}, {"words": u32(0x76543210)},
             spec=("§7.3", "§11"),
             reason="9 Q4 codes need 2 words: burn-std 0.23.0-pre.1 asserts the values' byte count "
                    "(quantization/base.rs:326-332); 0.22 unpacks the one word it is given"),
    ]
    return out
