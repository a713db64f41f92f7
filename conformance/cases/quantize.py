"""``quantize`` with explicit scales: ``Tensor::quantize`` (api "tensor", its asserts first) and ``B::quantize``
(api "backend") (spec §5.1-§5.4, panics §8 #21-#29)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from oracle import BlockLayout, BlockSize, round_half_away
from oracle.vocabulary import LEVELS

from . import F32_DENORM, F32_MAX, case, down, f16, f32, from_bits, rng, scheme, up, value_range
from ._values import on_grid, reciprocal, split_search, ties

SHAPE = (2, 8)


class Setup:
    """A level's scheme, scales and global on a ``[2, 8]`` tensor, with per-element effective scales."""

    def __init__(self, level: str, value: str = "Q8S", *, block=(4,), store="Native", scales=None, glob=None,
                 block_dtype=None):
        self.level, self.value = level, value
        grid = [1] if level == "tensor" else BlockSize(block).num_blocks(SHAPE)
        n = int(np.prod(grid))
        if level == "tensor":
            self.scheme = scheme(value, store=store)
            s = f32(scales if scales is not None else [0.25])
            self.glob = None
        elif level == "block":
            self.scheme = scheme(value, store=store, block=list(block), block_dtype=block_dtype or "F32")
            s = f32(scales if scales is not None else [0.25, 0.5, 0.125, 1.0][:n])
            self.glob = None
        else:
            self.scheme = scheme(value, store=store, block=list(block), block_dtype=block_dtype or "UE4M3",
                                 tensor="F32")
            s = f32(scales if scales is not None else [1.0, 1.5, 3.0, 0.75][:n])
            self.glob = f32(glob if glob is not None else [0.125])
        self.scales = s.reshape(grid)
        self.blocks = [] if level == "tensor" else BlockSize(block).to_dim_vec(2)
        eff = s if self.glob is None else (self.glob[0] * s).astype(np.float32)
        self.e_blocks = eff
        if level == "tensor":
            self.e = np.full(SHAPE, eff[0], np.float32)
        else:
            layout = BlockLayout(SHAPE, BlockSize(block))
            self.e = np.array([eff[layout.block_of(i)] for i in range(16)], np.float32).reshape(SHAPE)
            self.members = [[i for i in range(16) if layout.block_of(i) == j] for j in range(n)]

    def inputs(self, x) -> dict:
        x = np.asarray(x)
        x = x if x.dtype in (np.float16, ml_dtypes.bfloat16) else x.astype(np.float32)
        d = {"x": x.reshape(SHAPE), "scales": self.scales}
        if self.glob is not None:
            d["global"] = self.glob
        return d

    def x_from(self, targets) -> np.ndarray:
        return (f32(targets).reshape(SHAPE) * self.e).astype(np.float32)

    def x_blocks(self, per_block: list[list[float]], pad: float = 0.0) -> np.ndarray:
        """x with block j's elements taken from ``per_block[j]`` (padded with ``pad``)."""
        x = np.full(16, pad, np.float32)
        groups = [list(range(16))] if self.level == "tensor" else self.members
        for j, members in enumerate(groups):
            values = per_block[j] if j < len(per_block) else []
            for i, m in enumerate(members):
                if i < len(values):
                    x[m] = values[i]
        return x.reshape(SHAPE)


def _q(alias, setup: Setup, x, *, api="tensor", tags=(), spec=("§5.2",), reason="", **override):
    inputs = setup.inputs(x)
    inputs.update(override)
    inputs = {k: v for k, v in inputs.items() if v is not None}
    return case(alias, "quantize", {"scheme": setup.scheme, "api": api}, inputs, tags=tags, spec=spec,
                reason=reason)


def _neighbours(setup: Setup, value: str) -> np.ndarray:
    x = setup.x_from(ties(value, 0))
    flat = x.ravel()
    out = np.where(np.arange(16) % 4 < 2, up(flat), down(flat))
    return out.reshape(SHAPE)


def _class_cases(level: str, value: str, classes) -> list:
    st = Setup(level, value)
    a, b = value_range(value)
    base = f"quantize/{value.lower()}/{level}"
    spec = ("§5.2", "§5.4") + (("§3.1",) if level == "two-level" else ())
    defs = {
        "ties-even": (st.x_from(ties(value, 0)), ("class:tie-even-pos", "class:tie-even-neg"),
                      ("exact ties k+0.5 with k even, both signs: half-away gives the odd neighbour, half-even the "
                      "even one (the rounding bug ONNX runtimes shipped)")),
        "ties-odd": (st.x_from(ties(value, 1)), ("class:tie-odd-pos", "class:tie-odd-neg"),
                     ("exact ties k+0.5 with k odd, both signs: both tie rules agree here, truncation and "
                     "floor-based rounding do not")),
        "tie-neighbours": (_neighbours(st, value), ("class:tie-neighbour",),
                           ("one f32 step above and below exact ties: must round to the nearer code under every "
                           "tie rule")),
        "almost-half": (st.x_from([0.49999997, -0.49999997, 1.4999999, -1.4999999, 0.5, -0.5, 2.4999998,
                                   -2.4999998] * 2), ("class:almost-half",),
                        "0.49999997 rounds to 0: floor(x + 0.5) in f32 gets it wrong (spec §12)"),
        "on-grid": (st.x_from(on_grid(value)), ("class:on-grid",),
                    "already-quantized data: x/s is an integer and must come back unchanged"),
        "saturate": (st.x_from([b + 1, b + 10, a - 1, a - 10, 1e30, -1e30, b + 0.5, a - 0.5] * 2),
                     ("class:saturate",), "values beyond the range clamp to a/b after rounding (no wrap)"),
        "specials": (f32([0.0, -0.0, F32_DENORM, -F32_DENORM, np.inf, -np.inf, F32_MAX, -F32_MAX] * 2),
                     ("class:signed-zero", "class:subnormal", "class:inf", "class:max-finite"),
                     "signed zeros, subnormals (x/s underflows to +-0), infinities and f32::MAX clamp to a/b"),
        "nan": (f32([1.0, np.nan, -2.0, 0.5] * 4) * np.float32(st.e_blocks.max()), ("class:nan",),
                "a NaN element: ndarray's NumCast unwrap panics, flex's `as i8` gives 0, the GPU clamp gives b"),
    }
    return [_q(f"{base}/{name}", st, defs[name][0], tags=defs[name][1], spec=spec, reason=defs[name][2])
            for name in classes]


def _split_cases(level: str) -> list:
    out = []
    if level == "tensor":
        st = Setup("tensor", scales=[0.13522989])
    elif level == "block":
        st = Setup("block", scales=[0.13522989, 0.1, 0.3, 0.7])
    else:
        st = Setup("two-level", scales=[1.25, 1.75, 2.5, 3.5], glob=[0.1])
    per = 16 if level == "tensor" else 2
    hits = split_search(st.e_blocks, 127, reciprocal, per // (2 if level == "tensor" else 1))
    blocks = [h + [-v for v in h] for h in hits]
    out.append(_q(f"quantize/q8s/{level}/reciprocal-split", st, st.x_blocks(blocks),
                  tags=("class:reciprocal-split",), spec=("§5.2", "§5.3"),
                  reason="x/s and x*(1/s) round to different codes (found by a deterministic search near "
                         "(k+0.5)*s): ndarray and the GPU divide, flex multiplies by the reciprocal"))
    if level == "two-level":
        s = st.scales.ravel()
        g = np.float32(st.glob[0])
        hits = []
        for si in s:
            e = np.float32(g * si)
            hits += split_search([e], 127, lambda x, _e, si=si: (np.float32(x) / np.float32(si)) / g, 2)
        blocks = [h + [-v for v in h] for h in hits]
        out.append(_q("quantize/q8s/two-level/sequential-split", st, st.x_blocks(blocks),
                      tags=("class:two-level-split",), spec=("§5.2", "§5.4"),
                      reason="x/f32(global*s) and (x/s)/global round differently: every backend divides by the "
                             "product, formed once in f32"))
    return out


# (tag, shape, block or raw block, note)
SHAPES = [
    ("rank-1", (8,), [4], None),
    ("rank-3", (2, 4, 4), [2, 2, 2], None),
    ("rank-4", (2, 2, 2, 8), [2, 1, 4], None),
    ("rank-5", (2, 1, 2, 2, 8), [2, 1, 1, 2, 4], None),
    ("nd-block", (4, 8), [2, 4], "2x4 blocks on a 4x8 tensor are rectangles (elements 0-3 and 8-11 share a scale)"),
    ("partial-block", (2, 6), [4], "partial blocks get their own scale (num_blocks rounds up)"),
    ("partial-nd-block", (3, 6), [2, 4], "N-D partial blocks at the bottom and right edges"),
    ("block-larger", (2, 8), [16], "a block larger than the dim: one partial block per row"),
    ("leading-1", (2, 8), "raw:[1, 1, 4]", "the block [1, 1, 4] is the block [4] (leading 1s dropped)"),
    ("block-rank-exceeds", (8,), [2, 4], "a rank-1 tensor takes the block's *leading* entry: [2, 4] acts as [2]"),
    ("empty", (0, 8), [4], "an empty tensor has an empty block grid"),
]


def shape_setup(alias: str, shape, block):
    """A scheme, a block grid of power-of-two scales and codes/targets drawn from the alias' PCG64 stream."""
    raw = None
    if isinstance(block, str):
        raw = [int(v) for v in block[5:-1].split(",")]
        size = BlockSize(raw)
        sch = scheme("Q8S", raw_block=raw)
    else:
        size = BlockSize(block)
        sch = scheme("Q8S", block=list(block))
    grid = size.num_blocks(shape)
    r = rng(alias)
    scales = np.exp2(-r.integers(0, 6, size=int(np.prod(grid)))).astype(np.float32).reshape(grid)
    layout = BlockLayout(shape, size)
    flat = scales.ravel()
    e = np.array([flat[layout.block_of(i)] for i in range(int(np.prod(shape)))], np.float32).reshape(shape)
    targets = (r.integers(-127, 127, size=shape) + 0.5 * r.integers(0, 2, size=shape)).astype(np.float32)
    return sch, scales, e, targets, r


def cases():
    out = [
        case("quantize/q8s/tensor/spec-example", "quantize", {"scheme": scheme("Q8S"), "api": "tensor"},
             {"x": f32(-1.8, -1.0, 0.0, 0.5), "scales": f32([0.014173228])}, spec=("§5.2", "§10"),
             reason="burn test should_support_quantize_symmetric_int8: codes [-127, -71, 0, 35]"),
    ]
    for level in LEVELS:
        out += _class_cases(level, "Q8S", ("ties-even", "ties-odd", "tie-neighbours", "almost-half", "on-grid",
                                           "saturate", "specials", "nan"))
        out += _class_cases(level, "Q8F", ("ties-even", "ties-odd", "saturate"))
        out += _split_cases(level)
        # sub-byte codes as the GPU stores them (PackedU32 needs blocks that hold whole words)
        st = Setup(level, "Q4S", store=("PackedU32", 0), block=(8,), scales=[0.25, 0.5][: 1 if level == "tensor"
                                                                                          else 2])
        out.append(_q(f"quantize/q4s-packed/{level}/ties-even", st, st.x_from(ties("Q4S", 0)),
                      tags=("class:tie-even-pos", "class:tie-even-neg"), spec=("§5.4", "§5.5"),
                      reason="Q4S ties: ndarray refuses PackedU32, flex quantizes as i8 (stored Native), the "
                             "GPU rounds half to even"))
        # input dtypes: ndarray has no f16/bf16 tensors; flex converts to f32; the GPU divides in f16/bf16
        for dt, conv in (("f16", np.float16), ("bf16", None)):
            st = Setup(level, scales=[0.1] if level == "tensor" else [0.1, 0.3, 0.7, 0.13522989]
                       if level == "block" else None, glob=[0.1] if level == "two-level" else None)
            x = (f32(ties("Q8S", 0)).reshape(SHAPE) * st.e).astype(np.float32)
            xin = x.astype(np.float16) if conv else x.astype(ml_dtypes.bfloat16)
            out.append(_q(f"quantize/q8s/{level}/{dt}-input", st, xin, spec=("§5.2", "§5.3", "§5.4"),
                          reason=f"an {dt} input: ndarray panics (no {dt} tensors), flex computes in f32, the "
                                 f"GPU's one-level kernel casts the scale to {dt} and divides in {dt}"))
        # explicit scales that are not positive and finite
        for name, bad in (("zero-scale", 0.0), ("negative-scale", -0.25), ("nan-scale", np.nan),
                          ("inf-scale", np.inf)):
            n = 1 if level == "tensor" else 4
            sc = [bad] + [0.25] * (n - 1) if level != "two-level" else [bad, 1.0, 1.5, 3.0]
            st = Setup(level, scales=sc)
            x = st.x_from(ties("Q8S", 0))
            if name == "zero-scale":
                x = x.copy()
                x.ravel()[:4] = 0.0
            out.append(_q(f"quantize/q8s/{level}/{name}", st, x, api="backend",
                          tags=("class:zero-scale",) if name == "zero-scale" else (),
                          spec=("§5.2", "§5.3", "§5.4", "§4.1"),
                          reason="scales no calibration produces: ndarray divides by 0.1 only for an exact 0, "
                                 "flex replaces every non-positive or non-finite scale by round_up(MIN_POSITIVE), "
                                 "the GPU has no guard (0/0 = NaN clamps to b)"))
    # structural shapes with explicit power-of-two scales
    for tag, shape, block, note in SHAPES:
        alias = f"quantize/q8s/shape/{tag}"
        sch, scales, e, targets, _ = shape_setup(alias, shape, block)
        out.append(case(alias, "quantize", {"scheme": sch, "api": "tensor"},
                        {"x": (targets * e).astype(np.float32), "scales": scales}, spec=("§1.7", "§1.8", "§5.2"),
                        reason=(note or f"a {tag} tensor with its block grid") + "; ties drawn at random codes"))
    out += _count_and_level_errors()
    out += _scheme_support()
    out += _gpu_kernel_cases()
    return out


# A NaN whose payload fills the mantissa: the GPU round-up adds its bias to these bits as a u32, which wraps.
NAN_FULL_PAYLOAD = np.array([0x7FFFFFFF], np.uint32).view(np.float32)[0]


# UE8M0 has a kernel round-up from burn 0.22.1 (cubecl-std-0.11.3 src/quant/round.rs:35-47), and its storage cast
# saturates the wrapped -0.0 at the bottom code (cubecl-core-0.11.3 post_processing/minifloat.rs:175-201).
UE8M0_NAN = {"UE8M0": "; burn 0.22.1's UE8M0 storage then saturates the -0.0 to code 0, 2^-127"}


def _gpu_kernel_cases() -> list:
    """Inputs where burn-cubecl's kernels (cubek-quant) part from the CPU backends, found by reading them and
    settled on lavapipe (docs/findings.md, "GPU kernels")."""
    out = []
    # The device round-up has no NaN test: a full-payload NaN plus the round-up bias wraps to 0x8000xxxx, and the
    # truncation mask leaves -0.0 (cubecl-std quant/round.rs round_up_on_grid); the host rule returns the NaN.
    for dtype in ("F16", "BF16", "UE4M3", "UE8M0"):
        st = Setup("block", store=("PackedU32", 0), block_dtype=dtype,
                   scales=[NAN_FULL_PAYLOAD, 0.25, 0.5, 0.125])
        out.append(_q(f"quantize/q8s-packed/block/nan-payload-scale-{dtype.lower()}", st, st.x_from(ties("Q8S", 0)),
                      api="backend", spec=("§4.1", "§5.4"),
                      reason=f"a NaN {dtype} scale with payload 0x7FFFFFFF: the host round-up keeps the NaN, the GPU "
                             "kernel's integer add wraps it to -0.0 (x / -0.0 = -inf/+inf clamp to a/b)"
                             + UE8M0_NAN.get(dtype, "")))
    # Two rules broken at once (a global for a one-level scheme, UE8M0 scales in 0.22.0-pre.3): the kernel launch
    # counts the scale bindings before it asks the scale dtype for a round-up rule.
    st = Setup("block", block_dtype="UE8M0")
    out.append(_q("quantize/q8s/block/ue8m0-and-global", st, st.x_from(ties("Q8S", 0)), api="backend",
                  **{"global": f32(2.0)}, spec=("§5.4", "§8 #12", "§8 #24", "§8 #60"),
                  reason="UE8M0 block scales and a global for a one-level scheme: each backend reports the check "
                         "it makes first"))
    # The packed kernel reads a block's scale through the scales tensor's own strides (cubek-quant
    # layout/scales.rs:218-242, measured on lavapipe): a [4, 1] tensor for the [2, 2] grid is read at r + c
    # (scales 0, 1, 1, 2), a flat [4] list for a rank-2 tensor at 0 everywhere; the CPU backends read row-major.
    st = Setup("block", store=("PackedU32", 0))
    for name, shape in (("grid-4x1", (4, 1)), ("flat", (4,))):
        out.append(_q(f"quantize/q8s-packed/block/scales-{name}", st, st.x_from(ties("Q8S", 0)), api="backend",
                      scales=st.scales.reshape(shape), spec=("§5.4",),
                      reason=f"the [2, 2] block scales handed over as a {list(shape)} tensor: the GPU kernel "
                             "indexes them by that tensor's strides, the CPU backends by the block's row-major "
                             "index"))
    # A bf16 tensor with F16 scales that saturate: the device round-up returns 65504 in the input dtype (bf16 ->
    # 65536) before the cast to the f16 storage, which overflows to +inf; the host stores 65504.
    x = (f32(ties("Q8S", 0)).reshape(SHAPE) * np.float32(70000.0)).astype(ml_dtypes.bfloat16)
    st = Setup("tensor", scales=[70000.0])
    st.scheme = scheme("Q8S", tensor="F16")
    out.append(_q("quantize/q8s/tensor/bf16-input-f16-scale-saturates", st, x,
                  scales=st.scales.astype(ml_dtypes.bfloat16), spec=("§4.1", "§5.4"),
                  reason="a bf16 input whose F16 scale saturates at 65504: the GPU casts the rounded scale back to "
                         "bf16 (65536) before storing it as f16 (+inf)"))
    # check_block_size_compat reads the block's last *given* extent (cubek-quant lib.rs:27-35): [2, 4, 2] on a rank-2
    # tensor acts as [2, 4], but the check sees 2, which a Native kernel's 4-wide f32 vectors do not divide.
    st = Setup("block", block=(2, 4, 2), scales=[0.25, 0.5])
    out.append(_q("quantize/q8s/block/last-given-extent", st, st.x_from(ties("Q8S", 0)), spec=("§1.7", "§5.4"),
                  reason="a block of higher rank than the tensor: the layout takes its leading entries ([2, 4]), the "
                         "GPU's divisibility check its last one (2, not a multiple of the vector width 4)"))
    # A block of 1s is canonically empty, and the same check unwraps its last extent.
    st = Setup("block", block=(1, 1), scales=[0.25] * 16)
    out.append(_q("quantize/q8s/block/ones-block", st, st.x_from(ties("Q8S", 0)), api="backend",
                  spec=("§1.7", "§5.4"),
                  reason="per_block([1, 1]): one scale per element on the CPU; the GPU's check unwraps the last "
                         "extent of a canonically empty block (`called Option::unwrap() on a None value`)"))
    return out


def _count_and_level_errors() -> list:
    blk, two, ten = Setup("block"), Setup("two-level"), Setup("tensor")
    x = blk.x_from(ties("Q8S", 0))
    spec = ("§5.1", "§8")
    return [
        _q("quantize/q8s/block/too-many-scales", blk, x, scales=f32(0.25, 0.5, 0.125, 1.0, 2.0), api="backend",
           spec=("§5.2", "§5.3", "§8 #29"), reason="5 scales for 4 blocks: ndarray asserts, flex keeps the extra"),
        _q("quantize/q8s/tensor/extra-scales", ten, ten.x_from(ties("Q8S", 0)), scales=f32(0.25, 8.0),
           api="backend", spec=("§5.2", "§5.3"),
           reason="per-tensor with two scales: ndarray uses the first and stores one, flex keeps both"),
        _q("quantize/q2s/tensor/no-scale", Setup("tensor", "Q2S"), ten.x_from(on_grid("Q2S")),
           scales=np.zeros((0,), np.float32), api="backend", spec=("§5.2", "§5.3", "§8"),
           reason="an empty scales tensor: index out of bounds on the CPU backends (Q2S per-tensor, which default "
                  "ndarray quantizes; the GPU refuses native sub-byte storage first)"),
        _q("quantize/q8s/tensor/global-given-backend", ten, ten.x_from(ties("Q8S", 0)), api="backend",
           **{"global": f32(2.0)}, spec=("§5.2", "§8 #24"),
           reason="B::quantize with a per-tensor scale and a scheme that is not two-level: 'a per-tensor "
                  "scale should come with a two-level scheme'"),
        _q("quantize/q8s/block/global-given-backend", blk, x, api="backend", **{"global": f32(2.0)},
           spec=("§5.2", "§8 #24"), reason="the same with a one-level block scheme"),
        _q("quantize/q8s/block/global-given-tensor-api", blk, x, api="tensor", **{"global": f32(2.0)},
           spec=(*spec, "§8 #21"),
           reason="Tensor::quantize asserts first; its message prints the global tensor's Debug form (a "
                  "dispatch wrapper, not the data)"),
        _q("quantize/q8s/two-level/no-global-tensor-api", two, two.x_from(ties("Q8S", 0)), api="tensor",
           **{"global": None}, spec=(*spec, "§8 #21"),
           reason="a two-level scheme without its per-tensor scale: Tensor::quantize's assert"),
        _q("quantize/q8s/two-level/no-global-backend", two, two.x_from(ties("Q8S", 0)), api="backend",
           **{"global": None}, spec=("§5.2", "§5.3", "§5.4", "§8 #25"),
           reason="the same through B::quantize: each backend's own check"),
        _q("quantize/q8s/two-level/global-shape-2", two, two.x_from(ties("Q8S", 0)), api="tensor",
           **{"global": f32(0.125, 0.125)}, spec=(*spec, "§8 #22"),
           reason="the per-tensor scale must have exactly one element"),
        _q("quantize/q8s/two-level/global-f16-tensor-api", two, two.x_from(ties("Q8S", 0)), api="tensor",
           **{"global": f16(0.125)}, spec=(*spec, "§8 #23"),
           reason="the per-tensor scale must be f32 (ndarray cannot even hold an f16 tensor)"),
        _q("quantize/q8s/two-level/global-f16-backend", two, two.x_from(ties("Q8S", 0)), api="backend",
           **{"global": f16(0.125)}, spec=("§5.4", "§8 #46"),
           reason="B::quantize with an f16 global: the GPU asserts, the CPU backends convert it"),
        _q("quantize/q8s/block/scales-f16", blk, x, scales=f16(blk.scales), spec=("§5.1",),
           reason="the scales tensor is passed as is: an f16 scales tensor (ndarray has none)"),
        case("quantize/q8s/two-level/global-dtype-f16", "quantize",
             {"scheme": scheme("Q8S", block=[4], block_dtype="UE4M3", tensor="F16"), "api": "backend"},
             two.inputs(two.x_from(ties("Q8S", 0))), spec=("§7.1", "§7.6", "§8 #4", "§8 #44"),
             reason="a two-level scheme whose per-tensor level is F16: the byte layout requires f32"),
    ]


def _scheme_support() -> list:
    """Values, stores and modes each backend accepts for explicit quantization."""
    out = []
    specs = [
        ("q2s/tensor", Setup("tensor", "Q2S"), "Q2S per-tensor: the one sub-byte scheme default ndarray quantizes"),
        ("q2s/block", Setup("block", "Q2S"), "Q2S per-block: outside ndarray's matrix (unimplemented)"),
        ("q4s/tensor", Setup("tensor", "Q4S"), "Native Q4S: flex quantizes as i8, the GPU cannot store it"),
        ("e4m3/tensor", Setup("tensor", "E4M3"), ("E4M3: the GPU rounds x/s to an integer and stores its fp8 "
                                                 "bits; flex clips the integer to i8")),
        ("e5m2/tensor", Setup("tensor", "E5M2"), "E5M2 likewise"),
        ("e2m1-packed-native/tensor", Setup("tensor", "E2M1", store=("PackedNative", 0)),
         "E2M1 PackedNative (nvfp4 storage): the GPU stores fp4 bit patterns of the rounded integers"),
        ("q8s-packed-native/tensor", Setup("tensor", "Q8S", store=("PackedNative", 0)),
         "PackedNative only packs E2M1"),
        ("q8s-packed/tensor", Setup("tensor", "Q8S", store=("PackedU32", 0)),
         "PackedU32 Q8S: ndarray refuses any non-Native store, the GPU packs four codes per word"),
        ("q8s-packed-d1/tensor", Setup("tensor", "Q8S", store=("PackedU32", 1)),
         "PackedU32(1): the GPU checks the *last* dim whatever d is"),
    ]
    for name, st, why in specs:
        value = st.value
        x = st.x_from(ties(value, 0) if value_range(value)[1] >= 1 else on_grid(value))
        out.append(_q(f"quantize/{name}/support", st, x, spec=("§5.2", "§5.3", "§5.4", "§5.5"), reason=why))
    st = Setup("tensor", "Q8S", store=("PackedU32", 0))
    out.append(case("quantize/q8s-packed/tensor/last-dim-6", "quantize", {"scheme": st.scheme, "api": "tensor"},
                    {"x": f32(np.arange(12) - 6.5).reshape(2, 6) * np.float32(0.25), "scales": f32([0.25])},
                    spec=("§7.6", "§8 #41"), reason="PackedU32 needs the last dim to be a multiple of 4 on the GPU"))
    out.append(case("quantize/q2s-packed/block-8/divisibility", "quantize",
                    {"scheme": scheme("Q2S", store=("PackedU32", 0), block=[8]), "api": "tensor"},
                    {"x": np.tile(on_grid("Q2S"), (2, 1)) * np.float32(0.5), "scales": f32([[0.5, 0.5], [0.5, 0.5]])},
                    spec=("§5.4", "§8 #59"),
                    reason="Q2S PackedU32 packs 16 codes per word: a block of 8 cannot hold whole words on the GPU "
                           "(the 16-wide rows themselves can)"))
    lookup = Setup("tensor")
    lookup.scheme = scheme("Q8S", mode="Lookup")
    out.append(_q("quantize/q8s-lookup/tensor/support", lookup, lookup.x_from(ties("Q8S", 0)),
                  spec=("§1.4", "§5.4", "§8 #58"),
                  reason="Lookup mode: no CPU path implements it (flex ignores the mode), the GPU refuses"))
    for level in LEVELS:
        st = Setup(level, block_dtype="UE8M0") if level != "two-level" else None
        if st is None:
            continue
        if level == "tensor":
            st.scheme = scheme("Q8S", tensor="UE8M0")
        out.append(_q(f"quantize/q8s/{level}/ue8m0", st, st.x_from(ties("Q8S", 0)), spec=("§4.1", "§8 #12", "§11"),
                      reason="UE8M0 scales: no round-up rule before burn 0.22.0 (panic), powers of two after"))
    st = Setup("block", block_dtype="UE4M3", scales=[0.003, 0.5, 0.0009, 2.0])
    out.append(_q("quantize/q8s/block/ue4m3-subnormal-scales", st, st.x_from(ties("Q8S", 0)),
                  tags=("class:ue4m3-subnormal-scale",), spec=("§4.1", "§5.2"),
                  reason="explicit UE4M3 scales below 2^-6 round up onto the subnormal grid (multiples of 2^-9)"))
    st = Setup("tensor", scales=[0.003])
    st.scheme = scheme("Q8S", tensor="UE4M3")
    out.append(_q("quantize/q8s/tensor/ue4m3-subnormal-scale", st, st.x_from(ties("Q8S", 0)),
                  tags=("class:ue4m3-subnormal-scale",), spec=("§4.1", "§5.2"),
                  reason="a per-tensor UE4M3 scale of 0.003 is stored as 2*2^-9"))
    return out + _shared_encoder()


# burn-flex 0.23.0-pre.1 encodes every value through one function, `QuantCodes::encode_all`
# (burn-flex-0.23.0-pre.1/src/quant_codes.rs:20-43): `(x / s).clamp(min, max)`, then integers rounded half to even
# by the 1.5 * 2^23 shift (:72-76) and E4M3/E5M2/E2M1 converted by burn's own fp8/fp4 types, the code being the
# format's bits. Each vector below has scale 1 (or a power of two), so x/s is exact and the hand-worked codes are
# the spec of the conversion itself.
_NEG_NAN = from_bits([0xFFC00000])[0]
_NAN_PAYLOAD = from_bits([0x7FE00000])[0]


def _shared_encoder() -> list:
    tensor = Setup("tensor", scales=[1.0])
    out = [_q("quantize/q8s/tensor/half-even-shift", tensor,
              f32(2.5, 3.5, -126.5, 1.4, 1e9, -1e9, 0.5, -0.5, 1.5, -1.5, 126.5, -2.5, 0.49999997, 4.5, -4.5, 127.5),
              api="backend", spec=("§5.3", "§11"),
              reason="flex 0.23.0-pre.1 clamps x/s, then rounds half to even (quant_codes.rs:41,72-76): 2.5 -> 2, "
                     "3.5 -> 4, -126.5 -> -126, 127.5 -> 127; burn 0.22 CPU backends round half away (3, 4, -127)")]
    out.append(_q("quantize/q8s/tensor/infinite-scaled", Setup("tensor", scales=[1e-3]),
                  f32([np.inf, -np.inf, 3e38, -3e38, 1.0, -1.0, 0.127, -0.127] * 2), api="backend",
                  tags=("class:inf",), spec=("§5.3", "§11"),
                  reason="x/s = ±inf (an infinite x, or 3e38 / 1e-3): flex 0.23.0-pre.1 clamps before its half-even "
                         "shift (quant_codes.rs:25) and gets ±127, as every rounding-first CPU path does (the shift "
                         "keeps ±inf and the clamp or the saturating `as i8` ends it at ±127)"))
    minifloats = {
        "E4M3": ([448, -2.5, 0.125, 1.0, -0.0, 3.5, -448, 64, 17, 19, 2.0**-9, 2.0**-10, 0.3, 1e6, -1e6, 470],
                 ("E4M3 by burn's e4m3 type (quant_codes.rs:27-28): 17 -> 16 and 19 -> 20 (ties to even), 2^-10 -> 0, "
                 "1e6 and 470 clamped to 448 first (bits 0x7E); 0.22 flex rounds to integers and clips them to i8")),
        "E5M2": ([57344, 1e6, -1e6, 1.0, 2.0**-16, 1.125, 1.375, -0.0, 3.0, 0.1, 61440, 2.0**-17, 2.5, -7, 100, 57343],
                 ("E5M2 by burn's e5m2 type: 1.125 -> 1, 1.375 -> 1.5 (ties to even), 2^-17 -> 0, 1e6 and 61440 "
                 "clamped to 57344 (0x7B), never infinity")),
        "E2M1": ([0.3, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.0, 2.4, 100, -100, -6.5, 0.5, -3.0, 6.0],
                 ("E2M1 by burn's e2m1 type (burn's own test values, quant_codes.rs:137-175): 0.25 -> 0, 0.75 -> 1, "
                 "2.5 -> 2, 5 -> 4; -0 is code 0x8 and -3 is 0xD: an E2M1 code is its nibble, never sign-extended")),
    }
    for value, (x, why) in minifloats.items():
        st = Setup("tensor", value, scales=[1.0])
        out.append(_q(f"quantize/{value.lower()}/tensor/minifloat-codes", st, f32(x), api="backend",
                      spec=("§5.3", "§11"), reason=why))
        nan = f32([np.nan, _NEG_NAN, _NAN_PAYLOAD, 1.0, -1.0, 0.5, 2.0, -0.0] * 2)
        out.append(_q(f"quantize/{value.lower()}/tensor/nan-code", st, nan, api="backend", tags=("class:nan",),
                      spec=("§5.3", "§11"),
                      reason="a NaN through burn's minifloat conversions (float8 0.7 convert_to_fp8, cubecl-common "
                             "fp4/cvt.rs): E4M3 0x7F with the NaN's sign, E5M2 0x7E | its top mantissa bits with "
                             "its sign, E2M1 +6 (0x7); 0.22 flex stores code 0"))
    return out


__all__ = ["SHAPE", "SHAPES", "Setup", "cases", "round_half_away", "shape_setup"]
