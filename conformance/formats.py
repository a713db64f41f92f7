"""Named real-world formats, each mapped onto burn's scheme.

A format is what a third-party implementation says it implements ("GGUF Q8_0", "MXFP4"): a pattern over
burn's ``QuantScheme`` (value, store kinds, level, scale dtypes) and a block geometry rule, so that a backend can
declare ``"formats": ["q8_0"]`` instead of the cross product of flat capability lists, the suite can hold vectors
of exactly that format, and the fuzzer can draw inside it.

The name says the *shape* of the format in burn's terms, nothing more: burn computes its own scales (rounded
up onto the scale dtype's grid, §3) whatever the format's own reference implementation does, and where the two
differ, qconform judges burn's arithmetic for burn's profiles. Each ``source`` names where the real format is
defined, so a reader can check the mapping.

Block rules (burn's ``BlockSize`` is canonical: leading 1s dropped, so ``[1, 32]`` is ``[32]``):

* ``None``: per-tensor, no block level.
* an int ``n``: 1-D blocks of ``n`` consecutive values along the last dim (``BlockSize([n])``).
* ``ROW``: one block per row, its extent the tensor's last dim (per-row / per-channel scales).
"""

from __future__ import annotations

from dataclasses import dataclass

from oracle.scheme import BlockSize, QuantMode, QuantScheme, QuantStore, QuantValue, ScaleDtype

ROW = "row"


@dataclass(frozen=True)
class Format:
    name: str
    title: str
    source: str
    value: QuantValue
    stores: tuple[str, ...]             # store kinds burn may use for it; the first is the canonical one
    block: int | str | None             # None (per-tensor), n (1-D blocks along the last dim) or ROW
    block_dtype: ScaleDtype | None      # the block level's scale dtype (None when per-tensor)
    tensor_dtype: ScaleDtype | None     # the per-tensor level: the only scale, or the global of a two-level one

    @property
    def level(self) -> str:
        """The protocol's level name: ``tensor``, ``block`` or ``two_level``."""
        if self.block is None:
            return "tensor"
        return "two_level" if self.tensor_dtype is not None else "block"

    def block_extent(self, shape) -> int | None:
        """The 1-D block extent this format uses on a tensor of ``shape`` (None: per-tensor or no such block)."""
        if self.block is None:
            return None
        extent = shape[-1] if self.block == ROW else self.block
        return extent if shape and 1 <= extent <= 255 else None

    def matches(self, scheme: QuantScheme, shape=None) -> bool:
        """Whether ``scheme`` (on a tensor of ``shape``, needed only by ``ROW``) is this format."""
        if scheme.value is not self.value or scheme.store.kind not in self.stores:
            return False
        if scheme.mode is not QuantMode.Symmetric:
            return False
        if self.block is None:
            return scheme.block is None and scheme.tensor_scale() is self.tensor_dtype
        if scheme.block is None or scheme.block.dtype is not self.block_dtype or scheme.tensor is not self.tensor_dtype:
            return False
        if self.block == ROW:
            return shape is not None and len(shape) >= 1 and scheme.block.size.dims == (shape[-1],)
        return scheme.block.size.dims == (self.block,)

    def scheme(self, shape=None, store: str | None = None) -> QuantScheme:
        """burn's scheme for this format (the canonical store unless ``store`` names another allowed one)."""
        kind = store or self.stores[0]
        if kind not in self.stores:
            raise ValueError(f"format {self.name}: store {kind} not among {', '.join(self.stores)}")
        out = QuantScheme.default().with_value(self.value).with_store(
            QuantStore.NATIVE if kind == "Native" else QuantStore(kind, 0))
        if self.block is None:
            return out.per_tensor(self.tensor_dtype)
        if self.block == ROW:
            if shape is None or not 1 <= shape[-1] <= 255:
                raise ValueError(f"format {self.name}: a per-row block needs a last dim in 1..=255, got {shape}")
            extent = shape[-1]
        else:
            extent = self.block
        out = out.per_block(BlockSize([extent]), self.block_dtype)
        return out.per_tensor(self.tensor_dtype) if self.tensor_dtype is not None else out


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("int8", "int8 per-tensor, symmetric (PyTorch/ONNX style, no zero point)",
           "ONNX QuantizeLinear with a zero point of 0; PyTorch per_tensor_symmetric",
           QuantValue.Q8S, ("Native", "PackedU32"), None, None, ScaleDtype.F32),
    Format("int8-per-row", "int8 with one F32 scale per row (per-channel)",
           "PyTorch per_channel_symmetric along the rows; ONNX QuantizeLinear with axis=0",
           QuantValue.Q8S, ("Native", "PackedU32"), ROW, ScaleDtype.F32, None),
    Format("q8_0", "GGUF Q8_0 shape: int8, blocks of 32 along the last dim, F16 scales",
           "ggml-common.h block_q8_0 (QK8_0 = 32, ggml_half d, int8_t qs[32])",
           QuantValue.Q8S, ("Native", "PackedU32"), 32, ScaleDtype.F16, None),
    Format("q4_0", "GGUF Q4_0 shape: int4 packed in u32 words, blocks of 32 along the last dim, F16 scales",
           "ggml-common.h block_q4_0 (QK4_0 = 32, ggml_half d, uint8_t qs[16])",
           QuantValue.Q4S, ("PackedU32",), 32, ScaleDtype.F16, None),
    Format("mxfp4", "OCP MXFP4: E2M1 elements, blocks of 32, UE8M0 (E8M0) shared scales",
           "OCP Microscaling Formats (MX) v1.0, section 5 (block size 32, E8M0 scale, FP4 E2M1 elements)",
           QuantValue.E2M1, ("PackedU32", "PackedNative"), 32, ScaleDtype.UE8M0, None),
    Format("mxfp8", "OCP MXFP8 (E4M3): E4M3 elements, blocks of 32, UE8M0 (E8M0) shared scales",
           "OCP Microscaling Formats (MX) v1.0, section 5 (block size 32, E8M0 scale, FP8 E4M3 elements)",
           QuantValue.E4M3, ("Native", "PackedU32"), 32, ScaleDtype.UE8M0, None),
    Format("nvfp4", "NVFP4: E2M1 elements, blocks of 16 with UE4M3 scales, one F32 per-tensor global",
           "NVIDIA NVFP4 (Blackwell): 16-element micro-blocks, E4M3 block scale, FP32 tensor scale",
           QuantValue.E2M1, ("PackedU32", "PackedNative"), 16, ScaleDtype.UE4M3, ScaleDtype.F32),
    Format("fp8", "FP8 E4M3 per-tensor with one F32 scale",
           "OCP 8-bit Floating Point Specification (OFP8) E4M3; per-tensor scaling as in FP8 inference",
           QuantValue.E4M3, ("Native", "PackedU32"), None, None, ScaleDtype.F32),
)}


def get_format(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; known: {', '.join(FORMATS)}") from None


def formats_of(scheme: QuantScheme, shape=None) -> list[str]:
    """The names of every format ``scheme`` (on ``shape``) is, in registry order."""
    return [f.name for f in FORMATS.values() if f.matches(scheme, shape)]
