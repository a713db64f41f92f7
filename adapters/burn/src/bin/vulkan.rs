//! qconform harness on burn-wgpu's Vulkan backend, kernels compiled to SPIR-V (features: `vulkan`).

use burn_tensor::DeviceKind;
use burn_wgpu::{Vulkan, WgpuDevice};

struct VulkanTarget;

impl qconform_burn::Target for VulkanTarget {
    type B = Vulkan;
    const NAME: &'static str = "burn-wgpu-vulkan";
    const BACKEND: &'static str = "vulkan";

    fn device() -> burn_tensor::Device {
        burn_tensor::Device::vulkan(DeviceKind::DefaultDevice)
    }

    fn backend_device() -> WgpuDevice {
        WgpuDevice::DefaultDevice
    }
}

fn main() {
    qconform_burn::main::<VulkanTarget>()
}
