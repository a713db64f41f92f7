//! The operations of docs/ops.md, each served through burn's public API where one exists and
//! through the backend trait where the op is defined that way (`quantize` with `api: "backend"`).
//!
//! Nothing here re-implements burn's arithmetic: every number that comes back was produced by a
//! burn function. The harness only converts between the wire tensors and burn's `TensorData`.

use burn_backend::ops::{FloatTensorOps, QTensorOps};
use burn_backend::quantization::QuantizationParametersPrimitive;
use burn_std::quantization::{
    Calibration, QuantScheme, QuantStore, QuantValue, QuantizedBytes, ScaleDtype,
    params_shape, quantizable, scale_size,
};
use burn_std::{Bytes, DType, FloatDType, Shape, TensorData};
use burn_tensor::Tensor;
use burn_tensor::quantization::{
    CalibrationRange, QuantizationParameters, compute_q_params, compute_range,
};
use safetensors::tensor::Dtype;
use serde_json::{Value, json};

use crate::compat;
use crate::scheme::{float_dtype_param, scale_dtype_from_name, scale_dtype_name, value_from_name};
use crate::target::Target;
use crate::tensors::{
    Inputs, data_to_arr, f32_input, flat_tensor, float_data, i8_input, input, quantized_data, quantized_outputs,
    read, scheme_param, tensor, want_dtype,
};
use qconform_protocol::{Arr, Failure, Output, fail};

/// The ops that run on the backend's device (the others are host code in burn-std / burn-backend):
/// a scale dtype the device does not support is left out of these ops' capabilities only.
pub const DEVICE_OPS: &[&str] = &[
    "compute_range",
    "compute_q_params",
    "quantize",
    "quantize_dynamic",
    "dequantize",
    "ternary_matmul",
    "qlayout",
    "quantize_view",
    "float_ops",
    "load_quantized",
    "load_checkpoint",
];

/// Every op name of docs/ops.md this harness serves (all of them; see docs/burn-harness.md for
/// the per-op routes and the parts that are not reachable).
pub const OPS: &[&str] = &[
    "round_up",
    "encode_scales",
    "decode_scales",
    "compute_range",
    "compute_q_params",
    "quantize",
    "quantize_dynamic",
    "dequantize",
    "to_bytes",
    "from_bytes",
    "pack_u32",
    "unpack_u32",
    "ternary_matmul",
    "scheme_info",
    "qlayout",
    "quantize_view",
    "float_ops",
    "load_quantized",
    "save_checkpoint",
    "load_checkpoint",
];

/// The checkpoint ops (src/checkpoint.rs): served by the builds with the `checkpoint` feature (the CPU
/// manifests, which depend on burn-pack), left unclaimed by the others.
pub const CHECKPOINT_OPS: &[&str] = &["save_checkpoint", "load_checkpoint"];


/// Runs `$body` with `$D` bound to the tensor rank as a const generic (burn's `Tensor<D>`).
macro_rules! with_rank {
    ($rank:expr, $D:ident, $body:block) => {
        match $rank {
            1 => { const $D: usize = 1; $body }
            2 => { const $D: usize = 2; $body }
            3 => { const $D: usize = 3; $body }
            4 => { const $D: usize = 4; $body }
            5 => { const $D: usize = 5; $body }
            6 => { const $D: usize = 6; $body }
            7 => { const $D: usize = 7; $body }
            8 => { const $D: usize = 8; $body }
            r => fail("harness.rank", format!("tensors of rank {r} are not served (burn's Tensor<D> needs 1 <= D; the harness instantiates D <= 8)")),
        }
    };
}


fn scale_dtype_param(params: &Value) -> Result<ScaleDtype, Failure> {
    match params.get("dtype").and_then(Value::as_str) {
        Some(name) => scale_dtype_from_name(name),
        None => fail("harness.bad_params", "params.dtype (a ScaleDtype name) is missing"),
    }
}

fn usize_list(v: Option<&Value>, what: &str) -> Result<Vec<usize>, Failure> {
    let Some(list) = v.and_then(Value::as_array) else {
        return fail("harness.bad_params", format!("params.{what} must be a list of integers"));
    };
    list.iter()
        .map(|d| match d.as_u64() {
            Some(d) => Ok(d as usize),
            None => fail("harness.bad_params", format!("params.{what} must be a list of integers")),
        })
        .collect()
}

/// A one-level scheme whose block grid over a `[n]` tensor has `n` entries, each of `dtype`: the
/// layout `QuantizedBytes` gives the scale region of `n` scales, which is how the scale codec
/// (private in burn-std) is reached.
fn scale_region_scheme(dtype: ScaleDtype) -> QuantScheme {
    QuantScheme::default()
        .with_value(QuantValue::Q8S)
        .with_store(QuantStore::Native)
        .per_block([1u8], dtype)
}

/// After a panic: does the device still compute? One small element-wise kernel and a read-back
/// (`[1, -2] * 2 = [2, -4]`), itself guarded, so a poisoned device answers `false`.
pub fn device_healthy<T: Target>() -> bool {
    qconform_protocol::catch(|| {
        let t = Tensor::<1>::from_data(TensorData::new(vec![1.0f32, -2.0], [2]), &T::device());
        Ok(t.mul_scalar(2.0).into_data().iter::<f32>().collect::<Vec<_>>() == [2.0, -4.0])
    })
    .unwrap_or(false)
}

// ------------------------------------------------------------------------------------------------
// The ops
// ------------------------------------------------------------------------------------------------

pub fn run<T: Target>(op: &str, params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    match op {
        "round_up" => round_up(params, inputs),
        "encode_scales" => encode_scales(params, inputs),
        "decode_scales" => decode_scales(params, inputs),
        "compute_range" => op_compute_range::<T>(params, inputs),
        "compute_q_params" => op_compute_q_params::<T>(params, inputs),
        "quantize" => quantize::<T>(params, inputs),
        "quantize_dynamic" => quantize_dynamic::<T>(params, inputs),
        "dequantize" => dequantize::<T>(params, inputs),
        "to_bytes" => to_bytes(params, inputs),
        "from_bytes" => from_bytes(params, inputs),
        "pack_u32" => pack_u32(params, inputs),
        "unpack_u32" => unpack_u32(params, inputs),
        "ternary_matmul" => ternary_matmul::<T>(inputs),
        "scheme_info" => scheme_info(params),
        // Quantized tensors in motion (src/layout.rs).
        "qlayout" => crate::layout::qlayout::<T>(params, inputs),
        "quantize_view" => crate::layout::quantize_view::<T>(params, inputs),
        "float_ops" => crate::float_ops::float_ops::<T>(params, inputs),
        "load_quantized" => load_quantized::<T>(params, inputs),
        #[cfg(feature = "checkpoint")]
        "save_checkpoint" => crate::checkpoint::save_checkpoint(params, inputs),
        #[cfg(feature = "checkpoint")]
        "load_checkpoint" => load_checkpoint::<T>(inputs),
        #[cfg(not(feature = "checkpoint"))]
        "save_checkpoint" | "load_checkpoint" => {
            qconform_protocol::unsupported("this build has no burn-pack (the `checkpoint` feature)")
        }
        other => fail("op.unknown", format!("unknown op {other:?}")),
    }
}

/// `scale_to_dtype` (= `ScaleDtype::round_up(..).expect(..)` in 0.22.0-pre.3) on every element.
fn round_up(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let dtype = scale_dtype_param(params)?;
    let (scales, shape) = f32_input(inputs, "scales")?;
    let rounded: Vec<f32> = scales.iter().map(|&s| compat::scale_to_dtype(s, dtype)).collect();
    Ok(Output::tensors(vec![("rounded".into(), Arr::f32(shape, &rounded))]))
}

/// The scale region `QuantizedBytes::new` writes for `n` block scales of `dtype`.
fn encode_scales(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let dtype = scale_dtype_param(params)?;
    let (scales, _) = f32_input(inputs, "scales")?;
    let n = scales.len();
    let bytes = QuantizedBytes::new(vec![0i8; n], [n], scale_region_scheme(dtype), &scales, None).bytes;
    // The region after the n one-byte values.
    let region = bytes[n..].to_vec();
    Ok(Output::tensors(vec![("bytes".into(), Arr::u8(vec![region.len()], region))]))
}

/// The block scales `QuantizedBytes::into_vec_i8` reads back from a scale region of `dtype`.
fn decode_scales(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let dtype = scale_dtype_param(params)?;
    let region = input(inputs, "bytes")?;
    want_dtype(region, "bytes", Dtype::U8)?;
    let size = scale_size(dtype);
    if region.data.len() % size != 0 {
        return fail(
            "harness.bad_input",
            format!("{} bytes are not a whole number of {dtype:?} scales ({size} bytes each)", region.data.len()),
        );
    }
    let n = region.data.len() / size;
    let mut buffer = vec![0u8; n];
    buffer.extend_from_slice(&region.data);
    let bytes = QuantizedBytes {
        bytes: Bytes::from_bytes_vec(buffer),
        scheme: scale_region_scheme(dtype),
        shape: Shape::from(vec![n]),
    };
    let (_, scales) = bytes.into_vec_i8();
    Ok(Output::tensors(vec![("scales".into(), Arr::f32(vec![scales.block.len()], &scales.block))]))
}

/// `burn_tensor::quantization::compute_range` on a tensor of the backend.
fn op_compute_range<T: Target>(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let calibration = match params.get("calibration").and_then(Value::as_str) {
        Some("minmax") | None => Calibration::MinMax,
        Some("absmean") => Calibration::AbsMean,
        Some(other) => return fail("harness.bad_params", format!("unknown calibration {other:?}")),
    };
    let x = input(inputs, "x")?;
    let device = T::device();
    with_rank!(x.shape.len(), D, {
        let t = tensor::<D>(x, &device)?;
        let range = compute_range(&scheme, &t, &calibration);
        Ok(Output::tensors(vec![
            ("min".into(), data_to_arr(&range.min.into_data(), None)?),
            ("max".into(), data_to_arr(&range.max.into_data(), None)?),
        ]))
    })
}

/// `burn_tensor::quantization::compute_q_params` on `CalibrationRange { min, max }`.
fn op_compute_q_params<T: Target>(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let min = input(inputs, "min")?;
    let max = input(inputs, "max")?;
    let device = T::device();
    let range = CalibrationRange { min: flat_tensor(min, &device)?, max: flat_tensor(max, &device)? };
    let qparams = compute_q_params(&scheme, range);
    let scales = qparams.scales.into_data();
    // `CalibrationRange` holds `Tensor<1>`s; the scales come back in `min`'s grid shape.
    let shape = (scales.num_elements() == min.numel()).then(|| min.shape.clone());
    let mut out = vec![("scales".to_string(), data_to_arr(&scales, shape)?)];
    if let Some(global) = qparams.global {
        out.push(("global".into(), data_to_arr(&global.into_data(), None)?));
    }
    Ok(Output::tensors(out))
}

/// `api: "tensor"` → `Tensor::quantize` (its asserts first); `api: "backend"` → `B::quantize`.
fn quantize<T: Target>(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let x = input(inputs, "x")?;
    let scales = input(inputs, "scales")?;
    let global = inputs.get("global");
    match params.get("api").and_then(Value::as_str) {
        Some("tensor") | None => {
            let device = T::device();
            with_rank!(x.shape.len(), D, {
                let t = tensor::<D>(x, &device)?;
                let qparams = QuantizationParameters {
                    scales: flat_tensor(scales, &device)?,
                    global: global.map(|g| flat_tensor(g, &device)).transpose()?,
                };
                let q = t.quantize(&scheme, qparams);
                Ok(Output::tensors(quantized_outputs(q.into_data(), false)?))
            })
        }
        Some("backend") => {
            let device = T::backend_device();
            let t = T::B::float_from_data(float_data(x, x.shape.clone())?, &device);
            let qparams = QuantizationParametersPrimitive::<T::B> {
                scales: T::B::float_from_data(float_data(scales, scales.shape.clone())?, &device),
                global: global
                    .map(|g| float_data(g, g.shape.clone()).map(|d| T::B::float_from_data(d, &device)))
                    .transpose()?,
            };
            let q = T::B::quantize(t, &scheme, qparams);
            let data = read("q_into_data", T::B::q_into_data(q))?;
            Ok(Output::tensors(quantized_outputs(data, false)?))
        }
        Some(other) => fail("harness.bad_params", format!("unknown api {other:?}")),
    }
}

/// `Tensor::quantize_dynamic`.
fn quantize_dynamic<T: Target>(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let x = input(inputs, "x")?;
    let device = T::device();
    with_rank!(x.shape.len(), D, {
        let q = tensor::<D>(x, &device)?.quantize_dynamic(&scheme);
        Ok(Output::tensors(quantized_outputs(q.into_data(), false)?))
    })
}

/// `Tensor::from_data(TensorData::quantized(..))` then `Tensor::dequantize` (device float dtype,
/// f32). For an f16/bf16 result the backend's `q_from_data` + `dequantize(.., dtype)` is called,
/// which is what `Tensor::dequantize` does on a device whose float dtype is that dtype.
fn dequantize<T: Target>(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let dtype = float_dtype_param(params, "dtype")?;
    let rank = input(inputs, "codes")?.shape.len();
    let data = quantized_data(scheme, inputs)?;
    dequantized::<T>(data, rank, dtype)
}

/// A quantized `TensorData` of rank `rank` dequantized as `Tensor::dequantize` does: on the device for an
/// f32 result, through the backend's `q_from_data` + `dequantize(.., dtype)` for f16/bf16.
fn dequantized<T: Target>(data: TensorData, rank: usize, dtype: FloatDType) -> Result<Output, Failure> {
    let out = if dtype == FloatDType::F32 {
        let device = T::device();
        with_rank!(rank, D, {
            let q = Tensor::<D>::from_data(data, &device);
            Ok::<_, Failure>(q.dequantize().into_data())
        })?
    } else {
        let q = T::B::q_from_data(data, &T::backend_device());
        read("float_into_data", T::B::float_into_data(T::B::dequantize(q, dtype)))?
    };
    Ok(Output::tensors(vec![("x".into(), data_to_arr(&out, None)?)]))
}

/// A loader's question: `Tensor::from_data(TensorData::from_bytes_vec(bytes, shape, QFloat(scheme)))`
/// then `dequantize()`, on the bytes exactly as a saved tensor holds them (values in their store,
/// scales in their stored dtype, the global last). As for `dequantize`, an f16/bf16 result goes
/// through the backend's `q_from_data` + `dequantize(.., dtype)`.
fn load_quantized<T: Target>(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let shape = usize_list(params.get("shape"), "shape")?;
    let dtype = float_dtype_param(params, "dtype")?;
    let bytes = input(inputs, "bytes")?;
    want_dtype(bytes, "bytes", Dtype::U8)?;
    let rank = shape.len();
    let data = TensorData::from_bytes_vec(bytes.data.clone(), shape, DType::QFloat(scheme));
    dequantized::<T>(data, rank, dtype)
}

/// A burnpack file's tensor `weight` (src/checkpoint.rs), then `Tensor::from_data(..).dequantize()` in f32 on the
/// device: the descriptor as values, `x` and the payload `bytes`.
#[cfg(feature = "checkpoint")]
fn load_checkpoint<T: Target>(inputs: &Inputs) -> Result<Output, Failure> {
    let loaded = crate::checkpoint::load_checkpoint(inputs)?;
    let mut out = dequantized::<T>(loaded.data, loaded.rank, FloatDType::F32)?;
    out.tensors.push(("bytes".into(), loaded.payload));
    Ok(Output { values: loaded.values, tensors: out.tensors })
}

/// `TensorData::quantized(..).bytes`.
fn to_bytes(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let data = quantized_data(scheme, inputs)?;
    let bytes = data.as_bytes().to_vec();
    Ok(Output::tensors(vec![("bytes".into(), Arr::u8(vec![bytes.len()], bytes))]))
}

/// `QuantizedBytes::into_vec_i8` of the bytes read as a QFloat `TensorData` of `shape`.
fn from_bytes(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let shape = usize_list(params.get("shape"), "shape")?;
    let bytes = input(inputs, "bytes")?;
    want_dtype(bytes, "bytes", Dtype::U8)?;
    let data = TensorData::from_bytes_vec(bytes.data.clone(), shape, DType::QFloat(scheme));
    // ops.md: `codes: I8[numel]`, flat.
    Ok(Output::tensors(quantized_outputs(data, true)?))
}

/// burn's packer for `value` (`compat::pack_u32`: `pack_i8s_to_u32s` for 8-bit values up to 0.22.1,
/// `QuantizedBytes::new` under `PackedU32(0)` for every value from 0.23.0-pre.1).
fn pack_u32(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let value = value_param(params)?;
    let (codes, _) = i8_input(inputs, "codes")?;
    let words = match compat::pack_u32(codes, value) {
        Ok(words) => words,
        Err(why) => return fail("harness.unreachable", why),
    };
    Ok(Output::tensors(vec![("words".into(), Arr::u32(vec![words.len()], &words))]))
}

/// `QuantizedBytes::into_vec_i8` of the words under `PackedU32(0)`: that reaches the crate-private
/// `unpack_q_to_i8s` for 4/2-bit values; 8-bit values are read back byte by byte.
fn unpack_u32(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let value = value_param(params)?;
    let numel = match params.get("numel").and_then(Value::as_u64) {
        Some(n) => n as usize,
        None => return fail("harness.bad_params", "params.numel is missing"),
    };
    let words = input(inputs, "words")?;
    want_dtype(words, "words", Dtype::U32)?;
    // Per-tensor F32 scheme: the words, then the 4-byte scale region.
    let scheme = QuantScheme::default().with_value(value).with_store(QuantStore::PackedU32(0));
    let mut buffer = words.data.clone();
    buffer.extend_from_slice(&1.0f32.to_le_bytes());
    let bytes = QuantizedBytes { bytes: Bytes::from_bytes_vec(buffer), scheme, shape: Shape::from(vec![numel]) };
    let (codes, _) = bytes.into_vec_i8();
    Ok(Output::tensors(vec![("codes".into(), Arr::i8(vec![codes.len()], &codes))]))
}

fn value_param(params: &Value) -> Result<QuantValue, Failure> {
    match params.get("value").and_then(Value::as_str) {
        Some(name) => value_from_name(name),
        None => fail("harness.bad_params", "params.value is missing"),
    }
}

/// `lhs.matmul(rhs)` with `rhs` a per-tensor Q2S Native QFloat tensor. The only public way to make
/// such a tensor on ndarray is to quantize (ndarray's `q_from_data` refuses Q2S), so `rhs` is
/// `Tensor::quantize(codes * scale, Q2S, scales = [scale])`, which gives back exactly the codes for
/// a finite non-zero scale (x / s = ±1 or 0). For lhs rank D > 2, rhs is unsqueezed to rank D,
/// since burn's `matmul` takes two tensors of the same rank.
fn ternary_matmul<T: Target>(inputs: &Inputs) -> Result<Output, Failure> {
    let lhs = input(inputs, "lhs")?;
    let (codes, rhs_shape) = i8_input(inputs, "rhs_codes")?;
    let (scale, _) = f32_input(inputs, "rhs_scale")?;
    let Some(&scale) = scale.first() else {
        return fail("harness.bad_input", "input \"rhs_scale\" is empty");
    };
    if rhs_shape.len() != 2 {
        return fail("harness.bad_input", format!("rhs_codes must be [K, N], got {rhs_shape:?}"));
    }
    if lhs.shape.len() < 2 {
        return fail("harness.bad_input", "lhs must have rank >= 2 (burn's matmul takes same-rank tensors)");
    }
    let device = T::device();
    let scheme = QuantScheme::default().with_value(QuantValue::Q2S).with_store(QuantStore::Native);
    let rhs_values: Vec<f32> = codes.iter().map(|&c| c as f32 * scale).collect();
    let rhs = Tensor::<2>::from_data(TensorData::new(rhs_values, rhs_shape), (&device, DType::F32));
    let qparams = QuantizationParameters {
        scales: Tensor::<1>::from_data(TensorData::new(vec![scale], [1]), (&device, DType::F32)),
        global: None,
    };
    let rhs = rhs.quantize(&scheme, qparams);
    with_rank!(lhs.shape.len(), D, {
        let a = tensor::<D>(lhs, &device)?;
        let out = a.matmul(rhs.unsqueeze::<D>());
        Ok(Output::tensors(vec![("out".into(), data_to_arr(&out.into_data(), None)?)]))
    })
}

/// `QuantScheme` methods, `quantizable` and `params_shape`.
fn scheme_info(params: &Value) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let shape = usize_list(params.get("shape"), "shape")?;
    let block = scheme.block_size();
    let values = json!({
        "debug": format!("{scheme:?}"),
        "block_size": block.map(|b| b.to_vec()).unwrap_or_default(),
        "num_levels": scheme.num_levels(),
        "scale_dtype": scale_dtype_name(scheme.scale_dtype()),
        "tensor_scale": scheme.tensor_scale().map(scale_dtype_name),
        "quantizable": quantizable(&scheme),
        "num_blocks": block.map(|b| b.num_blocks(&shape)),
        "params_shape": params_shape(&Shape::from(shape.clone()), &scheme).as_slice().to_vec(),
    });
    Ok(Output { values, tensors: vec![] })
}
