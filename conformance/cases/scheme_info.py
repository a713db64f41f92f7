"""``scheme_info``: scheme-level queries — Debug text, levels, BlockSize canonicalization, quantizable,
num_blocks and params_shape (spec §1)."""

from __future__ import annotations

from oracle.vocabulary import SCALE_DTYPES

from . import case, scheme
from .quantize import SHAPES


def _info(alias, sch, shape, *, reason, spec=("§1",)):
    return case(alias, "scheme_info", {"scheme": sch, "shape": list(shape)}, spec=spec, reason=reason)


DEFAULT = {"value": "Q8F", "store": {"PackedU32": 0}, "mode": "Symmetric", "tensor": None, "block": None}


def cases():
    out = [
        _info("scheme_info/default", DEFAULT, [4, 8], spec=("§1.6", "§1.9"),
              reason="QuantScheme::default(): no level set, so per-tensor F32 with one level"),
        _info("scheme_info/default-per-tensor-f32", scheme("Q8F", store=("PackedU32", 0), tensor="F32"), [4, 8],
              spec=("§1.1", "§1.6"), reason="same behaviour as default() but a different Debug text (tensor: Some(F32))"),
        _info("scheme_info/leading-ones-canonicalized", scheme("Q8S", raw_block=[1, 1, 8, 4, 2, 3]), [2, 16, 8, 4, 6],
              spec=("§1.7",), reason="[1, 1, 8, 4, 2, 3] is BlockSize([8, 4, 2, 3]); partial blocks on the last dim"),
        _info("scheme_info/block-1-32-equals-32", scheme("Q8S", raw_block=[1, 32]), [8, 70], spec=("§1.7", "§10"),
              reason="[1, 32] == [32]; num_blocks([32], [8, 70]) == [8, 3]"),
        _info("scheme_info/block-only-ones", scheme("Q8S", raw_block=[1, 1]), [3, 5], spec=("§1.7",),
              reason="[1, 1] canonicalizes to the empty block: every element is its own block"),
        _info("scheme_info/block-seven-dims", scheme("Q8S", raw_block=[2, 1, 3, 1, 4, 5, 6]), [4, 4, 6, 2, 8, 10, 12],
              spec=("§1.7", "§8 #15"),
              reason="more than 5 entries: release builds keep the first five (the debug_assert is off)"),
        _info("scheme_info/num-blocks-4x32", scheme("Q8S", block=[4, 32]), [8, 64], spec=("§1.7", "§10"),
              reason="num_blocks([4, 32], [8, 64]) == [2, 2]"),
        _info("scheme_info/num-blocks-rank-3", scheme("Q8S", block=[32]), [4, 8, 64], spec=("§1.7", "§10"),
              reason="num_blocks([32], [4, 8, 64]) == [4, 8, 2]"),
        _info("scheme_info/nvfp4", scheme("E2M1", store=("PackedNative", 0), block=[16], block_dtype="UE4M3",
                                          tensor="F32"), [4, 64], spec=("§1.9",),
              reason="the nvfp4 preset: two levels, UE4M3 blocks, PackedNative(0)"),
        _info("scheme_info/lookup-q4f", scheme("Q4F", mode="Lookup", store=("PackedU32", 1)), [8, 8],
              spec=("§1.4", "§1.3"), reason="Debug text of a Lookup PackedU32(1) scheme"),
    ]
    for dt in SCALE_DTYPES:
        out.append(_info(f"scheme_info/block-{dt.lower()}", scheme("Q8S", block=[8], block_dtype=dt), [4, 8],
                         spec=("§1.10",), reason=f"one-level {dt} blocks: quantizable unless UE8M0 (before 0.22.0)"))
        out.append(_info(f"scheme_info/two-level-{dt.lower()}", scheme("Q8S", block=[8], block_dtype=dt,
                                                                       tensor="F32"), [4, 8],
                         spec=("§1.10",), reason=f"two-level {dt} blocks: quantizable only within f16's range"))
        out.append(_info(f"scheme_info/tensor-{dt.lower()}", scheme("Q8S", tensor=dt), [4, 8],
                         spec=("§1.6", "§1.10"), reason=f"per-tensor {dt}: scale_dtype() is the tensor level's"))
    out.append(_info("scheme_info/two-level-ue4m3-global-bf16", scheme("Q8S", block=[8], block_dtype="UE4M3",
                                                                       tensor="BF16"), [4, 8],
                     spec=("§1.10", "§10"), reason="a non-F32 global is not quantizable"))
    for tag, shape, block, note in SHAPES:
        sch = scheme("Q8S", raw_block=[int(v) for v in block[5:-1].split(",")]) if isinstance(block, str) else \
            scheme("Q8S", block=list(block))
        out.append(_info(f"scheme_info/shape/{tag}", sch, shape, spec=("§1.7", "§1.8"),
                         reason=note or f"num_blocks and params_shape of a {tag} tensor"))
    return out
