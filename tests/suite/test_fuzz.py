"""qconform fuzz: determinism, the oracle agrees with itself, every mutant is found and named, shrinking,
repro suites in the vector format, digests and their bisection."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from hypothesis import given, settings

from conformance.arguments import compact, indices
from conformance.fuzz import engine
from conformance.fuzz.strategies import OPS, PENDING, RandomDraw, cases, draw_case
from conformance.mutants import MUTANTS
from conformance.vectors import OPS as ALL_OPS
from conformance.vectors import VectorError, load_suite

NDARRAY = "burn-0.22.0-pre.3/ndarray"


def test_every_op_has_a_strategy():
    assert set(OPS) | set(PENDING) == set(ALL_OPS) and not set(OPS) & set(PENDING)


def test_cases_are_deterministic_per_seed_and_index():
    a = draw_case(RandomDraw("7:3"), NDARRAY)
    b = draw_case(RandomDraw("7:3"), NDARRAY)
    assert a.op == b.op and a.params == b.params
    assert all(a.inputs[k].tobytes() == b.inputs[k].tobytes() for k in a.inputs)


def test_recorded_choices_replay_under_hypothesis():
    from hypothesis.internal.conjecture.data import ConjectureData

    from conformance.fuzz.strategies import DataDraw
    for i in range(50):
        d = RandomDraw(f"replay:{i}")
        a = draw_case(d, NDARRAY)
        b = draw_case(DataDraw(ConjectureData.for_choices(d.choices)), NDARRAY)
        assert a.op == b.op and a.params == b.params
        assert all(a.inputs[k].tobytes() == b.inputs[k].tobytes() for k in a.inputs)


@settings(max_examples=30, deadline=None, database=None)
@given(cases(NDARRAY, ["quantize", "dequantize"]))
def test_public_strategy_draws_cases(case):
    assert case.op in ("quantize", "dequantize") and "scheme" in case.params


@pytest.mark.parametrize("profile", ["burn-0.22.0-pre.3/ndarray", "burn-0.22.0-pre.3/flex", "burn-0.22.1/flex"])
def test_oracle_passes(profile):
    f = engine.Fuzzer(f"oracle:{profile}", seed=11)
    report = f.run(cases=300, shrink=False, log=lambda m: None)
    f.close()
    # a case whose answer is the backend's order (a product or sum that rounds) is skipped as undefined, not judged
    assert not report.divergences and set(report.statuses) <= {"passed", "undefined behaviour (skipped)"}
    assert report.statuses.get("passed", 0) >= 290, report.statuses


@pytest.mark.parametrize("name", sorted(n for n, m in MUTANTS.items() if not set(m.ops) & set(PENDING)))
def test_every_mutant_is_found_and_named(name):
    m = MUTANTS[name]
    f = engine.Fuzzer(f"mutant:{name}", seed=1, ops=list(m.ops))
    try:
        for i in range(5000):
            case, _ = f.draw(i)
            verdict, sig = f.judge(case)
            if sig is not None:  # named, if not first (no-clamp also turns NaN into 0, like nan-to-zero)
                assert f"mutant {name}" in verdict.diagnosis["matches"], sig
                return
    finally:
        f.close()
    pytest.fail(f"5000 cases did not find mutant {name}")


LAYOUT_MUTANTS = ("grid-not-permuted", "block-dims-not-permuted", "scales-not-sliced", "view-in-storage-order")


@pytest.mark.parametrize("name", LAYOUT_MUTANTS)
def test_layout_mutants_are_found_and_named_by_the_layout_strategies(name):
    f = engine.Fuzzer(f"mutant:{name}", seed=1, ops=["qlayout", "quantize_view"])
    try:
        for i in range(5000):
            case, _ = f.draw(i)
            verdict, sig = f.judge(case)
            if sig is not None:
                assert f"mutant {name}" in verdict.diagnosis["matches"], sig
                return
    finally:
        f.close()
    pytest.fail(f"5000 layout cases did not find mutant {name}")


def test_layout_ops_are_in_the_default_set():
    from conformance.fuzz.strategies import DEFAULT_OPS, OPT_IN
    assert set(OPT_IN) <= set(OPS) and not set(OPT_IN) & set(DEFAULT_OPS)
    assert {"qlayout", "quantize_view"} <= set(DEFAULT_OPS)
    drawn = {draw_case(RandomDraw(f"9:{i}"), NDARRAY).op for i in range(400)}
    assert {"qlayout", "quantize_view"} <= drawn


def _recipe_value_slowly(b0: int, mag: int, s: float, value: str, specials: bool, dtype) -> np.ndarray:
    """One recipe pair by the per-class formula of strategies.py, in Python floats (the reference the fuzzer's
    tables must reproduce bit for bit)."""
    from conformance.fuzz import strategies as st
    c = int(st._CLASS_OF_BYTE[b0 & 31])
    if not specials and c in (st.INF, st.NAN):
        c = st.CODE
    half, sign = mag >> 1, 1.0 - 2.0 * (mag & 1)
    lo, hi = st.QuantValue[value].range() if value in st.QuantValue.__members__ else (-127, 127)
    span = max(int(hi), 1)
    term = {st.CODE: half % (span + 1), st.TIE: half % (span + 1) + 0.5, st.TIE_UP: half % (span + 1) + 0.5,
            st.TIE_DOWN: half % (span + 1) + 0.5, st.FRACTION: mag * (span / 255.0), st.ANCHOR: (hi - lo) / 2,
            st.HUGE: 2.0 ** (half % 64), st.TINY: 2.0 ** -(half % 64)}
    fixed = {st.NEG_ZERO: -0.0, st.SUBNORMAL: sign * half * st._SUBNORMAL_F32,
             st.EXTREME: sign * float(st.EXTREMES[half % len(st.EXTREMES)]), st.INF: sign * np.inf, st.NAN: np.nan}
    v = fixed[c] if c in fixed else sign * s * term[c]
    with np.errstate(all="ignore"):
        x = np.array([v], dtype=np.float64).astype(np.float32).astype(dtype)
        if c in (st.TIE_UP, st.TIE_DOWN):
            x = np.nextafter(x, np.array(np.inf if c == st.TIE_UP else -np.inf, dtype))
    return x


def test_recipe_values_match_the_per_class_formula():
    """Every one of the 8192 recipe pairs, for every value and with and without specials."""
    from conformance.fuzz.strategies import FLOATS, VALUES, values_from_recipe
    pairs = bytes(b for c in range(32) for m in range(256) for b in (c, m))
    dtypes = list(FLOATS.values())
    for i, (value, specials) in enumerate((v, sp) for v in VALUES for sp in (False, True)):
        dtype, s = dtypes[i % 3], [1.0, 0.375, 3 * 2.0**-14, 15 * 2.0**3][i % 4]
        with np.errstate(all="ignore"):
            got = values_from_recipe(pairs, 8192, dtype, s, value, specials)
        want = b"".join(_recipe_value_slowly(pairs[2 * j], pairs[2 * j + 1], s, value, specials, dtype).tobytes()
                        for j in range(8192))
        assert got.dtype == dtype and got.tobytes() == want, (value, specials)


def test_workers_make_the_same_report():
    def summary(jobs):
        f = engine.Fuzzer("mutant:no-clamp", seed=3, jobs=jobs)
        report = f.run(cases=600, shrink=False, log=lambda m: None)
        f.close()
        return report.statuses, {sig: (d.count, d.first_index, d.choices, d.ops, d.explained, d.case.describe(),
                                       d.verdict.message) for sig, d in report.divergences.items()}

    one = summary(1)
    assert one[1]  # the mutant is found, so first cases and counts are compared too
    assert summary(2) == one


def test_shrink_and_repro(tmp_path):
    f = engine.Fuzzer("mutant:ties-even", seed=1, ops=["quantize"])
    report = f.run(cases=400, out=tmp_path, log=lambda m: None)
    f.close()
    (div,) = report.divergences.values()
    case = div.case
    assert case.inputs["x"].size == 1 and case.params["scheme"]["value"] == "Q8S"  # shrunk to one element
    x, s = float(case.inputs["x"][0]), float(case.inputs["scales"].ravel()[0])
    assert abs(x / s) % 1 == 0.5  # a tie, the whole point of the mutant
    suite = load_suite(div.written)
    (vector,) = suite.vectors
    assert vector.op == "quantize" and set(vector.expected) == set(suite.profiles)
    text = "\n".join(report.lines())
    assert "seed 1" in text and f"--vectors {div.written}" in text


def test_digest_equal_for_equal_backends_and_bisects_a_difference():
    from conformance.backends import open_backend
    a, b, c = (open_backend(s) for s in (f"oracle:{NDARRAY}", f"oracle:{NDARRAY}", "mutant:ties-even"))
    ra = engine.digest_run(a, NDARRAY, seed=4, cases=600, ops=["quantize"])
    rb = engine.digest_run(b, NDARRAY, seed=4, cases=600, ops=["quantize"])
    rc = engine.digest_run(c, NDARRAY, seed=4, cases=600, ops=["quantize"])
    assert ra.digest == rb.digest != rc.digest
    first = engine.first_difference(a, c, NDARRAY, seed=4, cases=600, ops=["quantize"], ca=ra.checkpoints,
                                    cb=rc.checkpoints)
    # independently: the first case on which the two answer differently, found case by case
    from conformance.compare import same_outcome
    for i in range(600):
        case = draw_case(RandomDraw(f"4:{i}"), NDARRAY, ["quantize"])
        with np.errstate(all="ignore"):
            if not same_outcome(a.run(case.op, case.params, case.inputs), c.run(case.op, case.params, case.inputs),
                                {}):
                break
    assert first == i


def test_cli_exit_status_seed_and_rerun_command(tmp_path, capsys):
    from conformance.cli import main
    assert main(["fuzz", "--backend", "oracle", "--cases", "200", "--seed", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "seed 3" in out and "no divergence" in out
    assert main(["fuzz", "--backend", "mutant:ties-even", "--ops", "quantize", "--cases", "400", "--seed", "1",
                 "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "matches mutant ties-even" in out and "qconform run --backend mutant:ties-even" in out
    assert main(["fuzz", "--digest", "--backend", "oracle", "--cases", "300", "--seed", "3"]) == 0
    assert "digests equal" in capsys.readouterr().out


def test_a_long_run_logs_its_progress(monkeypatch):
    monkeypatch.setattr(engine, "PROGRESS_SECONDS", 0.0)
    lines = []
    f = engine.Fuzzer("mutant:no-clamp", seed=3, ops=["quantize"])
    report = f.run(cases=30, shrink=False, log=lines.append)
    f.close()
    progress = [line for line in lines if line.startswith("[progress]")]
    assert len(progress) == 30 and progress[-1].startswith("[progress] 30 cases in ")
    diverging = sum(d.count for d in report.divergences.values())
    assert progress[-1].endswith(f"{diverging} diverging in {len(report.divergences)} classes, 0 faults")


def test_case_indices_read_back_what_compact_writes():
    assert indices("5-9,2,11") == [5, 6, 7, 8, 9, 2, 11] and compact([5, 6, 7, 8, 9, 2, 11]) == "5-9,2,11"
    for bad in ("3-1", "1,1", "1-3,2", "x", "-1", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            indices(bad)


def test_a_class_lists_its_cases_and_at_judges_them_again(tmp_path, capsys):
    """Every diverging case is in exactly one class's list, and ``--at`` judges just those cases again: the same
    class, the same count; a case outside every list passes alone."""
    f = engine.Fuzzer("mutant:no-clamp", seed=3)
    report = f.run(cases=300, shrink=False, log=lambda m: None)
    f.close()
    lists = [d.indices for d in report.divergences.values()]
    assert all(len(d.indices) == d.count and d.first_index in d.indices for d in report.divergences.values())
    listed = sorted(i for li in lists for i in li)
    assert len(listed) == len(set(listed)) == report.statuses["failed"]
    div = max(report.divergences.values(), key=lambda d: d.count)
    assert div.count >= 2
    from conformance.cli import main
    at = ",".join(map(str, div.indices))  # written out one by one; the summary writes runs as ranges
    assert main(["fuzz", "--backend", "mutant:no-clamp", "--seed", "3", "--at", at, "--no-shrink",
                 "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"DIVERGENCE x{div.count} (first at case {div.first_index}" in out and div.signature in out
    assert f"--at): {compact(div.indices)}" in out and f"--at {compact(div.indices)}" in out
    clean = next(i for i in range(300) if i not in set(listed))
    assert main(["fuzz", "--backend", "mutant:no-clamp", "--seed", "3", "--at", str(clean),
                 "--out", str(tmp_path)]) == 0


@pytest.mark.parametrize("profile", ["burn-0.22.0-pre.3/ndarray", "burn-0.22.1/ndarray", "burn-0.22.1/flex"])
def test_the_oracle_answers_every_layout_case(profile):
    """A valid request gets data or burn's panic, never a raw numpy error (ndarray's kept scale lists used to
    reach a numpy reshape in q_permute's model)."""
    f = engine.Fuzzer(f"oracle:{profile}", seed=7, ops=["qlayout"])
    try:
        for i in range(1500):
            case, _ = f.draw(i)
            try:
                f.vector(case)
            except engine.Undefined:
                pass
    finally:
        f.close()


def test_a_repro_suite_is_written_only_when_the_loader_takes_it(tmp_path):
    """A GEMM on huge operands needs an atol above the loader's bound: the fuzzer says so and writes nothing,
    rather than a suite `qconform run` refuses; a case inside the bounds is written and loads."""
    f = engine.Fuzzer(f"oracle:{NDARRAY}", seed=1, ops=["ternary_matmul"])
    try:
        case, choices = f.draw(0)
        big = engine.FuzzCase(case.op, case.params, dict(case.inputs, lhs=case.inputs["lhs"] * np.float32(1e30)))
        assert f.loadable(case) is None and "'atol' in [0, 1024]" in f.loadable(big)
        with pytest.raises(VectorError, match="its repro suite would not load"):
            f.write(engine.Divergence("s", case=big, choices=choices), tmp_path / "big")
        assert not (tmp_path / "big").exists()
        written = f.write(engine.Divergence("s", case=case, choices=choices), tmp_path / "small")
        assert load_suite(written).vectors[0].op == "ternary_matmul"
    finally:
        f.close()
