"""The comparison contracts: how a vector's outputs are compared under a profile. Bit for bit, except the few outputs
where burn itself is not exact (a backend's own GEMM order, a mean summed in the machine's order, a GPU reduction's
sign of zero); those get ``allclose`` with a bound derived here, and say why. The generator writes them into each
vector (``compare``), the fuzzer asks the same for its cases and its digests, and ``compare.judge`` applies them.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import oracle
from oracle import BlockLayout, QuantScheme, get_profile

from .backends.oracle import run_oracle
from .cases import Case
from .protocol import Error, Fault

__all__ = ["TOLERANT_OPS", "contracts"]


TOLERANT_OPS = frozenset({"compute_range", "qlayout", "ternary_matmul"})
"""The ops :func:`contracts` can give a tolerance; every other op compares bit for bit (the fuzzer's digest asks
:func:`contracts` only for these)."""


def contracts(c: Case, profile: str) -> dict:
    """Exact everywhere, except where burn itself is not: the dequantized matmul path (the backend's GEMM order)
    and a mean whose summation order is the machine's (flex's SIMD width)."""
    if c.op not in TOLERANT_OPS:
        return {}
    if c.op == "compute_range" and c.params.get("calibration") == "absmean":
        return _mean_contract(c, profile)
    if c.op == "compute_range" and _zero_sign_unpinned(c, profile):
        why = ("a min/max on this GPU is a reduction tree whose choice between +0 and -0 is its own "
               "(oracle/choices.py TENSOR_EXTREMUM 'unpinned'): compared as numbers, zero tolerance")
        contract = {"kind": "allclose", "rtol": 0.0, "atol": 0.0, "why": why}
        return {"min": contract, "max": contract}
    if c.op == "qlayout" and any(s["op"] == "matmul" for s in c.params["steps"]):
        return _layout_matmul_contract(c, profile)
    if c.op != "ternary_matmul" or _fast_path(c.inputs["lhs"].shape, profile):
        return {}
    lhs = np.asarray(c.inputs["lhs"], dtype=np.float64)
    k = lhs.shape[-1]
    w = c.inputs["rhs_codes"].astype(np.float64) * float(np.float32(c.inputs["rhs_scale"].ravel()[0]))
    with np.errstate(invalid="ignore", over="ignore"):
        bounds = np.abs(lhs.reshape(-1, k)) @ np.abs(w)
    # outputs fed by inf or NaN are inf or NaN on both sides (compared as such); the rest need a finite bound
    magnitude = float(bounds[np.isfinite(bounds)].max(initial=0.0))
    u = 2.0**-24
    gamma = (k + 1) * u / (1 - (k + 1) * u)
    atol = float(np.float32(2 * gamma * magnitude)) or float(np.finfo(np.float32).tiny)
    return {"out": {"kind": "allclose", "rtol": 2.0**-23, "atol": atol,
                    "why": ("this backend dequantizes the ternary weight and runs its own f32 GEMM, whose "
                            "summation order and FMA use are its choice; any order stays within "
                            f"gamma_(K+1)*sum|a*w| (Higham, Accuracy and Stability, 3.5), K={k}, of the exact "
                            "product, which the expectation holds rounded once to f32")}}


def _zero_sign_unpinned(c: Case, profile: str) -> bool:
    return (get_profile(profile).tensor_extremum == "unpinned" and c.params.get("calibration", "minmax") == "minmax"
            and bool(np.any(np.asarray(c.inputs["x"]) == 0)))


def _layout_matmul_contract(c: Case, profile: str) -> dict:
    """``q.matmul(f)`` anywhere in a chain: the backend dequantizes and runs its own f32 GEMM, whose summation
    order, FMA use and sign of an exact zero are its choice. A bound ``e`` on each element's distance to the exact
    result is carried from the first matmul through the steps after it: a GEMM adds ``gamma_(K+1) * (|y|+e)@|b|``
    to ``e@|b|`` (Higham 3.5), a scalar product scales ``e`` and adds one rounding, a move moves ``e`` with its
    element. The expectation holds the exact result rounded once."""
    try:  # a reshape's 0s as burn reads them
        steps = oracle.layout.resolved(np.shape(c.inputs["codes"]), c.params["steps"],
                                       get_profile(profile).reshape_zero_keeps_dim)
    except oracle.BurnPanic:  # the chain panics: no output to compare
        return {}
    first = next((i for i, s in enumerate(steps) if s["op"] == "matmul"), None)
    if first is None:
        return {}
    split = run_oracle("qlayout", dict(c.params, steps=steps[:first]), c.inputs, profile)
    if isinstance(split, (Error, Fault)):
        return {}
    y = split.outputs["x"]
    swap = oracle.layout.vecmat_swap(steps[first], y.shape)
    if swap is not None:  # the GEMM's lhs is what burn's own swap_dims left (a reshape of it, one dim being 1)
        swapped = run_oracle("qlayout", dict(c.params, steps=[*steps[:first], swap]), c.inputs, profile)
        if isinstance(swapped, (Error, Fault)):
            return {}
        y = swapped.outputs["x"].reshape(y.shape)
    u = 2.0**-24
    y = y.astype(np.float64)
    err = np.zeros_like(y)
    with np.errstate(invalid="ignore", over="ignore"):
        for s in steps[first:]:
            if s["op"] == "matmul":
                b = np.asarray(s["rhs"], dtype=np.float32).reshape(s["shape"]).astype(np.float64)
                k = b.shape[-2]
                gamma = (k + 1) * u / (1 - (k + 1) * u)
                err = np.matmul(err, np.abs(b)) + gamma * np.matmul(np.abs(y) + err, np.abs(b))
                y = np.matmul(y, b)
            elif s["op"] == "mul_scalar":
                v = abs(float(s["value"]))
                err = err * v + u * (np.abs(y) + err) * v
                y = y * float(s["value"])
            else:
                y, err = oracle.layout.apply(y, s), oracle.layout.apply(err, s)
    # outputs fed by inf or NaN, or whose exact value overflows f32 (every f32 GEMM overflows there too: the products
    # of mixed signs that could leave it to the order are undefined, oracle.views.check_gemm_order), are inf or NaN on
    # both sides and compared as such; the rest need a finite bound
    with np.errstate(over="ignore"):
        finite = np.isfinite(err) & np.isfinite(y.astype(np.float32))
    bound = float(err[finite].max(initial=0.0))
    atol = float(np.float32(2 * bound)) or float(np.finfo(np.float32).tiny)
    return {"x": {"kind": "allclose", "rtol": 2.0**-23, "atol": atol,
                  "why": ("the backend dequantizes and runs its own f32 GEMM, whose summation order, FMA use and "
                          "sign of an exact zero are its choice; any order stays within gamma_(K+1)*sum|a*b| "
                          "(Higham 3.5) of the exact product, carried through the later steps, and the "
                          "expectation holds the exact result rounded once to f32")}}


def _mean_contract(c: Case, profile: str) -> dict:
    """AbsMean under a profile whose mean may sum in any order: each mean of ``k`` non-negative values carries a
    relative error of at most ``gamma_k = k*u/(1-k*u)`` in the accumulation dtype (k-1 additions in any order,
    one division; Higham 3.5), times one rounding to the tensor dtype when it accumulates wider."""
    prof = get_profile(profile)
    if prof.mean_summation != "any_order":
        return {}
    x = c.inputs["x"]
    scheme = QuantScheme.from_json(c.params["scheme"])
    size = scheme.block_size()
    extents = [x.size] if size is None else [b for b in BlockLayout(x.shape, size).block if b > 1]
    narrow = x.dtype.itemsize == 2
    u_acc = 2.0**-24 if narrow and prof.half_mean_in_f32 else float(ml_dtypes.finfo(x.dtype).eps) / 2
    u_out = float(ml_dtypes.finfo(x.dtype).eps) / 2 if narrow and prof.half_mean_in_f32 else 0.0
    bound = 1.0
    for k in extents:
        bound *= (1 + k * u_acc / (1 - k * u_acc)) * (1 + u_out)
    why = ("burn-flex's default build sums with SIMD accumulators as wide as the CPU's vectors (and with rayon "
           "above 4M elements), so the mean's last bits depend on the machine; any summation order stays within "
           f"gamma_k relative error per mean of k values (Higham, Accuracy and Stability, 3.5), block extents {extents}")
    contract = {"kind": "allclose", "rtol": float(np.float32(bound - 1)), "atol": 0.0, "why": why}
    return {"min": contract, "max": contract}


def _fast_path(lhs_shape, profile: str) -> bool:
    """Whether the profile answers with ndarray's exact multiply-free sum (else an inexact GEMM)."""
    return oracle.matmul.takes_fast_path(tuple(lhs_shape), profile)
