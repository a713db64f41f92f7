//! The few calls whose signature or reach differs between the burn releases the harness is built
//! against. Built for 0.22.0-pre.3 unless a release feature is on: `release-0-22-1` (set by
//! v0_22_1/Cargo.toml, and by v0_23_0_pre_1/Cargo.toml, whose API extends 0.22.1's) or
//! `release-0-23-0-pre-1` (v0_23_0_pre_1/Cargo.toml).

/// burn's `scale_to_dtype`: in 0.22.0-pre.3 `ScaleDtype::round_up(..).expect("UE8M0 scales are
/// not yet supported")`.
pub use burn_std::quantization::scale_to_dtype;

/// The burn release these binaries are built against (the `=` pin in Cargo.toml).
#[cfg(not(feature = "release-0-22-1"))]
pub const BURN_VERSION: &str = "0.22.0-pre.3";
#[cfg(all(feature = "release-0-22-1", not(feature = "release-0-23-0-pre-1")))]
pub const BURN_VERSION: &str = "0.22.1";
#[cfg(feature = "release-0-23-0-pre-1")]
pub const BURN_VERSION: &str = "0.23.0-pre.1";

use burn_std::quantization::QuantValue;
use burn_std::{DType, TensorData};

/// `TensorData`'s shape: a public field in 0.22.0-pre.3, an accessor from 0.22.1.
#[cfg(not(feature = "release-0-22-1"))]
pub fn data_shape(data: &TensorData) -> Vec<usize> {
    data.shape.as_slice().to_vec()
}
#[cfg(feature = "release-0-22-1")]
pub fn data_shape(data: &TensorData) -> Vec<usize> {
    data.shape().as_slice().to_vec()
}

/// `TensorData`'s dtype: a public field in 0.22.0-pre.3, an accessor from 0.22.1.
#[cfg(not(feature = "release-0-22-1"))]
pub fn data_dtype(data: &TensorData) -> DType {
    data.dtype
}
#[cfg(feature = "release-0-22-1")]
pub fn data_dtype(data: &TensorData) -> DType {
    data.dtype()
}

/// The values `pack_u32` reaches (protocol `per_op`). Up to 0.22.1 burn's only CPU packer is
/// `pack_i8s_to_u32s`, for 8-bit values; from 0.23.0-pre.1 `QuantizedBytes::new` packs every value
/// of a `PackedU32` scheme itself.
#[cfg(not(feature = "release-0-23-0-pre-1"))]
pub const PACK_VALUES: &[&str] = &["Q8F", "Q8S", "E4M3", "E5M2"];
#[cfg(feature = "release-0-23-0-pre-1")]
pub const PACK_VALUES: &[&str] = &["Q8F", "Q8S", "Q4F", "Q4S", "Q2F", "Q2S", "E4M3", "E5M2", "E2M1"];

/// The values `unpack_u32` reaches through the public `into_vec_i8` under `PackedU32(0)`: up to
/// 0.22.1 that reaches the crate-private `unpack_q_to_i8s` for 4/2-bit values only (8-bit words
/// come back as raw bytes); from 0.23.0-pre.1 every value unpacks, a line of `numel` codes.
#[cfg(not(feature = "release-0-23-0-pre-1"))]
pub const UNPACK_VALUES: &[&str] = &["Q4F", "Q4S", "Q2F", "Q2S", "E4M3", "E5M2", "E2M1"];
#[cfg(feature = "release-0-23-0-pre-1")]
pub const UNPACK_VALUES: &[&str] = PACK_VALUES;

/// `codes` packed into u32 words by burn, or why burn cannot: `pack_i8s_to_u32s` (8-bit values)
/// up to 0.22.1.
#[cfg(not(feature = "release-0-23-0-pre-1"))]
pub fn pack_u32(codes: Vec<i8>, value: QuantValue) -> Result<Vec<u32>, String> {
    if value.size_bits() != 8 {
        return Err(format!(
            "burn's CPU crates have no packer for {value:?} (pack_i8s_to_u32s takes 8-bit values; the 4/2-bit pack_q is a GPU kernel)"
        ));
    }
    Ok(burn_std::quantization::pack_i8s_to_u32s(codes))
}

/// From 0.23.0-pre.1: the value region `QuantizedBytes::new` writes for a `[n]` tensor under a
/// per-tensor `PackedU32(0)` scheme (one line, padded to whole words), its 4-byte F32 scale cut off.
#[cfg(feature = "release-0-23-0-pre-1")]
pub fn pack_u32(codes: Vec<i8>, value: QuantValue) -> Result<Vec<u32>, String> {
    use burn_std::quantization::{QuantScheme, QuantStore, QuantizedBytes};
    let n = codes.len();
    let scheme = QuantScheme::default().with_value(value).with_store(QuantStore::PackedU32(0));
    let bytes = QuantizedBytes::new(codes, [n], scheme, &[1.0], None).bytes;
    let words = &bytes[..bytes.len() - 4];
    Ok(words.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect())
}

/// The graphics API a burn-wgpu binary asks for (`Device::wgpu` leaves it to the runtime, `Device::vulkan` pins
/// Vulkan). Up to 0.22.0-pre.3 the backend *type* chose the compiler and the device was only an adapter; from
/// 0.22.1 the backend is one type and the device carries the API, so the two requests differ only there.
#[cfg(any(feature = "wgpu", feature = "vulkan"))]
#[derive(Clone, Copy)]
pub enum WgpuApi {
    Auto,
    Vulkan,
}

/// burn-wgpu's default adapter as the backend's own device type, the same device `burn_tensor::Device::wgpu` /
/// `::vulkan(DeviceKind::DefaultDevice)` names (the harness speaks to burn through both).
#[cfg(all(any(feature = "wgpu", feature = "vulkan"), not(feature = "release-0-22-1")))]
pub fn wgpu_default_device(_api: WgpuApi) -> burn_wgpu::WgpuDevice {
    burn_wgpu::WgpuDevice::DefaultDevice
}

#[cfg(all(any(feature = "wgpu", feature = "vulkan"), feature = "release-0-22-1"))]
pub fn wgpu_default_device(api: WgpuApi) -> burn_cubecl::CubeDevice {
    use burn_cubecl::cubecl::wgpu::{WgpuBackend, WgpuDevice, WgpuDeviceKind};
    let backend = match api {
        WgpuApi::Auto => WgpuBackend::Auto,
        WgpuApi::Vulkan => WgpuBackend::Vulkan,
    };
    burn_cubecl::CubeDevice::Wgpu(WgpuDevice::new(WgpuDeviceKind::DefaultDevice).on(backend))
}

/// CUDA device `index` as the backend's own device type (0.22.1 wraps it in cubecl's `Device`, as for wgpu above).
#[cfg(all(feature = "cuda", not(feature = "release-0-22-1")))]
pub fn cuda_device(index: usize) -> burn_cuda::CudaDevice {
    burn_cuda::CudaDevice { index }
}

#[cfg(all(feature = "cuda", feature = "release-0-22-1"))]
pub fn cuda_device(index: usize) -> burn_cubecl::CubeDevice {
    burn_cubecl::CubeDevice::Cuda(burn_cuda::CudaDevice { index })
}
