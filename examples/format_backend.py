"""A backend that implements one named format (conformance/formats.py) and nothing else: the oracle behind
capabilities that say so. It is what a third-party codec of GGUF Q8_0, MXFP4, ... looks like to qconform,
and the tests use it to show that such a backend meets >= 20 vectors per op of its format and that fuzzing
draws inside it.

    qconform run  --backend python:examples.format_backend:q8_0
    qconform fuzz --backend python:examples.format_backend:q8_0 --format q8_0

Until protocol 2's ``formats`` capability, the declaration is the flat lists the format implies (its value,
stores, level and scale dtypes), which admit a little more than the format (other block lengths).
"""

from __future__ import annotations

import functools

from conformance.backends.oracle import run_oracle
from conformance.formats import FORMATS, Format
from conformance.fuzz import batched
from conformance.protocol import BackendError, Error, Fault
from oracle.vocabulary import level

PROFILE = "burn-0.22.1/flex"


class FormatBackend:
    def __init__(self, name: str, profile: str = PROFILE):
        self.format: Format = FORMATS[name]
        self.profile = profile

    def hello(self) -> dict:
        f = self.format
        scheme = f.scheme((1, 32 if f.block != "row" else 32))
        dtypes = sorted({d.name for d in (f.block_dtype, f.tensor_dtype) if d is not None})
        return {"name": f"format-{f.name}", "version": "1", "profile": self.profile,
                "capabilities": {"ops": ["quantize_dynamic", "quantize", "dequantize"], "values": [f.value.name],
                                 "stores": list(f.stores), "modes": ["Symmetric"], "levels": [level(scheme)],
                                 "scale_dtypes": dtypes, "input_dtypes": ["f32"], "output_dtypes": ["f32"]}}

    def run(self, op, params, inputs):
        return _raised(self._answer(op, params, inputs))

    def run_many(self, requests):
        """The answers of ``(op, params, inputs)`` requests, each what ``run`` returns or raises (an exception is
        returned in its place): requests of one scheme and block length are answered by one oracle run over
        their stacked blocks (conformance/fuzz/batched.py), the rest one by one."""
        found = batched.answers(requests, self.profile)
        return [self._answer(*r) if f is None else f for r, f in zip(requests, found)]

    def _answer(self, op, params, inputs):
        out = run_oracle(op, params, inputs, self.profile)
        if isinstance(out, Error):
            return BackendError(out.code, out.message)
        if isinstance(out, Fault):
            return RuntimeError(out.detail)
        return {**out.outputs, **out.values}


def _raised(answer):
    if isinstance(answer, BaseException):
        raise answer
    return answer


for _name in FORMATS:  # python:examples.format_backend:q8_0, ...:int8_per_row
    globals()[_name.replace("-", "_")] = functools.partial(FormatBackend, _name)
