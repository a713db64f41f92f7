//! qconform harness on burn-flex (features: `flex`).

use burn_flex::{Flex, FlexDevice};

struct FlexTarget;

impl qconform_burn::Target for FlexTarget {
    type B = Flex;
    const NAME: &'static str = "burn-flex";
    const BACKEND: &'static str = "flex";

    fn device() -> burn_tensor::Device {
        burn_tensor::Device::flex()
    }

    fn backend_device() -> FlexDevice {
        FlexDevice
    }
}

fn main() {
    qconform_burn::main::<FlexTarget>()
}
