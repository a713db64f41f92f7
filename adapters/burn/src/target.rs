//! The one trait each harness binary implements (`src/bin/*.rs`): which burn backend and device it drives.

use burn_backend::Backend as BackendTrait;
use burn_std::DType;

/// One backend the harness can drive: the concrete burn backend type (for `B::quantize` and the
/// other backend-trait calls) and the `burn_tensor::Device` that routes the public `Tensor` API to it.
pub trait Target: 'static {
    type B: BackendTrait;
    /// `burn-ndarray` / `burn-flex`.
    const NAME: &'static str;
    /// `ndarray` / `flex` (the part of the oracle profile after the release).
    const BACKEND: &'static str;
    fn device() -> burn_tensor::Device;
    fn backend_device() -> <Self::B as burn_backend::BackendTypes>::Device;
    /// Whether the harness declares `dtype` (a float tensor dtype, or a scale dtype held in one on the
    /// device). The CPU backends declare all: one they cannot hold answers with burn's own panic, which
    /// the oracle models. A GPU runtime where burn itself reports the dtype unsupported
    /// (`Device::supports_dtype`, burn-tensor device.rs:675) computes garbage in it instead of
    /// refusing it (WGSL has no bf16), so it overrides this and the suite leaves those vectors out.
    fn declares(dtype: DType) -> bool {
        let _ = dtype;
        true
    }
    /// Ops the binary serves but does not claim in its hello, so the suite leaves their vectors out: on the GPU
    /// route, `load_quantized` (the oracle's model of a kernel reading burn's stored bytes is not yet fitted to
    /// the real kernels: docs/burn-harness.md).
    const UNCLAIMED: &'static [&'static str] = &[];
}

/// The oracle profile a binary of `T` claims in its hello: `burn-<release>/<BACKEND>`, and `-fused` after it for a
/// build with burn's `fusion` feature (burn-wgpu's default build): fused kernels are a behaviour of the build, not of
/// the binary's source, so the lean and the default build of one source claim two profiles.
pub fn profile<T: Target>() -> String {
    let fused = if cfg!(feature = "fusion") { "-fused" } else { "" };
    format!("burn-{}/{}{fused}", crate::compat::BURN_VERSION, T::BACKEND)
}
