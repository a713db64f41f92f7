import hashlib
import json

import numpy as np
import pytest
import suites

from conformance.vectors import VectorError, load_suite, vector_id, write_suite


def manifest(d):
    return json.loads((d / "manifest.json").read_text())


def save(d, m):
    (d / "manifest.json").write_text(json.dumps(m))


def test_loads_what_was_written(suite_dir):
    s = load_suite(suite_dir)
    assert s.name == "test" and s.profiles == [suites.A, suites.B]
    ties = s.get("quantize/q8s/ties")
    want = next(v for v in suites.vectors() if v["alias"] == "quantize/q8s/ties")
    assert np.array_equal(ties.inputs["x"], want["inputs"]["x"])
    assert np.array_equal(ties.expected[suites.B].outputs["codes"], want["expected"][suites.B]["outputs"]["codes"])
    assert not ties.inputs["x"].flags.writeable  # shared with backends without copies
    assert s.get(ties.id) is ties
    err = s.get("quantize/q8s/global-error").expected[suites.A].error
    assert err["code"] == "quantize.global_without_two_level"


def test_id_is_the_documented_hash():
    x = np.array([1.0, 2.0], np.float32)
    params = {"dtype": "F16"}
    canon = json.dumps({"op": "round_up", "params": params,
                        "inputs": {"scales": {"dtype": "F32", "shape": [2],
                                              "sha256": hashlib.sha256(x.tobytes()).hexdigest()}}},
                       sort_keys=True, separators=(",", ":"))
    assert vector_id("round_up", params, {"scales": x}) == hashlib.sha256(canon.encode()).hexdigest()[:20]


def test_identical_expected_tensors_are_stored_once(suite_dir):
    m = manifest(suite_dir)
    v = next(v for v in m["vectors"] if v["alias"] == "round_up/f16/basic")
    assert [out["profiles"] for out in v["outcomes"]] == [[suites.A, suites.B]]  # one outcome, stated once
    assert v["inputs"]["scales"] == f"shard-000.safetensors#{v['id']}/scales"


def test_small_shard_limit_spreads_tensors_over_shards(tmp_path):
    write_suite(tmp_path, suites.vectors(), suite="t", profiles=[suites.A, suites.B], shard_bytes=16)
    s = load_suite(tmp_path)
    assert len(s.manifest["shards"]) > 3 and len(s.vectors) == len(suites.vectors())


# ---- bad input: each is a clear error naming the file (and the vector) ----------------------------------

def expect_error(path, *fragments):
    with pytest.raises(VectorError) as e:
        load_suite(path)
    for f in fragments:
        assert f in str(e.value), str(e.value)
    return e.value


def test_corrupt_manifest(suite_dir):
    (suite_dir / "manifest.json").write_text('{"format": "qconform-vectors", ')
    expect_error(suite_dir, "manifest.json", "not readable JSON")


def test_missing_manifest(tmp_path):
    expect_error(tmp_path, "manifest.json", "no such file")


@pytest.mark.parametrize("edit, fragment", [
    (lambda m: m.pop("vectors"), "'vectors' must be a list"),
    (lambda m: m.update(format_version=3), "version 3"),
    (lambda m: m.update(profiles=[]), "'profiles'"),
    (lambda m: m["shards"][0].pop("sha256"), "needs 'file', 'sha256' and 'bytes'"),
])
def test_malformed_manifest(suite_dir, edit, fragment):
    m = manifest(suite_dir)
    edit(m)
    save(suite_dir, m)
    expect_error(suite_dir, "manifest.json", fragment)


def test_shard_hash_mismatch(suite_dir):
    shard = suite_dir / "shard-000.safetensors"
    blob = bytearray(shard.read_bytes())
    blob[-1] ^= 1  # same size, one bit flipped
    shard.write_bytes(bytes(blob))
    expect_error(suite_dir, "shard-000.safetensors", "sha256")


def test_truncated_shard(suite_dir):
    shard = suite_dir / "shard-000.safetensors"
    shard.write_bytes(shard.read_bytes()[:-10])
    expect_error(suite_dir, "shard-000.safetensors", "truncated")


def test_truncated_shard_with_a_matching_manifest_is_still_refused(suite_dir):
    shard = suite_dir / "shard-000.safetensors"
    blob = shard.read_bytes()[:-10]
    shard.write_bytes(blob)
    m = manifest(suite_dir)
    m["shards"][0].update(bytes=len(blob), sha256=hashlib.sha256(blob).hexdigest())
    save(suite_dir, m)
    expect_error(suite_dir, "shard-000.safetensors", "not a valid safetensors shard")


def edit_vector(suite_dir, alias, fn):
    m = manifest(suite_dir)
    fn(next(v for v in m["vectors"] if v["alias"] == alias))
    save(suite_dir, m)


def test_ref_to_missing_tensor(suite_dir):
    edit_vector(suite_dir, "quantize/q8s/plain", lambda v: v["inputs"].update(x="shard-000.safetensors#nope"))
    expect_error(suite_dir, "manifest.json", "'quantize/q8s/plain'", "no tensor 'nope'")


@pytest.mark.parametrize("ref", ["../shard-000.safetensors#x", "/etc/passwd#x", "sub/shard.safetensors#x"])
def test_ref_outside_the_suite_folder(suite_dir, ref):
    edit_vector(suite_dir, "quantize/q8s/plain", lambda v: v["inputs"].update(x=ref))
    expect_error(suite_dir, "'quantize/q8s/plain'", "outside the suite folder")


def test_shard_file_outside_the_suite_folder(suite_dir):
    m = manifest(suite_dir)
    m["shards"][0]["file"] = "../elsewhere.safetensors"
    save(suite_dir, m)
    expect_error(suite_dir, "manifest.json", "not a plain file name")


def test_unknown_op(suite_dir):
    edit_vector(suite_dir, "quantize/q8s/plain", lambda v: v.update(op="quantise"))
    expect_error(suite_dir, "'quantize/q8s/plain'", "unknown op 'quantise'")


def test_id_that_does_not_match_content(suite_dir):
    edit_vector(suite_dir, "quantize/q8s/plain", lambda v: v["params"].update(api="tensor"))
    expect_error(suite_dir, "'quantize/q8s/plain'", "does not match its content")


def test_expected_profiles_must_match_the_manifest(suite_dir):
    edit_vector(suite_dir, "quantize/q8s/plain", lambda v: v["outcomes"][0]["profiles"].remove(suites.B))
    expect_error(suite_dir, "'quantize/q8s/plain'", "expected profiles")


def test_bad_compare_contract(suite_dir):
    edit_vector(suite_dir, "quantize/q8s/plain",
                lambda v: v["outcomes"][0].update(compare={"codes": {"kind": "roughly"}}))
    expect_error(suite_dir, "'quantize/q8s/plain'", "compare.codes")


def test_duplicate_alias(suite_dir):
    m = manifest(suite_dir)
    m["vectors"][1]["alias"] = m["vectors"][0]["alias"]
    save(suite_dir, m)
    expect_error(suite_dir, "duplicate id/alias")


def test_unknown_profile_is_refused_before_the_backend_starts(suite_dir):
    from conformance.runner import Runner, RunnerError
    with pytest.raises(RunnerError, match="unknown profile 'nope'"):
        Runner(load_suite(suite_dir), "subprocess:/nonexistent/backend", profile="nope")
