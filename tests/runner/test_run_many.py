"""SubprocessBackend.run_many: several requests in flight on protocol v1 (the fuzzer's batches) answer exactly
what one request at a time answers, and a crash in a batch lands on the request that causes it."""

from conformance.backends import open_backend
from conformance.protocol import Error, Fault, Result
from conformance.vectors import load_suite


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, Error):
        return (a.code, a.message) == (b.code, b.message)
    if isinstance(a, Fault):
        return a.kind == b.kind
    return a.values == b.values and set(a.outputs) == set(b.outputs) and \
        all(a.outputs[k].tobytes() == b.outputs[k].tobytes() for k in a.outputs)


def test_run_many_equals_one_at_a_time(suite_dir, lookup_cmd):
    requests = [(v.op, v.params, v.inputs) for v in load_suite(suite_dir).vectors] * 3
    b = open_backend("subprocess:" + lookup_cmd())
    try:
        one = [b.run(*r) for r in requests]
        many = b.run_many(requests)
    finally:
        b.close()
    assert len(many) == len(requests) and all(isinstance(o, (Result, Error)) for o in many)
    assert all(_same(x, y) for x, y in zip(one, many))


def test_a_crash_in_a_batch_lands_on_its_request(suite_dir, lookup_cmd):
    vectors = load_suite(suite_dir).vectors
    b = open_backend("subprocess:" + lookup_cmd("--fault", "crash:quantize/q8s/plain"))
    try:
        outcomes = b.run_many([(v.op, v.params, v.inputs) for v in vectors])
    finally:
        b.close()
    faults = [v.alias for v, o in zip(vectors, outcomes) if isinstance(o, Fault)]
    assert faults == ["quantize/q8s/plain"]
