//! qconform harness on burn-wgpu with wgpu's automatic shader compiler (features: `wgpu`).
//! Built without the `vulkan` feature, the compiler is WGSL on every adapter (on Linux: Vulkan,
//! e.g. Mesa's lavapipe); see docs/burn-harness.md, "GPU route".

use burn_tensor::DeviceKind;
use burn_wgpu::Wgpu;

struct WgpuTarget;

impl qconform_burn::Target for WgpuTarget {
    type B = Wgpu;
    const NAME: &'static str = "burn-wgpu";
    const BACKEND: &'static str = "wgpu";
    /// `load_quantized`: modelled from burn's source for the GPU route, not yet matched by the real kernels
    /// (13 of the suite's vectors disagree on WGSL): not claimed until the model is fitted. `float_ops` is
    /// claimed by the lean and the default (fused) builds alike since the model follows the fused stream
    /// (docs/findings.md, "`float_ops` on this binary").
    const UNCLAIMED: &'static [&'static str] = &["load_quantized"];

    fn device() -> burn_tensor::Device {
        burn_tensor::Device::wgpu(DeviceKind::DefaultDevice)
    }

    fn backend_device() -> <Wgpu as burn_backend::BackendTypes>::Device {
        qconform_burn::compat::wgpu_default_device(qconform_burn::compat::WgpuApi::Auto)
    }

    /// burn's own answer: WGSL has no bf16, so `supports_dtype(BF16)` is false, yet burn-wgpu
    /// accepts bf16 tensors and computes garbage in them (docs/findings.md).
    fn declares(dtype: burn_std::DType) -> bool {
        Self::device().supports_dtype(dtype)
    }
}

fn main() {
    qconform_burn::main::<WgpuTarget>()
}
