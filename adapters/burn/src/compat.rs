//! The few calls whose signature differs between the burn releases the harness is built against.
//! Built for 0.22.0-pre.3 unless the `release-0-22-1` feature (set by v0_22_1/Cargo.toml) is on.

/// burn's `scale_to_dtype`: in 0.22.0-pre.3 `ScaleDtype::round_up(..).expect("UE8M0 scales are
/// not yet supported")`.
pub use burn_std::quantization::scale_to_dtype;

/// The burn release these binaries are built against (the `=` pin in Cargo.toml).
#[cfg(not(feature = "release-0-22-1"))]
pub const BURN_VERSION: &str = "0.22.0-pre.3";
#[cfg(feature = "release-0-22-1")]
pub const BURN_VERSION: &str = "0.22.1";

use burn_std::{DType, TensorData};

/// `TensorData`'s shape: a public field in 0.22.0-pre.3, an accessor in 0.22.1.
#[cfg(not(feature = "release-0-22-1"))]
pub fn data_shape(data: &TensorData) -> Vec<usize> {
    data.shape.as_slice().to_vec()
}
#[cfg(feature = "release-0-22-1")]
pub fn data_shape(data: &TensorData) -> Vec<usize> {
    data.shape().as_slice().to_vec()
}

/// `TensorData`'s dtype: a public field in 0.22.0-pre.3, an accessor in 0.22.1.
#[cfg(not(feature = "release-0-22-1"))]
pub fn data_dtype(data: &TensorData) -> DType {
    data.dtype
}
#[cfg(feature = "release-0-22-1")]
pub fn data_dtype(data: &TensorData) -> DType {
    data.dtype()
}
