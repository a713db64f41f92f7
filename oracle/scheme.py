"""The scheme model: QuantScheme and its parts, as burn defines them (spec §1).

Names follow burn/cubecl (``cubecl-common/src/quant/scheme.rs``). ``debug()`` reproduces Rust's derived ``Debug``
text, which burn's panic messages embed (``{scheme:?}``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum

import numpy as np

F16_MAX = 65504.0
BF16_MAX = float(np.array(0x7F7F0000, dtype=np.uint32).view(np.float32))
F32_MAX = float(np.finfo(np.float32).max)
F32_MIN_POSITIVE = float(np.finfo(np.float32).tiny)  # 1.1754944e-38, bits 0x00800000

MAX_BLOCK_DIMS = 5


class QuantValue(Enum):
    """What one quantized element holds (§1.2): bits, clamp range ``(a, b)`` and native packing."""

    Q8F = (8, -128.0, 127.0, 1)
    Q8S = (8, -127.0, 127.0, 1)
    Q4F = (4, -8.0, 7.0, 1)
    Q4S = (4, -7.0, 7.0, 1)
    Q2F = (2, -2.0, 1.0, 1)
    Q2S = (2, -1.0, 1.0, 1)
    E4M3 = (8, -448.0, 448.0, 1)
    E5M2 = (8, -57344.0, 57344.0, 1)
    E2M1 = (4, -6.0, 6.0, 2)

    @property
    def size_bits(self) -> int:
        return self.value[0]

    def range(self) -> tuple[float, float]:
        return self.value[1], self.value[2]

    @property
    def native_packing(self) -> int:
        return self.value[3]

    @property
    def is_float(self) -> bool:
        return self.name.startswith("E")


class QuantMode(Enum):
    """``Symmetric`` (scale only, no zero point) or ``Lookup`` (codebook; no CPU path implements it, §1.4)."""

    Symmetric = "Symmetric"
    Lookup = "Lookup"


STORE_KINDS = ("Native", "PackedU32", "PackedNative")


@dataclass(frozen=True)
class QuantStore:
    """How values are stored (§1.3): ``Native``, ``PackedU32(d)`` or ``PackedNative(d)``; ``d`` counts from the
    innermost dim."""

    kind: str
    dim: int = 0

    def __post_init__(self):
        if self.kind not in STORE_KINDS or type(self.dim) is not int or self.dim < 0:
            raise ValueError(f"not a QuantStore: {self.kind!r}({self.dim!r}); kinds: {', '.join(STORE_KINDS)}")

    @property
    def packs_outer_dim(self) -> bool:
        """A packed store whose packed dim is not the innermost (``PackedU32(d)`` / ``PackedNative(d)``, ``d > 0``):
        the layout burn's GPU kernels and 0.23's packed lines treat apart."""
        return self.kind != "Native" and self.dim > 0

    def size_bits(self, value: QuantValue) -> int:
        if self.kind == "Native":
            return value.size_bits
        if self.kind == "PackedNative":
            return value.size_bits * value.native_packing
        return 32

    def debug(self) -> str:
        return "Native" if self.kind == "Native" else f"{self.kind}({self.dim})"

    def to_json(self) -> str | dict[str, int]:
        return "Native" if self.kind == "Native" else {self.kind: self.dim}

    @classmethod
    def from_json(cls, data: object) -> QuantStore:
        if data == "Native":
            return NATIVE
        if isinstance(data, dict) and len(data) == 1:
            ((kind, dim),) = data.items()
            if kind in STORE_KINDS[1:] and type(dim) is int and dim >= 0:
                return cls(kind, dim)
        raise ValueError(f"not a QuantStore: {data!r} (expected \"Native\", {{\"PackedU32\": d}} or "
                         f"{{\"PackedNative\": d}})")

    @staticmethod
    def packed_u32(dim: int = 0) -> QuantStore:
        return QuantStore("PackedU32", dim)

    @staticmethod
    def packed_native(dim: int = 0) -> QuantStore:
        return QuantStore("PackedNative", dim)


NATIVE = QuantStore("Native")
QuantStore.NATIVE = NATIVE  # type: ignore[attr-defined]


@dataclass(frozen=True)
class _Grid:
    bit_step: int
    min_normal: float | None = None  # below it, values sit on a subnormal grid of `spacing`
    spacing: float | None = None


class ScaleDtype(Enum):
    """How scales are stored (§1.5): bytes per scale, largest representable value, round-up grid."""

    F32 = (4, F32_MAX, None)
    F16 = (2, F16_MAX, _Grid(1 << 13, 2.0**-14, 2.0**-24))
    BF16 = (2, BF16_MAX, _Grid(1 << 16))
    UE8M0 = (1, 2.0**127, _Grid(1 << 23))
    UE4M3 = (1, 448.0, _Grid(1 << 20, 2.0**-6, 2.0**-9))

    @property
    def size(self) -> int:
        return self.value[0]

    def max_representable(self) -> float:
        return self.value[1]

    @property
    def grid(self) -> _Grid | None:
        return self.value[2]


@dataclass(frozen=True)
class BlockSize:
    """Block extents per dim, canonicalized like ``BlockSize::new`` (§1.7): leading 1s dropped, at most five
    entries kept (release builds truncate; debug builds ``debug_assert!``)."""

    dims: tuple[int, ...] = ()

    def __init__(self, dims: object = ()):
        entries = [int(d) for d in dims]  # type: ignore[union-attr]
        if any(not 1 <= d <= 255 for d in entries):
            raise ValueError(f"block extents are u8 values in 1..=255, got {entries}")
        while entries and entries[0] == 1:
            entries.pop(0)
        object.__setattr__(self, "dims", tuple(entries[:MAX_BLOCK_DIMS]))

    def __len__(self) -> int:
        return len(self.dims)

    def to_dim_vec(self, rank: int) -> list[int]:
        """Length-``rank`` extents: the block's *first* ``min(rank, len)`` entries, right-aligned, 1 elsewhere."""
        n = min(rank, len(self.dims))
        return [1] * (rank - n) + list(self.dims[:n])

    def num_blocks(self, shape: tuple[int, ...] | list[int]) -> list[int]:
        """Blocks per axis, ``ceil(dim / extent)``: partial blocks get a scale."""
        return [-(-dim // ext) for dim, ext in zip(shape, self.to_dim_vec(len(shape)))]

    def num_elements(self) -> int:
        return math.prod(self.dims)

    def debug(self) -> str:
        return f"BlockSize({_list(self.dims)})"


@dataclass(frozen=True)
class BlockScale:
    size: BlockSize
    dtype: ScaleDtype

    def debug(self) -> str:
        return f"BlockScale {{ size: {self.size.debug()}, dtype: {self.dtype.name} }}"


@dataclass(frozen=True)
class QuantScheme:
    """burn's ``QuantScheme`` (§1.1): public ``value``, ``store``, ``mode``; private levels ``tensor`` (per-tensor
    scale dtype) and ``block``. The builders return new schemes; equality is over all five fields."""

    value: QuantValue = QuantValue.Q8F
    store: QuantStore = field(default_factory=lambda: QuantStore.packed_u32(0))
    mode: QuantMode = QuantMode.Symmetric
    tensor: ScaleDtype | None = None
    block: BlockScale | None = None

    @classmethod
    def default(cls) -> QuantScheme:
        """``QuantScheme::default()``: Q8F, PackedU32(0), Symmetric, no level (so per-tensor F32, §1.9)."""
        return cls()

    def with_value(self, value: QuantValue) -> QuantScheme:
        return replace(self, value=value)

    def with_store(self, store: QuantStore) -> QuantScheme:
        return self if store == self.store else replace(self, store=store)  # quantize asks it of every result

    def with_mode(self, mode: QuantMode) -> QuantScheme:
        return replace(self, mode=mode)

    def per_tensor(self, dtype: ScaleDtype) -> QuantScheme:
        return replace(self, tensor=dtype)

    def per_block(self, size: BlockSize | list[int] | tuple[int, ...], dtype: ScaleDtype) -> QuantScheme:
        return replace(self, block=BlockScale(size if isinstance(size, BlockSize) else BlockSize(size), dtype))

    def permute_block_dims(self, rank: int, axes) -> QuantScheme:
        """``QuantScheme::permute_block_dims`` (cubecl-common-0.11.3 src/quant/scheme.rs:141-147): the block's extents
        at the rank (``to_dim_vec``: a block longer than the rank keeps only its leading entries) follow the tensor's
        ``axes``, canonicalized again by ``BlockSize::new``."""
        if self.block is None:
            return self
        dims = self.block.size.to_dim_vec(rank)
        return self.per_block(BlockSize([dims[a] for a in axes]), self.block.dtype)

    # --- levels (§1.6) ---
    def tensor_scale(self) -> ScaleDtype | None:
        """``Some(F32)`` when no level is set at all, else the ``tensor`` field."""
        if self.tensor is None and self.block is None:
            return ScaleDtype.F32
        return self.tensor

    def block_size(self) -> BlockSize | None:
        return None if self.block is None else self.block.size

    def scale_dtype(self) -> ScaleDtype:
        """The dtype of the innermost scales: the block level's, else the tensor level's, else F32."""
        if self.block is not None:
            return self.block.dtype
        return self.tensor or ScaleDtype.F32

    def num_levels(self) -> int:
        return (self.block is not None) + (self.tensor_scale() is not None)

    def global_scale_dtype(self) -> ScaleDtype | None:
        """``global_scale_dtype(scheme)``: Some only for a two-level scheme (block and tensor levels)."""
        return self.tensor_scale() if self.block is not None else None

    def is_two_level(self) -> bool:
        return self.global_scale_dtype() is not None

    def num_quants(self) -> int:
        """Values per storage element (§1.3)."""
        return self.store.size_bits(self.value) // self.value.size_bits

    # --- text forms ---
    def debug(self) -> str:
        """Rust's derived ``Debug`` text, as embedded in panic messages."""
        tensor = "None" if self.tensor is None else f"Some({self.tensor.name})"
        block = "None" if self.block is None else f"Some({self.block.debug()})"
        return (f"QuantScheme {{ value: {self.value.name}, store: {self.store.debug()}, mode: {self.mode.name}, "
                f"tensor: {tensor}, block: {block} }}")

    __repr__ = debug

    def to_json(self) -> dict:
        """The stable JSON form of ``docs/ops.md`` (canonical block size)."""
        return {
            "value": self.value.name,
            "store": self.store.to_json(),
            "mode": self.mode.name,
            "tensor": None if self.tensor is None else self.tensor.name,
            "block": None if self.block is None else {"size": list(self.block.size.dims),
                                                      "dtype": self.block.dtype.name},
        }

    @classmethod
    def from_json(cls, data: dict) -> QuantScheme:
        """Parse the JSON form; a missing or unknown field is a ``ValueError`` naming it. Memoized on the JSON's
        content (``memo_key``: a scheme is immutable, and the fuzzer and the runner parse the same few schemes per
        case), so a JSON object changed after a parse is parsed again."""
        key = memo_key(data)
        parsed = _PARSED.get(key)
        if parsed is None:
            parsed = cls._parse(data)
            if len(_PARSED) >= 4096:
                _PARSED.clear()
            _PARSED[key] = parsed
        return parsed

    @classmethod
    def _parse(cls, data: dict) -> QuantScheme:
        if not isinstance(data, dict):
            raise ValueError(f"a QuantScheme is a JSON object, got {data!r}")  # noqa: TRY004 - one error type for bad JSON
        unknown = set(data) - {"value", "store", "mode", "tensor", "block"}
        if unknown:
            raise ValueError(f"unknown QuantScheme field(s) {sorted(unknown)}")
        try:
            block = data.get("block")
            return cls(
                value=QuantValue[data["value"]],
                store=QuantStore.from_json(data["store"]),
                mode=QuantMode[data["mode"]],
                tensor=None if data.get("tensor") is None else ScaleDtype[data["tensor"]],
                block=None if block is None else BlockScale(BlockSize(block["size"]), ScaleDtype[block["dtype"]]),
            )
        except (KeyError, TypeError) as err:
            raise ValueError(f"invalid QuantScheme JSON {data!r}: {err!r}") from None


_PARSED: dict[object, QuantScheme] = {}  # memo_key of a scheme's JSON -> the parsed scheme (successes only)


def memo_key(data: object) -> object:
    """A key equal for two scheme JSONs only when their content is equal with the same exact types, so that
    equal keys parse alike: for the usual form (five fields of strings and None, a store word or ``{kind: int}``,
    a block ``{"size": [int], "dtype": str}``) a tuple of those, about half ``repr``'s cost; anything else its
    ``repr`` (a ``str``, never equal to a tuple). Exact types, because ``1 == 1.0 == True`` while the parser's
    answers to them may differ."""
    if type(data) is dict and len(data) == 5:
        value, store, mode = data.get("value"), data.get("store"), data.get("mode")
        tensor, block = data.get("tensor", _NO), data.get("block", _NO)
        if type(store) is dict and len(store) == 1:  # {"PackedU32": 0}: as the pair, if a str and an int
            ((kind, dim),) = store.items()
            store = (kind, dim) if type(kind) is str and type(dim) is int else _NO
        if type(value) is str and type(store) in (str, tuple) and type(mode) is str and \
                (tensor is None or type(tensor) is str):
            if block is None:
                return value, store, mode, tensor, None
            if type(block) is dict and len(block) == 2:
                size, dtype = block.get("size"), block.get("dtype")
                if type(size) is list and len(size) == 1 and type(size[0]) is int and type(dtype) is str:
                    return value, store, mode, tensor, size[0], dtype
    return repr(data)


_NO = object()  # a missing field or a store of another form: left to ``repr`` (and the parser's error)


def quantizable(scheme: QuantScheme, *, ue8m0_round_up: bool = False) -> bool:
    """burn-std ``quantizable`` (§1.10): the innermost scale dtype has a round-up rule, and a two-level scheme keeps
    block scales within f16's range with an F32 global. ``ue8m0_round_up`` is true from burn 0.22.0 on (§11)."""
    if scheme.scale_dtype() is ScaleDtype.UE8M0 and not ue8m0_round_up:
        return False
    if scheme.block is not None and (glob := scheme.global_scale_dtype()) is not None:
        return scheme.block.dtype.max_representable() <= F16_MAX and glob is ScaleDtype.F32
    return True


def _list(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def shape_debug(shape) -> str:
    """``Shape`` Debug text: ``Shape { dims: [2, 3] }``."""
    return f"Shape {{ dims: {_list(shape)} }}"


def list_debug(values) -> str:
    """Debug text of a ``Vec``/slice of integers: ``[1, 4]``."""
    return _list(values)
