//! qconform harness on burn-cuda (features: `cuda`): needs an NVIDIA GPU and the CUDA toolkit
//! (scripts/gpu-check.sh); never built in CI.

use burn_cuda::Cuda;

struct CudaTarget;

impl qconform_burn::Target for CudaTarget {
    type B = Cuda;
    const NAME: &'static str = "burn-cuda";
    // The profile is named after burn-cubecl, whose kernels it models as CUDA runs them: burn-<release>/cubecl.
    const BACKEND: &'static str = "cubecl";
    /// Modelled from burn's source for the GPU route, not yet matched by the real kernels (13 of the
    /// suite's vectors disagree on WGSL): not claimed until the model is fitted.
    const UNCLAIMED: &'static [&'static str] = &["load_quantized", "float_ops"];

    fn device() -> burn_tensor::Device {
        burn_tensor::Device::cuda(0usize)
    }

    fn backend_device() -> <Cuda as burn_backend::BackendTypes>::Device {
        qconform_burn::compat::cuda_device(0)
    }
}

fn main() {
    qconform_burn::main::<CudaTarget>()
}
