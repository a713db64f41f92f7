from types import SimpleNamespace

import ml_dtypes
import numpy as np

from conformance import compare
from conformance.protocol import Error, Fault, Result
from conformance.vectors import Expected
from oracle import Stages


def vec(expected, params=None, inputs=None, op="quantize"):
    return SimpleNamespace(id="0" * 20, alias="a/b", op=op, params=params or {}, tags=["value:Q8S"],
                           inputs=inputs or {}, expected={"p": expected})


def judge(expected, outcome, **kw):
    return compare.judge(vec(expected, kw.pop("params", None), kw.pop("inputs", None)), "p", outcome, **kw)


def test_identical_outputs_pass():
    e = Expected(outputs={"x": np.array([1.0, np.nan], np.float32)})
    got = np.array([1.0, np.nan], np.float32)
    assert judge(e, Result({"x": got})).status == compare.PASSED


def test_any_nan_equals_any_nan_but_signed_zeros_differ():
    nan_a = np.array([0x7FC00000], np.uint32).view(np.float32)
    nan_b = np.array([0xFFC00123], np.uint32).view(np.float32)
    assert judge(Expected(outputs={"x": nan_a}), Result({"x": nan_b})).status == compare.PASSED
    v = judge(Expected(outputs={"x": np.array([0.0], np.float32)}), Result({"x": np.array([-0.0], np.float32)}))
    assert v.status == compare.FAILED and v.kind == "mismatch"
    row = v.details["outputs"][0]["first"][0]
    assert row["expected"]["fields"] == "0|00000000|" + "0" * 23
    assert row["actual"]["fields"] == "1|00000000|" + "0" * 23 and row["actual"]["bits"] == "0x80000000"


def test_float_distance_is_in_ulps_across_dtypes():
    one = np.array([1.0], ml_dtypes.bfloat16)
    up2 = np.array([1.0 + 2 * 2.0**-7], ml_dtypes.bfloat16)
    v = judge(Expected(outputs={"x": one}), Result({"x": up2}))
    d = v.details["outputs"][0]
    assert d["first"][0]["distance"] == 2 and d["histogram"] == {"2": 1}
    assert d["first"][0]["actual"]["fields"] == "0|01111111|0000010"
    neg = judge(Expected(outputs={"x": np.array([-1.0], np.float32)}),
                Result({"x": np.array([np.nextafter(np.float32(-1), np.float32(-2))], np.float32)}))
    assert neg.details["outputs"][0]["first"][0]["distance"] == -1


def test_int_codes_report_code_distance_and_the_input_value():
    x = np.array([0.5, 2.5, 3.0], np.float32)
    v = judge(Expected(outputs={"codes": np.array([1, 3, 3], np.int8)}), Result({"codes": np.array([0, 2, 3], np.int8)}),
              inputs={"x": x})
    d = v.details["outputs"][0]
    assert d["differing"] == 2 and d["total"] == 3 and d["histogram"] == {"-1": 2}
    assert [r["index"] for r in d["first"]] == [[0], [1]]
    assert d["first"][1]["input"]["value"] == "2.5"
    assert "2 of 3 elements differ" in v.message and "x=2.5" in v.message


def test_fp8_codes_show_fields_and_step_distance():
    params = {"scheme": {"value": "E4M3", "store": "Native", "mode": "Symmetric", "tensor": None, "block": None}}
    want = np.array([0x38], np.uint8).view(np.int8)   # 1.0 in E4M3: 0|0111|000
    got = np.array([0xB9], np.uint8).view(np.int8)    # -1.125: 1|0111|001
    v = judge(Expected(outputs={"codes": want}), Result({"codes": got}), params=params)
    row = v.details["outputs"][0]["first"][0]
    assert row["expected"]["fields"] == "0|0111|000" and row["actual"]["fields"] == "1|0111|001"
    assert row["distance"] == -0x39 - 0x38


def test_allclose_contract_only_where_declared():
    want = np.array([1.0, 2.0], np.float32)
    near = np.array([1.0 + 1e-6, 2.0], np.float32)
    contract = {"x": {"kind": "allclose", "rtol": 1e-5, "atol": 0.0, "why": "matmul"}}
    assert judge(Expected(outputs={"x": want}, compare=contract), Result({"x": near})).status == compare.PASSED
    assert judge(Expected(outputs={"x": want}), Result({"x": near})).status == compare.FAILED
    far = judge(Expected(outputs={"x": want}, compare=contract), Result({"x": want * 1.01}))
    assert far.status == compare.FAILED and "allclose" in far.message


def test_shape_dtype_missing_and_extra_outputs_fail():
    e = Expected(outputs={"codes": np.zeros((2, 2), np.int8)})
    for outputs, text in [({"codes": np.zeros(4, np.int8)}, "expected I8[2, 2], got I8[4]"),
                          ({"codes": np.zeros((2, 2), np.uint8)}, "got U8[2, 2]"),
                          ({}, "'codes' is missing"),
                          ({"codes": np.zeros((2, 2), np.int8), "global": np.ones(1, np.float32)}, "unexpected")]:
        v = judge(e, Result(outputs))
        assert v.status == compare.FAILED and text in v.message, v.message


def test_json_values_compare_exactly():
    e = Expected(values={"num_levels": 255, "block_size": [4]})
    assert judge(e, Result({}, {"block_size": [4], "num_levels": 255})).status == compare.PASSED
    v = judge(e, Result({}, {"block_size": [4], "num_levels": 256}))
    assert v.status == compare.FAILED and "num_levels" in v.message


ERR = Expected(error={"code": "quantize.global_without_two_level", "message": "a per-tensor scale ..."})


def test_expected_error_cases():
    assert judge(ERR, Result({"codes": np.zeros(1, np.int8)})).kind == "missing error"
    assert judge(ERR, Error("other.code", "a per-tensor scale ...")).kind == "wrong error"
    assert judge(ERR, Fault("crashed", "exit 3")).kind == "crashed"
    ok = judge(ERR, Error("quantize.global_without_two_level", "a per-tensor scale ..."))
    assert ok.status == compare.PASSED and not ok.note


def test_message_mismatch_is_noted_or_fails_when_strict():
    other = Error("quantize.global_without_two_level", "different words")
    lenient = judge(ERR, other)
    assert lenient.status == compare.PASSED and "different message" in lenient.note
    strict = judge(ERR, other, strict_messages=True)
    assert strict.status == compare.FAILED and strict.kind == "message mismatch"


def test_missing_code_is_classified_from_the_message():
    classify = {"a per-tensor scale ...": "quantize.global_without_two_level"}.get
    v = judge(ERR, Error(None, "a per-tensor scale ..."), classify=classify)
    assert v.status == compare.PASSED
    v = judge(ERR, Error(None, "something else"), classify=classify)
    assert v.kind == "wrong error" and v.details["actual_error"]["code_inferred"]


def test_unexpected_error_fails():
    v = judge(Expected(outputs={"x": np.zeros(1, np.float32)}), Error("c", "m"))
    assert v.kind == "unexpected error" and "c: m" in v.message


def test_first_wrong_stage_uses_intermediates():
    from conformance import diagnose
    raw = np.array([0.1], np.float32)
    stored = np.array([0.10003662], np.float32)
    e = Expected(outputs={"scales": stored, "codes": np.array([1, 2], np.int8)},
                 stages=Stages(raw_scales=raw, scaled=np.array([0.5, 2.0], np.float32)))
    v = vec(e)
    unrounded = Result({"scales": raw, "codes": np.array([0, 2], np.int8)})
    verdict = compare.judge(v, "p", unrounded)
    assert "equal the 'raw_scales' intermediate" in diagnose.first_wrong_stage(v, e, unrounded, verdict)
    ties = Result({"scales": stored, "codes": np.array([0, 2], np.int8)})
    verdict = compare.judge(v, "p", ties)
    assert "every differing element is an exact .5 tie" in diagnose.first_wrong_stage(v, e, ties, verdict)


def test_diagnosis_ranks_candidates_that_explain_the_failures():
    from conformance import diagnose
    want = Expected(outputs={"codes": np.array([1], np.int8)})
    got = Result({"codes": np.array([0], np.int8)})
    right = diagnose.Candidate("mutant ties-even", "ties to even", lambda *a: Result({"codes": np.array([0], np.int8)}))
    wrong = diagnose.Candidate("mutant other", "other", lambda *a: Result({"codes": np.array([2], np.int8)}))
    v = vec(want)
    verdict = compare.judge(v, "p", got)
    verdict.diagnosis = diagnose.diagnose_vector(v, "p", got, verdict, [right, wrong])
    assert verdict.diagnosis["matches"] == ["mutant ties-even"]
    lines = diagnose.describe(diagnose.summarize([verdict]))
    assert lines[0] == "matches mutant ties-even: ties to even on 1/1 failing vectors"


def test_same_outcome_honours_the_comparison_contract():
    want = Result({"out": np.array([1.0, 2.0], np.float32)})
    near = Result({"out": np.array([1.0 + 1e-6, 2.0], np.float32)})
    contract = {"out": {"kind": "allclose", "rtol": 1e-5, "atol": 0.0, "why": "a GEMM"}}
    assert compare.same_outcome(want, near, contract)
    assert not compare.same_outcome(want, near, {})
    assert compare.same_outcome(Error("c", "x"), Error("c", "y"), {})
    assert not compare.same_outcome(Error(None, "x"), Error(None, "x"), {})
    assert not compare.same_outcome(want, Fault("crashed", "boom"), {})


def test_diagnosis_compares_candidates_under_the_vectors_contract():
    """A candidate within the vector's tolerance of the backend's answer explains it (as the gate would judge)."""
    from conformance import diagnose
    contract = {"out": {"kind": "allclose", "rtol": 1e-5, "atol": 0.0, "why": "a GEMM"}}
    v = vec(Expected(outputs={"out": np.array([5.0], np.float32)}, compare=contract))
    got = Result({"out": np.array([1.0], np.float32)})
    close = diagnose.Candidate("profile q", "q", lambda *a: Result({"out": np.array([1.0 + 1e-6], np.float32)}))
    verdict = compare.judge(v, "p", got)
    assert diagnose.diagnose_vector(v, "p", got, verdict, [close])["matches"] == ["profile q"]
