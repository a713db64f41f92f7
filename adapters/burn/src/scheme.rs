//! QuantScheme JSON (docs/ops.md, "QuantScheme JSON") to burn's `QuantScheme`, built only with
//! burn's public builders, and the names burn's `Debug` uses for its enums.

use burn_std::quantization::{QuantMode, QuantScheme, QuantStore, QuantValue, ScaleDtype};
use serde_json::Value;

use qconform_protocol::{Failure, fail};

fn bad<T>(message: impl Into<String>) -> Result<T, Failure> {
    fail("harness.bad_params", message)
}

pub fn value_from_name(name: &str) -> Result<QuantValue, Failure> {
    Ok(match name {
        "Q8F" => QuantValue::Q8F,
        "Q8S" => QuantValue::Q8S,
        "Q4F" => QuantValue::Q4F,
        "Q4S" => QuantValue::Q4S,
        "Q2F" => QuantValue::Q2F,
        "Q2S" => QuantValue::Q2S,
        "E4M3" => QuantValue::E4M3,
        "E5M2" => QuantValue::E5M2,
        "E2M1" => QuantValue::E2M1,
        other => return bad(format!("unknown quant value {other:?}")),
    })
}

pub fn scale_dtype_from_name(name: &str) -> Result<ScaleDtype, Failure> {
    Ok(match name {
        "F32" => ScaleDtype::F32,
        "F16" => ScaleDtype::F16,
        "BF16" => ScaleDtype::BF16,
        "UE8M0" => ScaleDtype::UE8M0,
        "UE4M3" => ScaleDtype::UE4M3,
        other => return bad(format!("unknown scale dtype {other:?}")),
    })
}

/// burn's own spelling of a `ScaleDtype` (its derived `Debug`), e.g. `UE4M3`.
pub fn scale_dtype_name(dtype: ScaleDtype) -> String {
    format!("{dtype:?}")
}

fn dim(v: &Value, what: &str) -> Result<usize, Failure> {
    match v.as_u64() {
        Some(d) => Ok(d as usize),
        None => bad(format!("{what} must be a non-negative integer, got {v}")),
    }
}

fn store_from_json(v: &Value) -> Result<QuantStore, Failure> {
    if v.as_str() == Some("Native") {
        return Ok(QuantStore::Native);
    }
    if let Some(obj) = v.as_object()
        && obj.len() == 1
    {
        if let Some(d) = obj.get("PackedU32") {
            return Ok(QuantStore::PackedU32(dim(d, "PackedU32 dim")?));
        }
        if let Some(d) = obj.get("PackedNative") {
            return Ok(QuantStore::PackedNative(dim(d, "PackedNative dim")?));
        }
    }
    bad(format!("unknown store {v}"))
}

/// Builds the scheme with burn's builders: `default()`, `with_value/with_store/with_mode`, then
/// `per_block(size, dtype)` (which canonicalizes the block size like `BlockSize::new`) and
/// `per_tensor(dtype)` for whichever levels the JSON sets.
pub fn scheme_from_json(v: &Value) -> Result<QuantScheme, Failure> {
    let Some(obj) = v.as_object() else {
        return bad(format!("scheme must be an object, got {v}"));
    };
    let mut scheme = QuantScheme::default();
    if let Some(value) = obj.get("value") {
        let Some(name) = value.as_str() else { return bad("scheme.value must be a string") };
        scheme = scheme.with_value(value_from_name(name)?);
    }
    if let Some(store) = obj.get("store") {
        scheme = scheme.with_store(store_from_json(store)?);
    }
    if let Some(mode) = obj.get("mode") {
        scheme = scheme.with_mode(match mode.as_str() {
            Some("Symmetric") => QuantMode::Symmetric,
            Some("Lookup") => QuantMode::Lookup,
            _ => return bad(format!("unknown mode {mode}")),
        });
    }
    if let Some(block) = obj.get("block")
        && !block.is_null()
    {
        let Some(size) = block.get("size").and_then(Value::as_array) else {
            return bad("scheme.block.size must be a list");
        };
        let mut extents = Vec::with_capacity(size.len());
        for e in size {
            let e = dim(e, "block extent")?;
            if e > u8::MAX as usize {
                // BlockSize stores u8 entries: burn cannot even express this block.
                return bad(format!("block extent {e} does not fit burn's u8 BlockSize"));
            }
            extents.push(e as u8);
        }
        let Some(dtype) = block.get("dtype").and_then(Value::as_str) else {
            return bad("scheme.block.dtype must be a string");
        };
        scheme = scheme.per_block(extents, scale_dtype_from_name(dtype)?);
    }
    if let Some(tensor) = obj.get("tensor")
        && !tensor.is_null()
    {
        let Some(dtype) = tensor.as_str() else { return bad("scheme.tensor must be a string or null") };
        scheme = scheme.per_tensor(scale_dtype_from_name(dtype)?);
    }
    Ok(scheme)
}

pub fn float_dtype_param(params: &Value, key: &str) -> Result<burn_std::FloatDType, Failure> {
    match params.get(key).and_then(Value::as_str) {
        Some("f32") | None => Ok(burn_std::FloatDType::F32),
        Some("f16") => Ok(burn_std::FloatDType::F16),
        Some("bf16") => Ok(burn_std::FloatDType::BF16),
        Some(other) => bad(format!("unknown float dtype {other:?}")),
    }
}
