//! qconform harness on burn-wgpu's Vulkan backend, kernels compiled to SPIR-V (features: `vulkan`).

use burn_tensor::DeviceKind;
// 0.22.1 deprecates the `Vulkan` alias: it names the same backend as `Wgpu`, the device picks the API.
#[cfg(not(feature = "release-0-22-1"))]
use burn_wgpu::Vulkan;
#[cfg(feature = "release-0-22-1")]
use burn_wgpu::Wgpu as Vulkan;

struct VulkanTarget;

impl qconform_burn::Target for VulkanTarget {
    type B = Vulkan;
    const NAME: &'static str = "burn-wgpu-vulkan";
    const BACKEND: &'static str = "vulkan";
    /// Modelled from burn's source for the GPU route, not yet matched by the real kernels (13 of the
    /// suite's vectors disagree on WGSL): not claimed until the model is fitted.
    const UNCLAIMED: &'static [&'static str] = &["load_quantized"];

    fn device() -> burn_tensor::Device {
        burn_tensor::Device::vulkan(DeviceKind::DefaultDevice)
    }

    fn backend_device() -> <Vulkan as burn_backend::BackendTypes>::Device {
        qconform_burn::compat::wgpu_default_device(qconform_burn::compat::WgpuApi::Vulkan)
    }

    /// burn's own answer: lavapipe (Mesa 22.3) has no bf16 shader type, so `supports_dtype(BF16)` is
    /// false, yet burn-wgpu accepts bf16 tensors and its kernels then fail on the device
    /// ("Failed to map buffer: BufferAsyncError"; docs/findings.md).
    fn declares(dtype: burn_std::DType) -> bool {
        Self::device().supports_dtype(dtype)
    }
}

fn main() {
    qconform_burn::main::<VulkanTarget>()
}
