"""The worked examples printed in docs/spec, recomputed with the oracle.

Each check names a page, the text the page prints, and the oracle computation that must print the same text (f32
values in their shortest round-trip form). The printed numbers come from burn's own tests and hand derivations
(docs/spec/examples.md); a page and the oracle that drift apart fail here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import oracle as o
from oracle import QuantScheme, QuantValue, ScaleDtype

SPEC = Path(__file__).resolve().parents[1] / "docs" / "spec"
NDARRAY, FLEX, V0221 = "burn-0.22.0-pre.3/ndarray", "burn-0.22.0-pre.3/flex", "burn-0.22.1/ndarray"
Q8S = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q8S)
Q2S = QuantScheme.default().with_store(o.NATIVE).with_value(QuantValue.Q2S)


def fmt(values) -> str:
    """`[a, b]` with each f32 in shortest form, integers without `.0`, like the pages print them."""
    def one(v):
        v = np.float32(v)
        if v == int(v) and abs(v) < 2**24:
            return str(int(v))
        return np.format_float_positional(v, trim="-")
    return "[" + ", ".join(one(v) for v in np.asarray(values).ravel()) + "]"


def nested(column) -> str:
    """A grid of shape [n, 1] as the pages print it: `[[a], [b]]`."""
    return "[" + ", ".join(fmt([v]) for v in np.asarray(column).ravel()) + "]"


def run(op, params, inputs, profile=NDARRAY):
    return o.run(op, params, inputs, profile=profile)


def cases():
    f32 = np.float32
    block4 = Q8S.per_block([4], ScaleDtype.F32).to_json()
    yield "calibration.md", "`[[-0.45000002], [-0.25]]`", lambda: nested(run(
        "compute_range", {"scheme": Q2S.per_block([4], ScaleDtype.F32).to_json(), "calibration": "absmean"},
        {"x": f32([[-0.9, -0.3, 0, 0.6], [0.1, 0.2, 0.3, 0.4]])})["min"])
    yield "calibration.md", "`[0.45000002]`", lambda: fmt(run(
        "compute_range", {"scheme": Q2S.to_json(), "calibration": "absmean"}, {"x": f32([-0.9, -0.3, 0, 0.6])})["max"])
    yield "calibration.md", "`[[0.5], [1.8], [0.04], [-0.01]]`", lambda: nested(run(
        "compute_range", {"scheme": block4, "calibration": "minmax"},
        {"x": f32([[-1.8, -1, 0, 0.5], [1.8, 1, 0, -0.5], [0.01, 0.02, 0.03, 0.04], [-0.01, -0.02, -0.03, -0.04]])}
    )["max"])
    two_level = Q8S.per_block([4], ScaleDtype.UE4M3).per_tensor(ScaleDtype.F32).to_json()
    yield "qparams.md", "normalized scales `[448, 448, 9.955555, 9.955555]`", lambda: fmt(run(
        "compute_q_params", {"scheme": two_level},
        {"min": f32([[-1.8], [-0.5], [0.01], [-0.04]]), "max": f32([[0.5], [1.8], [0.04], [-0.01]])})["scales"])
    for dtype, column in [("F16", 1), ("BF16", 2), ("UE4M3", 3)]:
        yield "scales.md", f"0.3 → {dtype} {column}", lambda dtype=dtype, column=column: _round_up_row(dtype, column)
    yield "bytes.md", "`00 19 33 4c 66 7f 80 ff 30 20 00 00 40 40`", lambda: " ".join(f"{b:02x}" for b in run(
        "to_bytes", {"scheme": two_level}, {"codes": np.int8([0, 25, 51, 76, 102, 127, -128, -1]),
                                            "scales": f32([0.5, 0.125]), "global": f32([3.0])})["bytes"])
    yield "bytes.md", "`81 b9 00 23 d4 36 68 3c`", lambda: " ".join(f"{b:02x}" for b in run(
        "to_bytes", {"scheme": Q8S.to_json()}, {"codes": np.int8([-127, -71, 0, 35]), "scales": f32([0.014173228])})["bytes"])
    yield "dequantize.md", "`[-12.7, -7.7000003, -2.6000001, 2.5, 7.6, 12.7]`", lambda: fmt(run(
        "dequantize", {"scheme": Q8S.to_json(), "dtype": "f32"},
        {"codes": np.int8([-127, -77, -26, 25, 76, 127]), "scales": f32([0.1])})["x"])
    yield "quantized-ops.md", "`[[1.53, -1.53, -0.63000005], [0.9,\n-0.99, 0.9], [-3.1499999, 0.35999998, -0.45]]`", \
        lambda: _ternary()
    yield "examples.md", "scale `62 / 254 = 0.24409449`", lambda: fmt(
        o.quantize_dynamic(np.arange(32, dtype=np.float32), Q8S).scales)[1:-1]
    yield "profiles.md", "round-up `3 → 4`, `1.5 → 2`", lambda: "round-up `3 → {}`, `1.5 → {}`".format(
        *fmt(run("round_up", {"dtype": "UE8M0"}, {"scales": f32([3, 1.5])}, profile=V0221)["rounded"])[1:-1].split(", "))


def _round_up_row(dtype, column):
    text = (SPEC / "scales.md").read_text()
    rows = [r for r in text.splitlines() if r.startswith(("| 0.3 |", "| 1/3 |", "| 1e-3 |", "| −0.3 |"))]
    inputs = np.float32([0.3, 1 / 3, 1e-3, -0.3])
    got = run("round_up", {"dtype": dtype}, {"scales": inputs})["rounded"]
    printed = [r.split("|")[column + 1].strip().split(" ")[0].replace("−", "-") for r in rows]
    return [np.float32(p) == g for p, g in zip(printed, got, strict=True)]


def _ternary():
    w = np.float32([[0.9, -0.2, 0.5], [-0.8, 0.1, 0.7], [0, 0.6, -0.4], [0.3, -0.9, 0.2]])
    qt = o.quantize_dynamic(w, Q2S)
    a = np.float32([[0.5, -1.2, 0.3, 2.0], [1, 0, -0.7, 0.4], [-2, 1.5, 0.1, -0.3]])
    out = run("ternary_matmul", {}, {"lhs": a, "rhs_codes": qt.codes, "rhs_scale": np.float32(qt.scales)})["out"]
    return out


@pytest.mark.parametrize("page,printed,compute", list(cases()), ids=lambda v: v if isinstance(v, str) else "")
def test_page_example(page, printed, compute):
    got = compute()
    if page == "scales.md":
        assert all(got), f"{page}: a printed round-up differs from the oracle: {got}"
        return
    if page == "quantized-ops.md":
        expected = np.float32([[1.53, -1.53, -0.63000005], [0.9, -0.99, 0.9], [-3.1499999, 0.35999998, -0.45]])
        assert got.view(np.uint32).tolist() == expected.view(np.uint32).tolist()
    else:
        assert got in printed, f"oracle prints {got}"
    assert printed in (SPEC / page).read_text(), f"{page} no longer prints {printed!r}"
