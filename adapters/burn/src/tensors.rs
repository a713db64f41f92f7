//! The plumbing every op module shares: wire tensors (safetensors `Arr`) to burn `TensorData` and
//! `Tensor`s and back, the inputs and params all ops read, and burn's quantized bytes split into codes and
//! scales. Its own module so that `ops` (the op table) and `layout` (the layout ops) both import it and
//! neither imports the other's internals.

use burn_std::quantization::{QuantScheme, QuantizedBytes};
use burn_std::{DType, Shape, TensorData, bf16, f16};
use burn_tensor::Tensor;
use qconform_protocol::{Arr, Failure, Tensors, fail};
use safetensors::tensor::Dtype;
use serde_json::Value;

use crate::compat;
use crate::scheme::scheme_from_json;

pub(crate) type Inputs = Tensors;

// ------------------------------------------------------------------------------------------------
// Wire tensors <-> burn TensorData
// ------------------------------------------------------------------------------------------------

pub(crate) fn input<'a>(inputs: &'a Inputs, name: &str) -> Result<&'a Arr, Failure> {
    match inputs.get(name) {
        Some(a) => Ok(a),
        None => fail("harness.missing_input", format!("input tensor {name:?} is missing")),
    }
}

pub(crate) fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

pub(crate) fn want_dtype(a: &Arr, name: &str, dtype: Dtype) -> Result<(), Failure> {
    if a.dtype == dtype {
        Ok(())
    } else {
        fail("harness.bad_input", format!("input {name:?} must be {dtype:?}, got {:?}", a.dtype))
    }
}

pub(crate) fn f32_input(inputs: &Inputs, name: &str) -> Result<(Vec<f32>, Vec<usize>), Failure> {
    let a = input(inputs, name)?;
    want_dtype(a, name, Dtype::F32)?;
    Ok((f32s(&a.data), a.shape.clone()))
}

pub(crate) fn i8_input(inputs: &Inputs, name: &str) -> Result<(Vec<i8>, Vec<usize>), Failure> {
    let a = input(inputs, name)?;
    want_dtype(a, name, Dtype::I8)?;
    Ok((a.data.iter().map(|b| *b as i8).collect(), a.shape.clone()))
}

/// A float wire tensor as burn `TensorData` of the same dtype and the given shape.
pub(crate) fn float_data(a: &Arr, shape: Vec<usize>) -> Result<TensorData, Failure> {
    Ok(match a.dtype {
        Dtype::F32 => TensorData::new(f32s(&a.data), shape),
        Dtype::F16 => TensorData::new(
            a.data.chunks_exact(2).map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]]))).collect::<Vec<_>>(),
            shape,
        ),
        Dtype::BF16 => TensorData::new(
            a.data.chunks_exact(2).map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]]))).collect::<Vec<_>>(),
            shape,
        ),
        other => return fail("harness.bad_input", format!("expected a float tensor, got {other:?}")),
    })
}

pub(crate) fn float_dtype_of(a: &Arr) -> DType {
    match a.dtype {
        Dtype::F16 => DType::F16,
        Dtype::BF16 => DType::BF16,
        _ => DType::F32,
    }
}

/// burn `TensorData` (float or integer) to a wire tensor.
pub(crate) fn data_to_arr(data: &TensorData, shape: Option<Vec<usize>>) -> Result<Arr, Failure> {
    let shape = shape.unwrap_or_else(|| compat::data_shape(data));
    let bytes = data.as_bytes().to_vec();
    let dtype = match compat::data_dtype(data) {
        DType::F32 => Dtype::F32,
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::I8 => Dtype::I8,
        DType::U8 => Dtype::U8,
        DType::U32 => Dtype::U32,
        DType::I64 => Dtype::I64,
        DType::F64 => {
            // Not a protocol dtype; never produced by the ops served here.
            let v: Vec<f32> = data.iter::<f64>().map(|x| x as f32).collect();
            return Ok(Arr::f32(shape, &v));
        }
        other => return fail("harness.internal", format!("unexpected output dtype {other:?}")),
    };
    Ok(Arr::new(dtype, shape, bytes))
}

/// Splits quantized `TensorData` back into codes, block scales and the global scale with burn's
/// own reader (`QuantizedBytes::into_vec_i8`), i.e. exactly what burn stored.
/// `codes` keep the tensor's shape unless `flat` (or burn returned a count that does not fill it).
pub(crate) fn quantized_outputs(data: TensorData, flat: bool) -> Result<Vec<(String, Arr)>, Failure> {
    let dtype = compat::data_dtype(&data);
    let DType::QFloat(scheme) = dtype else {
        return fail("harness.internal", format!("expected quantized data, got {dtype:?}"));
    };
    let shape = compat::data_shape(&data);
    let numel: usize = shape.iter().product();
    let bytes = QuantizedBytes { bytes: data.into_bytes(), scheme, shape: Shape::from(shape.clone()) };
    let (codes, scales) = bytes.into_vec_i8();
    let codes_shape = if codes.len() == numel && !flat { shape } else { vec![codes.len()] };
    let mut out = vec![
        ("codes".to_string(), Arr::i8(codes_shape, &codes)),
        ("scales".to_string(), Arr::f32(vec![scales.block.len()], &scales.block)),
    ];
    if let Some(global) = scales.global {
        out.push(("global".to_string(), Arr::f32(vec![1], &[global])));
    }
    Ok(out)
}

pub(crate) fn read<T>(what: &str, f: impl std::future::Future<Output = Result<T, burn_std::ExecutionError>>) -> Result<T, Failure> {
    match burn_std::reader::read_sync(f) {
        Ok(v) => Ok(v),
        Err(e) => fail("harness.read_failed", format!("{what}: {e:?}")),
    }
}

pub(crate) fn tensor<const D: usize>(a: &Arr, device: &burn_tensor::Device) -> Result<Tensor<D>, Failure> {
    let data = float_data(a, a.shape.clone())?;
    Ok(Tensor::<D>::from_data(data, (device, float_dtype_of(a))))
}

/// A `Tensor<1>` holding the values of `a` flattened row-major (burn's `QuantizationParameters`
/// and `CalibrationRange` hold `Tensor<1>`s).
pub(crate) fn flat_tensor(a: &Arr, device: &burn_tensor::Device) -> Result<Tensor<1>, Failure> {
    let data = float_data(a, vec![a.numel()])?;
    Ok(Tensor::<1>::from_data(data, (device, float_dtype_of(a))))
}

pub(crate) fn scheme_param(params: &Value) -> Result<QuantScheme, Failure> {
    match params.get("scheme") {
        Some(s) => scheme_from_json(s),
        None => fail("harness.bad_params", "params.scheme is missing"),
    }
}

pub(crate) fn quantized_data(scheme: QuantScheme, inputs: &Inputs) -> Result<TensorData, Failure> {
    let (codes, shape) = i8_input(inputs, "codes")?;
    let (scales, _) = f32_input(inputs, "scales")?;
    let global = match inputs.get("global") {
        None => None,
        Some(g) => {
            want_dtype(g, "global", Dtype::F32)?;
            match f32s(&g.data).first() {
                Some(v) => Some(*v),
                None => return fail("harness.bad_input", "input \"global\" is empty"),
            }
        }
    };
    Ok(TensorData::quantized(codes, shape, scheme, &scales, global))
}
