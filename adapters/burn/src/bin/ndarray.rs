//! qconform harness on burn-ndarray (features: `ndarray`).
#![allow(deprecated)] // burn-ndarray is deprecated since 0.22.0; it is still the reference CPU backend.

use burn_ndarray::{NdArray, NdArrayDevice};

struct NdArrayTarget;

impl qconform_burn::Target for NdArrayTarget {
    type B = NdArray;
    const NAME: &'static str = "burn-ndarray";
    const BACKEND: &'static str = "ndarray";

    fn device() -> burn_tensor::Device {
        burn_tensor::Device::ndarray()
    }

    fn backend_device() -> NdArrayDevice {
        NdArrayDevice::default()
    }
}

fn main() {
    qconform_burn::main::<NdArrayTarget>()
}
