"""Plausible wrong implementations of burn's quantization, each one profile field away from a real profile.

The mutation gate (``tests/test_mutation_gate.py``) asserts that the committed suite catches every mutant; the
divergence diagnosis tries them on a failing backend's outputs and names the one that matches ("ties rounded to
even"). Because a profile is data, a mutant is just ``base.with_(field=wrong value)``: no second code path.
"""

from __future__ import annotations

from dataclasses import dataclass

from oracle import Profile, get_profile

NDARRAY = "burn-0.22.0-pre.3/ndarray"
FLEX = "burn-0.22.0-pre.3/flex"
CUBECL = "burn-0.22.0-pre.3/cubecl"


@dataclass(frozen=True)
class Mutant:
    name: str
    description: str
    base: str
    changes: tuple[tuple[str, object], ...]

    @property
    def profile(self) -> Profile:
        return get_profile(self.base).with_(name=f"mutant:{self.name}", description=self.description,
                                            **dict(self.changes))


def _m(name: str, description: str, base: str, **changes: object) -> Mutant:
    return Mutant(name, description, base, tuple(sorted(changes.items())))


_ALL = [
    _m("ties-even", "ties rounded to even instead of away from zero", NDARRAY, tie="even"),
    _m("ties-away-on-gpu", "ties rounded away from zero instead of to even", CUBECL, tie="away"),
    _m("reciprocal", "multiplies by the reciprocal x*(1/s) instead of dividing x/s", NDARRAY,
       division="reciprocal"),
    _m("divide-on-flex", "divides x/s where flex multiplies by the reciprocal", FLEX, division="divide"),
    _m("scale-nearest", "scale rounded to nearest instead of up", NDARRAY, scale_rounding="nearest"),
    _m("no-clamp", "clamp to the value range skipped (codes wrap)", NDARRAY, clamp="none"),
    _m("flat-blocks", "blocks taken as flat chunks instead of N-D rectangles", NDARRAY, block_layout="flat"),
    _m("reversed-nibbles", "sub-byte codes packed most-significant first", NDARRAY, packing="msb_first"),
    _m("no-zero-guard", "missing 0 -> 0.1 substitution of a zero scale", NDARRAY, zero_scale="none"),
    _m("sequential-two-level", "divides by the block scale then by the global instead of by their product",
       NDARRAY, two_level_division="sequential"),
    _m("bf16-via-f16", "BF16 scales rounded on the F16 grid", NDARRAY, bf16_grid_from_f16=True),
    _m("no-cast-back", "normalized block scales not cast back to the tensor dtype", FLEX,
       normalized_cast_back=False),
    _m("nan-to-zero", "NaN quantized to 0 instead of panicking", NDARRAY, nan_code="zero"),
    _m("grid-not-permuted", "a permuted block tensor keeps its scale grid in the old order (block dims permuted)",
       NDARRAY, layout="ndarray/grid-not-permuted"),
    _m("block-dims-not-permuted", "a permuted block tensor keeps the scheme's block dims (scale grid permuted)",
       NDARRAY, layout="ndarray/block-dims-not-permuted"),
    _m("scales-not-sliced", "slicing a block tensor moves the codes and keeps every block scale", FLEX,
       layout="flex/scales-not-sliced"),
    _m("gpu-zero-guard", "a zero scale divides as 0.1 on the GPU path", CUBECL, zero_scale="point_one"),
]

MUTANTS: dict[str, Mutant] = {m.name: m for m in _ALL}
