"""Named real-world formats in the suite and in the fuzzer (issue 20, points 2 and 3): a backend that implements
one format (examples/format_backend.py: the oracle behind that format's capabilities) meets >= 20 vectors of it
per op, fuzzing it draws >= 90% applicable cases, ``--format`` restricts the drawing, ``--expectations`` skips
and xfails, and the grid classes are read off the data as worked out by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from conformance import coverage
from conformance.backends.oracle import oracle_backend
from conformance.backends.python import PythonBackend
from conformance.cases import case
from conformance.expectations import Expectations
from conformance.formats import FORMATS, get_format
from conformance.fuzz import engine
from conformance.fuzz.scope import FORMAT_OPS, REALISTIC_BLOCKS
from conformance.generate import PROFILES, expect
from conformance.tags import code_midpoints, data_tags
from conformance.vectors import load_suite
from oracle import QuantValue

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "vectors" / "core"
sys.path.insert(0, str(ROOT))
from examples.format_backend import FormatBackend  # noqa: E402


@pytest.fixture(scope="module")
def suite():
    return load_suite(SUITE)


def format_backend(name: str) -> PythonBackend:
    return PythonBackend(FormatBackend(name), f"format:{name}")


@pytest.mark.parametrize("name", FORMATS)
def test_a_one_format_backend_meets_20_vectors_of_its_format_per_op(suite, name):
    backend = format_backend(name)
    caps, profile = backend.hello.capabilities, backend.hello.profile
    count = dict.fromkeys(FORMAT_OPS, 0)
    for v in suite.vectors:
        if f"format:{name}" in v.tags and v.op in count and caps.not_applicable(v) is None \
                and v.expected[profile].undefined is None:
            count[v.op] += 1
    assert min(count.values()) >= 20, count


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_vector_is_the_format_it_is_tagged_with(suite, name):
    """The tag is read off the scheme and shape (Format.matches), and each named format's own vectors have it."""
    fmt = get_format(name)
    own = [v for v in suite.vectors if f"/format-{name.replace('_', '-')}/" in v.alias]
    assert len(own) >= 60
    for v in own:
        from oracle import QuantScheme
        shape = (v.inputs.get("x") if "x" in v.inputs else v.inputs["codes"]).shape
        assert f"format:{name}" in v.tags and fmt.matches(QuantScheme.from_json(v.params["scheme"]), shape)


def applicable_share(report) -> float:
    return 1 - report.statuses.get("not applicable", 0) / report.cases


@pytest.mark.parametrize("name", FORMATS)
def test_fuzzing_a_one_format_backend_draws_inside_it(name):
    f = engine.Fuzzer(f"format:{name}", backend=format_backend(name), seed=1, formats=[name], diagnose=False)
    report = f.run(cases=150, shrink=False, log=lambda m: None)
    assert applicable_share(report) >= 0.9, report.statuses
    assert {where for where, _ in report.exercised} == {name}
    assert {op for _, op in report.exercised} == set(FORMAT_OPS)
    assert not report.divergences
    assert any(line.startswith(f"    {name}: ") for line in report.lines())


def test_fuzzing_a_flat_capability_backend_draws_inside_its_lists():
    """Without --format the declared flat lists are the scope: realistic block lengths, tensors up to a few
    thousand elements, and still >= 90% applicable (the default stream gave 5 of 5,000 for this backend)."""
    f = engine.Fuzzer("format:q8_0", backend=format_backend("q8_0"), seed=2, diagnose=False)
    drawn = [f.draw(i)[0] for i in range(300)]
    blocks = {tuple(c.params["scheme"]["block"]["size"]) for c in drawn}
    assert blocks == {(b,) for b in REALISTIC_BLOCKS}
    sizes = [max(a.size for a in c.inputs.values()) for c in drawn]
    assert max(sizes) > 1000 and max(sizes) <= 4096
    report = f.run(cases=150, shrink=False, log=lambda m: None)
    assert applicable_share(report) >= 0.9, report.statuses


class _Counting:
    """A backend wrapper that records the requests it is sent."""

    def __init__(self, backend):
        self.backend, self.hello, self.sent = backend, backend.hello, []

    def run(self, op, params, inputs):
        self.sent.append((op, params, {k: a.tobytes() for k, a in inputs.items()}))
        return self.backend.run(op, params, inputs)


@pytest.mark.parametrize(("formats", "backend_format"), [((), "q8_0"), (("mxfp4",), None)])
def test_digest_draws_the_cases_of_the_backends_scope(formats, backend_format):
    """``fuzz --digest`` hashes the cases a judged fuzz run draws for the same backend and formats: inside the
    declared scope (>= 90% sent, where the default stream sends 5 of 5,000 to a q8_0 backend), case i the same
    case as ``Fuzzer.draw(i)``, and the same whether the tested backend or the reference answers."""
    inner = format_backend(backend_format) if backend_format else oracle_backend()
    backend = _Counting(inner)
    run = engine.digest_run(backend, "burn-0.22.1/flex", seed=5, cases=120, formats=formats)
    assert len(backend.sent) >= 0.9 * 120
    f = engine.Fuzzer("digest", backend=inner, seed=5, formats=formats, diagnose=False)
    drawn = [f.draw(i)[0] for i in range(120)]
    f.close()
    sent = iter(backend.sent)
    for drawn_case in drawn:
        if inner.hello.capabilities.not_applicable(engine._as_case(drawn_case, False)) is None:
            assert next(sent) == (drawn_case.op, drawn_case.params,
                                  {k: a.tobytes() for k, a in drawn_case.inputs.items()})
    reference = engine.digest_run(oracle_backend(), "burn-0.22.1/flex", seed=5, cases=120, formats=formats,
                                  capabilities=inner.hello.capabilities)
    assert reference.digest == run.digest


def test_digest_cli_takes_the_format(capsys):
    from conformance.cli import main
    assert main(["fuzz", "--digest", "--backend", "oracle", "--format", "nvfp4", "--cases", "80", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    oracle = oracle_backend()
    scoped = engine.digest_run(oracle, oracle.hello.profile, seed=2, cases=80, formats=("nvfp4",)).digest
    default = engine.digest_run(oracle, oracle.hello.profile, seed=2, cases=80).digest
    assert "digests equal" in out and f"digest {scoped}  oracle " in out and scoped != default
    with pytest.raises(SystemExit):
        main(["fuzz", "--digest", "--backend", "oracle", "--format", "q9_9", "--cases", "8"])
    assert "unknown format 'q9_9'" in capsys.readouterr().err


def test_format_option_restricts_an_unrestricted_backend():
    f = engine.Fuzzer("oracle", backend=oracle_backend(), seed=3, formats=["mxfp4", "int8"], diagnose=False)
    report = f.run(cases=120, shrink=False, log=lambda m: None)
    assert {where for where, _ in report.exercised} == {"mxfp4", "int8"}
    assert {op for _, op in report.exercised} <= set(FORMAT_OPS)
    assert report.statuses.get("not applicable", 0) == 0


def test_without_format_an_unrestricted_backend_keeps_the_default_stream():
    f = engine.Fuzzer("oracle", backend=oracle_backend(), seed=3, diagnose=False)
    assert f.scope is None


def test_expectations_skip_and_xfail_fuzz_cases(tmp_path):
    toml = tmp_path / "known.toml"
    toml.write_text('[[expect]]\nmatch = "quantize/*/fuzz"\nkind = "skip"\nreason = "not yet"\n\n'
                    '[[expect]]\nmatch = "quantize_dynamic/q8s/*"\nkind = "xfail"\nreason = "ties to even"\n')
    f = engine.Fuzzer("mutant:ties-even", seed=1, formats=["q8_0"], diagnose=False,
                      expectations=Expectations.load(toml))
    report = f.run(cases=150, shrink=False, log=lambda m: None)
    assert report.statuses.get("skipped", 0) > 0 and report.statuses.get("xfailed", 0) > 0
    assert not any(op == "quantize" for _, op in report.exercised)
    assert all(op == "dequantize" for div in report.divergences.values() for op in div.ops)


def test_fuzz_cli_takes_format_and_expectations(tmp_path, capsys):
    from conformance.cli import main
    toml = tmp_path / "known.toml"
    toml.write_text('[[expect]]\nmatch = "dequantize/*"\nkind = "skip"\nreason = "a quantizer only"\n')
    assert main(["fuzz", "--backend", "oracle", "--format", "nvfp4", "--expectations", str(toml), "--cases", "60",
                 "--seed", "4", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "drawn inside: nvfp4" in out and "    nvfp4: " in out and "dequantize" not in out.split("exercised")[1]
    assert "--format nvfp4" in out and f"--expectations {toml}" in out
    with pytest.raises(SystemExit):
        main(["fuzz", "--backend", "oracle", "--format", "q8-0", "--cases", "1"])
    assert "unknown format 'q8-0'" in capsys.readouterr().err


def test_coverage_format_lists_the_cells_and_gates(capsys):
    assert coverage.main_coverage(SUITE, formats=["q4_0"]) == 0
    out = capsys.readouterr().out
    assert "format:q4_0 x op:quantize x class:grid-tie" in out and "0 empty" in out.splitlines()[-1]
    with pytest.raises(SystemExit):
        coverage.main(["coverage", "--format", "q9_0", "--vectors", str(SUITE)])
    assert "unknown format 'q9_0'" in capsys.readouterr().err


def test_an_empty_format_cell_fails_the_gate():
    manifest = coverage.load_manifest(SUITE)
    manifest = dict(manifest, vectors=[v for v in manifest["vectors"] if "class:grid-near-tie" not in v["tags"]])
    empty = coverage.empty_cells(coverage.coverage(manifest, coverage.format_planes(["mxfp8"])))
    assert {r.label for r in empty} == {"format:mxfp8 x op:quantize_dynamic x class:grid-near-tie",
                                        "format:mxfp8 x op:quantize x class:grid-near-tie"}


# ---- the grid classes, on hand-worked numbers ---------------------------------------------------------------

def test_code_midpoints_by_hand():
    # E2M1 is 0, 0.5, 1, 1.5, 2, 3, 4, 6 (OCP MX v1.0 table 5); Q4S codes are the integers 0..7
    assert code_midpoints(QuantValue.E2M1).tolist() == [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
    assert code_midpoints(QuantValue.Q4S).tolist() == [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]
    e4m3 = code_midpoints(QuantValue.E4M3)
    assert e4m3[-1] == 432.0 and e4m3[0] == 2.0**-10 and 17.0 in e4m3  # 416..448 step 32; 2^-9 / 2; 16..18


def _classes(c) -> set[str]:
    return data_tags(c, {p: expect(c, p) for p in PROFILES})


def test_grid_tie_classes_of_an_mxfp4_block():
    # one block of 32: max 6 -> scale 6/6 = 1 = 2^0 on UE8M0, so x / s = x
    x = np.zeros((1, 32), np.float32)
    x[0, :3] = [6.0, 2.5, -0.25]
    sch = get_format("mxfp4").scheme(x.shape).to_json()
    assert {"class:grid-tie"} <= _classes(case("quantize_dynamic/a/b", "quantize_dynamic", {"scheme": sch}, {"x": x}))
    x[0, 1:3] = [np.nextafter(np.float32(2.5), np.float32(3)), 1.0]
    tags = _classes(case("quantize_dynamic/a/b", "quantize_dynamic", {"scheme": sch}, {"x": x}))
    assert "class:grid-near-tie" in tags and "class:grid-tie" not in tags


def test_scale_range_classes_of_q8_0():
    # F16 scales: max |x| = 127 * 131072 -> scale 131072 > 65504 (overflow); 127 * 2^-26 -> 2^-26 < 2^-24
    sch = get_format("q8_0").scheme((1, 64)).to_json()
    x = np.full((1, 64), 0.5, np.float32)
    x[0, 0], x[0, 32] = 127 * 131072.0, 127 * 2.0**-26
    x[0, 33:] = 0
    tags = _classes(case("quantize_dynamic/a/b", "quantize_dynamic", {"scheme": sch}, {"x": x}))
    assert {"class:scale-overflow", "class:scale-underflow"} <= tags
    dq = case("dequantize/a/b", "dequantize", {"scheme": sch, "dtype": "f32"},
              {"codes": np.ones((1, 64), np.int8), "scales": np.float32([65504.0, 2.0**-24])})
    assert {"class:scale-max", "class:scale-smallest", "class:scale-subnormal"} <= _classes(dq)


class _Declaring(FormatBackend):
    """A protocol-2 backend whose capabilities are only its ``formats``."""

    def __init__(self, formats):
        super().__init__("q8_0")
        self.formats = formats

    def hello(self):
        return {"name": "declaring", "version": "1", "profile": self.profile, "protocol": 2,
                "capabilities": {"formats": self.formats}}


@pytest.mark.parametrize("formats,labels", [
    (["q8_0"], {"q8_0"}),
    (["nvfp4", "int8-per-row"], {"nvfp4", "int8-per-row"}),
    ([{"value": "Q4S", "store": "PackedU32", "block": {"last_dim": [32, 64]}, "block_dtype": "F16",
       "tensor_dtype": None}], {"q4_0", "other"}),  # block 64 is no named format
])
def test_fuzzing_draws_inside_the_formats_a_backend_declares(formats, labels):
    from conformance.protocol import Capabilities
    if not hasattr(Capabilities, "patterns_for"):
        pytest.skip("the 'formats' capability (protocol 2, branch capabilities) is not merged yet")
    f = engine.Fuzzer("declaring", backend=PythonBackend(_Declaring(formats)), seed=1, diagnose=False)
    report = f.run(cases=150, shrink=False, log=lambda m: None)
    assert applicable_share(report) >= 0.9, report.statuses
    assert {where for where, _ in report.exercised} == labels
