//! `--bench [--n N] [--runs R]`: times burn's `quantize_dynamic` and `dequantize` in-process (no
//! protocol I/O) and prints one JSON object per line on stdout.

use std::time::Instant;

use burn_std::quantization::{QuantScheme, QuantStore, QuantValue, ScaleDtype};
use burn_std::{DType, TensorData};
use burn_tensor::Tensor;
use serde_json::json;

use crate::compat;
use crate::target::Target;

fn arg(args: &[String], name: &str) -> Option<usize> {
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1)?.replace('_', "").parse().ok()
}

/// Deterministic values in [-4, 4) (xorshift32), so every run quantizes the same tensor.
fn values(n: usize) -> Vec<f32> {
    let mut state = 0x9E37_79B9u32;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 8) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0
        })
        .collect()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}

pub fn main<T: Target>(args: &[String]) -> i32 {
    let n = arg(args, "--n").unwrap_or(16_777_216);
    let runs = arg(args, "--runs").unwrap_or(5).max(1);
    let base = QuantScheme::default().with_value(QuantValue::Q8S).with_store(QuantStore::Native);
    let schemes = [
        ("Q8S per_tensor(F32)", base),
        ("Q8S per_block([32], F16)", base.per_block([32u8], ScaleDtype::F16)),
        (
            "Q8S per_block([16], UE4M3).per_tensor(F32)",
            base.per_block([16u8], ScaleDtype::UE4M3).per_tensor(ScaleDtype::F32),
        ),
    ];
    let device = T::device();
    let x = Tensor::<1>::from_data(TensorData::new(values(n), [n]), (&device, DType::F32));
    let report = |op: &str, scheme: &str, times: Vec<f64>| {
        let seconds = median(times);
        println!(
            "{}",
            json!({
                "op": op, "scheme": scheme, "seconds": seconds,
                "mvalues_per_s": n as f64 / seconds / 1e6,
                "n": n, "runs": runs, "backend": T::NAME, "burn": compat::BURN_VERSION,
            })
        );
    };
    for (name, scheme) in schemes {
        let outcome = qconform_protocol::catch(|| {
            let mut times = Vec::with_capacity(runs);
            let mut last = None;
            for _ in 0..runs {
                let input = x.clone();
                let start = Instant::now();
                let q = input.quantize_dynamic(&scheme);
                times.push(start.elapsed().as_secs_f64());
                last = Some(q);
            }
            report("quantize_dynamic", name, times);
            let q = last.expect("at least one run");
            let mut times = Vec::with_capacity(runs);
            for _ in 0..runs {
                let input = q.clone();
                let start = Instant::now();
                let out = input.dequantize();
                times.push(start.elapsed().as_secs_f64());
                drop(out);
            }
            report("dequantize", name, times);
            Ok(())
        });
        if let Err(qconform_protocol::Failure::Panic { message, .. }) = outcome {
            println!("{}", json!({"op": "quantize_dynamic", "scheme": name, "error": message}));
        }
    }
    0
}
