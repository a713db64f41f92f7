//! Quantized checkpoints (docs/spec/checkpoint.md): a one-tensor record saved and loaded as a burnpack file, the
//! way burn-store's `BurnpackStore` does it, through the `burn-pack` crate it delegates to.
//!
//! Built only with the `checkpoint` feature (the CPU manifests): the GPU builds leave these ops unclaimed.

use burn_pack::{Error as PackError, Reader, Tensor as PackTensor, Writer};
use burn_std::quantization::quantized_data_len;
use burn_std::{Bytes, DType, Shape, TensorData};
use qconform_protocol::{Arr, Failure, Output, fail};
use safetensors::tensor::Dtype;
use serde_json::{Value, json};

use crate::compat;
use crate::tensors::{Inputs, input, quantized_data, scheme_param, want_dtype};

/// The record's one parameter: what a `Linear`'s quantized weight is called in a module record.
const NAME: &str = "weight";

/// `BurnpackStore::collect_from` on a record holding one quantized tensor: burn-store's `bridge::from_tensor`
/// declares the length `quantized_data_len(scheme, shape)` before the bytes exist, and `Writer` refuses bytes of
/// another length (the #5349 class). The bytes are `TensorData::quantized(..)`'s, as `to_bytes` gives them.
pub(crate) fn save_checkpoint(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let data = quantized_data(scheme, inputs)?;
    let (dtype, shape) = (compat::data_dtype(&data), Shape::from(compat::data_shape(&data)));
    let declared = match dtype {
        DType::QFloat(stored) => quantized_data_len(&stored, &shape),
        other => return fail("harness.internal", format!("expected quantized data, got {other:?}")),
    };
    let payload = data.as_bytes().to_vec();
    let tensor = PackTensor::deferred(NAME.to_string(), dtype, shape, None, declared, move || {
        Ok(Bytes::from_bytes_vec(payload.clone()))
    });
    let file = Writer::new(vec![tensor]).into_bytes().or_else(pack_failure)?;
    let file = file.to_vec();
    Ok(Output::tensors(vec![("file".into(), Arr::u8(vec![file.len()], file))]))
}

/// A record loaded as `BurnpackStore::from_bytes(..)` then `apply_to` does: `Reader::from_bytes` and
/// `into_tensors`, then burn-store's `bridge::into_data` (`TensorData::from_bytes`).
pub(crate) struct Loaded {
    /// The descriptor as read: `name`, `shape`, `dtype` (Rust's `Debug` text).
    pub values: Value,
    /// The quantized tensor burn-store hands the module, its rank, and its payload bytes as read.
    pub data: TensorData,
    pub rank: usize,
    pub payload: Arr,
}

/// The record's tensor `weight` of a burnpack file (ops.rs dequantizes it, as the module's first use would).
pub(crate) fn load_checkpoint(inputs: &Inputs) -> Result<Loaded, Failure> {
    let file = input(inputs, "file")?;
    want_dtype(file, "file", Dtype::U8)?;
    let reader = Reader::from_bytes(Bytes::from_bytes_vec(file.data.clone())).or_else(pack_failure)?;
    let tensors = reader.into_tensors().or_else(pack_failure)?;
    let Some(tensor) = tensors.into_iter().find(|t| t.name == NAME) else {
        return pack_failure(PackError::TensorNotFound(NAME.to_string()));
    };
    let (name, dtype, shape, _, bytes) = tensor.into_parts().or_else(pack_failure)?;
    let payload = bytes.to_vec();
    let values = json!({"name": name, "shape": shape.as_slice().to_vec(), "dtype": format!("{dtype:?}")});
    if !matches!(dtype, DType::QFloat(_)) {
        return fail("checkpoint.not_quantized", format!("tensor '{name}' is {dtype:?}, not a quantized tensor"));
    }
    let rank = shape.num_dims();
    let data = TensorData::from_bytes(bytes, shape, dtype);
    Ok(Loaded { values, data, rank, payload: Arr::u8(vec![payload.len()], payload) })
}

/// A burn-pack error as the protocol's error: one code per variant (docs/errors.md), burn's `Display` text.
fn pack_failure<T>(error: PackError) -> Result<T, Failure> {
    let code = match &error {
        PackError::InvalidHeader => "checkpoint.invalid_header",
        PackError::InvalidMagicNumber => "checkpoint.invalid_magic",
        PackError::InvalidVersion => "checkpoint.invalid_version",
        PackError::MetadataSerializationError(_) => "checkpoint.metadata_serialization",
        PackError::MetadataDeserializationError(_) => "checkpoint.metadata_deserialization",
        PackError::IoError(_) => "checkpoint.io",
        PackError::TensorNotFound(_) => "checkpoint.tensor_not_found",
        PackError::TensorBytesSizeMismatch(_) => "checkpoint.bytes_size_mismatch",
        PackError::ValidationError(_) => "checkpoint.validation",
        #[allow(unreachable_patterns)]
        _ => "checkpoint.other",
    };
    fail(code, error.to_string())
}
