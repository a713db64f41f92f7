"""Slow, scalar, standard-library-only reference for burn's quantization (second implementation).

This is the "slowfloat" to the oracle's "SoftFloat": every element is handled one at a time, every
IEEE operation is computed exactly with :class:`fractions.Fraction` and rounded to nearest-even by
hand, and scale round-up searches an explicitly enumerated grid of representable values instead of
using the f32 bit trick. numpy is only used at the boundary (``from_array`` / ``to_array``).

Everything is derived from the spec in ``docs/spec/`` (section numbers below; the numpy traps of §12);
nothing is taken from ``oracle/``.

Values are represented as Python floats that hold the *exact* value of an element of the format in
question (every f32/f16/bf16/e4m3 value is exactly a double). Python's own float arithmetic is never
used on them: all arithmetic goes through :func:`_round` on exact rationals.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import struct
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

NAN = float("nan")
INF = float("inf")

PRE3_NDARRAY = "burn-0.22.0-pre.3/ndarray"
PRE3_FLEX = "burn-0.22.0-pre.3/flex"
PRE3_CUBECL = "burn-0.22.0-pre.3/cubecl"
V0221_NDARRAY = "burn-0.22.1/ndarray"
PROFILES = (PRE3_NDARRAY, PRE3_FLEX, PRE3_CUBECL, V0221_NDARRAY)


class SlowPanic(Exception):
    """A burn panic predicted by the slow reference (``message`` is burn's text when known)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------------------------
# Binary floating-point formats and exact correctly rounded arithmetic
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fmt:
    name: str
    p: int  # precision in bits, including the implicit bit
    emin: int  # exponent of the smallest normal
    emax: int  # exponent of the largest finite

    @property
    def max(self) -> Fraction:
        return (2 - Fraction(1, 2 ** (self.p - 1))) * Fraction(2) ** self.emax


F32 = Fmt("f32", 24, -126, 127)
F16 = Fmt("f16", 11, -14, 15)
BF16 = Fmt("bf16", 8, -126, 127)
FMTS = {"f32": F32, "f16": F16, "bf16": BF16}


def _pow2(e: int) -> Fraction:
    return Fraction(2**e) if e >= 0 else Fraction(1, 2 ** (-e))


def _floor_log2(a: Fraction) -> int:
    """floor(log2(a)) for a > 0, exactly."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if _pow2(e) > a:
        e -= 1
    assert _pow2(e) <= a < _pow2(e + 1)
    return e


def _round(q: Fraction, fmt: Fmt, neg: bool | None = None) -> float:
    """The value of ``fmt`` nearest to the exact rational ``q`` (ties to even), with IEEE overflow
    to infinity and gradual underflow. ``neg`` gives the sign of an exact zero result."""
    if q == 0:
        return -0.0 if neg else 0.0
    negative = q < 0
    a = -q if negative else q
    e = _floor_log2(a)
    quantum_exp = max(e, fmt.emin) - (fmt.p - 1)
    scaled = a / _pow2(quantum_exp)
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    value = n * _pow2(quantum_exp)
    if value > fmt.max:
        result = INF
    else:
        result = float(value)  # exact: every value of these formats is a double
        assert Fraction(result) == value
    return -result if negative else result


def is_nan(v: float) -> bool:
    return math.isnan(v)


def _sign(v: float) -> bool:
    return math.copysign(1.0, v) < 0


def mul(a: float, b: float, fmt: Fmt) -> float:
    if is_nan(a) or is_nan(b):
        return NAN
    neg = _sign(a) != _sign(b)
    if math.isinf(a) or math.isinf(b):
        if a == 0 or b == 0:
            return NAN
        return -INF if neg else INF
    if a == 0 or b == 0:
        return -0.0 if neg else 0.0
    return _round(Fraction(a) * Fraction(b), fmt, neg)


def add(a: float, b: float, fmt: Fmt) -> float:
    if is_nan(a) or is_nan(b):
        return NAN
    if math.isinf(a) or math.isinf(b):
        if math.isinf(a) and math.isinf(b) and _sign(a) != _sign(b):
            return NAN
        return a if math.isinf(a) else b
    exact = Fraction(a) + Fraction(b)
    if exact == 0:  # round-to-nearest: an exact zero sum is +0 unless both operands are -0
        return -0.0 if (_sign(a) and _sign(b)) else 0.0
    return _round(exact, fmt)


def div(a: float, b: float, fmt: Fmt) -> float:
    if is_nan(a) or is_nan(b):
        return NAN
    neg = _sign(a) != _sign(b)
    if math.isinf(a):
        if math.isinf(b):
            return NAN
        return -INF if neg else INF
    if math.isinf(b):
        return -0.0 if neg else 0.0
    if b == 0:
        if a == 0:
            return NAN
        return -INF if neg else INF
    if a == 0:
        return -0.0 if neg else 0.0
    return _round(Fraction(a) / Fraction(b), fmt, neg)


def cast(v: float, fmt: Fmt) -> float:
    """Round-to-nearest-even conversion (f32 -> f16/bf16, or identity for exact widening)."""
    if is_nan(v) or math.isinf(v) or v == 0:
        return v
    return _round(Fraction(v), fmt)


def f32(v) -> float:
    """Round an exact number (int, Fraction, or a double that is meant as a decimal literal's
    nearest double) to f32. Used for literals such as Rust's ``0.1f32``."""
    if isinstance(v, float):
        if is_nan(v) or math.isinf(v) or v == 0:
            return v
        return _round(Fraction(v), F32)
    return _round(Fraction(v), F32)


def round_half_away(v: float) -> float:
    """Rust ``f32::round``: nearest integer, ties away from zero, sign of zero kept."""
    if is_nan(v) or math.isinf(v):
        return v
    a = abs(Fraction(v))
    n = math.floor(a + Fraction(1, 2))
    return math.copysign(float(n), v)


def round_half_even(v: float) -> float:
    """IEEE roundToIntegralTiesToEven (CUDA ``rint``, numpy ``rint``)."""
    if is_nan(v) or math.isinf(v):
        return v
    a = abs(Fraction(v))
    n = math.floor(a)
    rem = a - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    return math.copysign(float(n), v)


def ceil_f(v: float) -> float:
    """Rust ``f32::ceil`` (sign of zero kept: ceil(-0.5) = -0.0)."""
    if is_nan(v) or math.isinf(v):
        return v
    return math.copysign(float(math.ceil(Fraction(v))), v)


# --- bit patterns (struct only) ------------------------------------------------------------


def f32_from_bits(u: int) -> float:
    return struct.unpack("<f", struct.pack("<I", u & 0xFFFFFFFF))[0]


def f32_bits(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def f16_from_bits(u: int) -> float:
    return struct.unpack("<e", struct.pack("<H", u & 0xFFFF))[0]


def f16_bits(v: float) -> int:
    return struct.unpack("<H", struct.pack("<e", v))[0]


def bf16_from_bits(u: int) -> float:
    return f32_from_bits((u & 0xFFFF) << 16)


def bf16_bits(v: float) -> int:
    u = f32_bits(v)
    assert is_nan(v) or u & 0xFFFF == 0, "value is not a bf16"
    return u >> 16


def e4m3_decode(code: int) -> float:
    """OCP E4M3FN byte -> value (sign bit honoured; 0x7F/0xFF NaN)."""
    sign = -1 if code & 0x80 else 1
    e, m = (code >> 3) & 0xF, code & 7
    if e == 15 and m == 7:
        return NAN
    if e == 0:
        v = Fraction(m, 512)
    else:
        v = Fraction(8 + m, 8) * _pow2(e - 7)
    return sign * float(v)


# --- numpy boundary ------------------------------------------------------------------------


def dtype_name(arr: np.ndarray) -> str:
    name = str(arr.dtype)
    return {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}[name]


def from_array(arr: np.ndarray) -> tuple[list[float], str]:
    """Flatten (row-major) an f32/f16/bf16 array into exact Python floats, via bit patterns."""
    arr = np.ascontiguousarray(arr)
    name = dtype_name(arr)
    if name == "f32":
        return [f32_from_bits(int(u)) for u in arr.reshape(-1).view(np.uint32)], name
    if name == "f16":
        return [f16_from_bits(int(u)) for u in arr.reshape(-1).view(np.uint16)], name
    return [bf16_from_bits(int(u)) for u in arr.reshape(-1).view(np.uint16)], name


def to_array(values: list[float], name: str, shape) -> np.ndarray:
    if name == "f32":
        bits = np.array([f32_bits(v) for v in values], dtype=np.uint32)
        return bits.view(np.float32).reshape(shape)
    if name == "f16":
        bits = np.array([f16_bits(v) for v in values], dtype=np.uint16)
        return bits.view(np.float16).reshape(shape)
    import ml_dtypes

    bits = np.array(
        [0x7FC0 if is_nan(v) else bf16_bits(v) for v in values], dtype=np.uint16
    )
    return bits.view(ml_dtypes.bfloat16).reshape(shape)


# --------------------------------------------------------------------------------------------
# Scheme model (§1)
# --------------------------------------------------------------------------------------------

VALUE_RANGE = {  # §1.2
    "Q8F": (-128, 127),
    "Q8S": (-127, 127),
    "Q4F": (-8, 7),
    "Q4S": (-7, 7),
    "Q2F": (-2, 1),
    "Q2S": (-1, 1),
    "E4M3": (-448, 448),
    "E5M2": (-57344, 57344),
    "E2M1": (-6, 6),
}
INTEGER_VALUES = ("Q8F", "Q8S", "Q4F", "Q4S", "Q2F", "Q2S")


def canonical_block(size) -> tuple[int, ...]:
    """BlockSize::new (§1.7): drop leading 1s, keep at most 5 entries."""
    size = list(size)
    while size and size[0] == 1:
        size.pop(0)
    return tuple(size[:5])


@dataclass(frozen=True)
class SlowScheme:
    value: str
    store: object  # "Native" or {"PackedU32": d} as a tuple ("PackedU32", d)
    mode: str
    tensor: str | None
    block: tuple[int, ...] | None
    block_dtype: str | None

    @classmethod
    def from_json(cls, d: dict) -> SlowScheme:
        store = d["store"]
        if isinstance(store, dict):
            ((k, v),) = store.items()
            store = (k, int(v))
        block = d.get("block")
        return cls(
            value=d["value"],
            store=store,
            mode=d["mode"],
            tensor=d.get("tensor"),
            block=None if block is None else canonical_block(block["size"]),
            block_dtype=None if block is None else block["dtype"],
        )

    def tensor_scale(self):
        if self.tensor is None and self.block is None:
            return "F32"
        return self.tensor

    def scale_dtype(self) -> str:
        if self.block is not None:
            return self.block_dtype
        return self.tensor or "F32"

    def is_two_level(self) -> bool:
        return self.block is not None and self.tensor_scale() is not None

    def num_levels(self) -> int:
        return (self.block is not None) + (self.tensor_scale() is not None)

    def range(self) -> tuple[int, int]:
        return VALUE_RANGE[self.value]


def to_dim_vec(block: tuple[int, ...], rank: int) -> list[int]:
    """§1.7: the block's *leading* entries fill the trailing positions."""
    out = [1] * rank
    n = min(rank, len(block))
    out[rank - n :] = list(block[:n])
    return out


def num_blocks(shape, block) -> list[int]:
    dims = to_dim_vec(block, len(shape))
    return [-(-s // b) for s, b in zip(shape, dims)]


def params_shape(shape, scheme: SlowScheme) -> list[int]:
    if scheme.block is None:
        return [1]
    return num_blocks(shape, scheme.block)


def unravel(index: int, shape) -> list[int]:
    coords = []
    for s in reversed(shape):
        coords.append(index % s)
        index //= s
    return coords[::-1]


def ravel(coords, shape) -> int:
    index = 0
    for c, s in zip(coords, shape):
        index = index * s + c
    return index


def block_of(index: int, shape, block) -> int:
    """Element (row-major) -> block (row-major over the block grid), through N-D coordinates."""
    dims = to_dim_vec(block, len(shape))
    coords = unravel(index, shape)
    grid = [-(-s // b) for s, b in zip(shape, dims)]
    return ravel([c // b for c, b in zip(coords, dims)], grid)


def _shape_debug(shape) -> str:
    return "Shape { dims: [" + ", ".join(str(s) for s in shape) + "] }"


# --------------------------------------------------------------------------------------------
# Scale round-up by grid search (§4.1, §11)
# --------------------------------------------------------------------------------------------


@functools.cache
def scale_grid(dtype: str) -> tuple[float, ...]:
    """All finite non-negative values of a scale dtype, ascending, enumerated from bit patterns."""
    if dtype == "F16":
        vals = [f16_from_bits(u) for u in range(0x7C00)]
    elif dtype == "BF16":
        vals = [bf16_from_bits(u) for u in range(0x7F80)]
    elif dtype == "UE4M3":
        vals = [e4m3_decode(c) for c in range(0x7F)]
    elif dtype == "UE8M0":
        vals = [float(_pow2(k)) for k in range(-127, 128)]
    else:
        raise ValueError(dtype)
    assert all(a < b for a, b in itertools.pairwise(vals))
    return tuple(vals)


def max_representable(dtype: str) -> float:
    if dtype == "F32":
        return float(F32.max)
    return scale_grid(dtype)[-1]


SUBNORMAL_SPACING = {"F16": float(_pow2(-24)), "UE4M3": float(_pow2(-9))}
F32_MIN_POSITIVE = float(_pow2(-126))


def round_up(scale: float, dtype: str, profile: str = PRE3_NDARRAY) -> float:
    """``ScaleDtype::round_up``: the smallest value of ``dtype`` that is >= ``scale``."""
    if dtype == "F32":
        return scale
    if dtype == "UE8M0":
        if profile != V0221_NDARRAY:
            raise SlowPanic("UE8M0 scales are not yet supported")
        if is_nan(scale):
            return scale
        grid = scale_grid("UE8M0")
        if scale <= grid[0]:
            return grid[0]
        if scale >= grid[-1]:
            return grid[-1]
        return grid[bisect.bisect_left(grid, scale)]
    if is_nan(scale):
        return scale
    grid = scale_grid(dtype)
    if scale >= grid[-1]:
        return grid[-1]
    if _sign(scale):
        # Release-build behaviour for negative scales (§4.1).
        if dtype in SUBNORMAL_SPACING:
            sp = SUBNORMAL_SPACING[dtype]
            return mul(ceil_f(div(scale, sp, F32)), sp, F32)
        # BF16: the bit trick moves the magnitude up to the next bf16 value (or infinity).
        i = bisect.bisect_left(grid, -scale)
        return -(grid[i] if i < len(grid) else INF)
    return grid[bisect.bisect_left(grid, scale)]


# --------------------------------------------------------------------------------------------
# Calibration (§2)
# --------------------------------------------------------------------------------------------


def _fold_select(values, better):
    acc = values[0]
    for v in values[1:]:
        if better(acc, v):
            acc = v
    return acc


def _argext_select(values, is_min: bool):
    """ndarray ``arg_view`` (argmin/argmax then gather): first NaN wins, else the first strict
    extremum (ties keep the earlier element)."""

    def better(acc, e):
        if is_nan(acc):
            return False
        if is_nan(e):
            return True
        return e < acc if is_min else e > acc

    return _fold_select(values, better)


def _ndarray_tensor_select(values, is_min: bool):
    """ndarray ``min_float_view``/``max_float_view``: NaN sticks; ties take the later element."""

    def better(acc, b):  # returns True when the result becomes b
        if is_nan(acc):
            return False
        return not (acc < b if is_min else acc > b)

    return _fold_select(values, better)


def _block_elements(vals, shape, block_dims, bidx):
    """Elements of one block as a nested list of extents block_dims (row-major within the block)."""
    grid = [-(-s // b) for s, b in zip(shape, block_dims)]
    bcoord = unravel(bidx, grid)
    out = []
    for local in range(math.prod(block_dims)):
        lc = unravel(local, block_dims)
        coords = [bc * b + c for bc, b, c in zip(bcoord, block_dims, lc)]
        out.append(vals[ravel(coords, shape)])
    return out


def _nested_reduce(elems, block_dims, reduce_axis):
    """reduce_blocks (§2): fold the block axes in ascending order, outermost first; each fold sees
    the elements along that axis in order. ``elems`` is row-major over ``block_dims``."""
    dims = list(block_dims)
    cur = list(elems)
    for axis in range(len(dims)):
        if dims[axis] == 1:
            continue
        new_dims = dims[:axis] + [1] + dims[axis + 1 :]
        out = []
        for j in range(math.prod(new_dims)):
            base = unravel(j, new_dims)
            line = []
            for k in range(dims[axis]):
                c = list(base)
                c[axis] = k
                line.append(cur[ravel(c, dims)])
            out.append(reduce_axis(line))
        cur, dims = out, new_dims
    assert len(cur) == 1
    return cur[0]


def _check_divisible(shape, scheme, profile):
    """reduce_blocks (§2): the divisibility assert, then the reshape to ``[n0, b0, n1, b1, ...]``."""
    dims = to_dim_vec(scheme.block, len(shape))
    for s, b in zip(shape, dims):
        if s % b != 0:
            raise SlowPanic(
                f"Tensor {_shape_debug(shape)} must be evenly divisible by block size "
                f"[{', '.join(str(d) for d in dims)}]"
            )
    if profile in (PRE3_NDARRAY, V0221_NDARRAY) and 2 * len(shape) > 6:
        # burn-ndarray's reshape handles at most 6 dims (crates/burn-ndarray/src/tensor.rs `reshape!`,
        # `_ => panic!("NdArray supports arrays up to 6 dimensions, received: {}", D)`): not in the spec's §8;
        # found by the burn harness (docs/burn-harness.md) and confirmed in burn's source.
        raise SlowPanic(f"NdArray supports arrays up to 6 dimensions, received: {2 * len(shape)}")
    return dims


def _mean(line, fmt):
    """Mean of a line: a left-to-right sum in ``fmt`` divided by n. Backends sum in their own order
    (§2), so comparisons against a backend must use inputs whose partial sums are exact in ``fmt``
    (then every order gives this result); :func:`exact_sums` checks that."""
    total = 0.0
    for v in line:
        total = add(total, v, fmt)
    return div(total, cast(f32(len(line)), fmt), fmt)


def exact_sums(vals, fmt_name) -> bool:
    """True when every partial sum of |vals| (in any order) is exact in the format: sufficient for an
    order-independent AbsMean."""
    fmt = FMTS[fmt_name]
    total = Fraction(0)
    for v in vals:
        if is_nan(v) or math.isinf(v):
            return False
        total += abs(Fraction(v))
    # all partial sums are multiples of the finest quantum among the inputs and at most `total`
    quanta = [Fraction(v).denominator for v in vals if v != 0]
    if not quanta:
        return True
    finest = Fraction(1, max(quanta))
    return total / finest < 2**fmt.p


def compute_range(vals, shape, fmt_name, scheme: SlowScheme, calibration="minmax", profile=PRE3_NDARRAY):
    """Returns (min list, max list) row-major over params_shape, values in the input format.

    MinMax selection semantics are burn-ndarray's (§2 and the ndarray reducers). The sign of a zero
    chosen among equal ±0 values, and NaN handling, are only pinned for ndarray; callers testing
    other profiles must not mix ±0 in one reduction or feed NaN to the GPU profile."""
    fmt = FMTS[fmt_name]
    if len(vals) == 0:
        raise SlowPanic("Cannot compute min of empty tensor")
    if calibration == "absmean":
        if scheme.is_two_level():
            raise SlowPanic(
                "AbsMean calibration has no two-level form: BitNet's gamma is a mean over the whole "
                "tensor or block, which a per-tensor scale cannot decompose"
            )
        absv = [abs(v) for v in vals]
        if scheme.block is None:
            gammas = [_mean(absv, fmt)]
        else:
            dims = _check_divisible(shape, scheme, profile)
            nb = math.prod(num_blocks(shape, scheme.block))
            gammas = [
                _nested_reduce(_block_elements(absv, shape, dims, b), dims, lambda ln: _mean(ln, fmt))
                for b in range(nb)
            ]
        return [-g for g in gammas], gammas
    if calibration != "minmax":
        raise ValueError(calibration)
    if scheme.block is None:
        return [_ndarray_tensor_select(vals, True)], [_ndarray_tensor_select(vals, False)]
    dims = _check_divisible(shape, scheme, profile)
    nb = math.prod(num_blocks(shape, scheme.block))
    mins, maxs = [], []
    for b in range(nb):
        elems = _block_elements(vals, shape, dims, b)
        mins.append(_nested_reduce(elems, dims, lambda ln: _argext_select(ln, True)))
        maxs.append(_nested_reduce(elems, dims, lambda ln: _argext_select(ln, False)))
    return mins, maxs


# --------------------------------------------------------------------------------------------
# Scale computation (§3, §3.1)
# --------------------------------------------------------------------------------------------


def compute_q_params(mins, maxs, fmt_name, scheme: SlowScheme, profile=PRE3_NDARRAY):
    """Returns (scales in the input format, global f32 or None)."""
    fmt = FMTS[fmt_name]
    a, b = scheme.range()
    range_t = cast(f32(b - a), fmt)
    two = cast(2.0, fmt)
    scales = []
    for mn, mx in zip(mins, maxs):
        min_abs, max_abs = abs(mn), abs(mx)
        alpha = max(min_abs, max_abs)  # float_lower + mask_where
        scales.append(div(mul(alpha, two, fmt), range_t, fmt))
    if not scheme.is_two_level():
        return scales, None
    block_dtype = scheme.scale_dtype()
    big = max_representable(block_dtype)
    if big > 65504.0:
        raise SlowPanic(
            f"block scales in {block_dtype} reach f32's range, which a per-tensor scale cannot absorb"
        )
    s32 = list(scales)  # widening to f32 is exact
    peak = _ndarray_tensor_select(s32, False)
    glob = div(peak, big, F32)
    if glob < F32_MIN_POSITIVE or (is_nan(glob) and profile == PRE3_FLEX):
        # clamp_min: flex uses f32::max (NaN -> the bound); ndarray keeps NaN (its SIMD max is not
        # modelled, and either way every element of the tensor then panics on a NaN quotient).
        glob = F32_MIN_POSITIVE
    normalized = [cast(div(s, glob, F32), fmt) for s in s32]
    return normalized, glob


# --------------------------------------------------------------------------------------------
# Quantize (§5.2-5.4)
# --------------------------------------------------------------------------------------------

F32_TENTH = f32(Fraction(1, 10))


@dataclass
class SlowQTensor:
    codes: list[int]
    shape: tuple[int, ...]
    scales: list[float]  # stored scales as f32 values
    global_scale: float | None
    scheme: SlowScheme


def _ndarray_valid_scale(e: float) -> float:
    return F32_TENTH if e == 0 else e


def _flex_validated_scale(s: float, dtype: str, profile: str) -> float:
    r = round_up(s, dtype, profile)
    if r > 0 and not math.isinf(r):
        return r
    return round_up(F32_MIN_POSITIVE, dtype, profile)


def _clamp_rust(v: float, lo: float, hi: float) -> float:
    """num-traits ``clamp`` / ``f32::clamp``: NaN passes through."""
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


def _clamp_cuda(v: float, lo: float, hi: float) -> float:
    """``max(min(v, hi), lo)`` with fminf/fmaxf: a NaN operand yields the other operand."""
    m = hi if is_nan(v) else (min(hi, v))
    return max(lo, m)


def _scale_index(scheme, shape, nscales):
    if scheme.block is None:
        return lambda i: 0
    return lambda i: block_of(i, shape, scheme.block)


def quantize(vals, shape, fmt_name, scheme: SlowScheme, scales, scales_fmt, glob=None, profile=PRE3_NDARRAY):
    """``B::quantize`` for one profile. ``scales`` are exact values in ``scales_fmt`` (row-major
    block grid); ``glob`` is the two-level per-tensor scale (f32) or None."""
    shape = tuple(shape)
    a, b = scheme.range()
    lo, hi = float(a), float(b)
    dt = scheme.scale_dtype()
    two_level = scheme.is_two_level()

    if profile in (PRE3_NDARRAY, V0221_NDARRAY):
        if fmt_name != "f32":
            raise SlowPanic("ndarray quantizes f32 tensors only")
        rounded = [round_up(s, dt, profile) for s in scales]  # f32 widening is exact
        g = None
        if glob is not None:
            if not two_level:
                raise SlowPanic("a per-tensor scale should come with a two-level scheme")
            g = round_up(glob, "F32", profile)
        # Support matrix of the default build (§5.2): Native + Symmetric, per-tensor Q8F/Q8S/Q2S,
        # per-block Q8F/Q8S.
        allowed = ("Q8F", "Q8S", "Q2S") if scheme.block is None else ("Q8F", "Q8S")
        if scheme.mode != "Symmetric" or scheme.store != "Native" or scheme.value not in allowed:
            raise SlowPanic("not implemented: Quantization not supported for scheme")
        if scheme.block is None:
            rounded = rounded[:1]
            eff = [_ndarray_valid_scale(rounded[0])]
        else:
            if two_level and g is None:
                raise SlowPanic("a two-level scheme should have a per-tensor scale")
            m = g if g is not None else 1.0
            eff = [_ndarray_valid_scale(mul(m, s, F32)) for s in rounded]
        where = _scale_index(scheme, shape, len(eff))
        codes = []
        for i, x in enumerate(vals):
            q = _clamp_rust(round_half_away(div(x, eff[where(i)], F32)), lo, hi)
            if is_nan(q):
                raise SlowPanic("called `Option::unwrap()` on a `None` value")
            codes.append(int(q))
        return SlowQTensor(codes, shape, rounded, g, scheme)

    if profile == PRE3_FLEX:
        xs = list(vals)  # f16/bf16 -> f32 is exact
        stored = [_flex_validated_scale(s, dt, profile) for s in scales]
        g = None
        if glob is not None:
            if not two_level:
                raise SlowPanic("a per-tensor scale should come with a two-level scheme")
            g = _flex_validated_scale(glob, scheme.tensor_scale(), profile)
        if scheme.block is None:
            invs = [div(1.0, stored[0], F32)]
        else:
            m = g if g is not None else 1.0
            invs = [div(1.0, mul(m, s, F32), F32) for s in stored]
        where = _scale_index(scheme, shape, len(invs))
        codes = []
        for i, x in enumerate(xs):
            q = _clamp_rust(round_half_away(mul(x, invs[where(i)], F32)), lo, hi)
            codes.append(0 if is_nan(q) else int(max(-128.0, min(127.0, q))))  # saturating `as i8`
        return SlowQTensor(codes, shape, stored, g, scheme)

    if profile == PRE3_CUBECL:
        if scheme.block is not None and not canonical_block(scheme.block):
            # check_block_size_compat unwraps the last extent of a block of 1s (canonically empty), Native too
            raise SlowPanic("called `Option::unwrap()` on a `None` value")
        fmt = FMTS[fmt_name]
        sfmt = FMTS[scales_fmt]
        # round_up_to_dtype::<F>: F -> f32 (exact), grid round-up, back to F (RNE).
        inner = [cast(round_up(s, dt, profile), sfmt) for s in scales]
        if scheme.block is None:
            inner = inner[:1]
        where = _scale_index(scheme, shape, len(inner))
        codes = []
        for i, x in enumerate(vals):
            s = inner[where(i)]
            if two_level:
                y = cast(div(x, mul(glob, s, F32), F32), fmt)
            else:
                y = div(x, cast(s, fmt), fmt)
            q = _clamp_cuda(round_half_even(y), lo, hi)
            codes.append(int(q))
        return SlowQTensor(codes, shape, inner, glob if two_level else None, scheme)

    raise ValueError(profile)


def quantize_dynamic(vals, shape, fmt_name, scheme: SlowScheme, profile=PRE3_NDARRAY):
    mins, maxs = compute_range(vals, shape, fmt_name, scheme, "minmax", profile)
    scales, glob = compute_q_params(mins, maxs, fmt_name, scheme, profile)
    return quantize(vals, shape, fmt_name, scheme, scales, fmt_name, glob, profile)


# --------------------------------------------------------------------------------------------
# Dequantize (§6)
# --------------------------------------------------------------------------------------------


def dequantize(qt: SlowQTensor, out_name="f32", profile=PRE3_NDARRAY) -> list[float]:
    scheme, shape = qt.scheme, qt.shape
    where = _scale_index(scheme, shape, len(qt.scales))
    out = []
    if profile in (PRE3_NDARRAY, V0221_NDARRAY):
        if out_name != "f32":
            raise SlowPanic(f"not implemented: Unsupported dtype {out_name.upper()}")
        if scheme.block is None:
            eff = [_ndarray_valid_scale(qt.scales[0])]
        else:
            m = qt.global_scale if qt.global_scale is not None else 1.0
            eff = [_ndarray_valid_scale(mul(m, s, F32)) for s in qt.scales]
        return [mul(eff[where(i)], float(q), F32) for i, q in enumerate(qt.codes)]
    fmt = FMTS[out_name]
    if profile == PRE3_FLEX:
        if scheme.block is None:
            eff = [qt.scales[0]]
        else:
            m = qt.global_scale if qt.global_scale is not None else 1.0
            eff = [mul(m, s, F32) for s in qt.scales]
        return [cast(mul(eff[where(i)], float(q), F32), fmt) for i, q in enumerate(qt.codes)]
    if profile == PRE3_CUBECL:
        for i, q in enumerate(qt.codes):
            s = qt.scales[where(i)]
            if scheme.is_two_level():
                out.append(cast(mul(float(q), mul(qt.global_scale, s, F32), F32), fmt))
            else:
                out.append(mul(cast(float(q), fmt), cast(s, fmt), fmt))
        return out
    raise ValueError(profile)


# --------------------------------------------------------------------------------------------
# Layout steps (§9): one ``Tensor`` call, element by element
# --------------------------------------------------------------------------------------------
#
# A step maps each output coordinate to the input coordinate it reads (burn-tensor's documented semantics of
# each call), so a tensor is a flat row-major list and its shape. Quantized tensors in motion follow §9.1-9.3
# for the two CPU backends of 0.22.0-pre.3: ndarray moves the codes and keeps the scale list (permutes move the
# scale grid and the block dims with the axes); flex moves per-tensor codes and requantizes a block tensor with
# its own calibration; both requantize gather / repeat_dim / cat through the public quantize_dynamic and return
# floats for expand and arithmetic.


def _permutation(step: dict, rank: int) -> list[int]:
    axes = list(range(rank))
    if step["op"] == "transpose":
        axes[rank - 2], axes[rank - 1] = axes[rank - 1], axes[rank - 2]
    elif step["op"] == "swap_dims":
        a, b = step["dims"]
        axes[a], axes[b] = axes[b], axes[a]
    else:
        axes = list(step["axes"])
    return axes


def _source(step: dict, shape: tuple) -> tuple[tuple, object]:
    """The output shape of a pure move, and the function output coordinates -> input coordinates."""
    op, rank = step["op"], len(shape)
    if op in ("transpose", "swap_dims", "permute"):
        axes = _permutation(step, rank)

        def back(c):
            src = [0] * rank
            for i, a in enumerate(axes):
                src[a] = c[i]
            return src
        return tuple(shape[a] for a in axes), back
    if op == "flip":
        flipped = set(step["axes"])
        return shape, lambda c: [shape[i] - 1 - x if i in flipped else x for i, x in enumerate(c)]
    if op == "slice":
        ranges = [list(r) for r in step["ranges"]] + [[0, n, 1] for n in shape[len(step["ranges"]):]]
        out = tuple(len(range(min(a, n), min(b, n), by)) for (a, b, by), n in zip(ranges, shape))
        return out, lambda c: [a + x * by for x, (a, _, by) in zip(c, ranges)]
    if op == "select":
        dim, idx = step["dim"], list(step["indices"])
        out = tuple(len(idx) if i == dim else n for i, n in enumerate(shape))
        return out, lambda c: [idx[x] if i == dim else x for i, x in enumerate(c)]
    if op == "gather":
        dim, idx, out = step["dim"], list(step["indices"]), tuple(step["shape"])
        return out, lambda c: [idx[ravel(c, out)] if i == dim else x for i, x in enumerate(c)]
    if op in ("cat", "repeat_dim"):  # whole copies of the tensor one after the other along dim
        dim, k = step["dim"], step["copies" if op == "cat" else "times"]
        out = tuple(n * k if i == dim else n for i, n in enumerate(shape))
        return out, lambda c: [x % shape[i] if i == dim else x for i, x in enumerate(c)]
    if op == "expand":
        out = tuple(step["shape"])
        lead = len(out) - rank
        return out, lambda c: [0 if shape[i] == 1 else c[i + lead] for i in range(rank)]
    raise ValueError(f"not a move: {op}")


def _matmul(vals, shape, step) -> tuple[list[float], tuple]:
    """The exact product (rationals) rounded once to f32; batch dims broadcast."""
    rhs, rshape = [f32(v) for v in step["rhs"]], tuple(step["shape"])
    m, k, n = shape[-2], shape[-1], rshape[-1]
    batch = tuple(max(a, b) for a, b in zip(shape[:-2], rshape[:-2]))
    out_shape = batch + (m, n)
    out = []
    for flat in range(math.prod(out_shape)):
        c = unravel(flat, out_shape)
        lb = [0 if s == 1 else x for x, s in zip(c[:-2], shape[:-2])]
        rb = [0 if s == 1 else x for x, s in zip(c[:-2], rshape[:-2])]
        total = sum(Fraction(vals[ravel(lb + [c[-2], j], shape)]) * Fraction(rhs[ravel(rb + [j, c[-1]], rshape)])
                    for j in range(k))
        out.append(_round(total, F32))
    return out, out_shape


def layout_step(vals: list, shape, step: dict) -> tuple[list, tuple]:
    """One step on a flat row-major list (floats, or integer codes for a move)."""
    shape = tuple(shape)
    op = step["op"]
    if op == "reshape":
        assert math.prod(step["shape"]) == len(vals)
        return list(vals), tuple(step["shape"])
    if op == "mul_scalar":
        return [mul(v, f32(step["value"]), F32) for v in vals], shape
    if op == "matmul":
        return _matmul(vals, shape, step)
    out, back = _source(step, shape)
    return [vals[ravel(back(unravel(i, out)), shape)] for i in range(math.prod(out))], out


def layout_view(vals: list, shape, steps: list[dict]) -> tuple[list, tuple]:
    shape = tuple(shape)
    for s in steps:
        vals, shape = layout_step(vals, shape, s)
    return vals, shape


MOVES = ("reshape", "transpose", "swap_dims", "permute", "flip", "slice", "select")
PERMUTES = ("transpose", "swap_dims", "permute")
REQUANTIZED = ("gather", "repeat_dim", "cat")  # not forwarded by Dispatch: the trait default on every CPU backend


def _flex_private_quantize(vals, shape, scheme: SlowScheme, profile: str) -> SlowQTensor:
    """burn-flex's own quantize_dynamic, behind its per-block layout ops: per block alpha = the largest |x|
    (from 0, NaN skipped), s = 2 alpha / (b - a), validated; one-level schemes only here."""
    assert not scheme.is_two_level()
    a, b = scheme.range()
    nblocks = math.prod(num_blocks(shape, scheme.block))
    peaks = [0.0] * nblocks
    for i, v in enumerate(vals):
        j = block_of(i, shape, scheme.block)
        if not is_nan(v) and abs(v) > peaks[j]:
            peaks[j] = abs(v)
    raw = [div(mul(2.0, p, F32), float(b - a), F32) for p in peaks]
    return quantize(vals, shape, "f32", scheme, raw, "f32", None, profile)


def _permute_block(scheme: SlowScheme, rank: int, axes) -> SlowScheme:
    dims = to_dim_vec(scheme.block, rank)
    return SlowScheme(scheme.value, scheme.store, scheme.mode, scheme.tensor,
                      canonical_block([dims[a] for a in axes]), scheme.block_dtype)


def _ndarray_values(qt: SlowQTensor, profile: str) -> list[float]:
    """ndarray's dequantize of what it holds: the bytes re-read for the current shape (a kept scale list may be
    too short for it), then one scale per block asserted."""
    if qt.scheme.block is not None:
        blocks = math.prod(num_blocks(qt.shape, qt.scheme.block))
        if len(qt.codes) + 4 * len(qt.scales) < 4 * blocks:
            raise SlowPanic("Bytes too short")
        if blocks != len(qt.scales):
            raise SlowPanic(f"Invalid per-block quantization: {len(qt.scales)} blocks for a "
                            f"{_shape_debug(qt.shape)} tensor")
    return dequantize(qt, "f32", profile)


def _values(held, profile: str) -> list[float]:
    if not isinstance(held, SlowQTensor):
        return held[0]
    return _ndarray_values(held, profile) if profile == PRE3_NDARRAY else dequantize(held, "f32", profile)


def qlayout_step(held, step: dict, profile: str):
    """One ``Tensor`` call on what the backend holds: a SlowQTensor, or (values, shape) once it is float."""
    if not isinstance(held, SlowQTensor):
        return layout_step(held[0], held[1], step)
    op, rank, scheme = step["op"], len(held.shape), held.scheme
    if op in ("swap_dims", "permute") and _permutation(step, rank) == list(range(rank)):
        return held  # burn-tensor returns the tensor itself: no backend call
    if op in ("expand", "mul_scalar", "matmul"):
        return layout_step(_values(held, profile), held.shape, step)
    if op in REQUANTIZED:
        vals, shape = layout_step(_values(held, profile), held.shape, step)
        return quantize_dynamic(vals, shape, "f32", scheme, profile)
    if profile == PRE3_FLEX and scheme.block is not None:  # block_safe_layout_op
        vals, shape = layout_step(dequantize(held, "f32", profile), held.shape, step)
        if op in PERMUTES:
            scheme = _permute_block(scheme, rank, _permutation(step, rank))
        return _flex_private_quantize(vals, shape, scheme, profile)
    codes, shape = layout_step(held.codes, held.shape, step)
    scales = held.scales
    if profile == PRE3_NDARRAY and op in PERMUTES and scheme.block is not None:  # q_permute: the grid follows
        grid = num_blocks(held.shape, scheme.block)
        if len(scales) != math.prod(grid):
            raise SlowPanic("ndarray::ShapeError rebuilding the scale grid")
        scales, _ = layout_step(scales, grid, step)
        scheme = _permute_block(scheme, rank, _permutation(step, rank))
    return SlowQTensor(codes, shape, scales, held.global_scale, scheme)


def qlayout(codes: list[int], shape, scales: list[float], scheme: SlowScheme, steps: list[dict], profile: str):
    """A Native Q8S/Q8F tensor built from its parts (one-level or per-tensor F32 scales), the steps, the result:
    ``(x, held)`` with ``x`` the dequantized values and ``held`` the SlowQTensor (``None`` for a float result)."""
    assert profile in (PRE3_NDARRAY, PRE3_FLEX) and scheme.store == "Native"
    held = SlowQTensor(list(codes), tuple(shape), list(scales), None, scheme)
    for s in steps:
        held = qlayout_step(held, s, profile)
    if isinstance(held, SlowQTensor):
        return _values(held, profile), held
    return held[0], None
