"""Cases that ``qconform fuzz`` found: each is the shrunk minimal case of one divergence class (against real
burn, or a mutant that escaped the vectors of an op it changes), kept so the golden suite asks it forever.
The reason says what was found and how the expectation was derived independently of the oracle."""

from __future__ import annotations

from . import case, f32, scheme


def cases():
    bf16_tensor = scheme("Q8S", tensor="BF16")
    return [
        # mutant bf16-via-f16 escaped quantize and quantize_dynamic (found by fuzzing, seed 2)
        case("quantize_dynamic/fuzz/bf16-scale-grid", "quantize_dynamic", {"scheme": bf16_tensor}, {"x": f32(0.5)},
             spec=("§4.1", "§5.1"),
             reason="per-tensor BF16 scale: f32 1/254 = 0.003937008 = 2^-8 * 1.00787 lies between the bf16 values "
                    "2^-8 * (1 + 1/128) and 2^-8 * (1 + 2/128) = 0.00396728515625, which round-up picks; "
                    "0.5 / 0.003967285 = 126.03 -> code 126. On the F16 grid (2^-8 * (1 + 9/1024) = 0.0039405823) "
                    "the code would be 127"),
        case("quantize/fuzz/bf16-scale-grid", "quantize", {"scheme": bf16_tensor, "api": "tensor"},
             {"x": f32(0.5), "scales": f32([1 / 254])}, spec=("§4.1", "§5.2"),
             reason="the same scale given explicitly: stored as bf16 round-up 0.00396728515625, code 126 "
                    "(an F16-grid scale 0.0039405823 would give 127)"),
    ]
