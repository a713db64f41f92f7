"""burn's panics, as data (spec §8).

Every panic the oracle models is one row of :data:`CATALOGUE`: a stable dotted ``code``, the macro that raises it
(which decides the text Rust adds around the message) and the message template with burn's placeholders. A
vector's expected error is ``{code, message}``; :func:`classify_panic` maps raw panic text from a real backend
back to its code, so a backend that only knows panic text can still be judged by code.
"""

from __future__ import annotations

import re

import numpy as np
from dataclasses import dataclass


class BurnPanic(Exception):
    """A panic burn raises for this request: ``code`` is the catalogue key, ``message`` burn's exact text, ``root``
    the code of the panic a deferred one reports (the op that failed on a fused build's stream)."""

    def __init__(self, code: str, message: str, root: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.root = root or code

    def __repr__(self) -> str:
        return f"BurnPanic({self.code!r}, {self.message!r})"


class UndefinedBehaviour(Exception):
    """A request on which burn's behaviour is undefined (a GPU kernel reading past a buffer): no vector can
    expect anything of it."""


@dataclass(frozen=True)
class PanicSite:
    code: str
    macro: str  # panic | assert | assert_eq | expect | unimplemented | todo | unwrap_none | unwrap_err | index | error
    template: str
    spec: str  # the spec's § (docs/spec/panics.md)
    source: str  # where burn raises it: published crate path:line (docs/spec/README.md)
    opaque: tuple[str, ...] = ()
    """Placeholders whose text no model of burn can know: the device error store's bookkeeping (a failure's id
    counts every failure the process saw before, the skip path names memory ids) or a compiled kernel's hash. The
    expected message holds :data:`OPAQUE` in their place, and :func:`message_matches` lets any text stand there."""


OPAQUE = "\u27e8{}\u27e9"
"""How an opaque placeholder reads in an expected message: ``⟨failure⟩``."""


# burn 0.22.1's read-back of a buffer a failed launch never wrote (cubecl-runtime-0.11.3 src/server/base.rs:466-513):
# burn-tensor's `into_data` panics with the returned error's text; the root failure sits inside the chain.
_INTO_DATA = "Error while reading data: use `try_into_data` instead to catch the error at runtime: "
SORT_READ = ("Failed to synchronously read tensor data. This operation is not supported until this backend has a GPU "
             "sorting implementation.")
_UNWRITTEN_OPAQUE = ("failure", "claimed", "chain")


def _unwritten(root: str) -> str:
    return ("An error happened during execution\nCaused by:\n  Several failures at once\nCaused by:\n  The bytes were "
            "never written (failure #{failure}, still claiming {claimed} buffer(s))\n{chain}Caused by:\n  " + root +
            "\nAsked at:\nNo backtrace available")


_LAUNCH = "A launch error happened\nCaused by:\n  A compilation error happened during launch\nCaused by:\n  "
_FP8_ROOT = (_LAUNCH + "A validation error caused the compilation to fail\nCaused by:\n  Compilation error: invalid "
             "input program.\nfp8 on WGSL is packed 4 lanes to a u32, a scalar has no representation: use vectors of "
             "4, 8 or 16 lanes\nBacktrace:\nNo backtrace available")
_MATMUL_KERNEL = "matmul_entry_lhs_f32_{kernel}"


def _wgsl_i8_root(kernel: str) -> str:
    """naga's refusal of a kernel that declares i8 codes (WGSL has no i8): the binding ``{var}``, an ``array<i8>``
    or ``array<vec4<i8>>`` (``{array}``), on line ``{line}``, the caret under the type."""
    return (_LAUNCH + "An error caused the compilation to fail\nCaused by:\n  WGSL compilation failed for kernel `"
            + kernel + "`: Validation Error\n\nCaused by:\n  In Device::create_shader_module, label = '" + kernel
            + "'\n    \nShader '" + kernel + "' parsing error: no definition in scope for identifier: `i8`\n  ┌─ "
            "wgsl:{line}:{col}\n  │\n{line} │ @group(0) @binding({binding}) var<storage, read_write> {var}: array<{array}>;"
            "\n  │{pad}^^ unknown identifier\n\n\n\nBacktrace:\nNo backtrace available")


_MATMUL_I8_ROOT = _wgsl_i8_root(_MATMUL_KERNEL)
# burn-cubecl-fusion's elementwise kernel, named by a hash of its trace (cubecl's kernel id).
_FUSED_I8_ROOT = _wgsl_i8_root("elemwise_fuse_{kernel}")
# burn-fusion runs a stream's work on the device runner thread; a panic there while it builds the fused
# kernels (not inside an op it runs) ends the task (burn-fusion-0.22.1 src/backend.rs:21-24).
_SERVER_PANIC = "the fusion server failed to run a task: CallError(task panicked on device runner thread: {error})"

_SITES = [
    # burn-std QuantizedBytes / TensorData (§7)
    PanicSite("bytes.values_fill_shape", "assert_eq",
              "{count} quantized values do not fill a tensor of shape {shape}",
              "§8 #1", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:227"),
    PanicSite("data.shape_mismatch", "assert_eq",
              "Shape {shape} is invalid for input of size {size}",
              "§8 #2", "burn-std-0.22.0-pre.3/src/data/tensor/base.rs:230"),
    PanicSite("bytes.global_not_f32", "assert_eq",
              "a two-level scheme stores its per-tensor scale as f32, got {scheme}",
              "§8 #4", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:254"),
    PanicSite("bytes.global_missing", "panic", "{scheme} requires a per-tensor scale",
              "§8 #5", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:262"),
    PanicSite("bytes.global_unexpected", "panic",
              "{scheme} does not take a per-tensor scale",
              "§8 #6", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:263"),
    PanicSite("bytes.too_short", "expect",
              "quantized tensor data is shorter than its scheme's parameters",
              "§8 #9", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:307, :336"),
    PanicSite("bytes.packed_dim", "assert_eq",
              "Packing must be on innermost dimension for splitting off values",
              "§8 #10", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:323"),
    PanicSite("bytes.unsupported_store", "unimplemented", "Not yet supported",
              "§8 #11", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:345, :348"),
    PanicSite("bytes.ue8m0", "unimplemented", "UE8M0 scales are not yet supported",
              "§8 #13", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:440, :460"),
    PanicSite("bytes.not_u32_multiple", "panic", "cast_slice>OutputSliceWouldHaveSlop",
              "§7.2", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:339 (bytemuck::cast_slice of the "
              "code bytes to u32 words)"),
    PanicSite("bytes.empty_unaligned", "panic", "cast_slice>TargetAlignmentGreaterAndInputNotAligned",
              "§7.2", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:339 (bytemuck::cast_slice of an empty "
              "buffer, whose dangling pointer is 1-aligned; found by qconform fuzz)"),
    # burn-std >= 0.23.0-pre.1: packed lines and validated lengths (quantization/packing.rs, base.rs)
    PanicSite("bytes.packed_dim_rank", "assert",
              "a store packed along dim {packed_dim} from the innermost needs more than {rank} dims",
              "§11", "burn-std-0.23.0-pre.1/src/tensor/quantization/packing.rs:94 (PackedOrder::new)"),
    PanicSite("bytes.values_length", "assert_eq",
              "the values of a {shape} tensor under {scheme} take {expected} bytes, not {actual}",
              "§11", "burn-std-0.23.0-pre.1/src/tensor/quantization/base.rs:327 (split_values_off)"),
    PanicSite("data.invalid_length", "panic",
              "Shape {shape} with dtype QFloat({scheme}) is invalid for input of size {len} bytes",
              "§11", "burn-std-0.23.0-pre.1/src/data/tensor/base.rs:221 (from_bytes, InvalidByteLength)"),
    PanicSite("data.invalid_layout", "panic",
              "Quantized layout for shape {shape} and dtype QFloat({scheme}) is invalid",
              "§11", "burn-std-0.23.0-pre.1/src/data/tensor/base.rs:221 (from_bytes, InvalidQuantizedLayout)"),
    # scale rounding (§4)
    PanicSite("scale.ue8m0", "expect", "UE8M0 scales are not yet supported",
              "§8 #12", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:367"),
    # calibration and q-params (§2, §3)
    PanicSite("range.block_not_divisible", "assert",
              "Tensor {shape} must be evenly divisible by block size {block}",
              "§8 #18", "burn-backend-0.22.0-pre.3/src/quantization/scheme.rs:27"),
    PanicSite("range.absmean_two_level", "assert",
              "AbsMean calibration has no two-level form: BitNet's gamma is a mean over the whole tensor or "
              "block, which a per-tensor scale cannot decompose",
              "§8 #19", "burn-backend-0.22.0-pre.3/src/quantization/scheme.rs:59"),
    PanicSite("qparams.block_dtype_too_wide", "assert",
              "block scales in {dtype} reach f32's range, which a per-tensor scale cannot absorb",
              "§8 #20", "burn-backend-0.22.0-pre.3/src/quantization/scheme.rs:115"),
    PanicSite("ndarray.reshape_dims", "panic", "NdArray supports arrays up to 6 dimensions, received: {dims}",
              "§2", "burn-ndarray-0.22.0-pre.3/src/tensor.rs:582 (reduce_blocks' reshape of a rank >= 4 "
              "tensor)"),
    PanicSite("tensor.reshape_count", "panic",
              "=== Tensor Operation Error ===\n  Operation: 'Reshape'\n  Reason:\n    1. The given shape doesn't have "
              "the same number of elements as the current shape. Current shape: {source}, target shape: {target}. \n",
              "§9", "burn-tensor-0.23.0-pre.1/src/tensor/api/check.rs:312-322 (TensorCheck::reshape, from "
              "base.rs:3456-3460); until 0.22.1 the same reason from cubecl-zspace-0.11.3/src/shape.rs:444-452 "
              "(the target with its 0s read as the source's dims) through burn-tensor's check! (check.rs:1389-1397)"),
    PanicSite("ndarray.matmul_empty", "panic", "attempt to divide by zero",
              "§9.3", "burn-ndarray-0.22.0-pre.3/src/ops/matmul.rs:25-27, 0.22.1 the same lines (the batch counts "
              "divide by the matrix sizes m*k, k*n and m*n: a float matmul with m, k or n of 0; found by fuzzing)"),
    PanicSite("range.empty_ndarray", "expect", "Cannot compute min of empty tensor",
              "§8 #34", "burn-ndarray-0.22.0-pre.3/src/ops/base.rs:1242"),
    PanicSite("range.empty_flex", "assert", "min: cannot reduce an empty tensor",
              "§8 #40", "burn-flex-0.22.0-pre.3/src/ops/reduce.rs:466"),
    PanicSite("qparams.empty_max_ndarray", "expect", "Cannot compute max of empty tensor",
              "§3.1", "burn-ndarray-0.22.0-pre.3/src/ops/base.rs:1213 (normalize_scales' float_max; found by "
              "qconform fuzz)"),
    PanicSite("qparams.empty_max_flex", "assert", "max: cannot reduce an empty tensor",
              "§3.1", "burn-flex-0.22.0-pre.3/src/ops/reduce.rs:432 (normalize_scales' float_max; found by "
              "qconform fuzz)"),
    # Tensor::quantize (§5.1)
    PanicSite("quantize.global_mismatch", "assert_eq",
              "{scheme} does not match a per-tensor scale of {global_scale}",
              "§8 #21, §8 #37", "burn-tensor-0.22.0-pre.3/src/tensor/api/float.rs:379, "
              "burn-flex-0.22.0-pre.3/src/qtensor.rs:46 (same text)"),
    PanicSite("tensor.global_not_one", "assert_eq",
              "the per-tensor scale must have exactly one element, got {dims}",
              "§8 #22", "burn-tensor-0.22.0-pre.3/src/tensor/api/float.rs:386"),
    PanicSite("tensor.global_not_f32", "assert_eq",
              "the per-tensor scale must be an f32 tensor, got {dtype}",
              "§8 #23", "burn-tensor-0.22.0-pre.3/src/tensor/api/float.rs:392"),
    # backend quantize (§5.2-5.4)
    PanicSite("quantize.global_without_two_level", "expect",
              "a per-tensor scale should come with a two-level scheme",
              "§8 #24", "burn-ndarray-0.22.0-pre.3/src/ops/qtensor.rs:98, "
              "burn-flex-0.22.0-pre.3/src/ops/qtensor.rs:167"),
    PanicSite("quantize.two_level_without_global", "expect",
              "a two-level scheme should have a per-tensor scale",
              "§8 #25", "burn-ndarray-0.22.0-pre.3/src/ops/qtensor.rs:156"),
    PanicSite("ndarray.unsupported_scheme", "unimplemented",
              "Quantization not supported for scheme {scheme}",
              "§8 #26", "burn-ndarray-0.22.0-pre.3/src/ops/qtensor.rs:169"),
    PanicSite("ndarray.nan_code", "unwrap_none", "",
              "§8 #28", "burn-ndarray-0.22.0-pre.3/src/ops/quantization.rs:132"),
    PanicSite("ndarray.block_count", "assert_eq",
              "Invalid per-block quantization: {count} blocks for a {shape} tensor with {block} blocks",
              "§8 #29", "burn-ndarray-0.22.0-pre.3/src/ops/quantization.rs:54"),
    PanicSite("ndarray.permute_scales", "unwrap_err", "ShapeError/{kind}: {description}",
              "§8 #64", "burn-ndarray-0.22.0-pre.3/src/ops/qtensor.rs:316 (q_permute's ArrayD::from_shape_vec of "
              "a kept scale list that does not fill the current grid; the text is ndarray's ShapeError Display: "
              "OutOfBounds for too few scales, IncompatibleShape for too many; found by qconform fuzz)"),
    PanicSite("ndarray.from_data_scheme", "unimplemented",
              "from_data not supported for scheme {scheme}",
              "§8 #30", "burn-ndarray-0.22.0-pre.3/src/ops/qtensor.rs:72"),
    PanicSite("ndarray.unsupported_dtype", "unimplemented", "Unsupported dtype {dtype}",
              "§8 #35", "burn-ndarray-0.22.0-pre.3/src/tensor.rs:688"),
    PanicSite("scale.index_out_of_bounds", "index",
              "index out of bounds: the len is {len} but the index is {index}",
              "§8", "burn-ndarray-0.22.0-pre.3/src/ops/qtensor.rs:127, "
              "burn-flex-0.22.0-pre.3/src/ops/qtensor.rs:176, :189 (Rust's index check on a short scale list)"),
    PanicSite("scale.slice_out_of_bounds", "index",
              "range end index 1 out of range for slice of length 0",
              "§7.4b", "burn-std-0.22.0-pre.3/src/tensor/quantization.rs:243 (a per-tensor scheme's "
              "`&scales[..1]`)"),
    PanicSite("flex.block_not_whole", "assert", "tensor {shape} is not a whole number of {block} blocks",
              "§8 #38", "burn-flex-0.22.1/src/ops/qtensor.rs:25 (an assert! from burn 0.22.1 on)"),
    PanicSite("flex.clamp_reversed", "assert", "min > max, or either was NaN. min = {min}, max = {max}",
              "§8 #65", "burn-flex-0.22.0-pre.3/src/ops/float.rs:533, burn-flex-0.22.1/src/ops/float.rs:676 (Rust "
              "core's f32::clamp assert, its bounds printed with `{:?}`)"),
    PanicSite("flex.qtensor_no_scale", "assert",
              "quantized tensor must have at least one scale factor",
              "§8 #37", "burn-flex-0.22.0-pre.3/src/qtensor.rs:42"),
    # GPU (§5.4, §7.6): read in burn-cubecl and cubek-quant 0.3.0-pre.3; no GPU was run
    PanicSite("cubecl.packed_last_dim", "panic", "Can't store in u32",
              "§8 #41", "burn-cubecl-0.22.0-pre.3/src/ops/qtensor.rs:88"),
    PanicSite("cubecl.native_sub_byte", "panic", "Can't store native sub-byte values",
              "§8 #42", "burn-cubecl-0.22.0-pre.3/src/ops/qtensor.rs:102"),
    PanicSite("cubecl.native_packing", "panic", "{value} doesn't support native packing",
              "§8 #43", "burn-cubecl-0.22.0-pre.3/src/ops/qtensor.rs:107"),
    PanicSite("cubecl.global_not_f32", "assert_eq",
              "a two-level scheme binds its per-tensor scale as f32, got {scheme}",
              "§8 #44", "burn-cubecl-0.22.0-pre.3/src/ops/qtensor.rs:127"),
    PanicSite("cubecl.lookup_from_data", "unimplemented", "lookup quantization does not travel as a QFloat tensor",
              "§8 #45", "burn-cubecl-0.22.0-pre.3/src/ops/qtensor.rs:243"),
    PanicSite("cubecl.global_tensor_not_f32", "assert_eq",
              "a two-level scheme's per-tensor scale must be an f32 tensor, got {dtype}",
              "§8 #46", "burn-cubecl-0.22.0-pre.3/src/ops/qtensor.rs:261"),
    PanicSite("cubecl.no_round_up", "assert",
              "{dtype} scales have no round-up rule, which quantization requires",
              "§8 #56", "cubek-quant-0.3.0-pre.3/src/quantize.rs:223"),
    PanicSite("cubecl.native_value", "panic", "{value} is not supported for native quantization",
              "§8 #57", "cubek-quant-0.3.0-pre.3/src/quantize.rs:283"),
    PanicSite("cubecl.unsupported_scheme", "panic", "Unsupported quantization scheme {scheme}",
              "§8 #58", "cubek-quant-0.3.0-pre.3/src/quantize.rs:355"),
    PanicSite("cubecl.scale_bindings", "assert",
              "a scheme with {levels} scale level(s) takes as many scale bindings, but {bindings} were provided",
              "§8 #60", "cubecl-std-0.11.0-pre.3/src/quant/base.rs:23"),
    PanicSite("cubecl.q_flip", "panic", "not implemented",
              "§8 #48, §9.3", "burn-cubecl-0.22.0-pre.3/src/ops/qtensor.rs:322 (`unimplemented!()` without a message; "
              "no GPU build ran it)"),
    # GPU, measured: burn-wgpu 0.22.0-pre.3 with WGSL shaders on Mesa lavapipe (docs/findings.md, issue 9)
    PanicSite("cubecl.reduce_empty", "unwrap_err", "ReduceAxisTooSmall {{ axis_length: 0, k: 1 }}",
              "§2, §3.1", "burn-cubecl-0.22.0-pre.3/src/kernel/reduce/base.rs:69 (min/max of an empty tensor: no "
              "identity; measured on WGSL)"),
    PanicSite("wgsl.fp8_scalar", "expect",
              'bytes: host access failed: Read("The server is in an invalid state\\nCaused by:\\n  A launch error '
              'happened\\nCaused by:\\n  A compilation error happened during launch\\nCaused by:\\n  A validation '
              'error caused the compilation to fail\\nCaused by:\\n  Compilation error: invalid input program.\\nfp8 '
              'on WGSL is packed 4 lanes to a u32, a scalar has no representation: use vectors of 4, 8 or 16 '
              'lanes\\nBacktrace:\\nNo backtrace available")',
              "§5.4", "cubecl-wgpu-0.11.0-pre.3/src/compiler/wgsl/types.rs (a scalar fp8 scale), reported at "
              "read-back by cubecl-environment-0.11.0-pre.3/src/bytes/base.rs:446; measured on WGSL"),
    PanicSite("wgsl.matmul_i8", "expect",
              'bytes: host access failed: Read("The server is in an invalid state\\nCaused by:\\n  A launch error '
              'happened\\nCaused by:\\n  A compilation error happened during launch\\nCaused by:\\n  An error caused '
              'the compilation to fail\\nCaused by:\\n  WGSL compilation failed for kernel `matmul_entry_lhs_f32_{kernel}`: Validation '
              "Error\\n\\nCaused by:\\n  In Device::create_shader_module, label = 'matmul_entry_lhs_f32_{kernel}'\\n    \\nShader "
              "'matmul_entry_lhs_f32_{kernel}' parsing error: no definition in scope for identifier: `i8`\\n  ┌─ wgsl:{line}:{col}\\n  "
              "│\\n{line} │ @group(0) @binding({binding}) var<storage, read_write> {var}: array<i8>;\\n  │"
              "{pad}^^ unknown identifier\\n\\n\\n\\n"
              'Backtrace:\\nNo backtrace available")',
              "§9.3", "burn-cubecl-0.22.0-pre.3 quantized matmul of a Native (i8) tensor, compiled by "
              "cubecl-wgpu-0.11.0-pre.3 (WGSL has no i8; the kernel's name spells its vector sizes, and naga numbers the i8 "
              "binding's variable after the kernel's others), reported at read-back by "
              "cubecl-environment-0.11.0-pre.3/src/bytes/base.rs:446; measured on WGSL", opaque=("kernel", "var")),
    # GPU, measured: burn 0.22.1 (cubecl 0.11.3) reports a failed launch when its output is read: the read returns
    # an ExecutionError naming the unwritten buffer and its root failure; burn-tensor's into_data panics with it.
    PanicSite("wgsl.fp8_scalar_unwritten", "expect", _INTO_DATA + _unwritten(_FP8_ROOT),
              "§5.4", "cubecl-wgpu-0.11.3/src/compiler/wgsl/types.rs:61 (a scalar fp8 scale), reported at read-back "
              "as cubecl-runtime-0.11.3/src/server/base.rs:475 `Unwritten` by burn-tensor-0.22.1/src/tensor/api/"
              "base.rs:2077; measured on WGSL", opaque=_UNWRITTEN_OPAQUE),
    PanicSite("wgsl.matmul_i8_unwritten", "expect", _INTO_DATA + _unwritten(_MATMUL_I8_ROOT),
              "§9.3", "burn-cubecl-0.22.1 quantized matmul of a Native (i8) tensor, compiled by cubecl-wgpu-0.11.3 "
              "(WGSL has no i8; the kernel's name spells its vector sizes and ends in a hash of its settings, and "
              "naga numbers the i8 binding's variable after the kernel's others), reported at read-back as "
              "cubecl-runtime-0.11.3/src/server/base.rs:475 `Unwritten`; measured on WGSL",
              opaque=(*_UNWRITTEN_OPAQUE, "kernel", "var")),
    # burn-wgpu's default build (burn-fusion): a backend op is queued on the fusion stream and run when a read needs
    # its output, so a panic inside it (a launch check, a reduction) surfaces at that read as the stream's error.
    PanicSite("fusion.deferred", "expect", _INTO_DATA + "An error happened during execution\nCaused by:\n  {error}",
              "§5.4", "burn-fusion-0.22.1 src/ops/qtensor.rs:44-95 (QuantizeOp::execute runs B::quantize on the "
              "stream), read back by burn-tensor-0.22.1 src/tensor/api/base.rs:2077; measured on the fused WGSL build"),
    PanicSite("fusion.i8_unwritten", "expect", _INTO_DATA + _unwritten(_FUSED_I8_ROOT),
              "§6", "burn-cubecl-fusion-0.22.1 src/engine/fuser.rs:531-560 (a Dequantize fused into the elementwise "
              "kernel, which reads the codes itself: src/engine/trace/block.rs:209-250, typed i8 by "
              "src/engine/codegen/ir.rs:933-957), compiled by cubecl-wgpu-0.11.3 (WGSL has no i8), reported at "
              "read-back as cubecl-runtime-0.11.3/src/server/base.rs:475 `Unwritten`; measured on the fused WGSL "
              "build", opaque=(*_UNWRITTEN_OPAQUE, "kernel")),
    PanicSite("fusion.server_panic", "expect", _INTO_DATA + "An error happened during execution\nCaused by:\n  "
              + _SERVER_PANIC,
              "§7.6", "burn-cubecl-fusion-0.22.1 src/engine/codegen/ir.rs:943-955 (`FuseType::from_quant_scheme` "
              "panics for a sub-byte Native store while the matmul fuser registers its quantized input, "
              "src/optim/matmul/fuser.rs:53), on burn-fusion's device runner thread: burn-fusion-0.22.1 "
              "src/backend.rs:21-24; measured on the fused WGSL build"),
    PanicSite("fusion.skipped", "expect", _INTO_DATA + "An error happened during execution\nCaused by:\n  the work "
              "writing it was skipped {skipped} operation(s) below a failure: {error}",
              "§5.4", "burn-ir-0.22.1 src/handle.rs:121-132 (`TensorError`'s Display: a tensor whose writing op was "
              "skipped because an input carried a stream op's failure, `depth` ops below it), read back by "
              "burn-tensor-0.22.1 src/tensor/api/base.rs:2077; measured on the fused WGSL build"),
    PanicSite("fusion.sort_read", "expect", SORT_READ + ": An error happened during execution\nCaused by:\n  {error}",
              "§9.5", "burn-backend-0.23.0-pre.1 src/backend/ops/tensor.rs:1838-1852 (`float_sort`'s default reads the "
              "tensor back, `try_read_sync(..).expect(msg).expect(msg)`: the read's ExecutionError after its message); "
              "measured on the fused WGSL build"),
    PanicSite("harness.read_failed", "panic", "{read}: An error happened during execution\nCaused by:\n  {error}",
              "§5.4", "adapters/burn/src/ops.rs `read`: the ExecutionError a backend read returns (burn >= 0.22.1 "
              "on the GPU) instead of panicking: `B::q_into_data` (`api: \"backend\"`) or `B::float_into_data` (an "
              "f16/bf16 dequantize), reported by the harness as `<read>: {error:?}`"),
    PanicSite("cubecl.packed_axis_swap", "expect",
              "the packed axis is one of the tensor's: OutOfBounds {{ dim: {dim}, rank: {rank} }}",
              "§7.6", "burn-cubecl-0.22.1/src/ops/qtensor.rs:106-110 (an outer packed axis is stored innermost; "
              "`rank - dim - 1` wraps for a packed dim beyond the rank)"),
    PanicSite("cubecl.tiling_rank", "expect",
              'a tensor\'s tiling describes its own rank: Invalid {{ reason: "Tiling(0) does not fit a rank-{dims} '
              'buffer" }}',
              "§2", "burn-cubecl-0.22.1/src/tensor/base.rs:106 via cubecl-zspace-0.11.3/src/tiling.rs:86 (at most 8 "
              "logical dims, MAX_LOGICAL_DIMS); measured on lavapipe"),
    PanicSite("cubecl.reshape_packed_dim_index", "index",
              "index out of bounds: the len is {len} but the index is {index}",
              "§9.3", "burn-cubecl-0.22.1 src/ops/base.rs:348-352 (`q_reshape`'s `rank - packed_dim - 1` wraps in a "
              "release build when a permute carried the packed dim past the new rank, then indexes the new shape); "
              "found by fuzzing on lavapipe"),
    PanicSite("cubecl.scale_swap_index", "index", "index out of bounds: the len is {len} but the index is {index}",
              "§9.3", "burn-cubecl-0.22.1 src/ops/base.rs:156 (the scale metadata's swap) via cubecl-zspace-0.11.3 "
              "src/metadata.rs:144 (Rust's slice swap): a scale tensor a reshape kept at a lower rank; measured on "
              "lavapipe"),
    PanicSite("cubecl.scale_permute_rank", "unwrap_err", "RankMismatch {{ left: {scale_rank}, right: {axes} }}",
              "§9.3", "burn-cubecl-0.22.1 src/ops/base.rs:187 (the scale metadata's permute, unwrapped) via "
              "cubecl-zspace-0.11.3 src/shape.rs:242-248: a scale tensor a reshape kept at another rank; measured on "
              "lavapipe"),
    PanicSite("cubecl.binding_tiling_rank", "expect",
              'a binding\'s tiling describes its own rank: Invalid {{ reason: "Tiling(0) does not fit a rank-{dims} '
              'buffer" }}',
              "§2", "cubecl-std-0.11.3 src/tensor/view/launch.rs:305 (the copy kernel burn-cubecl's reshape launches "
              "for a view it cannot restride, burn-cubecl-0.22.1 src/ops/base.rs:322-335, binds a rank past cubecl's "
              "8 logical dims); measured on lavapipe"),
    PanicSite("cubecl.reshape_analysis_index", "index",
              "index out of bounds: the len is {len} but the index is {index}",
              "§2", "burn-std-0.22.1 src/tensor/mod.rs:262-275 (`reshape_analysis`' split scan reads `shape[old_idx]` "
              "after a 0-size dim matched every old dim; the same in 0.22.0-pre.3 and 0.23.0-pre.1), reached by "
              "burn-backend-0.22.1 src/quantization/scheme.rs:34 (`reduce_blocks`' split of a strided view); found "
              "by fuzzing on lavapipe"),
    PanicSite("cubecl.reshape_spread_block", "unimplemented",
              "Cannot reshape block-quantized tensor to {shape}: not a whole number of {block} blocks",
              "§9.3", "burn-cubecl-0.22.1/src/ops/base.rs:419-423 (a lone 1-D block spread over several rows)"),
    PanicSite("cubecl.reshape_nd_block", "unimplemented", "Reshape of ND block-quantized tensor is not yet supported.",
              "§9.3", "burn-cubecl-0.22.0-pre.3/src/ops/base.rs:344"),
    PanicSite("cubecl.reshape_packed_dim", "unimplemented",
              "Cannot reshape packed tensor: inner dimension {dim} is not aligned with packing factor {factor}",
              "§9.3", "burn-cubecl-0.22.0-pre.3/src/ops/base.rs:302-314"),
    PanicSite("cubecl.reshape_split_nd_block", "unimplemented",
              "Split reshape of ND block-quantized tensor is not yet supported.",
              "§9.3", "burn-cubecl-0.22.0-pre.3/src/ops/base.rs:347-356"),
    PanicSite("cubecl.reshape_recompute_sub_byte", "todo",
              "Reshape with sub-byte values is not supported when the buffer must be recomputed",
              "§9.3", "burn-cubecl-0.22.0-pre.3/src/ops/base.rs:413-422"),
    PanicSite("cubecl.reshape_recompute_block", "unimplemented",
              "Cannot reshape a block-quantized tensor when the reshape requires recomputing the buffer.",
              "§9.3", "burn-cubecl-0.22.0-pre.3/src/ops/base.rs:413-428"),
    PanicSite("cubecl.reshape_split_block", "unimplemented", "Reshape would split a block across multiple rows.",
              "§9.3", "burn-cubecl-0.22.0-pre.3/src/ops/base.rs:372"),
    PanicSite("cubecl.upload_split", "index", "range start index {start} out of range for slice of length {len}",
              "§7.4", "burn-cubecl-0.23.0-pre.1/src/ops/qtensor.rs:186 (q_from_data splits the bytes at its value "
              "buffer's size, :164, one byte per element for PackedNative E2M1, :131; burn-std 0.23 packs two per "
              "byte, so the offset is past the bytes and the fallback's slice panics; measured on lavapipe)"),
    PanicSite("wgpu.write_range", "assert", "provided range was outside slice",
              "§7.4", "wgpu-types-30.0.2/src/write_only.rs:826 (q_from_data of PackedU32 sub-byte codes whose "
              "bytes are fewer than the packed words'; measured on WGSL)"),
    # burn-pack's errors (docs/spec/checkpoint.md): returned, not panicked (`error`: the text is the `Display` of
    # `burn_pack::Error`, nothing added); the same text in 0.22.0-pre.3, 0.22.1 and 0.23.0-pre.1.
    PanicSite("checkpoint.invalid_header", "error", "Invalid header: insufficient bytes",
              "§13.6", "burn-pack-0.22.0-pre.3/src/base.rs:331"),
    PanicSite("checkpoint.invalid_magic", "error", "Invalid magic number",
              "§13.6", "burn-pack-0.22.0-pre.3/src/base.rs:332"),
    PanicSite("checkpoint.invalid_version", "error", "Unsupported version",
              "§13.6", "burn-pack-0.22.0-pre.3/src/base.rs:333"),
    PanicSite("checkpoint.metadata_deserialization", "error", "Metadata deserialization error: {error}",
              "§13.6", "burn-pack-0.22.0-pre.3/src/base.rs:338"),
    PanicSite("checkpoint.tensor_not_found", "error", "Tensor not found: {name}",
              "§13.6", "burn-pack-0.22.0-pre.3/src/base.rs:341"),
    PanicSite("checkpoint.bytes_size_mismatch", "error",
              "Tensor bytes size mismatch: tensor '{name}': deferred source has inconsistent length (expected "
              "{expected}, got {got})", "§13.5", "burn-pack-0.22.0-pre.3/src/tensor.rs:92"),
    PanicSite("checkpoint.validation", "error", "Validation error: {error}",
              "§13.6", "burn-pack-0.22.0-pre.3/src/base.rs:345"),
    PanicSite("cubecl.block_divisibility", "assert",
              "Block size must be divisible by {div}, got block_size={block_size}",
              "§8 #59", "cubek-quant-0.3.0-pre.3/src/lib.rs:31"),
    PanicSite("tensor.reshape_zero_index", "index", "index out of bounds: the len is {len} but the index is {index}",
              "§9", "cubecl-zspace-0.11.3/src/shape.rs:417-422 (until burn 0.22.1 a 0 in a reshape target reads "
              "the source's dim at its index: `self.dims[idx]` past the source's rank; found by fuzzing)"),
]

CATALOGUE: dict[str, PanicSite] = {site.code: site for site in _SITES}


def _wrap(site: PanicSite, text: str, left: object, right: object) -> str:
    """The text Rust's macro adds around the message (spec preamble)."""
    if site.macro == "assert_eq":
        return f"assertion `left == right` failed: {text}\n  left: {left}\n right: {right}"
    if site.macro == "unimplemented":
        return f"not implemented: {text}"
    if site.macro == "todo":
        return f"not yet implemented: {text}"
    if site.macro == "unwrap_none":
        return "called `Option::unwrap()` on a `None` value"
    if site.macro == "unwrap_err":
        return f"called `Result::unwrap()` on an `Err` value: {text}"
    return text


def rust_debug_f32(v: float) -> str:
    """``format!("{:?}", v as f32)``: the shortest digits that read back as the same f32, with at least one
    fraction digit, in exponent form below 1e-4 and from 1e16 on (Rust core's ``float_to_general_debug``)."""
    with np.errstate(over="ignore"):  # a bound past f32's range is `as f32`'s inf
        v = np.float32(v)
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0 or np.float32(1e-4) <= abs(v) < np.float32(1e16):  # compared as f32, like Rust
        return np.format_float_positional(v, unique=True, trim="0")
    mantissa, exponent = np.format_float_scientific(v, unique=True, trim="-").split("e")
    return f"{mantissa}e{int(exponent)}"


def panic(code: str, *, left: object = None, right: object = None, **fields: object) -> BurnPanic:
    """The :class:`BurnPanic` burn raises at ``code``, its message formatted with ``fields`` (a site's opaque
    placeholders read :data:`OPAQUE`)."""
    site = CATALOGUE[code]
    fields.update({name: OPAQUE.format(name) for name in site.opaque})
    return BurnPanic(code, _wrap(site, site.template.format(**fields), left, right))


def surfaced_at_read(p: BurnPanic) -> BurnPanic:
    """``p`` as a fused build reports it: raised on burn-fusion's stream, it is the error of the read that needed the
    op's output (``fusion.deferred``); an already deferred panic is left as it is."""
    if p.message.startswith(_INTO_DATA):
        return p
    deferred = panic("fusion.deferred", error=p.message)
    return BurnPanic(deferred.code, deferred.message, root=p.code)


def skipped_below(p: BurnPanic, depth: int) -> BurnPanic:
    """What a read reports of a tensor ``depth`` stream ops below the op that failed with ``p`` (``fusion.deferred``):
    the failure itself at depth 0, else ``fusion.skipped`` with the failure's own message."""
    head = _INTO_DATA + "An error happened during execution\nCaused by:\n  "
    if depth == 0 or not p.message.startswith(head):
        return p
    return panic("fusion.skipped", skipped=depth, error=p.message[len(head):])


def read_by_sort(p: BurnPanic) -> BurnPanic:
    """What burn-backend's ``float_sort`` default reports where its read-back of the input fails: the read's error
    after its own message (``fusion.sort_read``); a panic that is no read's error is left as it is."""
    head = _INTO_DATA + "An error happened during execution\nCaused by:\n  "
    if not p.message.startswith(head):
        return p
    return panic("fusion.sort_read", error=p.message[len(head):])


def returned_by_backend_read(p: BurnPanic, read: str = "q_into_data") -> BurnPanic:
    """What the backend's ``read`` (``B::q_into_data``, ``B::float_into_data``) gives where ``Tensor::into_data``
    panics on a failed launch (burn >= 0.22.1): the error itself, which the harness reports as
    ``harness.read_failed`` (``api: "backend"`` reads a quantized tensor through the backend, an f16/bf16
    dequantize its float result); any other panic is the same either way."""
    head = _INTO_DATA + "An error happened during execution\nCaused by:\n  "
    if not p.message.startswith(head):
        return p
    return panic("harness.read_failed", read=read, error=p.message[len(head):])


_OPAQUE_FIELD = re.compile(re.escape(OPAQUE.format("\0")).replace("\0", "[a-z_]+"))


def message_matches(expected: str, actual: str) -> bool:
    """burn's text equals the expected message, where each opaque placeholder (``⟨failure⟩``) may stand for any
    text (an empty one too)."""
    parts = _OPAQUE_FIELD.split(expected)
    if len(parts) == 1:
        return expected == actual
    return re.fullmatch(".*?".join(map(re.escape, parts)), actual, re.DOTALL) is not None


def _pattern(site: PanicSite) -> re.Pattern[str]:
    mark, empty = "\0", "\1"  # stand for the placeholders (an opaque one may be empty); re.escape leaves them alone
    text = re.sub(r"\{([a-z_]+)\}", lambda m: empty if m[1] in site.opaque else mark, site.template)
    whole = _wrap(site, text.replace("{{", "{").replace("}}", "}"), mark, mark)
    return re.compile(re.escape(whole).replace(mark, ".+?").replace(empty, ".*?"), re.DOTALL)


_PATTERNS = [(site.code, _pattern(site)) for site in _SITES if site.template or site.macro == "unwrap_none"]


def fits(code: str, message: str) -> bool:
    """Whether ``message`` is the text of panic ``code`` (another site may share that text: Rust's index panics)."""
    pattern = dict(_PATTERNS).get(code)
    return pattern is not None and pattern.fullmatch(message) is not None


def classify_panic(message: str) -> str | None:
    """The catalogue code whose template matches ``message`` in full, or None.

    Several sites share one text (UE8M0 in ``scale_to_dtype`` and in the codec); the first row wins, which is
    the one reached first on the quantize path.
    """
    for code, pattern in _PATTERNS:
        if pattern.fullmatch(message):
            return code
    return None
