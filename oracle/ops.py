"""One entry point per operation of ``docs/ops.md``: ``run(op, params, inputs, profile=...)``.

The golden-vector generator and the built-in ``oracle`` backend both call :func:`run`, so what a vector expects
and what the reference backend answers come from the same code path. Params arrive as JSON, inputs as numpy
arrays; outputs are arrays (tensors) or JSON values.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

import numpy as np

from .blocks import num_params, params_shape
from .calibration import compute_range
from .checkpoint import load_checkpoint, save_checkpoint
from .codec import decode_scales, encode_scales, from_bytes, into_data, pack_u32, to_bytes, unpack_u32
from .dequantize import dequantize, load_quantized
from .errors import UndefinedBehaviour
from .float_ops import expected_by_a_user, run_chain, start
from .layout import run_steps
from .matmul import ternary_matmul
from .profiles import DEFAULT_PROFILE, Profile, get_profile
from .qparams import compute_q_params
from .qtensor import QTensor
from .quantize import held_scheme, quantize, quantize_dynamic, require_dtypes
from .scales import scale_to_dtype
from .scheme import NATIVE, QuantScheme, QuantValue, ScaleDtype, quantizable
from .stages import Stages
from .support import on_stream, read_below
from .views import VIEW_READ, resolved, view_strides
from .vocabulary import FLOAT_STEPS, LAYOUT_STEPS

Outputs = dict[str, object]


def _scheme(params: dict) -> QuantScheme:
    return QuantScheme.from_json(params["scheme"])


def _qtensor_outputs(qt: QTensor, profile: Profile) -> Outputs:
    """A quantized result as ``into_data()`` shows it (see ``codec.into_data``)."""
    seen = into_data(qt, profile=profile)
    out: Outputs = {"codes": seen.codes, "scales": seen.scales}
    if seen.global_scale is not None:
        out["global"] = seen.global_scale
    return out


def _parts(inputs: dict, params: dict) -> QTensor:
    codes = np.asarray(inputs["codes"], dtype=np.int8)
    return QTensor(codes, np.asarray(inputs["scales"], dtype=np.float32).ravel(), inputs.get("global"),
                   _scheme(params))


def _round_up(params, inputs, prof, stages) -> Outputs:
    return {"rounded": scale_to_dtype(inputs["scales"], ScaleDtype[params["dtype"]], prof)}


def _encode_scales(params, inputs, prof, stages) -> Outputs:
    return {"bytes": encode_scales(inputs["scales"], ScaleDtype[params["dtype"]], profile=prof)}


def _decode_scales(params, inputs, prof, stages) -> Outputs:
    return {"scales": decode_scales(inputs["bytes"], ScaleDtype[params["dtype"]], profile=prof)}


def _compute_range(params, inputs, prof, stages) -> Outputs:
    require_dtypes(prof, inputs["x"])
    with on_stream(prof):
        lo, hi = compute_range(inputs["x"], _scheme(params), params.get("calibration", "minmax"), profile=prof)
    return {"min": lo, "max": hi}


def _compute_q_params(params, inputs, prof, stages) -> Outputs:
    require_dtypes(prof, inputs["min"], inputs["max"])
    with read_below(prof, 1):  # a fused build reads the scales past the one elementwise kernel of the q-params
        scales, glob = compute_q_params(inputs["min"], inputs["max"], _scheme(params), profile=prof, stages=stages)
    return {"scales": scales} if glob is None else {"scales": scales, "global": glob}


@contextmanager
def _read_back_refusal_first(shape: tuple[int, ...], scheme: QuantScheme, prof: Profile):
    """A quantize whose result is undefined (a GPU kernel's scales that no block owns) is still read back: where the
    read-back refuses the tensor's layout whatever it holds (burn-std up to 0.22.1 splits no values off a store
    packed along an outer axis, ``bytes.packed_dim``), that panic is the answer, raised on the host after the
    kernel ran."""
    try:
        yield
    except UndefinedBehaviour:
        glob = None if scheme.global_scale_dtype() is None else np.ones(1, np.float32)
        held = held_scheme(scheme, len(shape), prof)
        into_data(QTensor(np.zeros(shape, np.int8), np.ones(num_params(shape, held), np.float32), glob, held),
                  profile=prof)
        raise


def _quantize(params, inputs, prof, stages) -> Outputs:
    scheme = _scheme(params)
    with _read_back_refusal_first(np.shape(inputs["x"]), scheme, prof):
        qt = quantize(inputs["x"], scheme, inputs["scales"], inputs.get("global"), profile=prof,
                      checked=params.get("api", "tensor") == "tensor", stages=stages)
    return _qtensor_outputs(qt, prof)


def _quantize_dynamic(params, inputs, prof, stages) -> Outputs:
    scheme = _scheme(params)
    with _read_back_refusal_first(np.shape(inputs["x"]), scheme, prof):
        qt = quantize_dynamic(inputs["x"], scheme, profile=prof, stages=stages)
    return _qtensor_outputs(qt, prof)


def _dequantize(params, inputs, prof, stages) -> Outputs:
    return {"x": dequantize(_parts(inputs, params), params.get("dtype", "f32"), profile=prof, stages=stages)}


def _load_quantized(params, inputs, prof, stages) -> Outputs:
    """The floats burn reconstructs from a quantized tensor's stored bytes (a loader's question, docs/ops.md)."""
    return {"x": load_quantized(inputs["bytes"], tuple(params["shape"]), _scheme(params), params.get("dtype", "f32"),
                                profile=prof, stages=stages)}


def _save_checkpoint(params, inputs, prof, stages) -> Outputs:
    """The burnpack file burn-store writes for a record of one quantized tensor (docs/spec/checkpoint.md)."""
    return {"file": np.frombuffer(save_checkpoint(_parts(inputs, params), profile=prof), dtype=np.uint8)}


def _load_checkpoint(params, inputs, prof, stages) -> Outputs:
    """A burnpack file's quantized tensor as burn loads it: the descriptor read, the payload, the floats."""
    loaded = load_checkpoint(np.asarray(inputs["file"], dtype=np.uint8).tobytes(), profile=prof)
    return {"name": loaded.name, "shape": list(loaded.shape), "dtype": loaded.dtype_debug(), "x": loaded.x,
            "bytes": loaded.payload}


def _qlayout(params, inputs, prof, stages) -> Outputs:
    """Layout steps on a quantized tensor through burn's ``Tensor`` API (``oracle/layout.py``)."""
    x, held = run_steps(_parts(inputs, params), params["steps"], prof, stages)
    if held is None:
        return {"x": x, "quantized": False}
    out = _qtensor_outputs(held, prof) | {"x": x, "quantized": True, "scheme": held.scheme.debug()}
    return out


def _float_ops(params, inputs, prof, stages) -> Outputs:
    """Layout and float-op steps on a quantized tensor, loaded or quantized on the device (``oracle/float_ops.py``);
    the reply says the result's kind, as ``qlayout``'s does."""
    unknown = [s.get("op") for s in params["steps"] if s.get("op") not in (*LAYOUT_STEPS, *FLOAT_STEPS)]
    if unknown:
        raise ValueError(f"float_ops: unknown steps {unknown}; known: {', '.join((*LAYOUT_STEPS, *FLOAT_STEPS))}")
    first, upload = start(inputs, _scheme(params), prof)
    if stages is not None and upload is None:
        stages.moved = expected_by_a_user(first, params["steps"], prof)  # None for a tensor held in error
    x, held = run_chain(first, params["steps"], prof, upload)
    if held is None:
        return {"x": x, "quantized": False}
    return _qtensor_outputs(held, prof) | {"x": x, "quantized": True, "scheme": held.scheme.debug()}


def _quantize_view(params, inputs, prof, stages) -> Outputs:
    """``Tensor::quantize_dynamic`` of a view (transposed, sliced, ...) of a contiguous tensor."""
    steps = resolved(np.shape(inputs["x"]), params["view"], prof.reshape_zero_keeps_dim)
    x = prof.step(VIEW_READ)(np.asarray(inputs["x"]), steps)
    strides = None
    if prof.strided_views:
        strides = view_strides(np.shape(inputs["x"]), steps, prof.contiguity_ignores_unit_dims)
    scheme = _scheme(params)
    with _read_back_refusal_first(x.shape, scheme, prof):
        held = quantize_dynamic(x, scheme, profile=prof, stages=stages, strides=strides)
    return _qtensor_outputs(held, prof)


def _to_bytes(params, inputs, prof, stages) -> Outputs:
    return {"bytes": to_bytes(_parts(inputs, params), profile=prof)}


def _from_bytes(params, inputs, prof, stages) -> Outputs:
    held = from_bytes(inputs["bytes"], tuple(params["shape"]), _scheme(params), profile=prof, validated=True)
    out: Outputs = {"codes": held.codes.ravel(), "scales": held.scales}
    if held.global_scale is not None:
        out["global"] = held.global_scale
    return out


def _pack_u32(params, inputs, prof, stages) -> Outputs:
    return {"words": pack_u32(inputs["codes"], QuantValue[params["value"]], profile=prof)}


def _unpack_u32(params, inputs, prof, stages) -> Outputs:
    return {"codes": unpack_u32(inputs["words"], QuantValue[params["value"]], int(params["numel"]), profile=prof)}


def _ternary_matmul(params, inputs, prof, stages) -> Outputs:
    rhs = QTensor(np.asarray(inputs["rhs_codes"], dtype=np.int8), np.asarray(inputs["rhs_scale"], np.float32).ravel(),
                  None, QuantScheme.default().with_store(NATIVE).with_value(QuantValue.Q2S))
    return {"out": ternary_matmul(inputs["lhs"], rhs, profile=prof)}


def _scheme_info(params, inputs, prof, stages) -> Outputs:
    scheme = _scheme(params)
    shape = tuple(params.get("shape", []))
    size = scheme.block_size()
    tensor_scale = scheme.tensor_scale()
    return {
        "debug": scheme.debug(),
        "block_size": [] if size is None else list(size.dims),
        "num_levels": scheme.num_levels(),
        "scale_dtype": scheme.scale_dtype().name,
        "tensor_scale": None if tensor_scale is None else tensor_scale.name,
        "quantizable": quantizable(scheme, ue8m0_round_up=prof.ue8m0),
        "num_blocks": None if size is None else size.num_blocks(shape),
        "params_shape": params_shape(shape, scheme),
    }


# Each op: (params, inputs, profile, stages or None) -> outputs; the ops that run pipeline steps fill ``stages``.
OPS: dict[str, Callable[[dict, dict, Profile, Stages | None], Outputs]] = {
    "round_up": _round_up,
    "encode_scales": _encode_scales,
    "decode_scales": _decode_scales,
    "compute_range": _compute_range,
    "compute_q_params": _compute_q_params,
    "quantize": _quantize,
    "quantize_dynamic": _quantize_dynamic,
    "dequantize": _dequantize,
    "to_bytes": _to_bytes,
    "from_bytes": _from_bytes,
    "pack_u32": _pack_u32,
    "unpack_u32": _unpack_u32,
    "ternary_matmul": _ternary_matmul,
    "scheme_info": _scheme_info,
    "qlayout": _qlayout,
    "quantize_view": _quantize_view,
    "float_ops": _float_ops,
    "load_quantized": _load_quantized,
    "save_checkpoint": _save_checkpoint,
    "load_checkpoint": _load_checkpoint,
}


def run(op: str, params: dict, inputs: dict[str, np.ndarray], *,
        profile: str | Profile = DEFAULT_PROFILE, stages: Stages | None = None) -> Outputs:
    """Perform ``op`` as the profile's backend does; an expected failure raises :class:`oracle.BurnPanic`.
    ``stages``, if given, receives the stages of the pipeline steps the op runs (see ``oracle/stages.py``)."""
    try:
        handler = OPS[op]
    except KeyError:
        raise ValueError(f"unknown op {op!r}; known: {', '.join(OPS)}") from None
    return handler(params, inputs, get_profile(profile), stages)
