"""Protocol 2: format patterns in the capabilities, the 'unsupported' reply (declined vectors), truthful claims.

Expectations are hand-worked: which hand-built vector a pattern admits, what a run of the 6-vector test suite
counts, what the statement must not say. The registry cross-check enumerates the core suite against
``Format.matches``, a second implementation of the same conditions.
"""

import json
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import suites
from test_plugin import cli

from conformance import Unsupported
from conformance import report as rep
from conformance.backends.oracle import run_oracle
from conformance.compare import DECLINED, FAILED, NOT_APPLICABLE, PASSED
from conformance.formats import FORMATS
from conformance.patterns import Pattern, of_format, tensor_shape
from conformance.protocol import (
    HELLO,
    Capabilities,
    Declined,
    ProtocolError,
    applicable_by_format,
    hello_for,
    parse_hello,
    parse_reply,
    reply_message,
    scheme_of,
)
from conformance.report.junit import junit_xml
from conformance.runner import Runner
from conformance.vectors import load_suite

PROFILE = "burn-0.22.1/flex"
HERE = Path(__file__).parent
ROOT = HERE.parents[1]
Q4_0_LIKE = {"value": "Q4S", "store": "PackedU32", "block": [32], "block_dtype": "F16"}


def scheme(value="Q8S", store="Native", block=None, block_dtype="F32", tensor=None, mode="Symmetric"):
    return {"value": value, "store": store if store == "Native" else {store: 0}, "mode": mode, "tensor": tensor,
            "block": None if block is None else {"size": block, "dtype": block_dtype}}


def vec(op="quantize_dynamic", shape=(4, 64), x_dtype=np.float32, **params):
    """A hand-built vector: op, params (a scheme unless given), an input x of ``shape`` and ``x_dtype``."""
    params.setdefault("scheme", scheme())
    return SimpleNamespace(op=op, params=params, inputs={"x": np.zeros(shape, x_dtype)}, id="v", alias=op, tags=[])


def caps(**d) -> Capabilities:
    return Capabilities.from_json(d)


# ---- patterns -------------------------------------------------------------------------------------------

def test_a_pattern_object_is_one_combination():
    q4 = caps(formats=[Q4_0_LIKE])
    assert q4.not_applicable(vec(scheme=scheme("Q4S", "PackedU32", [32], "F16"))) is None
    for other, why in [(scheme("Q4S", "PackedU32", [16], "F16"), "block 16 is not 32"),
                       (scheme("Q4S", "Native", [32], "F16"), "store Native is not PackedU32"),
                       (scheme("Q4S", "PackedU32", [32], "F32"), "block_dtype F32 is not F16"),
                       (scheme("Q8S", "PackedU32", [32], "F16"), "value Q8S is not Q4S")]:
        assert q4.not_applicable(vec(scheme=other)) == f"matches no declared format (Q4S/PackedU32/block 32/" \
                                                       f"scales F16: {why})"


def test_block_rules():
    last = Pattern.from_json({"block": {"last_dim": [16, 32]}})
    assert [last.mismatch(vec(scheme=scheme(block=b))) is None for b in ([16], [32], [1, 32], [64], [2, 16])] == \
        [True, True, True, False, False]
    assert last.mismatch(vec(scheme=scheme())) == "block per-tensor is not last-dim 16|32"
    row = Pattern.from_json({"block": "row"})
    assert row.mismatch(vec(shape=(3, 48), scheme=scheme(block=[48]))) is None
    assert row.mismatch(vec(shape=(3, 48), scheme=scheme(block=[16]))) is not None
    shapes = Pattern.from_json({"block": [[4, 8], [32]]})
    assert [shapes.mismatch(vec(scheme=scheme(block=b))) is None for b in ([4, 8], [32], [8, 4])] == [True, True, False]
    per_tensor = Pattern.from_json({"block": None})
    assert per_tensor.mismatch(vec()) is None and per_tensor.mismatch(vec(scheme=scheme(block=[32]))) is not None


def test_scale_dtypes_ranks_and_input_dtypes():
    only_block = Pattern.from_json({"tensor_dtype": None})  # no per-tensor level: one-level block schemes only
    assert only_block.mismatch(vec(scheme=scheme(block=[32], block_dtype="UE4M3"))) is None
    assert only_block.mismatch(vec(scheme=scheme(block=[32], block_dtype="UE4M3", tensor="F32"))) is not None
    assert only_block.mismatch(vec()) == "tensor_dtype F32 is not None"  # a bare scheme scales per tensor in F32
    f32_tensor = Pattern.from_json({"block": None, "tensor_dtype": "F32"})
    assert f32_tensor.mismatch(vec()) is None and f32_tensor.mismatch(vec(scheme=scheme(tensor="F32"))) is None
    ranked = Pattern.from_json({"ranks": [2], "input_dtypes": ["f32"]})
    assert ranked.mismatch(vec(shape=(3, 32))) is None
    assert ranked.mismatch(vec(shape=(32,))) == "rank 1 is not 2"
    assert ranked.mismatch(vec(shape=(3, 32), x_dtype=np.float16)) == "input dtype f16 is not f32"
    f16_scales = Pattern.from_json({"block_dtype": "F16"})  # a scale op is judged by its dtype alone
    round_up = SimpleNamespace(op="round_up", params={"dtype": "F16"}, inputs={"scales": np.zeros(3, np.float32)})
    assert f16_scales.mismatch(round_up) is None
    assert f16_scales.mismatch(SimpleNamespace(**{**vars(round_up), "params": {"dtype": "F32"}})) is not None


def test_a_name_is_the_registry_format_and_agrees_with_format_matches():
    """Every scheme vector of the core suite, every registry format: the pattern admits exactly what
    ``Format.matches`` admits; and each format's own scheme is admitted by its pattern (the core suite has
    few of them)."""
    suite = load_suite(ROOT / "vectors" / "core")
    checked = 0
    for v in suite.vectors:
        s = scheme_of(v.params)
        if s is None:
            continue
        for f in FORMATS.values():
            assert (of_format(f).mismatch(v) is None) == f.matches(s, tensor_shape(v)), (v.alias, f.name)
            checked += 1
    assert checked > 1000
    for f in FORMATS.values():
        for store in f.stores:
            own = vec(shape=(3, 64), scheme=f.scheme((3, 64), store).to_json())
            assert [g.name for g in FORMATS.values() if of_format(g).mismatch(own) is None] == [f.name]


def test_bad_patterns_are_refused_with_what_is_wrong():
    for formats, fragment in [(["q9_0"], "unknown format 'q9_0'; known: int8"),
                              ([{"colour": "red"}], "unknown pattern keys ['colour']"),
                              ([{"block": [0]}], "'block' must be null"),
                              ([{"level": "per-tensor"}], "unknown level per-tensor; known: tensor, block"),
                              ([{"value": "Q8s"}], "unknown value Q8s; known: Q8F"),
                              ([{"store": ["Native", "Packed"]}], "unknown store Packed; known: Native"),
                              ([{"block_dtype": "FP16"}], "unknown block_dtype FP16; known: F32"),
                              ([{"input_dtypes": ["F32"]}], "unknown input_dtypes F32; known: f32"),
                              ([{"ranks": "2"}], "'ranks' must be"),
                              ([], "non-empty list"), (["q8_0", {}], "non-empty pattern object")]:
        with pytest.raises(ProtocolError, match=fragment.replace("[", r"\[").replace("(", r"\(")):
            caps(formats=formats)
    with pytest.raises(ProtocolError, match="'validates' must be true or false"):
        caps(validates="no")


def test_flat_lists_and_patterns_both_hold_and_per_op_narrows():
    c = caps(values=["Q8S"], formats=[Q4_0_LIKE, "int8"],
             per_op={"dequantize": {"formats": [{"name": "deq-f32", "block": None}]}})
    int8 = scheme()
    q4 = scheme("Q4S", "PackedU32", [32], "F16")
    assert c.not_applicable(vec(scheme=q4)) == "backend does not declare values Q4S"
    assert c.not_applicable(vec(scheme=int8)) is None and c.formats_of(vec(scheme=int8)) == ["int8"]
    deq = vec("dequantize", scheme=int8, dtype="f32")
    assert c.not_applicable(deq) is None and c.formats_of(deq) == ["deq-f32"]
    assert c.declared_formats() == ["Q4S/PackedU32/block 32/scales F16", "int8", "deq-f32"]
    assert c.validates  # the default; `validates: false` is recorded and sent back
    assert caps(validates=False).to_json() == {"validates": False}
    assert Capabilities.from_json(c.to_json()) == c  # a report records the declaration; it parses back equal


def test_list_counts_applicable_vectors_per_declared_format_and_op():
    c = caps(ops=["quantize", "dequantize"], formats=["int8", Q4_0_LIKE])
    table = applicable_by_format(c, [vec("quantize"), vec("quantize"), vec("dequantize", dtype="f32"),
                                     vec("quantize", scheme=scheme(block=[32]))])
    assert table == {"int8": {"dequantize": 1, "quantize": 2},
                     "Q4S/PackedU32/block 32/scales F16": {"dequantize": 0, "quantize": 0}}


# ---- versions and the unsupported reply -----------------------------------------------------------------

def hello(**kw):
    return {"type": "hello", "name": "b", "version": "1", **kw}


def test_version_1_keeps_working_and_cannot_use_version_2():
    assert HELLO == {"type": "hello", "protocol": 1, "protocols": [1, 2]}  # a v1 backend checks `protocol` only
    v1 = parse_hello(hello(protocol=1, capabilities={"values": ["Q8S"]}))
    assert v1.protocol == 1 and v1.capabilities.values == {"Q8S"}
    with pytest.raises(ProtocolError, match="capability 'formats' needs protocol 2"):
        parse_hello(hello(protocol=1, capabilities={"formats": ["q8_0"]}))
    # `validates` and presets say nothing a version-1 runner could misread: any version may send them
    assert parse_hello(hello(protocol=1, capabilities={"preset": "loader", "validates": False})).capabilities.validates \
        is False
    with pytest.raises(ProtocolError, match="needs protocol 2"):
        parse_hello(hello(protocol=1, capabilities={"per_op": {"dequantize": {"formats": ["q8_0"]}}}))
    with pytest.raises(ProtocolError, match="an 'unsupported' reply needs protocol 2"):
        parse_reply({"type": "unsupported", "id": "1", "reason": "no"}, {}, "1", protocol=1)


def test_the_unsupported_reply():
    meta, tensors = reply_message("7", Declined("no Q4S here"))
    assert meta == {"type": "unsupported", "id": "7", "reason": "no Q4S here"} and tensors == {}
    assert parse_reply(meta, {}, "7", protocol=2) == Declined("no Q4S here")
    with pytest.raises(ProtocolError, match="non-empty string 'reason'"):
        parse_reply({"type": "unsupported", "id": "7"}, {}, "7", protocol=2)
    with pytest.raises(ProtocolError, match="carries tensors"):
        parse_reply(meta, {"x": np.zeros(1, np.float32)}, "7", protocol=2)


def test_serve_answers_each_runner_in_a_version_it_speaks():
    v2 = parse_hello(hello(protocol=2, capabilities={"formats": ["q8_0"]}))
    assert hello_for(v2, HELLO)["protocol"] == 2
    old_runner = {"type": "hello", "protocol": 1}
    assert hello_for(v2, old_runner)["error"]["code"] == "protocol.version"  # its formats cannot be said in v1
    flat = parse_hello(hello(protocol=2, capabilities={"values": ["Q8S"]}))
    assert hello_for(flat, old_runner)["protocol"] == 1


class Decliner:
    """In process: declines every Q4S vector, answers the rest from test/a's expectations."""

    def __init__(self, suite_dir):
        sys.path.insert(0, str(HERE))
        from lookup_backend import LookupBackend
        self.inner = LookupBackend(suite_dir, suites.A)

    def hello(self):
        return self.inner.hello()

    def run(self, op, params, inputs):
        if "Q4S" in json.dumps(params):
            raise Unsupported("Q4S is not implemented")
        return self.inner.run(op, params, inputs)


def test_a_declined_vector_is_counted_and_listed_never_failed(suite_dir):
    from conformance.backends.python import PythonBackend
    verdicts = suites.run(suite_dir, backend=PythonBackend(Decliner(suite_dir)))
    assert {a: v.status for a, v in verdicts.items() if v.status != PASSED} == \
        {"dequantize/q4s/packed-bf16": DECLINED}
    assert verdicts["dequantize/q4s/packed-bf16"].note == "Q4S is not implemented"
    r = rep.build(list(verdicts.values()), backend={"name": "d", "version": "1"}, profile=suites.A,
                  suite={"name": "test", "vectors": 6, "digest": "ab" * 32}, stale=[], strict=False, started=0.0)
    assert r["summary"]["total"][DECLINED] == 1 and not rep.failed(r)
    text = rep.format_text(r, quiet=True)
    assert "declined by the backend ('unsupported'): 1 vectors" in text and "dequantize/q4s/packed-bf16" in text
    assert "5 passed, 0 failed, 1 declined, 0 not applicable of 6 vectors" in text
    # declining is allowed in a claim, never hidden from it: the statement counts it, the badge's total has it
    assert "conforms to test/a for dequantize, quantize, round_up, scheme_info" not in rep.statement(r)
    assert rep.statement(r).startswith("d 1 conforms to test/a for quantize, round_up, scheme_info on suite test")
    assert "5/6 passed" in rep.badge(r)


def test_declined_over_the_wire_and_a_v1_backend_that_declines_is_a_protocol_error(tmp_path, suite_dir, env):
    cmd = lambda *extra: "subprocess:" + shlex.join([sys.executable, str(HERE / "declining_backend.py"), *extra])
    r = cli("run", "--backend", cmd(), "--vectors", str(suite_dir), "--report", "r.json", "-q", "--junit", "j.xml",
            env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    junit = ET.parse(tmp_path / "j.xml").getroot()
    assert (junit.get("tests"), junit.get("skipped"), junit.get("failures")) == ("6", "6", "0")
    assert "0 passed, 0 failed, 6 declined, 0 not applicable of 6 vectors" in r.stdout
    assert r.stdout.strip().splitlines()[-1].startswith("OK (no failures), but no conformance claim: "
                                                        "no applicable vector passed")
    report = json.loads((tmp_path / "r.json").read_text())
    assert {v["status"] for v in report["verdicts"]} == {DECLINED}
    assert {v["note"] for v in report["verdicts"]} == {"this codec implements no such request"}
    page = cli("report", "r.json", "--html", "r.html", env=env, cwd=tmp_path)
    assert page.returncode == 0 and "Declined by the backend (6)" in (tmp_path / "r.html").read_text()
    plugin = cli("run", "--backend", cmd(), "--vectors", str(suite_dir), "--", "-q", env=env, cwd=tmp_path)
    assert "declined by the backend ('unsupported'): 6 vectors" in plugin.stdout  # pytest's own summary section
    v1 = cli("run", "--backend", cmd("--speak", "1"), "--vectors", str(suite_dir), "-q", env=env, cwd=tmp_path)
    assert v1.returncode == 1 and "an 'unsupported' reply needs protocol 2" in v1.stdout


# ---- truthful claims ------------------------------------------------------------------------------------

class OracleWithin:
    """The oracle under burn-0.22.1/flex as a backend that declares ``capabilities`` (so every answer is right),
    or one that declines every request."""

    def __init__(self, capabilities, decline=False):
        self.hello = parse_hello({"protocol": 2, **hello(profile=PROFILE, capabilities=capabilities, name="within")})
        self.decline = decline

    def run(self, op, params, inputs):
        return Declined("a loader: nothing but its own path") if self.decline else \
            run_oracle(op, params, inputs, PROFILE)

    def close(self):
        pass


RANK_7 = {"name": "rank-7", "ranks": [7]}  # a declared format of which the suite has no vector
CORE_SIZE = len(load_suite(ROOT / "vectors" / "core").vectors)


def core_report(capabilities, decline=False) -> dict:
    suite = load_suite(ROOT / "vectors" / "core")
    backend = OracleWithin(capabilities, decline)
    runner = Runner(suite, "given", backend=backend, diagnose=False).start()
    verdicts = list(runner.run_all())
    return rep.build(verdicts, backend=backend.hello.to_json(), profile=runner.profile,
                     suite={"name": suite.name, "vectors": len(suite.vectors), "digest": suite.digest}, stale=[],
                     strict=False, started=0.0)


def test_a_loader_with_nothing_applicable_or_declining_everything_never_conforms():
    grey = "#9f9f9f"
    nothing = core_report({"ops": ["dequantize"], "formats": [RANK_7]})
    t = nothing["summary"]["total"]
    assert (t[PASSED], t[DECLINED], t[NOT_APPLICABLE]) == (0, 0, CORE_SIZE)
    assert "does not conform to burn-0.22.1/flex (no applicable vector passed; no vector of format rank-7)" in \
        rep.statement(nothing)
    assert grey in rep.badge(nothing) and "#4c1" not in rep.badge(nothing)
    declining = core_report({"ops": ["dequantize"]}, decline=True)
    t = declining["summary"]["total"]
    assert t[PASSED] == 0 and t[DECLINED] > 0 and t[DECLINED] + t[NOT_APPLICABLE] == CORE_SIZE
    assert "does not conform" in rep.statement(declining) and f"{t[DECLINED]} declined" in rep.statement(declining)
    assert "#4c1" not in rep.badge(declining)
    assert "no conformance claim" in rep.format_text(declining, quiet=True).splitlines()[-1]


def test_the_statement_states_the_scope_and_every_declared_format():
    ops = ["quantize", "quantize_dynamic", "dequantize"]
    int8 = core_report({"ops": ops, "formats": ["int8"]})
    t = int8["summary"]["total"]
    assert t[FAILED] == 0 and t[PASSED] > 20
    assert rep.statement(int8).startswith("within 1 conforms to burn-0.22.1/flex for dequantize x int8, "
                                          "quantize x int8, quantize_dynamic x int8 on suite core ")
    assert "#4c1" in rep.badge(int8)
    unjudged = core_report({"ops": ops, "formats": ["int8", RANK_7]})  # the suite holds no rank-7 vector
    assert "does not conform to burn-0.22.1/flex (no vector of format rank-7)" in rep.statement(unjudged)
    assert "#4c1" not in rep.badge(unjudged)
    assert rep.format_text(unjudged, quiet=True).splitlines()[-1] == \
        "OK (no failures), but no conformance claim: no vector of format rank-7"


def test_junit_leaves_not_applicable_out_unless_asked_and_keeps_the_one_total(tmp_path):
    r = core_report({"ops": ["quantize"], "formats": ["int8"]})
    t = r["summary"]["total"]
    root = ET.fromstring(junit_xml(r))
    assert int(root.get("tests")) == sum(t.values()) - t[NOT_APPLICABLE] == len(list(root.iter("testcase"))) > 20
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert int(props["not_applicable"]) == t[NOT_APPLICABLE] and props["statement"] == rep.statement(r)
    everything = ET.fromstring(junit_xml(r, keep_not_applicable=True))
    assert int(everything.get("tests")) == CORE_SIZE == len(list(everything.iter("testcase")))
    assert int(everything.get("skipped")) == t[NOT_APPLICABLE]


def test_the_fuzz_summary_counts_declined_cases_and_does_not_call_them_a_clean_run():
    from conformance.fuzz.engine import FuzzReport
    declined = FuzzReport("b", PROFILE, 1, None, cases=5, statuses={DECLINED: 5})
    assert declined.lines()[1] == "  declined 5"
    assert declined.lines()[-1] == "  no divergence, but no case was judged (passed or failed)"
    judged = FuzzReport("b", PROFILE, 1, None, cases=5, statuses={DECLINED: 2, PASSED: 3})
    assert judged.lines()[1] == "  declined 2, passed 3" and judged.lines()[-1] == "  no divergence"


def test_protocol_md_lists_the_registry_as_it_is():
    text = (ROOT / "docs" / "protocol.md").read_text()
    rows = [line.split("|")[1:-1] for line in text.splitlines() if line.startswith("| `")
            and line.split("|")[1].strip().strip("`") in FORMATS]
    documented = {cells[0].strip().strip("`"): [c.strip() for c in cells[1:]] for cells in rows}
    assert documented == {f.name: [f.value.name, ", ".join(f.stores), "per-tensor" if f.block is None else str(f.block),
                                   f.block_dtype.name if f.block_dtype else "-",
                                   f.tensor_dtype.name if f.tensor_dtype else "-"] for f in FORMATS.values()}


def test_declined_through_qconform_serve(suite_dir, env):
    from test_http_faults import serving

    from conformance.backends.http import HttpBackend
    backend = "subprocess:" + shlex.join([sys.executable, str(HERE / "declining_backend.py"),
                                          "--caps", json.dumps({"formats": ["int8"]})])
    with serving(env=env, backend=backend) as (host, port, _):
        b = HttpBackend(f"http://{host}:{port}", timeout=10)
        v = load_suite(suite_dir).get("quantize/q8s/plain")
        outcome = b.run(v.op, v.params, v.inputs)
        b.close()
    assert b.hello.protocol == 2 and [p.label for p in b.hello.capabilities.formats] == ["int8"]
    assert outcome == Declined("this codec implements no such request")


def test_a_quantized_other_operand_needs_its_own_scheme_declared():
    # float_ops' `sub` by a tensor quantized under `rhs_scheme` runs that scheme too: a backend without BF16 scales
    # (burn-wgpu's SPIR-V build, whose lavapipe device then faults) declines it, found by fuzzing (seed 20261212)
    c = caps(scale_dtypes=["F32", "F16"])
    step = {"op": "sub", "rhs": [1.0], "shape": [1], "rhs_scheme": scheme("E5M2", block=[3], block_dtype="BF16")}
    assert c.not_applicable(vec("float_ops", steps=[step])) == "backend does not declare scale_dtypes BF16"
    step["rhs_scheme"] = scheme("E5M2", block=[3], block_dtype="F16")
    assert c.not_applicable(vec("float_ops", steps=[step])) is None
